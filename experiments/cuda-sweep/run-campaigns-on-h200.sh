#!/bin/bash
# Runs the two CUDA campaigns through the real loop (`ratchet run`) on the GPU
# machine: builds ratchet against the carried .devdeps, builds the cubins
# with nvcc, measures the device ceilings (`ratchet devices --peak`), runs
# experiments/cuda-saxpy and experiments/cuda-sgemm in copies, and leaves the
# database, the logs and the reports in $OUT.
#   run: command "bash experiments/cuda-sweep/run-campaigns-on-h200.sh", carry [".devdeps"]
set -u
. experiments/cuda-sweep/h200-env.sh campaigns.txt
t0=$(date +%s)
B=build-h200
h200_build $B ratchet
R="$PWD/$B/ratchet --db $OUT/h200.db"
W=/tmp/work
rm -rf $W && mkdir -p $W
cp -r experiments/cuda-saxpy $W/saxpy && cp -r experiments/cuda-sgemm $W/sgemm
nvcc -arch=sm_90 -cubin -O3 -o $W/saxpy/saxpy.cubin experiments/cuda-saxpy/saxpy.cu
nvcc -arch=sm_90 -cubin -O3 -o $W/sgemm/sgemm.cubin experiments/cuda-sgemm/sgemm.cu
echo "build: $(( $(date +%s) - t0 )) s"
$R devices --peak --backend cuda
for c in saxpy sgemm; do
	echo "== ratchet run $c (t=$(( $(date +%s) - t0 )) s)"
	NO_COLOR=1 $R run $W/$c/campaign.yaml
	echo "final launch table:"; cat $W/$c/launch.json
done
echo "== ratchet log"
NO_COLOR=1 $R log --campaign 1
NO_COLOR=1 $R log --campaign 2
for id in 1 2; do
	$R report --campaign $id --format md -o "$OUT/report-$id.md"
	$R report --campaign $id --format html -o "$OUT/report-$id.html"
done
rm -f "$OUT/h200.db-wal" "$OUT/h200.db-shm"
echo "total $(( $(date +%s) - t0 )) s"
