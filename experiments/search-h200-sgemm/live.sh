#!/bin/sh
# The campaign part of run-live.sh, also runnable by hand: copies this
# folder (and ../cuda-sgemm/sgemm_tile.cuh, which sgemm_point.cu includes)
# to WORK, builds the baseline point, runs campaign.yaml with the budget,
# and prints the best point, its GFLOP/s, the evaluations and the distance
# to the sweep's optimum.
#   usage: [MAX=60] [FOR=6m] [NVCC=nvcc] [DEVICES=cuda:0,cuda:1] sh live.sh RATCHET WORK DB
# DEVICES runs it as a device pool (--devices): rounds of trials in pinned workers.
set -eu
R=${1:?usage: live.sh RATCHET WORK DB} W=${2:?} DB=${3:?}
H=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W" && mkdir -p "$W/cuda-sgemm"
cp -r "$H" "$W/search-h200-sgemm" && rm -rf "$W/search-h200-sgemm/results-h200"
cp "$H/../cuda-sgemm/sgemm_tile.cuh" "$W/cuda-sgemm/"
cd "$W/search-h200-sgemm"
sh build-point.sh
rc=0
NO_COLOR=1 "$R" --db "$DB" run --max-iterations "${MAX:-60}" --for "${FOR:-6m}" ${DEVICES:+--devices "$DEVICES"} \
	campaign.yaml || rc=$?
echo "ratchet run exited $rc"
NO_COLOR=1 "$R" --db "$DB" log | tail -n 70
echo "final point: $(cat point.json)"
# the final point by the sweep's numbers (median of its 3 repeats)
pt=$(sed 's/[ {}]//g' point.json)
sw=$(grep -F "\"point\":{$pt}" "$H/results-h200/sweep.jsonl" | sed 's/.*"values":\[\([^]]*\)\].*/\1/' |
	tr ',' '\n' | sort -g | sed -n 2p)
echo "the final point in the sweep: ${sw:-?} GFLOP/s; the sweep's optimum 29782.32 GFLOP/s (BM=128 BN=128 BK=32 TM=8 TN=8)"
awk -v g="${sw:-0}" 'BEGIN { if (g + 0 > 0) printf "distance to the sweep optimum: %+.2f%%\n", (g / 29782.32 - 1) * 100 }'
if command -v sqlite3 >/dev/null; then
	echo "evaluations (proposals): $(sqlite3 "$DB" "SELECT count(*) FROM proposals")"
	echo "best (live, GFLOP/s): $(sqlite3 "$DB" "SELECT round(CASE WHEN kind = 'baseline' THEN obj_best ELSE obj_cand END) FROM iterations WHERE id = (SELECT best_iteration FROM campaigns ORDER BY id DESC LIMIT 1)")"
else
	echo "evaluations: the iterations in the log above, less the baseline"
fi
