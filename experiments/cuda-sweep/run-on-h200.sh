#!/bin/bash
# Runs on the GPU machine (see docs/devices.md, "On the H200"): builds the
# device layer, the kernel benchmark and cuda_sweep with CMake against the
# carried .devdeps, runs the device tests, `ratchet devices --peak` (when the
# whole binary builds), and the sweep + campaign replay. Results go to $OUT.
# The `run` call that starts it:
#   command: bash experiments/cuda-sweep/run-on-h200.sh
#   carry:   [".devdeps", ".devbuild"]      (.devbuild: cubins built here with nvcc, optional)
set -u
. experiments/cuda-sweep/h200-env.sh log.txt
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true
B=build-h200
t0=$(date +%s)
cmake -S . -B $B -DRATCHET_HIP=OFF -DRATCHET_ZE=OFF -DCMAKE_BUILD_TYPE=Release >"$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
grep 'ratchet:' "$OUT/cmake.log"
cmake --build $B -j16 --target cuda_sweep test_dev test_bench_kernel rt_test_kernels 2>&1 | grep -E 'error|warning' | head -20
S=$B/cuda/saxpy.cubin; G=$B/cuda/sgemm.cubin
if [ ! -e "$S" ]; then S=.devbuild/saxpy.cubin; G=.devbuild/sgemm.cubin; fi
if command -v nvcc >/dev/null; then
	mkdir -p $B/cuda
	nvcc -arch=sm_90 -cubin -O3 -o $B/cuda/saxpy.cubin experiments/cuda-saxpy/saxpy.cu && S=$B/cuda/saxpy.cubin
	nvcc -arch=sm_90 -cubin -O3 -o $B/cuda/sgemm.cubin experiments/cuda-sgemm/sgemm.cu && G=$B/cuda/sgemm.cubin
fi
echo "cubins: $S $G; build took $(( $(date +%s) - t0 )) s"
(cd $B && ctest -R 'test_dev|test_bench_kernel' --output-on-failure 2>&1 | tail -15)
if cmake --build $B -j16 --target ratchet >"$OUT/ratchet-build.log" 2>&1; then
	$B/ratchet --db "$OUT/ratchet.db" devices
	$B/ratchet --db "$OUT/ratchet.db" devices --peak --backend cuda
	$B/ratchet --db "$OUT/ratchet.db" devices --json --backend cuda >"$OUT/devices.json"
else
	echo "ratchet binary did not build here (other modules): see ratchet-build.log"
	tail -5 "$OUT/ratchet-build.log"
fi
$B/cuda_sweep "$OUT" "$S" "$G" ${SWEEP_ARGS:-}
rm -f "$OUT/launch.json" "$OUT/sweep.db-wal" "$OUT/sweep.db-shm"
echo "total $(( $(date +%s) - t0 )) s"
