#!/bin/sh
# `ratchet gate` end to end against a GSM8K server: simserve's GSM8K mode or
# the tests' fake server (its path is $1). Checks: exact accuracy, a pass
# against its own baseline with 0 flips and every response identical (the
# response-level identical rate), the flip knob caught with the flips
# listed and 2 of 100 responses no longer identical, early stop, failures above the limit giving exit 3, well-formed
# JUnit XML and Markdown summary, and the API key nowhere in the database,
# stdout, stderr, JUnit or summary. Exit 77: the server is not built.
set -u
SERVER=$1
[ -x "$SERVER" ] || { echo "skip: $SERVER not built"; exit 77; }
DATA=${RATCHET_GSM8K_DIR}/test.jsonl
T=$(mktemp -d /tmp/rt-gate-cli-XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

# start ARGS...: start the server, set URL.
start() {
	[ -n "$PID" ] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
	: > "$T/srv.out"
	"$SERVER" --port 0 --gsm8k "$DATA" --zero-latency "$@" > "$T/srv.out" 2> "$T/srv.err" &
	PID=$!
	i=0
	while ! grep -q "listening on" "$T/srv.out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$PID" 2>/dev/null; then
			cat "$T/srv.err"
			# an older simserve without GSM8K mode: skip rather than fail
			grep -qi "gsm8k" "$T/srv.err" && { echo "skip: no GSM8K mode"; exit 77; }
			fail "server did not start"
		fi
		sleep 0.05
	done
	URL="http://$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$T/srv.out" | head -n 1)"
}

export RATCHET_GSM8K="$RATCHET_GSM8K_DIR"
KEY="sk-test-DO-NOT-LEAK-7731"
export OPENAI_API_KEY="$KEY"
G() { "$RATCHET_BIN" --db "$T/r.db" gate --model sim "$@" > "$T/out" 2> "$T/err"; }

# 1. exact accuracy: floor(100 * 0.9) = 90 right; junit + summary written
start --gsm8k-accuracy 0.9
G --endpoint "$URL" --label ci --format gsm8k_cot --limit 100 --min-accuracy 0.85 \
	--junit "$T/j.xml" --summary "$T/s.md"
rc=$?
[ $rc -eq 0 ] || fail "pass expected, got exit $rc"
grep -q "PASS: accuracy 0.9000 .*(90/100 flexible)" "$T/out" || fail "accuracy line"
[ "$(wc -l < "$T/out")" -eq 1 ] || fail "one line expected"

# 2. the unchanged server against its own baseline: pass, 0 flips, identical 100%
G --endpoint "$URL" --label ci --format gsm8k_cot --limit 100 --baseline latest-pass
[ $? -eq 0 ] || fail "unchanged server must pass"
grep -q "vs run 1: +0.0000 .*flips 0 to wrong / 0 to right, identical 100.0% (responses 100.0%)" "$T/out" ||
	fail "0 flips, every response identical"

# 3. the flip knob: questions 3 and 17 go wrong, listed; exit 1
start --gsm8k-accuracy 0.9 --flip 3,17
G --endpoint "$URL" --label ci --format gsm8k_cot --limit 100 --baseline latest-pass \
	--max-drop 0.01 --no-early-stop --junit "$T/j2.xml" --summary "$T/s2.md" --json
rc=$?
[ $rc -eq 1 ] || fail "flips must fail, got exit $rc"
grep -q '"flips_to_wrong":\[3,17\]' "$T/out" || fail "flips listed in json"
# the response-level identical rate: the 2 flipped responses of 100 differ
grep -q '"identical_response_rate":0.9799' "$T/out" || fail "response-level identical rate in json"
grep -q '"status":"fail"' "$T/out" || fail "json status"
grep -q "<failure" "$T/j2.xml" || fail "junit failure"
grep -q "Flipped to wrong (question index): 3, 17" "$T/s2.md" || fail "summary flips"

# 4. early stop: accuracy 0.5 against min 0.9 over all 1319 stops well before the end
start --gsm8k-accuracy 0.5
G --endpoint "$URL" --format gsm8k --limit 0 --min-accuracy 0.9 --concurrency 8
rc=$?
[ $rc -eq 1 ] || fail "early stop must fail, got exit $rc"
grep -q "stopped early after" "$T/err" || fail "early stop said"
n=$(sed -n 's/.*(\([0-9]*\)\/\([0-9]*\) flexible.*/\2/p' "$T/out")
[ -n "$n" ] && [ "$n" -lt 400 ] || fail "stopped after $n answers, want < 400"

# 5. failed requests above the limit: exit 3 (nothing listening after the kill)
kill "$PID"; wait "$PID" 2>/dev/null; PID=
G --endpoint "$URL" --limit 20 --retries 1 --junit "$T/j3.xml" --summary "$T/s3.md"
rc=$?
[ $rc -eq 3 ] || fail "refused connections must be exit 3, got $rc"
grep -q "<error" "$T/j3.xml" || fail "junit error element"

# 6. well-formed XML (one parser run for all three files) and Markdown
if command -v python3 >/dev/null 2>&1; then
	python3 -c "
import sys, xml.etree.ElementTree as E
for f in sys.argv[1:]:
    r = E.parse(f).getroot()
    assert r.tag == 'testsuite' and len(r.findall('testcase')) == 1, f
    assert r.find('properties') is not None, f
" "$T/j.xml" "$T/j2.xml" "$T/j3.xml" || fail "JUnit files are not well-formed"
else
	for x in "$T/j.xml" "$T/j2.xml" "$T/j3.xml"; do
		[ "$(grep -c '<testsuite' "$x")" -eq 1 ] && grep -q '</testsuite>' "$x" || fail "$x"
	done
fi
head -n 1 "$T/s.md" | grep -q "^## GSM8K gate: PASS" || fail "summary heading"
grep -q "^| accuracy | 0.9000 (90/100) |" "$T/s.md" || fail "summary table"

# 7. the key reached nothing it must not reach
for f in "$T"/r.db* "$T"/out "$T"/err "$T"/*.xml "$T"/*.md; do
	[ -f "$f" ] || continue
	grep -q "DO-NOT-LEAK" "$f" && fail "API key found in $f"
done
# a missing --api-key-env variable is a usage error
"$RATCHET_BIN" --db "$T/r.db" gate --endpoint "$URL" --api-key-env RT_NO_SUCH_VAR_X > /dev/null 2>&1
[ $? -eq 2 ] || fail "missing key variable must be exit 2"
echo "ok"
