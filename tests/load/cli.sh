#!/bin/sh
# `ratchet bench load` end to end: against load_testserver (a real HTTP server
# on loopback, port 0), the summary, --json, stored records, a bad stream's
# exit code, and usage errors. Cases: summary_and_store, json, bad_stream_exit_3,
# usage_errors, capacity_search.
set -eu
T=$(mktemp -d)
SRV=""
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
start() {
	# empty the file first: the background server truncates it only when it
	# starts, and until then the previous server's "listening" line is there
	: >"$T/srv.out"
	"$RATCHET_BUILD/load_testserver" "$@" >>"$T/srv.out" &
	SRV=$!
	i=0
	while ! grep -q listening "$T/srv.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "server did not start"; exit 1; }
		sleep 0.1
	done
	URL="http://$(sed 's/.*listening on //' "$T/srv.out")"
}
stop() { kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=""; }
fail() { echo "FAIL: $*"; exit 1; }
DB="$T/r.db"

# summary_and_store
start ok 0
"$RATCHET_BIN" --db "$DB" bench load --endpoint "$URL" -c 4 -n 40 --output-tokens 4 \
	--prompt-tokens 16 --warmup 2 >"$T/out" 2>"$T/err" || fail "exit $?"
grep -q "Successful requests: *40" "$T/out" || fail "summary: $(cat "$T/out")"
grep -q "Total generated tokens: *160" "$T/out" || fail "tokens"
grep -q "stored 42 request records" "$T/err" || fail "stored: $(cat "$T/err")"
# json
"$RATCHET_BIN" --db "$DB" bench load --endpoint "$URL" --rate 200 --pattern constant -n 20 \
	--output-tokens 2 --slo ttft_p95=2s --json >"$T/json" || fail "json exit"
grep -q '"completed": 20' "$T/json" || fail "json: $(cat "$T/json")"
grep -q '"stored_records": 20' "$T/json" || fail "json stored"
# capacity_search (with the serial server: 5 ms per request)
stop
start serial 0
"$RATCHET_BIN" --db "$DB" --quiet bench load --endpoint "$URL" --rates 20,400 --slo ttft_p95=40ms \
	--duration 0.5s --output-tokens 2 --json >"$T/cap" || fail "capacity exit"
grep -q '"max_rate"' "$T/cap" || fail "capacity: $(cat "$T/cap")"
stop
# bad_stream_exit_3
start badjson 0
set +e
"$RATCHET_BIN" --db "$DB" bench load --endpoint "$URL" -n 3 >"$T/out" 2>"$T/err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "bad stream: exit $rc"
grep -q "bad json" "$T/out" || fail "reason: $(cat "$T/out")"
stop
# usage_errors
set +e
"$RATCHET_BIN" --db "$DB" bench load -n 3 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "missing endpoint: exit $rc"
"$RATCHET_BIN" --db "$DB" bench load --endpoint http://x --concurency 3 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "did you mean '--concurrency'" "$T/err" || fail "did you mean: $(cat "$T/err")"
"$RATCHET_BIN" --db "$DB" bench load --endpoint http://x --slo ttft_p95=4parsecs 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "bad slo: exit $rc"
"$RATCHET_BIN" --db "$DB" bench lod 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "did you mean 'load'" "$T/err" || fail "subcommand dym"
set -e
echo "ok: test_load_cli"
