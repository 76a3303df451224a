#!/bin/sh
# make demo: a real campaign recorded in ./ratchet.db. The experiment is
# copied to .demo/ so the repository's own files are never modified.
#   tools/demo.sh BUILD          the CPU example: a blocked SGEMM whose tile
#                                table is tuned one entry at a time, gated by
#                                numeric correctness (no GPU, no data)
#   tools/demo.sh BUILD serving  simserve, the simulated serving engine: load
#                                benchmark, GSM8K gate (needs the GSM8K data:
#                                ../shared/data/gsm8k or $RATCHET_GSM8K)
set -eu
B=${1:-build}
WHAT=${2:-cpu}
R="$PWD/$B/ratchet"
mkdir -p .demo
case "$WHAT" in
cpu)
	rm -rf .demo/cpu-gemm
	cp -r experiments/cpu-gemm .demo/cpu-gemm
	SPEC=.demo/cpu-gemm/campaign.yaml
	;;
serving)
	rm -rf .demo/simserve
	mkdir -p .demo/simserve
	cp experiments/simserve/campaign.yaml experiments/simserve/tiles.json .demo/simserve/
	if [ -z "${RATCHET_GSM8K:-}" ]; then
		RATCHET_GSM8K=$(cd .. && pwd)/shared/data/gsm8k
		export RATCHET_GSM8K
	fi
	# the spec finds the data through simserve's --gsm8k path: point it at RATCHET_GSM8K
	sed "s|{workdir}/../../../shared/data/gsm8k/test.jsonl|$RATCHET_GSM8K/test.jsonl|" \
		experiments/simserve/campaign.yaml > .demo/simserve/campaign.yaml
	PATH="$PWD/$B:$PATH"
	export PATH
	SPEC=.demo/simserve/campaign.yaml
	;;
*)
	echo "usage: tools/demo.sh BUILD [cpu|serving]" >&2
	exit 2
	;;
esac
"$R" check "$SPEC" > /dev/null
echo "== ratchet run $SPEC   (database: ./ratchet.db)"
"$R" run "$SPEC"
echo
echo "== ratchet log"
"$R" log
echo
"$R" report --format html -o ratchet-report.html
"$R" report --format md -o ratchet-report.md
echo "next: ratchet show ID, ratchet regressions, ratchet restore"
