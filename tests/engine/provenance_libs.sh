#!/bin/sh
# A launch's provenance covers the shared objects the engine maps
# (/proc/PID/maps), not only its executable: simserve runs with a copy of
# one of its libraries first on LD_LIBRARY_PATH, and a benchmark changes
# that copy's bytes after the 3rd run (as a rebuilt libggml changes under an
# unchanged llama-server). Every launch records {path: sha256} of its
# libraries; the launches after the change are flagged, naming the library,
# although the executable and the version are the same.
set -eu
. "${RATCHET_SRC:?}/tests/lib/provenance.sh"
prov_workdir ratchet-provlib
lib=$(ldd "$RATCHET_BUILD/simserve" | awk '/libjansson/ {print $3}')
[ -n "$lib" ] || { echo "SKIP: simserve does not link libjansson dynamically"; exit 0; }
name=$(basename "$lib")
mkdir lib
cp "$lib" "lib/$name"
prov_spec provenance-libs '  command: ["'"$RATCHET_BUILD"'/simserve", --port, "{port}", --model, served]
  env: {LD_LIBRARY_PATH: "'"$W"'/lib"}' '[ $n -ne 2 ] || printf x >> lib/'"$name"
run_ok spec.yaml
q "SELECT id, arm, substr(libs, 1, 120), differs FROM launches"
n=$(q "SELECT count(*) FROM launches WHERE libs LIKE '%\"$W/lib/$name\":\"%'")
[ "$n" -ge 4 ] || { echo "FAIL: the engine's libraries are not recorded ($n)"; exit 1; }
n=$(q "SELECT count(DISTINCT json_extract(libs, '\$.\"$W/lib/$name\"')) FROM launches")
[ "$n" = 2 ] || { echo "FAIL: the changed library is not told apart ($n sha256s)"; exit 1; }
prov_first_agree
n=$(q "SELECT count(*) FROM launches WHERE differs LIKE '%library $W/lib/$name sha256%'")
[ "$n" -ge 1 ] || { echo "FAIL: a launch with another library is not flagged"; exit 1; }
n=$(q "SELECT count(DISTINCT exe_sha256) FROM launches")
[ "$n" = 1 ] || { echo "FAIL: the executable changed too ($n)"; exit 1; }
prov_show_flagged --full
grep -q "libraries.*$name" show.out || { cat show.out; echo "FAIL: show does not list the libraries"; exit 1; }
echo PASS
