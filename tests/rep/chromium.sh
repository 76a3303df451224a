#!/bin/sh
# End-to-end check of the HTML journal: build the fixture database, write the
# report with the ratchet binary, render it in headless Chromium (screenshot
# at desktop and phone width, DOM dump), and check that every chart is there
# with the expected number of points and that the page logged no console
# error. Skipped (77) when Chromium is not installed.
# Cases: chart-objective 9 points, chart-gate 6, chart-waterfall 3,
# chart-latency 160; no injected <script>; no console error; screenshots made.
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
chrome phone --screenshot="$W/phone.png" --window-size=390,2400 \
	"file://$W/report.html" >/dev/null 2>>"$W/shot.err" || fail "chromium phone screenshot failed"
[ -s "$W/desktop.png" ] && [ -s "$W/phone.png" ] || fail "no screenshot written"

chrome_console "$W/dom.err" "$W/shot.err" && fail "console errors while rendering the report"

status=0
for spec in chart-objective:9 chart-gate:6 chart-waterfall:3 chart-latency:160; do
	id=${spec%%:*} want=${spec#*:}
	got=$(chart_points "$id" "$W/dom.html")
	if [ "$got" != "$want" ]; then
		echo "FAIL: $id has $got points in the DOM, want $want"
		status=1
	else
		echo "ok: $id $got points"
	fi
done
grep -q '<script' "$W/dom.html" && { echo "FAIL: a <script> element reached the DOM"; status=1; }
grep -q 'alert(1)' "$W/dom.html" || { echo "FAIL: the escaped note text is missing"; status=1; }
[ -n "$KEEP" ] && echo "kept $W (desktop.png, phone.png, dom.html)"
exit $status
