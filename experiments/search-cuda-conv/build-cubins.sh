#!/bin/sh
# Compiles conv_point.cu once per point of the space (points.sh) into
# DIR/p_BX_BY_TX_TY_PAD_RO.cubin, JOBS at a time; a point that does not
# compile leaves DIR/p_....err, the compiler's message, instead.
#   usage: sh build-cubins.sh DIR [JOBS] [POINTS]   (POINTS: a file of points,
#   default the whole space; NVCC: the compiler, default nvcc on PATH, else
#   /usr/local/cuda/bin/nvcc)
set -eu
H=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export NVCC H dir
{ if [ -n "${3:-}" ]; then cat "$3"; else sh "$H/points.sh"; fi; } | xargs -P "${2:-16}" -L 1 sh -c '
	k=p_$0_$1_$2_$3_$4_$5
	[ -s "$dir/$k.cubin" ] || [ -s "$dir/$k.err" ] && exit 0
	if "$NVCC" -arch=sm_90 -cubin -O3 -DP_BX=$0 -DP_BY=$1 -DP_TX=$2 -DP_TY=$3 -DP_PAD=$4 -DP_RO=$5 \
		-o "$dir/$k.tmp" "$H/conv_point.cu" 2>"$dir/$k.log"; then
		mv "$dir/$k.tmp" "$dir/$k.cubin"
	else
		mv "$dir/$k.log" "$dir/$k.err"
	fi
	rm -f "$dir/$k.log" "$dir/$k.tmp"'
echo "build-cubins: $(ls "$dir" | grep -c "\.cubin$") compiled, $(ls "$dir" | grep -c "\.err$") did not"
