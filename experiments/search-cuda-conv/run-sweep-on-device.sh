#!/bin/bash
# Runs on the GPU machine (the device tool's H100 or H200; docs/devices.md,
# "On the H200"): compiles one cubin per point of the convolution search
# space with nvcc (14 at a time)
# while it builds sweep_points against the carried .devdeps, then sweeps every
# point (a point that did not compile is recorded as such, not measured).
# Results: $OUT/sweep.jsonl (one line per point), $OUT/sweep-log.txt.
#   run: command "bash experiments/search-cuda-conv/run-sweep-on-device.sh", carry [".devdeps"]
#   (and "build-conv/cubins", cubins that build-cubins.sh made here beforehand)
# SWEEP_POINTS: a file of points to sweep instead of the whole space (a
# second call's remainder); SWEEP_DEADLINE: seconds after the start past
# which no further point is measured (default 560, inside the device tool's
# 600 s a call).
set -u
. experiments/cuda-sweep/h200-env.sh sweep-log.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
t0=$(date +%s)
B=build-h200
D=experiments/search-cuda-conv
C=/tmp/conv-cubins
mkdir -p $C
# cubins compiled beforehand (carried as build-conv/cubins) are not compiled again
[ -d build-conv/cubins ] && cp build-conv/cubins/p_* $C/ 2>/dev/null
if [ -n "${SWEEP_POINTS:-}" ]; then cp "$SWEEP_POINTS" $C/points.txt; else sh $D/points.sh >$C/points.txt; fi
echo "points: $(wc -l <$C/points.txt)"
sh $D/build-cubins.sh $C 14 $C/points.txt >$OUT/nvcc.log 2>&1 &
nv=$!
h200_build $B sweep_points
echo "build: $(( $(date +%s) - t0 )) s"
wait $nv
tail -1 $OUT/nvcc.log
echo "nvcc: $(( $(date +%s) - t0 )) s"
left=$(( ${SWEEP_DEADLINE:-560} - ($(date +%s) - t0) ))
$B/sweep_points conv "$OUT/sweep.jsonl" $C $C/points.txt ${SWEEP_SIZE:-2048} 0 $left
rm -f "$OUT/sweep.jsonl.launch.json"
echo "total $(( $(date +%s) - t0 )) s"
