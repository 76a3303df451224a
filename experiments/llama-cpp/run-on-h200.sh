#!/bin/bash
# On the H200 (the device tool's nvidia-h200), in one call: builds llama.cpp
# for CUDA with tools/llama.sh --cuda (llama-server, llama-bench,
# llama-batched-bench; the npm package comes carried, its sha256 checked),
# ratchet (against the carried .devdeps) and a ~1B random-weight model, all
# at once; then runs campaign-h200.yaml.in for its 6 variants with
# telemetry. ratchet.db, the run's output, the build logs and a results
# summary are written under $OUT. While the campaign runs, a portable CPU
# build (tools/llama.sh --portable, nice 19, 8 jobs: the campaign's engine
# runs on the GPU) is packed into $OUT/llama-cpu-avx2.tgz for the 2-core CPU
# machine, whose loaded build takes far longer; the cache path is the same
# there, so the binaries' RUNPATH holds.
#   run-on-h200.sh PKG_TGZ GSM8K_TEST_JSONL
set -u
pkg=$1
gsm8k=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
. experiments/cuda-sweep/h200-env.sh h200-log.txt
t0=$(date +%s)
# $OUT takes 8 files at most: the log (h200-log.txt), campaign.yaml,
# ratchet.db, run.out, report.md, show.txt and llama-cpu-avx2.tgz; the rest
# goes to $O.
O=/tmp/o && mkdir -p $O
C=$HOME/.cache/ratchet/llama.cpp
export LLAMA_NICE=0 PATH=/usr/local/cuda/bin:$PATH
[ -x /usr/local/cuda/bin/nvcc ] && export CUDACXX=/usr/local/cuda/bin/nvcc
mkdir -p $C && cp "$pkg" $C/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
(sh tools/llama.sh --cuda --jobs 14 > $O/llama-bin.txt 2> $O/llama-sh.log; echo $? > /tmp/llama.rc) &
lb=$!
OUT=$O h200_build build-h200 ratchet
echo "ratchet built: $(( $(date +%s) - t0 )) s"
src=$(ls -d $C/*-cuda/src 2>/dev/null | head -1)
while [ -z "$src" ] || [ ! -f "$src/models/ggml-vocab-llama-spm.gguf" ]; do sleep 2; src=$(ls -d $C/*-cuda/src 2>/dev/null | head -1); done
W=/tmp/h200w && mkdir -p $W
python3 experiments/llama-cpp/mkmodel.py $W/model.gguf --vocab "$src/models/ggml-vocab-llama-spm.gguf" --type q8_0 \
	--seed 1 --embd 2048 --layers 16 --ff 5632 --heads 16 --ctx 16384 | tee $O/model.txt
wait $lb
cat $O/llama-sh.log
[ "$(cat /tmp/llama.rc)" = 0 ] || { tail -40 $C/*-cuda/build.log; exit 1; }
bin=$(tail -1 $O/llama-bin.txt)
echo "llama.cpp built: $(( $(date +%s) - t0 )) s ($(cat $C/*-cuda/built) s in llama.sh)"
"$bin/llama-server" --version 2>&1 | head -3
sed -e "s|@BIN@|$bin|g" -e "s|@MODEL@|$W/model.gguf|g" -e "s|@GSM8K@|$gsm8k|g" \
	experiments/llama-cpp/campaign-h200.yaml.in > $W/campaign.yaml
cp $W/campaign.yaml $OUT/
(LLAMA_NICE=19 sh tools/llama.sh --portable --jobs 8 > $O/cpu-bin.txt 2> $O/cpu-build.log &&
	d=$(ls -d $C/*-cpu-avx2) && tar czf $OUT/llama-cpu-avx2.tgz -C / ${d#/}/pkg ${d#/}/built \
	$(cd / && ls -d ${d#/}/build/bin/*)) &
cpub=$!
cd $W
left=$(( 585 - ($(date +%s) - t0) ))
echo "campaign: ${left} s left"
timeout --signal=INT $(( left - 15 )) "$OLDPWD/build-h200/ratchet" --db $OUT/ratchet.db run --quiet campaign.yaml > $OUT/run.out 2>&1
echo "campaign exit $? after $(( $(date +%s) - t0 )) s"
tail -15 $OUT/run.out
R="$OLDPWD/build-h200/ratchet --db $OUT/ratchet.db"
$R log 2>&1
$R report --format md -o $OUT/report.md > /dev/null 2>&1
for s in $(python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute("SELECT seq FROM iterations ORDER BY seq"): print(r[0])' $OUT/ratchet.db); do $R show 1:$s; done > $OUT/show.txt 2>&1
while kill -0 $cpub 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt 594 ]; do sleep 1; done
echo "portable CPU build: $(cat $O/cpu-bin.txt; tail -3 $O/cpu-build.log) $(ls -la $OUT/llama-cpu-avx2.tgz)"
echo "total $(( $(date +%s) - t0 )) s"
