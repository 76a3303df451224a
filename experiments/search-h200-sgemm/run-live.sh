#!/bin/bash
# The live H200 search (issue 12): builds ratchet on the GPU machine against
# the carried .devdeps, then runs campaign.yaml (strategy model) through
# `ratchet run` in a copy of this folder, with a budget of 60 evaluations
# and 6 minutes, and prints the best point, its GFLOP/s, the evaluations
# used, and the distance to the sweep's optimum (results-h200/sweep.jsonl:
# BM=128 BN=128 BK=32 TM=8 TN=8, 29,782 GFLOP/s).
#   run: command "bash experiments/search-h200-sgemm/run-live.sh", carry [".devdeps"]
#   MAX (default 60) and FOR (default 6m) override the budget.
set -u
. experiments/cuda-sweep/h200-env.sh live-log.txt
t0=$(date +%s)
B=build-h200
h200_build $B ratchet
echo "build: $(( $(date +%s) - t0 )) s"
sh experiments/search-h200-sgemm/live.sh "$PWD/$B/ratchet" /tmp/h200-search "$OUT/live.db"
rm -f "$OUT/live.db-wal" "$OUT/live.db-shm"
echo "total $(( $(date +%s) - t0 )) s"
