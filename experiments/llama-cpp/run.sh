#!/bin/sh
# Runs the llama.cpp campaign on this machine: finds (or builds) llama.cpp
# with tools/llama.sh, makes the random-weight model, fills campaign.yaml.in
# into WORK/campaign.yaml and runs it.
#   experiments/llama-cpp/run.sh WORK [ratchet run options...]
# Environment: RATCHET (the ratchet binary, default build/ratchet), LLAMA_BIN
# (the llama.cpp bin folder; default: tools/llama.sh's), GSM8K (the test
# JSONL, default ../shared/data/gsm8k/test.jsonl beside the checkout),
# THREADS (default 1), MODEL_ARGS (mkmodel.py's size options; default a
# 8.6M-parameter model: 2 layers of 128, a context of 8192), SPEC_ONLY=1 (write the spec and
# the model, run nothing). A build without its source tree beside it (a
# static build made elsewhere, tools/llama.sh --static) takes the vocab
# from any source tree in the cache, and the patch variant needs the tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: run.sh WORK [ratchet run options]}
shift
mkdir -p "$work"
work=$(cd "$work" && pwd)
bin=${LLAMA_BIN:-$(sh "$root/tools/llama.sh" | tail -1)}
src=$(cd "$bin/../../src" 2>/dev/null && pwd || ls -d "$bin"/../../../*/src 2>/dev/null | head -1)
[ -n "$src" ] || { echo "run.sh: no llama.cpp source tree beside $bin (tools/llama.sh clones one)" >&2; exit 1; }
gsm8k=${GSM8K:-$root/../shared/data/gsm8k/test.jsonl}
model=$work/random-llama-q8_0.gguf
if [ ! -f "$model" ]; then
	# shellcheck disable=SC2086
	python3 "$here/mkmodel.py" "$model" --vocab "$src/models/ggml-vocab-llama-spm.gguf" --type q8_0 \
		--seed 1 ${MODEL_ARGS:---embd 128 --layers 2 --ff 384 --heads 2 --ctx 8192} >"$work/model.txt"
	cat "$work/model.txt"
fi
sed -e "s|@BIN@|$bin|g" -e "s|@SRC@|$src|g" -e "s|@MODEL@|$model|g" -e "s|@GSM8K@|$gsm8k|g" \
	-e "s|@THREADS@|${THREADS:-1}|g" -e "s|@HERE@|$here|g" "$here/campaign.yaml.in" >"$work/campaign.yaml"
if [ ! -f "$bin/../CMakeCache.txt" ] || [ ! -f "$bin/../../src/CMakeLists.txt" ]; then
	echo "run.sh: $bin has no build tree to rebuild; the ggml patch variant is left out" >&2
	sed -i '/^  - name: mul-mat-chunk-64$/,/^    build:/d' "$work/campaign.yaml"
fi
[ "${SPEC_ONLY:-0}" = 1 ] && exit 0
cd "$work"
exec "${RATCHET:-$root/build/ratchet}" --db "$work/ratchet.db" run "$@" campaign.yaml
