#!/bin/sh
# The space strategies end to end through `ratchet run` on spacebench (a
# deterministic benchmark with a table entry, an environment variable and a
# flag): each strategy ends on the optimum's table entry, no point is
# measured twice at the same fidelity, generated variants show in `ratchet
# log`, and kill -9 in the middle of a model (or genetic) search, then
# --resume, makes the same proposals as an uninterrupted run with the same
# seed. genetic runs with the others (it measures all 152 points of the
# table target: no generation stalls for ten).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-search-XXXXXX)
trap 'rm -rf "$W"' EXIT
B="$RATCHET_BUILD/spacebench"
setup() { # DIR STRATEGY SLEEP_MS
	mkdir -p "$1"
	echo '{"tiles": {"BM": 8, "bn": 16, "W": 1}}' > "$1/t.json"
	cat > "$1/spec.yaml" <<EOS
name: search-$2
seed: 3
benchmarks:
  - name: fake
    command: ["$B", "{workdir}/t.json", "$3"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 2, max: 4, confidence: 0.95}
strategy: $2
space:
  parameters:
    - {name: BM, pow2: [8, 128], table: {file: t.json, key: tiles}}
    - {name: BN, range: [16, 128], step: 16, table: {file: t.json, key: tiles, field: bn}}
    - {name: W, values: [1, 2, 4, 8], table: {file: t.json, key: tiles}}
    - {name: MODE, choices: [slow, fast], env: SPACE_MODE}
    - {name: G, bool: true, flag: --graphs}
  restrictions:
    - BM * W <= 512
EOS
}
fails=0
ok() { echo "ok - $1"; }
no() { echo "not ok - $1"; fails=$((fails + 1)); }
for s in model coordinate halving random genetic; do
	setup "$W/$s" "$s" 0
	cd "$W/$s"
	max=""
	[ "$s" = random ] && max="--max-iterations 60"
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet $max spec.yaml > run.out 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat run.out; no "$s: ratchet run exited $rc"; continue; }
	n=$(sqlite3 c.db "SELECT count(*) FROM proposals")
	dup=$(sqlite3 c.db "SELECT count(*) FROM (SELECT fingerprint, fidelity FROM proposals p JOIN iterations i ON i.id = p.iteration_id WHERE i.state != 'interrupted' GROUP BY fingerprint, fidelity HAVING count(*) > 1)")
	[ "$dup" -eq 0 ] && ok "$s: $n proposals, no point measured twice" || no "$s: $dup points measured twice"
	if [ "$s" = random ]; then
		ok "random: $n evaluations of a budget of 60 (not expected to reach the optimum): $(tr -d '\n ' < t.json)"
	elif grep -q '"BM": 32' t.json && grep -q '"bn": 64' t.json && grep -q '"W": 4' t.json; then
		ok "$s: the table ends on the optimum ($n evaluations): $(tr -d '\n ' < t.json)"
	else
		no "$s: the table ends off the optimum: $(cat t.json)"
	fi
	"$RATCHET_BIN" --db c.db log --state kept > log.out 2>&1 || no "$s: ratchet log failed"
	if [ "$s" != random ]; then
		grep -q 'BM:32+BN:64+W:4' log.out && ok "$s: generated variants show in ratchet log" || { cat log.out; no "$s: log lacks the generated variant"; }
	fi
	nr=$(sqlite3 c.db "SELECT count(*) FROM proposals WHERE reason = '' OR state IS NULL")
	[ "$nr" -eq 0 ] && ok "$s: every proposal has a reason and a state" || no "$s: $nr proposals without reason"
	if [ "$s" = halving ]; then
		kc=$(sqlite3 c.db "SELECT count(*) FROM proposals p JOIN iterations i ON i.id = p.iteration_id WHERE p.fidelity < 1 AND i.state = 'kept'")
		[ "$kc" -eq 0 ] && ok "halving: no cheap measurement kept" || no "halving: $kc cheap measurements kept"
	fi
