#!/bin/sh
# Warnings of `ratchet check` (issue 23, item 4): a spec that loads but
# probably does not say what its author meant. A latency bound without a
# unit (`decode.ttft_p95 <= 500`) is 500 seconds: check exits 0, prints the
# normalized spec on stdout and on stderr one warning naming the file, line,
# key and the unit to write; with a unit, or on a metric that is not a
# latency, nothing is said.
set -u
: "${RATCHET_BIN:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
spec() { # CONSTRAINT
	cat > s.yaml <<Y
name: t
engine:
  command: [./server, --port, "{port}"]
benchmarks:
  - name: decode
    load: {concurrency: 4, requests: 8}
objective: {metric: decode.output_throughput}
constraints: ["$1"]
Y
}
spec 'decode.ttft_p95 <= 500'
"$RATCHET_BIN" check s.yaml > out 2> err; rc=$?
if [ $rc -ne 0 ] || ! [ -s out ] ||
	! grep -q "^s.yaml:8:[0-9]*: constraints\[0\]: warning: 'decode.ttft_p95 <= 500' has no unit: ttft_p95 is in seconds, so this bound is 500 s; write the unit (500s, 500ms)$" err; then
	echo "FAIL bare latency bound: exit $rc"; cat err; fail=1
fi
for c in 'decode.ttft_p95 <= 500ms' 'decode.request_throughput >= 5'; do
	spec "$c"
	"$RATCHET_BIN" check s.yaml > out 2> err; rc=$?
	if [ $rc -ne 0 ] || [ -s err ]; then echo "FAIL '$c': exit $rc"; cat err; fail=1; fi
done
[ $fail -eq 0 ] && echo PASS
exit $fail
