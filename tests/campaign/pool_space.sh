#!/bin/sh
# A space strategy on a device pool (issues 12 and 14): a model search over a
# tile entry, an environment variable and a flag of simserve, on four
# simulated devices (host:0..3), in rounds of one trial per device:
#   - every trial is a generated point with its proposals row (point,
#     fingerprint, reason), the points of a round are distinct, and no point
#     is measured twice as a trial;
#   - a round's best passing trial is confirmed by a round of one, which is
#     the only way anything is kept, and the kept point's table entry is in
#     the workdir at the end;
#   - kill -9 of the runner in the middle of a round, then --resume: the
#     campaign finishes, every engine is gone, and the workdir's table is
#     the kept point's.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
. "$RATCHET_SRC/tests/lib/decode_bench.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
W=$(mktemp -d /tmp/ratchet-pool-space-XXXXXX)
R=
cleanup() { [ -n "$R" ] && kill -9 "$R" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
cd "$W"
q() { sqlite3 -cmd ".timeout 5000" c.db "$1"; }

spec() {
	cat <<Y
name: pool-space
seed: 3
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, "sim-{nonce}", --tiles, "{workdir}/tiles.json",
            --decode-us-per-step, "2000", --decode-us-per-seq, "10"]
  identity: {model: "sim-{nonce}"}
  ready: {http: /health, timeout: 20s}
  stop_grace: 1s
$(decode_bench)
devices: [host:0, host:1, host:2, host:3]
strategy: model
space:
  parameters:
    - {name: BLOCK_M, values: [32, 64], table: {file: tiles.json, key: decode.BS_LE_32}}
    - {name: num_warps, values: [2, 4, 8], table: {file: tiles.json, key: decode.BS_LE_32}}
    - {name: GRAPH_BS, values: ["8", "64"], env: SIMSERVE_MAX_GRAPH_BS}
    - {name: STEP, values: ["2000", "200"], flag: --decode-us-per-step}
Y
}

# 1. an uninterrupted pool search
mkdir a && cp "$RATCHET_SRC/experiments/simserve/tiles.json" a/ && spec > a/spec.yaml
"$RATCHET_BIN" check a/spec.yaml > /dev/null
rc=0
"$RATCHET_BIN" --db c.db run --max-iterations 14 a/spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q "SELECT i.seq, i.round, i.device, i.role, i.state, p.point FROM iterations i
   LEFT JOIN proposals p ON p.iteration_id = i.id ORDER BY i.seq"
n=$(q "SELECT count(*) FROM iterations WHERE seq > 0 AND id NOT IN (SELECT iteration_id FROM proposals)")
[ "$n" -eq 0 ] || { echo "FAIL: $n iterations without their proposal"; exit 1; }
nd=$(q "SELECT count(DISTINCT device) FROM iterations WHERE round = 1")
[ "$nd" -eq 4 ] || { echo "FAIL: round 1 ran on $nd devices, expected 4"; exit 1; }
d=$(q "SELECT count(*) FROM (SELECT i.round, p.fingerprint FROM iterations i JOIN proposals p
       ON p.iteration_id = i.id WHERE i.role = 'trial' GROUP BY p.fingerprint HAVING count(*) > 1)")
[ "$d" -eq 0 ] || { echo "FAIL: $d points measured twice as trials"; exit 1; }
n=$(q "SELECT count(*) FROM iterations WHERE state = 'kept' AND role != 'confirm'")
[ "$n" -eq 0 ] || { echo "FAIL: $n changes kept without a confirmation"; exit 1; }
k=$(q "SELECT count(*) FROM iterations WHERE state = 'kept'")
[ "$k" -ge 1 ] || { echo "FAIL: nothing kept (simserve with STEP 200 is 2.7x faster)"; exit 1; }
# The confirmation is the round's best passing trial, the same point.
bad=$(q "SELECT count(*) FROM iterations c JOIN proposals pc ON pc.iteration_id = c.id
         WHERE c.role = 'confirm' AND pc.fingerprint NOT IN (SELECT p.fingerprint FROM iterations t
         JOIN proposals p ON p.iteration_id = t.id WHERE t.role = 'trial' AND t.round = c.round AND t.passed = 1)")
[ "$bad" -eq 0 ] || { echo "FAIL: $bad confirmations of no passing trial of their round"; exit 1; }
grep -q "pool round" run.out || true
# The workdir's table holds the last kept table point, or is untouched.
table_ok() { # DIR
	tp=$(q "SELECT p.point FROM proposals p JOIN iterations i ON i.id = p.iteration_id
	        WHERE i.state = 'kept' AND p.target = 0 ORDER BY i.seq DESC LIMIT 1")
	if [ -z "$tp" ]; then
		cmp -s "$1/tiles.json" "$RATCHET_SRC/experiments/simserve/tiles.json"
	else
		bm=$(echo "$tp" | sed -n 's/.*"BLOCK_M": *\([0-9]*\).*/\1/p')
		nw=$(echo "$tp" | sed -n 's/.*"num_warps": *\([0-9]*\).*/\1/p')
		e=$(tr -d ' \n' < "$1/tiles.json" | grep -o '"decode.BS_LE_32":{[^}]*}')
		echo "$e" | grep -q "\"BLOCK_M\":$bm[,}]" && echo "$e" | grep -q "\"num_warps\":$nw[,}]"
	fi
}
table_ok a || { echo "FAIL: the workdir's table is not the last kept table point's"; exit 1; }
REF=$(q "SELECT count(*) FROM iterations WHERE state = 'kept'")

# 2. kill -9 in the middle of round 2, then --resume
mkdir b && cp "$RATCHET_SRC/experiments/simserve/tiles.json" b/ && spec > b/spec.yaml
mv c.db a.db; rm -f c.db-wal c.db-shm
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 14 b/spec.yaml > run2.out 2>&1 &
R=$!
for _ in $(seq 1 600); do
	n=$(q "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.round = 2" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 4 ] && break
	sleep 0.1
done
kill -9 $R; wait $R 2>/dev/null || true; R=
"$RATCHET_BIN" --db c.db run --quiet --resume --max-iterations 14 b/spec.yaml > resume.out 2>&1 ||
	{ cat run2.out resume.out; echo "FAIL: resume"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = finished ] || [ "$(q "SELECT count(*) FROM iterations")" -ge 14 ] ||
	{ q "SELECT seq, state FROM iterations"; echo "FAIL: the resumed campaign did not finish"; exit 1; }
n=$(q "SELECT count(*) FROM iterations WHERE state IN ('pending','applying','applied','measuring')")
[ "$n" -eq 0 ] || { echo "FAIL: $n iterations left unfinished"; exit 1; }
n=$(q "SELECT count(*) FROM iterations WHERE state = 'interrupted'")
[ "$n" -ge 1 ] || { echo "FAIL: the kill left no interrupted iteration"; exit 1; }
table_ok b || { echo "FAIL: after resume the workdir's table is not the last kept table point's"; exit 1; }
best=$(q "SELECT p.point FROM proposals p JOIN campaigns c ON c.best_iteration = p.iteration_id")
sleep 0.5
left=$(pgrep -f "$W" || true)
[ -z "$left" ] || { ps -o pid,args -p $left; echo "FAIL: processes left running"; exit 1; }
echo "kept $REF uninterrupted; resumed run: $(q "SELECT count(*) FROM iterations WHERE state = 'kept'") kept, best $best"
echo PASS