done
# Several targets are searched one at a time, and the reason says so.
cd "$W/model"
sqlite3 c.db "SELECT reason FROM proposals" | grep -q 'target 2 of 3 (env SPACE_MODE), one at a time' &&
	ok "several targets: one at a time, said in the reason" || no "no reason names the second target"
sqlite3 c.db "SELECT value FROM env_facts WHERE key = 'search.done'" | grep -q . &&
	ok "the search says why it stopped: $(sqlite3 c.db "SELECT value FROM env_facts WHERE key = 'search.done'" | cut -c1-120)" ||
	no "no search.done fact"
# A template target with a build: the file is rendered with the point's
# values, then the build runs (as it does after a revert); the benchmark
# reads what the build made (the H200 search compiles each point this way).
mkdir -p "$W/tmpl" && cd "$W/tmpl"
printf 'speed {{S}}\n' > k.conf.in
printf 'speed 1\n' > k.conf
cp k.conf built.conf
cat > spec.yaml <<'EOS'
name: search-template
benchmarks:
  - name: b
    command: [/bin/sh, -c, 'awk "{print \"{\\\"x\\\": \" \$2 \"}\"}" {workdir}/built.conf']
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: b.x, goal: max, min_gain: 2%}
repeats: {min: 2, max: 3}
strategy: coordinate
space:
  parameters:
    - {name: S, range: [1, 9], template: {source: k.conf.in, target: k.conf, build: [sh, -c, "cp k.conf built.conf"]}}
EOS
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
if [ $rc -eq 0 ] && grep -qx 'speed 9' k.conf && grep -qx 'speed 9' built.conf; then
	ok "template: rendered, built and kept up to the best value: $(cat k.conf)"
else
	cat run.out; no "template: k.conf is '$(cat k.conf)', built.conf '$(cat built.conf)' (exit $rc)"
fi
last=$(sqlite3 c.db "SELECT state FROM iterations ORDER BY seq DESC LIMIT 1")
[ "$last" = reverted ] && ok "template: the last step was reverted and rebuilt (built.conf is the best's)" ||
	no "template: the last iteration was $last, not a revert"
# kill -9 in the middle of a model search (and of a genetic one), then
# --resume: the same proposals.
pts() { sqlite3 "$1" "SELECT p.target || ' ' || p.point FROM proposals p JOIN iterations i ON i.id = p.iteration_id WHERE i.state != 'interrupted' ORDER BY p.iteration_id LIMIT 25"; }
for s in model genetic; do
	setup "$W/ref-$s" $s 0
	(cd "$W/ref-$s" && "$RATCHET_BIN" --db c.db run --quiet --max-iterations 30 spec.yaml > run.out 2>&1) || no "$s: reference run failed"
	setup "$W/k9-$s" $s 100
	cd "$W/k9-$s"
	"$RATCHET_BIN" --db c.db run --quiet --max-iterations 30 spec.yaml > run.out 2>&1 &
	pid=$!
	sleep 6
	kill -9 $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	before=$(sqlite3 c.db "SELECT count(*) FROM proposals")
	"$RATCHET_BIN" --db c.db run --quiet --resume --max-iterations 40 spec.yaml > resume.out 2>&1 || { cat resume.out; no "$s: resume failed"; }
	if [ "$(pts "$W/ref-$s/c.db")" = "$(pts "$W/k9-$s/c.db")" ]; then
		ok "$s: kill -9 after $before proposals, then --resume: the same 25 proposals as an uninterrupted run"
	else
		no "$s: resumed proposals differ"; pts "$W/ref-$s/c.db" > "$W/a"; pts "$W/k9-$s/c.db" > "$W/b"; diff "$W/a" "$W/b" || true
	fi
done
[ $fails -eq 0 ] && echo PASS || { echo "FAIL: $fails"; exit 1; }
