#!/bin/sh
# The build of one point of the live H200 SGEMM search (campaign.yaml): run
# by ratchet in the campaign's workdir after it renders point.json (and
# again after a revert), it compiles sgemm_point.cu for that point into
# sgemm.cubin (cached per point under .cubins/) and writes the launch table
# launch.json: entry P, the kernel sgemm_point with grid (N/BN, M/BM) and
# block (BM/TM)*(BN/TN), as sweep_points launches it.
#   usage: sh build-point.sh [SIZE]   (SIZE: M = N = K, default 2048)
#   NVCC: the compiler (default nvcc on PATH, else /usr/local/cuda/bin/nvcc)
set -eu
H=$(cd "$(dirname "$0")" && pwd)
size=${1:-2048}
get() { sed -n "s/.*\"$1\": *\([0-9][0-9]*\).*/\1/p" point.json; }
BM=$(get BM) BN=$(get BN) BK=$(get BK) TM=$(get TM) TN=$(get TN)
for v in "$BM" "$BN" "$BK" "$TM" "$TN"; do
	[ -n "$v" ] || { echo "build-point.sh: point.json lacks a parameter: $(cat point.json)" >&2; exit 1; }
done
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
key=${BM}_${BN}_${BK}_${TM}_${TN}
mkdir -p .cubins
if [ ! -s ".cubins/p_$key.cubin" ]; then
	"$nvcc" -arch=sm_90 -cubin -O3 -DP_BM="$BM" -DP_BN="$BN" -DP_BK="$BK" -DP_TM="$TM" -DP_TN="$TN" \
		-o ".cubins/p_$key.tmp" "$H/sgemm_point.cu"
	mv ".cubins/p_$key.tmp" ".cubins/p_$key.cubin"
fi
cp ".cubins/p_$key.cubin" sgemm.cubin.tmp && mv sgemm.cubin.tmp sgemm.cubin
printf '{"P": {"kernel": "sgemm_point", "grid": [%d, %d, 1], "block": %d}}\n' \
	$((size / BN)) $((size / BM)) $(((BM / TM) * (BN / TN))) > launch.json.tmp
mv launch.json.tmp launch.json
echo "point $key: sgemm.cubin, launch $(cat launch.json)"
