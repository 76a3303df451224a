#!/bin/bash
# On the H200 (the device tool's nvidia-h200): builds ratchet against the
# carried .devdeps, then runs spec.yaml for three iterations twice: once
# as it is, once as a pool of one device (`--devices cuda:0`, so the
# measurement runs in a pinned worker). Prints each campaign's
# telemetry.device fact (the GPU's UUID and PCI bus id, as the sampler
# found it) beside `nvidia-smi`'s, and a telemetry excerpt; keeps both
# databases in $OUT.
#   run: command "bash experiments/telemetry-h200/run-on-h200.sh", carry [".devdeps"]
set -u
. experiments/cuda-sweep/h200-env.sh telemetry-log.txt
t0=$(date +%s)
B=build-h200
h200_build $B ratchet
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv
(cd experiments/cuda-sgemm && nvcc -cubin -arch=sm_90 -O3 -o sgemm.cubin sgemm.cu) || exit 1
S=experiments/telemetry-h200/spec.yaml
q() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(str(x) for x in r))' "$@"; }
cp experiments/cuda-sgemm/launch.json /tmp/launch.json.orig
for mode in serial pool; do
	db="$OUT/tel-$mode.db"
	extra=
	[ $mode = pool ] && extra="--devices cuda:0"
	t1=$(date +%s)
	./$B/ratchet --db "$db" run --quiet --max-iterations 3 $extra "$S" > "$OUT/run-$mode.out" 2>&1
	echo "$mode: exit $? in $(( $(date +%s) - t1 )) s"
	tail -5 "$OUT/run-$mode.out"
	q "$db" "SELECT 'telemetry.device = ' || value FROM env_facts WHERE key = 'telemetry.device'"
	q "$db" "SELECT seq, variant, state, substr(reason, 1, 90) FROM iterations ORDER BY seq"
	q "$db" "SELECT i.seq, m.arm, m.metric, round(avg(m.value), 1), count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE m.benchmark = 'telemetry' AND m.metric IN ('sm_clock_mhz', 'power_w', 'temp_c', 'throttled') GROUP BY i.seq, m.arm, m.metric ORDER BY i.seq, m.arm, m.metric"
	cp /tmp/launch.json.orig experiments/cuda-sgemm/launch.json # the second campaign starts from the same table
done
echo "total $(( $(date +%s) - t0 )) s"
