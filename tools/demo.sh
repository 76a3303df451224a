#!/bin/sh
# make demo: a real campaign on the CPU example (a blocked SGEMM tuned one
# tile-table entry at a time, gated by numeric correctness), recorded in
# ./ratchet.db. The experiment is copied to .demo/ so the repository's own
# files are never modified.
set -eu
B=${1:-build}
R="$PWD/$B/ratchet"
rm -rf .demo
mkdir -p .demo
cp -r experiments/cpu-gemm .demo/cpu-gemm
SPEC=.demo/cpu-gemm/campaign.yaml
"$R" check "$SPEC" > /dev/null
echo "== ratchet run $SPEC   (database: ./ratchet.db)"
"$R" run "$SPEC"
echo
echo "== ratchet log"
"$R" log
echo
"$R" report --format html -o ratchet-report.html
"$R" report --format md -o ratchet-report.md
echo "wrote ratchet-report.html and ratchet-report.md"
echo "next: ratchet show ID, ratchet regressions, ratchet restore"
