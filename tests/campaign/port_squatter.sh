#!/bin/sh
# A foreign server squatting on the engine's port: the campaign must refuse to
# measure and say who answered; since issue 11 pre-flight finds it before
# anything starts (exit 2, file:line:col of engine.port), so nothing is
# benchmarked or recorded.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-squat-XXXXXX)
"$RATCHET_BUILD/simserve" --port 0 --model squatter > "$W/squatter.out" 2>&1 &
SQ=$!
trap 'kill $SQ 2>/dev/null; rm -rf "$W"' EXIT
i=0
while ! grep -q listening "$W/squatter.out"; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "FAIL: squatter did not start"; exit 1; }; sleep 0.05
done
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$W/squatter.out")
cat > "$W/spec.yaml" <<Y
name: squat
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}"]
  port: $PORT
  ready: {http: /health, timeout: 10s}
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 4, requests: 4}
objective: {metric: decode.output_throughput, goal: max, min_gain: 2%}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
Y
cd "$W"
set +e
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2> run.err
rc=$?
set -e
cat run.err
[ $rc -eq 2 ] || { echo "FAIL: expected exit 2, got $rc"; exit 1; }
grep -q "^spec.yaml:4:9: engine.port: " run.err || { echo "FAIL: the problem does not name engine.port's line"; exit 1; }
grep -q "port $PORT on 127.0.0.1 is already in use by pid $SQ (simserve)" run.err || { echo "FAIL: message does not name the squatter"; exit 1; }
grep -q "squatter" run.err || { echo "FAIL: message does not say what answered"; exit 1; }
n=$(sqlite3 c.db "SELECT count(*) FROM measurements")
[ "$n" -eq 0 ] || { echo "FAIL: $n measurements taken from the squatter"; exit 1; }
n=$(sqlite3 c.db "SELECT count(*) FROM campaigns")
[ "$n" -eq 0 ] || { echo "FAIL: $n campaigns recorded before pre-flight passed"; exit 1; }
echo PASS
