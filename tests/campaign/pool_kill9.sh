#!/bin/sh
# kill -9 of the runner in the middle of a device pool's round, then
# --resume:
#   1. the deterministic greedy campaign (table changes in working copies,
#      four host devices, a slow benchmark): killed while two or more
#      workers measure; every worker dies with the runner; the resumed run
#      reaches the decisions of an uninterrupted one, and every touched file
#      (the workdir's and each working copy's) holds the bytes its last
#      journal intent says, sha256 for sha256;
#   2. a simserve pool of four engines killed while they serve: --resume
#      stops every worker's engine (their process groups were recorded)
#      before it measures, and after the run no engine runs and every port
#      a worker's engine used is free.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-pool-kill9-XXXXXX)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$W"' EXIT
pid=
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
. "$RATCHET_SRC/tests/lib/procs.sh"
DEV=host:0,host:1,host:2,host:3

# wait_running DB N: until N iterations of a round >= 1 are measuring (at most 60 s)
wait_running() {
	for _ in $(seq 600); do
		n=$(sqlite3 "$1" "SELECT count(*) FROM iterations WHERE round >= 1 AND state IN
			('applying', 'applied', 'measuring')" 2>/dev/null || echo 0)
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "FAIL: no round with $2 workers running"; exit 1
}

# no_procs: nothing runs that names this test's folder (5 s for the kernel to deliver)
no_procs() {
	for _ in $(seq 50); do
		left=$(pgrep -f "$W" || true)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	ps -o pid,args -p $left; echo "FAIL: $1"; exit 1
}

# ---- 1. deterministic decisions and intact files ----
kill9_setup ref
sed -i 's|^strategy: list|strategy: greedy|' ref/spec.yaml
(cd ref && run_ok --devices $DEV spec.yaml)
kill9_setup k
sed -i -e 's|^strategy: list|strategy: greedy|' -e "s|\"0\"\]|\"150\"]|; s|, \"0\"\]|, \"150\"]|" k/spec.yaml
sed -i 's|"{workdir}/table.json", "0"|"{workdir}/table.json", "150"|' k/spec.yaml
grep -q '"150"' k/spec.yaml || { cat k/spec.yaml; echo "FAIL: test setup: no sleep"; exit 1; }
cd k
"$RATCHET_BIN" --db c.db run --quiet --devices $DEV spec.yaml > run1.out 2>&1 &
pid=$!
wait_running c.db 2
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
no_procs "a worker or its benchmark outlived the runner"
run_ok --resume --devices $DEV spec.yaml
cd ..
a=$(decisions ref/c.db) b=$(decisions k/c.db)
echo "uninterrupted: $a"
echo "resumed:       $b"
[ "$a" = "$b" ] || { echo "FAIL: the resumed pool decided otherwise"; exit 1; }
n=$(sqlite3 k/c.db "SELECT count(*) FROM iterations WHERE state = 'interrupted'")
[ "$n" -ge 2 ] || { echo "FAIL: $n iterations interrupted, expected the killed round's"; exit 1; }
[ "$(sha256sum < ref/table.json)" = "$(sha256sum < k/table.json)" ] || { echo "FAIL: the workdir's table differs"; exit 1; }
# Every touched file holds what its last intent says.
sqlite3 -separator ' ' k/c.db "SELECT i.path, CASE i.state WHEN 'done' THEN
	CASE i.after_exists WHEN 1 THEN i.after_sha256 ELSE 'absent' END ELSE
	CASE i.before_exists WHEN 1 THEN i.before_sha256 ELSE 'absent' END END
	FROM intents i WHERE i.id = (SELECT max(j.id) FROM intents j WHERE j.path = i.path)" > last.txt
[ -s last.txt ] || { echo "FAIL: no intents"; exit 1; }
nc=$(grep -c "c.db.pool/" last.txt || true)
[ "$nc" -ge 1 ] || { echo "FAIL: no working copy was touched"; exit 1; }
while read -r path want; do
	got=absent
	[ -e "$path" ] && got=$(sha256sum < "$path" | cut -d' ' -f1)
	[ "$got" = "$want" ] || { echo "FAIL: $path is $got, its journal says $want"; exit 1; }
done < last.txt
n=$(sqlite3 k/c.db "SELECT count(*) FROM intents WHERE state = 'open'")
[ "$n" -eq 0 ] || { echo "FAIL: $n intents left open"; exit 1; }
echo "files: $(wc -l < last.txt) touched paths ($nc in working copies) match the journal"

# ---- 2. engines of every worker stopped by --resume ----
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
mkdir s && cd s
cat > spec.yaml <<Y
name: pool-kill9-engines
engine:
  command: ["$RATCHET_BUILD/simserve", --check-visible-devices, --port, "{port}", --model, "sim-{nonce}",
            --decode-us-per-step, "20000"]
  identity: {model: "sim-{nonce}"}
  ready: {http: /health, timeout: 20s}
  stop_grace: 1s
benchmarks:
  - name: decode
    load: {concurrency: 1, prompt_tokens: 8, output_tokens: 8, requests: 8}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 3, max: 3}
devices: [cuda:0, cuda:1, cuda:2, cuda:3]
variants:
  - {name: g4, flag: [--max-graph-bs, "4"]}
  - {name: g16, flag: [--max-graph-bs, "16"]}
  - {name: b32, flag: [--max-batch, "32"]}
  - {name: b16, flag: [--max-batch, "16"]}
strategy: greedy
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run1.out 2>&1 &
pid=$!
wait_running c.db 3
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
pg=$(sqlite3 c.db "SELECT DISTINCT value FROM env_facts WHERE key = 'engine.pgid'")
echo "engine process groups recorded before the kill:" $pg
[ "$(echo "$pg" | wc -w)" -ge 3 ] || { echo "FAIL: fewer than 3 engines recorded"; exit 1; }
# The workers died with the runner; their engines may outlive them until --resume.
"$RATCHET_BIN" --db c.db run --resume --max-iterations 1 spec.yaml > run.out 2>&1 || { cat run.out; exit 1; }
cat run.out | head -3
grep -Eq "[1-9][0-9]* orphaned engines? stopped" run.out || { echo "FAIL: --resume stopped no engine"; exit 1; }
for g in $pg; do
	if group_ours "$g" "$W"; then echo "FAIL: engine group $g still runs"; exit 1; fi
done
cd ..
no_procs "an engine outlived --resume"
for p in $(sqlite3 s/c.db "SELECT DISTINCT port FROM launches"); do
	if ss -ltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$p\$"; then
		echo "FAIL: port $p is still taken"; exit 1
	fi
done
echo PASS
