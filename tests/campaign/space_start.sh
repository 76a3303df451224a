#!/bin/sh
# A space starts from what the configuration already holds, and a point
# that changes nothing is never measured (issue 23, item 1b). simserve's
# command sets --decode-us-per-step 400; the space binds that flag (values
# 100, 200, 400, 800: the middle would be 200) and a field of the tiles
# table (BLOCK_M 32 in the file; values 32..256: the middle would be 64):
#   - coordinate's first proposal of each target is the configuration's
#     current value (STEP:400, then BLOCK_M:32), said in its reason;
#   - that proposal gives the best's configuration: it has no measurement,
#     is recorded reverted with an "unchanged" reason, the best's objective
#     on both sides and a change of 0;
#   - no measured iteration reads "X -> X" (an A/A test), and no two
#     measured iterations have the same parent and configuration.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
. "$RATCHET_SRC/tests/lib/decode_bench.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-space-start
cp "$RATCHET_SRC/experiments/simserve/tiles.json" .
q() { sqlite3 -cmd ".timeout 5000" c.db "$1"; }
cat > spec.yaml <<Y
name: space-start
seed: 1
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, "sim-{nonce}", --tiles, "{workdir}/tiles.json",
            --decode-us-per-step, "400", --decode-us-per-seq, "50"]
  identity: {model: "sim-{nonce}"}
  ready: {http: /health, timeout: 20s}
  stop_grace: 1s
$(decode_bench)
strategy: coordinate
space:
  parameters:
    - {name: STEP, values: ["100", "200", "400", "800"], flag: --decode-us-per-step}
    - {name: BLOCK_M, values: [32, 64, 128, 256], table: {file: tiles.json, key: decode.BS_LE_32}}
Y
"$RATCHET_BIN" check spec.yaml > /dev/null
rc=0
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 7 spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q "SELECT i.seq, i.state, i.change_text, (SELECT count(*) FROM measurements m WHERE m.iteration_id = i.id),
          p.reason, i.reason FROM iterations i LEFT JOIN proposals p ON p.iteration_id = i.id ORDER BY i.seq"
r1=$(q "SELECT p.reason FROM proposals p JOIN iterations i ON i.id = p.iteration_id WHERE i.seq = 1")
case "$r1" in *"start at the configuration's current value STEP=400"*) ;;
	*) echo "FAIL: the first proposal does not start at the command's value: $r1"; exit 1 ;; esac
st=$(q "SELECT state || ' ' || substr(reason, 1, 10) || ' ' || obj_delta || ' ' || (obj_best = obj_cand)
        FROM iterations WHERE seq = 1")
[ "$st" = "reverted unchanged: 0.0 1" ] || { echo "FAIL: the unchanged point was recorded as '$st'"; exit 1; }
n=$(q "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.seq = 1")
[ "$n" -eq 0 ] || { echo "FAIL: the unchanged point was measured ($n samples)"; exit 1; }
b=$(q "SELECT count(*) FROM proposals WHERE reason LIKE '%current value BLOCK_M=32%'")
[ "$b" -eq 1 ] || { echo "FAIL: the table target did not start at the entry's value 32"; exit 1; }
aa=$(q "SELECT change_text FROM iterations i WHERE seq > 0 AND EXISTS (SELECT 1 FROM measurements m
        WHERE m.iteration_id = i.id)" | grep -E -e '(^|, )([^ ]+) ([^ ]+) -> \3(,|$)' || true)
[ -z "$aa" ] || { echo "FAIL: a measured change changes nothing: $aa"; exit 1; }
dup=$(q "SELECT count(*) FROM (SELECT parent_id, config_sha256 FROM iterations i WHERE seq > 0 AND EXISTS
        (SELECT 1 FROM measurements m WHERE m.iteration_id = i.id) GROUP BY 1, 2 HAVING count(*) > 1)")
[ "$dup" -eq 0 ] || { echo "FAIL: $dup configurations measured twice against the same best"; exit 1; }
echo PASS
