#!/bin/bash
# Runs on the GPU machine (see docs/devices.md, "On the H200"): compiles one
# cubin per point of the SGEMM search space with nvcc (16 at a time), builds
# sweep_points against the carried .devdeps, and sweeps every point.
# Results: $OUT/sweep.jsonl (one line per point), $OUT/sweep-log.txt.
#   run: command "bash experiments/search-h200-sgemm/run-sweep-on-h200.sh", carry [".devdeps"]
set -u
. experiments/cuda-sweep/h200-env.sh sweep-log.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
t0=$(date +%s)
B=build-h200
D=experiments/search-h200-sgemm
C=/tmp/cubins
mkdir -p $C
sh $D/points.sh | head -n ${SWEEP_LIMIT:-100000} >$C/points.txt
echo "points: $(wc -l <$C/points.txt)"
# one module per point
xargs -P 16 -L 1 sh -c 'nvcc -arch=sm_90 -cubin -O3 -DP_BM=$0 -DP_BN=$1 -DP_BK=$2 -DP_TM=$3 -DP_TN=$4 -o '$C'/p_$0_$1_$2_$3_$4.cubin '$D'/sgemm_point.cu' <$C/points.txt
echo "nvcc: $(ls $C/*.cubin | wc -l) cubins in $(( $(date +%s) - t0 )) s"
[ "$(ls $C/*.cubin | wc -l)" -gt 0 ] || exit 1
h200_build $B sweep_points
echo "build: $(( $(date +%s) - t0 )) s"
$B/sweep_points sgemm "$OUT/sweep.jsonl" $C $C/points.txt ${SWEEP_SIZE:-2048} ${SWEEP_REPEATS:-3}
rm -f "$OUT/sweep.jsonl.launch.json"
echo "total $(( $(date +%s) - t0 )) s"
