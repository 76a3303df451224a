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
# A busy host (a 1-minute load above the cores) makes CPU timings noisy:
# say so, and point at the serving demo, which does not depend on them.
busy() {
	n=$(nproc 2>/dev/null || echo 1)
	l=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
	awk -v l="$l" -v n="$n" 'BEGIN { exit !(l > n) }' && {
		echo "note: this host is busy (load $l on $n cores): the CPU demo's timings are noisy and its"
		echo "      decisions may differ from run to run; \`make demo-serving\` is deterministic"
	}
	return 0
}
case "$WHAT" in
cpu)
	busy
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
