#!/bin/sh
# Prints the H200 SGEMM search space, one point per line: "BM BN BK TM TN".
# The space (583 points) and its restrictions, the same ones campaign.yaml
# declares:
#   BM, BN in {16, 32, 64, 128, 256}; BK in {8, 16, 32}; TM, TN in {1, 2, 4, 8}
#   TM <= BM, TN <= BN
#   64 <= (BM/TM) * (BN/TN) <= 512           threads per block
#   4 * BK * (BM + 4 + BN) <= 49152          static shared memory, bytes
#   TM * TN <= 64                            accumulators per thread
for bm in 16 32 64 128 256; do for bn in 16 32 64 128 256; do for bk in 8 16 32; do
for tm in 1 2 4 8; do for tn in 1 2 4 8; do
	[ $tm -le $bm ] && [ $tn -le $bn ] || continue
	nt=$(( (bm / tm) * (bn / tn) ))
	[ $nt -ge 64 ] && [ $nt -le 512 ] || continue
	[ $(( 4 * bk * (bm + 4 + bn) )) -le 49152 ] || continue
	[ $(( tm * tn )) -le 64 ] || continue
	echo "$bm $bn $bk $tm $tn"
done; done; done; done; done
