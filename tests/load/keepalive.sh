#!/bin/sh
# A server that drops kept-alive connections (issue 24 item 1): simserve
# --keepalive-drop 2 closes every connection, unanswered, when its second
# request arrives, as llama-server's cpp-httplib sometimes closes an idle
# connection just as the client sends on it. libcurl resends such a request on
# a fresh connection, but libcurl 7.88 counts those resends per easy handle
# over the handle's whole life and fails every request after the 5th ("Connection
# died, tried 5 times before giving up"; 39 of 1,000 streamed requests against
# a real llama-server). Every request must succeed, closed and open loop.
# Without the fix in runner/oai/oai_client.c (xfer_renew), closed_loop fails
# 8 of 60 with that message. libcurl's resends also take an idle kept-alive
# connection when there is one, so on a loaded host two transfers can pass
# their doomed connections back and forth until one gives up after 5; such a
# request is sent once more (resend_dead): without that, 7 of 30 runs of this
# test, 6 at a time on this loaded 2-core host, failed a request; with it, 0
# of 30. concurrent runs 4 loads at once against one server, which makes that
# timing likelier, but it is not deterministic: 0 of 8 runs failed without
# resend_dead on a quieter moment. Cases: closed_loop, open_loop, concurrent.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
[ -x "$RATCHET_BUILD/simserve" ] || { echo "SKIP: simserve not built"; exit 77; }
T=$(mktemp -d /tmp/ratchet-keepalive-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$RATCHET_BUILD/simserve" --zero-latency --keepalive-drop 2 > "$T/s.log" 2>&1 &
pid=$!
i=0
until grep -q listening "$T/s.log"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "simserve did not start: $(cat "$T/s.log")"; sleep 0.05
done
URL="http://$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$T/s.log")"

# closed_loop: 2 handles, 60 requests: each handle sees ~30 dropped connections
"$RATCHET_BIN" --db "$T/r.db" bench load -e "$URL" -c 2 -n 60 --prompt-tokens 8 --output-tokens 4 \
	> "$T/out" 2> "$T/err"
rc=$?
grep -q "Successful requests: *60$" "$T/out" || fail "closed loop (exit $rc): $(cat "$T/out" "$T/err")"
grep -q "Failed requests: *0$" "$T/out" || fail "closed loop failures: $(cat "$T/out")"
echo "ok: closed loop, 60 of 60 through dropped keep-alive connections"

# open_loop: a constant rate
"$RATCHET_BIN" --db "$T/r.db" bench load -e "$URL" --rate 100 --pattern constant -n 40 \
	--prompt-tokens 8 --output-tokens 4 > "$T/out" 2> "$T/err"
rc=$?
grep -q "Successful requests: *40$" "$T/out" || fail "open loop (exit $rc): $(cat "$T/out" "$T/err")"
echo "ok: open loop, 40 of 40"

# concurrent: 4 closed loops at once, each through the same drops
loads=
for k in 1 2 3 4; do
	"$RATCHET_BIN" --db "$T/c$k.db" bench load -e "$URL" -c 2 -n 60 --prompt-tokens 8 --output-tokens 4 \
		> "$T/c$k.out" 2> "$T/c$k.err" &
	loads="$loads $!"
done
wait $loads
for k in 1 2 3 4; do
	grep -q "Successful requests: *60$" "$T/c$k.out" || fail "concurrent $k: $(cat "$T/c$k.out" "$T/c$k.err")"
done
echo "ok: 4 concurrent closed loops, 60 of 60 each"
