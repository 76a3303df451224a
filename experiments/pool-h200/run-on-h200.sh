#!/bin/bash
# On the two-GPU H200 machine (the device tool's nvidia-h200-x2): builds
# ratchet against the carried .devdeps, then run.sh (the pool campaign on
# cuda:0 and cuda:1, then on cuda:0 alone) and keeps both databases in
# $OUT for the telemetry and the decisions.
#   run: command "bash experiments/pool-h200/run-on-h200.sh", carry [".devdeps"]
set -u
. experiments/cuda-sweep/h200-env.sh pool-log.txt
t0=$(date +%s)
B=build-h200
h200_build $B ratchet
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi -L
sh experiments/pool-h200/run.sh "$PWD/$B" cuda /tmp/pool
for d in par ser; do
	cp /tmp/pool/$d/c.db "$OUT/pool-$d.db" 2>/dev/null; cp /tmp/pool/$d/c.db-wal "$OUT/pool-$d.db-wal" 2>/dev/null
	cp /tmp/pool/$d.out "$OUT/pool-$d.out" 2>/dev/null
done
echo "total $(( $(date +%s) - t0 )) s"
