#!/bin/sh
# Real signals against a running campaign:
#  1. SIGTERM: the runner stops at the next safe point, puts the files back
#     to the best configuration, marks the iteration interrupted, exits 3 and
#     says how to resume; --resume then finishes the campaign.
#  2. kill -9 of the runner alone while its engine runs: the engine (its own
#     process group) survives as an orphan holding the port; --resume stops
#     it and carries on instead of refusing the port forever.
set -eu
# alive PID: the process exists and is not a zombie (PID 1 of a container
# may be slow to reap an orphan we killed).
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" | grep -q '^Z'; }
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-signals-XXXXXX)
cleanup() { [ -n "${ENG:-}" ] && kill -9 "$ENG" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

# --- 1. SIGTERM ---
mkdir "$W/t" && cd "$W/t"
cp "$RATCHET_SRC/tests/campaign/table.json" .
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|30|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
R=$!
sleep 1.5
kill -TERM $R
rc=0
wait $R || rc=$?
cat err
[ $rc -eq 3 ] || { echo "FAIL: SIGTERM: expected exit 3, got $rc"; exit 1; }
grep -q "stopped by a signal; \`ratchet run --resume" err || { echo "FAIL: SIGTERM: no resume hint"; exit 1; }
# Mid-iteration the iteration is marked interrupted; between iterations nothing is.
n=$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE state='interrupted' AND reason LIKE 'interrupted by a signal%'")
[ "$n" -le 1 ] || { echo "FAIL: SIGTERM: $n interrupted iterations"; exit 1; }
n=$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE state IN ('pending','applying','applied','measuring')")
[ "$n" -eq 0 ] || { echo "FAIL: SIGTERM: $n iterations left unfinished"; exit 1; }
echo "sigterm: $(sqlite3 c.db "SELECT count(*) FROM iterations") iterations, last: $(sqlite3 c.db "SELECT variant || ' ' || state FROM iterations ORDER BY seq DESC LIMIT 1")"
n=$(sqlite3 c.db "SELECT count(*) FROM intents WHERE state='open'")
[ "$n" -eq 0 ] || { echo "FAIL: SIGTERM: $n intents left open"; exit 1; }
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml
st=$(sqlite3 c.db "SELECT state FROM campaigns")
[ "$st" = finished ] || { echo "FAIL: SIGTERM: resume did not finish ($st)"; exit 1; }
echo "sigterm: ok"

# --- 2. an orphaned engine after kill -9 of the runner ---
mkdir "$W/o" && cd "$W/o"
"$RATCHET_BUILD/simserve" --port 0 > probe.out &
P=$!
i=0; while ! grep -q listening probe.out; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.05; done
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' probe.out)
kill $P; wait $P || true
cat > spec.yaml <<Y
name: orphan
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, orphan-test]
  port: $PORT
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 16, requests: 60}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 3, max: 3}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
R=$!
# wait until the engine is up and measured against
i=0
while [ "$(sqlite3 c.db "SELECT count(*) FROM env_facts WHERE key='engine.pgid'" 2>/dev/null || echo 0)" -lt 1 ]; do
	i=$((i+1)); [ $i -lt 200 ] || { echo "FAIL: engine never started"; exit 1; }; sleep 0.05
done
sleep 0.1
ENG=$(sqlite3 c.db "SELECT value FROM env_facts WHERE key='engine.pgid' ORDER BY id DESC LIMIT 1")
kill -9 $R
wait $R 2>/dev/null || true
alive "$ENG" || { echo "FAIL: the engine did not outlive the runner (nothing to test)"; exit 1; }
rc=0
"$RATCHET_BIN" --db c.db run --resume spec.yaml > out2 2> err2 || rc=$?
cat err2 | head -3
[ $rc -eq 0 ] || { echo "FAIL: resume after an orphaned engine exited $rc"; exit 1; }
grep -q "1 orphaned engine stopped" err2 || { echo "FAIL: the orphaned engine was not reported stopped"; exit 1; }
sleep 0.2
alive "$ENG" && { echo "FAIL: the orphaned engine still runs"; exit 1; }
ENG=
echo "orphan: ok"
echo PASS
