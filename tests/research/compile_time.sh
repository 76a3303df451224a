#!/bin/sh
# Compile time from the engine's log (issue 27): a log event whose regex has
# a named duration group ("compiled in (?<ms>[0-9.]+) ms") is timed: each
# sample stores log.<name>.seconds beside the count, a constraint may use it,
# and ratchet check refuses .seconds of an event without a duration. simserve
# --compile-ms 190 prints "(compiled in 190 ms)" on each recompile line.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-compile
q() { sqlite3 c.db "$1"; }
cat > spec.yaml <<Y
name: compiles
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sim-c,
            --log-recompiles, --compile-ms, "190"]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-c}
  stop_grace: 2s
benchmarks:
  - name: serve
    load: {api: completions, pattern: closed, concurrency: 4, prompt_tokens: 64,
           output_tokens: 8, requests: 16, ignore_eos: true, timeout: 5s}
objective: {metric: serve.output_throughput, goal: max, min_gain: 5%}
constraints: [log.compiles.seconds <= 60s]
repeats: {min: 2, max: 2}
log_events: {compiles: "compiled in (?<ms>[0-9.]+) ms", lines: "Compiling kernel"}
variants:
  - name: graphs-8
    flag: [--max-graph-bs, "8"]
Y
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 && ok "a constraint on log.compiles.seconds is accepted" ||
	{ cat check.out; no "check"; }
sed 's/log.compiles.seconds/log.lines.seconds/' spec.yaml > bad.yaml
rc=0; "$RATCHET_BIN" check bad.yaml > bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "log event 'lines' carries no duration" bad.out &&
	ok "an event without a duration has no .seconds" || { cat bad.out; no "bad exit $rc"; }
rc=0
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 1 spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: run exited $rc"; exit 1; }
n=$(q "SELECT count(*) FROM measurements WHERE benchmark = 'log' AND metric = 'compiles.seconds'")
c=$(q "SELECT count(*) FROM measurements WHERE benchmark = 'log' AND metric = 'compiles'")
[ "$n" -gt 0 ] && [ "$n" = "$c" ] && ok "every sample stores log.compiles.seconds ($n) beside the count" || no "rows: $n seconds, $c counts"
chk=$(q "SELECT printf('%.6f', total(s.value)) || '=' || printf('%.6f', 0.19 * total(m.value)) FROM measurements s JOIN measurements m ON m.iteration_id = s.iteration_id AND m.arm = s.arm AND m.rep = s.rep AND m.benchmark = 'log' AND m.metric = 'compiles' WHERE s.benchmark = 'log' AND s.metric = 'compiles.seconds'")
tot=${chk%%=*}
[ "$tot" = "${chk#*=}" ] && [ "$tot" != 0.000000 ] && ok "each compile line carried 190 ms ($chk s)" || no "seconds vs counts: $chk"
[ "$(q "SELECT DISTINCT unit FROM measurements WHERE metric = 'compiles.seconds'")" = s ] && ok "in seconds" || no "unit"
[ "$(q "SELECT count(*) FROM measurements WHERE metric = 'lines.seconds'")" = 0 ] && ok "an untimed event stores no seconds" || no "lines.seconds stored"
finish
