#!/bin/sh
# A failed candidate's log events are recorded: the counter that explains a
# failure is counted in the failing sample, which was never stored. simserve
# runs as the engine (restarted per sample, so "listening on" counts 1 in
# each); the candidate's change makes the command benchmark fail. The
# candidate's count is stored with the failed iteration, and `show` lists it.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-failev-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
echo '{"mode": {"v": 1}}' > table.json
cat > spec.yaml <<Y
name: failed-events
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, served]
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
  restart: sample
log_events:
  started: "listening on"
benchmarks:
  - name: probe
    command: [sh, -c, "grep -q '\"v\": 2' table.json && { echo 'request exceeds the context' >&2; exit 1; }; echo '{\"x\": 1}'"]
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: probe.x, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2, interleave: false}
variants:
  - {name: breaks, table: {file: table.json, set: {mode: {v: 2}}}}
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || true
q "SELECT seq, variant, state FROM iterations"
st=$(q "SELECT state FROM iterations WHERE variant = 'breaks'")
[ "$st" = failed ] || { cat run.out; echo "FAIL: the candidate should fail ($st)"; exit 1; }
q "SELECT i.seq, m.arm, m.rep, m.metric, m.value, m.valid FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE m.benchmark = 'log'"
n=$(q "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant = 'breaks' AND m.arm = 'cand' AND m.benchmark = 'log' AND m.metric = 'started' AND m.value = 1")
[ "$n" -ge 1 ] || { echo "FAIL: the failed candidate's log events are not recorded"; exit 1; }
seq=$(q "SELECT seq FROM iterations WHERE variant = 'breaks'")
"$RATCHET_BIN" --db c.db show --full "1:$seq" > show.out
grep -A3 "log events" show.out | grep -q "started *cand" || { cat show.out; echo "FAIL: show does not list the candidate's count"; exit 1; }
echo PASS
