#!/bin/sh
# A launch's provenance covers the shared objects the engine maps
# (/proc/PID/maps), not only its executable: simserve runs with a copy of
# one of its libraries first on LD_LIBRARY_PATH, and a benchmark changes
# that copy's bytes after the 3rd run (as a rebuilt libggml changes under an
# unchanged llama-server). Every launch records {path: sha256} of its
# libraries; the launches after the change are flagged, naming the library,
# although the executable and the version are the same.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-provlib-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
lib=$(ldd "$RATCHET_BUILD/simserve" | awk '/libjansson/ {print $3}')
[ -n "$lib" ] || { echo "SKIP: simserve does not link libjansson dynamically"; exit 0; }
name=$(basename "$lib")
mkdir lib
cp "$lib" "lib/$name"
cat > spec.yaml <<Y
name: provenance-libs
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, served]
  env: {LD_LIBRARY_PATH: "$W/lib"}
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
  restart: sample
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 4, requests: 4}
  - name: bump
    command: [sh, -c, "n=\$(cat n 2>/dev/null || echo 0); echo \$((n+1)) > n; [ \$n -ne 2 ] || printf x >> lib/$name; echo '{\"x\": 1}'"]
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2, interleave: false}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
Y
run_ok spec.yaml
q "SELECT id, arm, substr(libs, 1, 120), differs FROM launches"
n=$(q "SELECT count(*) FROM launches WHERE libs LIKE '%\"$W/lib/$name\":\"%'")
[ "$n" -ge 4 ] || { echo "FAIL: the engine's libraries are not recorded ($n)"; exit 1; }
n=$(q "SELECT count(DISTINCT json_extract(libs, '\$.\"$W/lib/$name\"')) FROM launches")
[ "$n" = 2 ] || { echo "FAIL: the changed library is not told apart ($n sha256s)"; exit 1; }
n=$(q "SELECT count(*) FROM launches WHERE differs IS NULL")
[ "$n" -ge 2 ] || { echo "FAIL: launches flagged before anything changed"; exit 1; }
n=$(q "SELECT count(*) FROM launches WHERE differs LIKE '%library $W/lib/$name sha256%'")
[ "$n" -ge 1 ] || { echo "FAIL: a launch with another library is not flagged"; exit 1; }
n=$(q "SELECT count(DISTINCT exe_sha256) FROM launches")
[ "$n" = 1 ] || { echo "FAIL: the executable changed too ($n)"; exit 1; }
it=$(q "SELECT iteration_id FROM launches WHERE differs IS NOT NULL LIMIT 1")
seq=$(q "SELECT seq FROM iterations WHERE id = $it")
"$RATCHET_BIN" --db c.db show --full "1:$seq" > show.out
grep -q "libraries.*$name" show.out || { cat show.out; echo "FAIL: show does not list the libraries"; exit 1; }
echo PASS
