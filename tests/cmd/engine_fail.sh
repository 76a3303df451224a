#!/bin/sh
# An engine that fails to start: the error shows the last 20 lines of its log
# (and `show --artifact` the whole of it), and once the spec is fixed a plain
# `ratchet run` starts a new campaign, since the failed baseline measured
# nothing (before, it answered "did not finish; --resume", and --resume
# refused the changed spec).
# Cases: --quiet run: exit 3, lines 12..30 and the stderr line shown, line 11
# not; a run with progress prints the log once; the artifact holds line 1;
# the fixed spec runs as a new campaign and the failed ones are aborted;
# after a measured baseline, --resume with a changed spec and a plain run
# name the way out.
set -u
R=${RATCHET_BIN:?} B=${RATCHET_BUILD:?}
command -v python3 >/dev/null || { echo "SKIP: python3 missing (the fixed engine is python3 -m http.server)"; exit 77; }
. "$(dirname "$0")/lib.sh"
scratch enginefail
cp "$RATCHET_SRC/tests/campaign/table.json" .
spec() { # spec ENGINE_COMMAND_YAML
	cat >spec.yaml <<Y
name: engine-fail
engine:
  command: $1
  ready: {http: /, timeout: 10s}
  identity: {http: null}
benchmarks:
  - name: fake
    command: ["$B/fakebench", "{workdir}/table.json"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
variants:
  - {name: m64-32, table: {file: table.json, set: {M_LE_64: {tile: 32}}}}
Y
}
spec '[sh, -c, "i=1; while [ $i -le 30 ]; do echo engine log line $i; i=$((i+1)); done; echo fatal: no GPU found >&2; exit 1"]'

"$R" --db c.db run --quiet spec.yaml >out.txt 2>err.txt; rc=$?
[ $rc -eq 3 ] && ok "exit 3" || no "exit $rc"
grep -q 'engine exited with status 1 before it was ready; the last 20 lines of its log:' err.txt &&
	ok "the error says the engine exited and shows its log" || no "error: $(head -3 err.txt)"
grep -qx '    engine log line 12' err.txt && grep -qx '    engine log line 30' err.txt &&
	grep -qx '    fatal: no GPU found' err.txt && ! grep -qx '    engine log line 11' err.txt &&
	ok "lines 12..30 and the last stderr line, not line 11" || no "log tail: $(cat err.txt)"
"$R" --db c.db show 1:0 --artifact engine-start-failure.log >art.txt 2>&1
grep -qx 'engine log line 1' art.txt && ok "show --artifact has the whole log" || no "artifact: $(head -3 art.txt)"

"$R" --db c.db run spec.yaml >out.txt 2>err.txt
[ "$(grep -c 'engine log line 30' err.txt)" -eq 1 ] && grep -q '(see above)' err.txt &&
	ok "with progress, the log is printed once" || no "progress run: $(cat err.txt)"
grep -q "campaign 1 'engine-fail' measured nothing (its baseline failed); it is closed and a new campaign starts" out.txt err.txt &&
	ok "a plain run starts a new campaign" || no "no new campaign: $(cat out.txt err.txt)"

spec '[python3, -m, http.server, --bind, 127.0.0.1, "{port}"]'
"$R" --db c.db run --quiet --max-iterations 1 spec.yaml >out.txt 2>err.txt; rc=$?
[ $rc -eq 0 ] && ok "the fixed spec runs its baseline" || no "fixed spec: exit $rc: $(cat err.txt)"
[ "$("$B/db_tool" query c.db "SELECT group_concat(state, ' ') FROM campaigns ORDER BY id")" = "aborted aborted running" ] &&
	ok "the failed campaigns are aborted, campaign 3 runs" || no "campaign states: $("$B/db_tool" query c.db 'SELECT id, state FROM campaigns')"

# A measured baseline and a changed spec: both refusals name the way out.
cp spec.yaml spec.orig
echo "# changed" >>spec.yaml
"$R" --db c.db run --resume spec.yaml >out.txt 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q 'ratchet restore --campaign 3. and .ratchet run spec.yaml. starts a new one' err.txt &&
	ok "--resume on a changed spec: $(cat err.txt)" || no "--resume changed spec: exit $rc: $(cat err.txt)"
"$R" --db c.db run spec.yaml >out.txt 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q 'continue it with .ratchet run --resume spec.yaml., or end it with .ratchet restore.' err.txt &&
	ok "run on an unfinished campaign: $(cat err.txt)" || no "run unfinished: exit $rc: $(cat err.txt)"
cp spec.orig spec.yaml
"$R" --db c.db run --quiet --resume spec.yaml >out.txt 2>err.txt; rc=$?
[ $rc -eq 0 ] && [ "$("$B/db_tool" query c.db "SELECT state FROM campaigns WHERE id = 3")" = finished ] &&
	ok "--resume with the spec as it was finishes campaign 3" || no "resume: exit $rc: $(cat err.txt)"
finish
