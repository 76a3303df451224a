#!/bin/sh
# End-to-end check of the HTML journal: build the fixture database, write the
# report with the ratchet binary, render it in headless Chromium (screenshots
# at desktop and phone width, DOM dump), and check what leads it, that every
# chart is there with the expected number of points, that a phone's 390 px
# need no sideways scrolling, and that the page logged no console error.
# Skipped (77) when Chromium is not installed.
# Cases: sections in order (objective, kept changes, charts, the folded metric
# tables, iterations, levers, regressions); the client's send lag in its own
# folded table; chart-objective 9 points, chart-gate 6, chart-waterfall 3,
# chart-latency 160; without a gate no gate chart; at 390 px the page, every
# chart and every table fit the width and no table cell breaks code mid-word;
# no injected <script>; no console error; screenshots made (REP_KEEP=1 keeps
# them).
set -u
. "$(dirname "$0")/../lib/chromium.sh"
B=${RATCHET_BUILD:?} BIN=${RATCHET_BIN:?}
W=$(mktemp -d /tmp/rep-chromium-XXXXXX)
KEEP=${REP_KEEP:-}
cleanup() { [ -n "$KEEP" ] || rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$B/rep_mkfixture" "$W/r.db" || fail "could not build the fixture database"
"$BIN" --db "$W/r.db" --quiet report --format html -o "$W/report.html" || fail "ratchet report failed"

chrome dom --dump-dom "file://$W/report.html" >"$W/dom.html" 2>"$W/dom.err" ||
	fail "chromium --dump-dom failed: $(tail -3 "$W/dom.err")"
chrome desk --screenshot="$W/desktop.png" --window-size=1200,3000 \
	"file://$W/report.html" >/dev/null 2>"$W/shot.err" || fail "chromium --screenshot failed"
phone_frame report.html "" >"$W/phone-frame.html"
chrome phone --screenshot="$W/phone.png" --window-size=390,2400 \
	"file://$W/phone-frame.html" >/dev/null 2>>"$W/shot.err" || fail "chromium phone screenshot failed"
[ -s "$W/desktop.png" ] && [ -s "$W/phone.png" ] || fail "no screenshot written"

chrome_console "$W/dom.err" "$W/shot.err" && fail "console errors while rendering the report"

status=0
no() { echo "FAIL: $*"; status=1; }

# What leads the report, in order.
prev=0
for id in objective kept charts metrics all-metrics client-metrics iterations levers regressions; do
	at=$(grep -b -o "id=\"$id\"" "$W/dom.html" | head -1 | cut -d: -f1)
	if [ -z "$at" ]; then
		no "section $id missing"
	elif [ "$at" -le "$prev" ]; then
		no "section $id is out of order"
	else
		prev=$at
	fi
done
[ $status -eq 0 ] && echo "ok: sections in order"
awk 'BEGIN { RS = "</details>" } /id="all-metrics"/ && /send_lag/ { bad = 1 } END { exit bad }' "$W/dom.html" ||
	no "send_lag is in the table of all metrics"
awk 'BEGIN { RS = "</details>" } /id="client-metrics"/ && /send_lag_p99/ { ok = 1 } END { exit !ok }' "$W/dom.html" ||
	no "send_lag is not in the client self-metrics"

for spec in chart-objective:9 chart-gate:6 chart-waterfall:3 chart-latency:160; do
	id=${spec%%:*} want=${spec#*:}
	got=$(chart_points "$id" "$W/dom.html")
	if [ "$got" != "$want" ]; then
		no "$id has $got points in the DOM, want $want"
	else
		echo "ok: $id $got points"
	fi
done
grep -q '<script' "$W/dom.html" && no "a <script> element reached the DOM"
grep -q 'alert(1)' "$W/dom.html" || no "the escaped note text is missing"

# No gate: no gate chart (and no empty one).
cat >"$W/nogate.sql" <<'SQL'
UPDATE iterations SET gate_run_id = NULL;
DELETE FROM gate_answers;
DELETE FROM gate_runs;
SQL
cp "$W/r.db" "$W/nogate.db"
"$B/db_tool" load "$W/nogate.db" "$W/nogate.sql" || fail "could not remove the gate runs"
"$BIN" --db "$W/nogate.db" --quiet report --format html -o "$W/nogate.html" || fail "report without a gate"
chrome nogate --dump-dom "file://$W/nogate.html" >"$W/nogate-dom.html" 2>/dev/null
[ "$(chart_points chart-gate "$W/nogate-dom.html")" = -1 ] && [ "$(chart_points chart-objective "$W/nogate-dom.html")" = 9 ] &&
	echo "ok: no gate chart without a gate" || no "a campaign without a gate has a gate chart"
grep -q 'Gate:</b> none' "$W/nogate-dom.html" || no "the objective section does not say there is no gate"

# A phone: with the metric tables open, nothing is wider than 390 px, and no
# code in a table cell may break mid-word.
narrow=$(phone_probe report.html)
[ "$narrow" = "390:ok" ] && echo "ok: at 390 px everything fits, tables wrap by cell" || no "at 390 px: ${narrow:-no answer from the probe}"
[ -n "$KEEP" ] && echo "kept $W (desktop.png, phone.png, dom.html)"
exit $status
