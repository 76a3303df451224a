#!/bin/sh
# End-to-end check of the HTML journal: build the fixture database, write the
# report with the ratchet binary, render it in headless Chromium (screenshot
# at desktop and phone width, DOM dump), and check that every chart is there
# with the expected number of points and that the page logged no console
# error. Skipped (77) when Chromium is not installed.
# Cases: chart-objective 9 points, chart-gate 6, chart-waterfall 3,
# chart-latency 160; no injected <script>; no console error; screenshots made.
set -u
CHROME=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROME" ]; then
	echo "SKIP: $CHROME not installed (apt-get install chromium)"
	exit 77
fi
B=${RATCHET_BUILD:?} BIN=${RATCHET_BIN:?}
W=$(mktemp -d /tmp/rep-chromium-XXXXXX)
KEEP=${REP_KEEP:-}
cleanup() { [ -n "$KEEP" ] || rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$B/rep_mkfixture" "$W/r.db" || fail "could not build the fixture database"
"$BIN" --db "$W/r.db" --quiet report --format html -o "$W/report.html" || fail "ratchet report failed"

chrome() {
	prof=$1
	shift
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$W/profile-$prof" --enable-logging=stderr --v=0 "$@"
}
# timeout guards against a hung browser; ctest's own timeout is the backstop
chrome dom --dump-dom "file://$W/report.html" >"$W/dom.html" 2>"$W/dom.err" ||
	fail "chromium --dump-dom failed: $(tail -3 "$W/dom.err")"
chrome desk --screenshot="$W/desktop.png" --window-size=1200,3000 \
	"file://$W/report.html" >/dev/null 2>"$W/shot.err" || fail "chromium --screenshot failed"
chrome phone --screenshot="$W/phone.png" --window-size=390,2400 \
	"file://$W/report.html" >/dev/null 2>>"$W/shot.err" || fail "chromium phone screenshot failed"
[ -s "$W/desktop.png" ] && [ -s "$W/phone.png" ] || fail "no screenshot written"

# The report has no script, so any console message at all is an error
# (console.error("x") logs as INFO:CONSOLE without the word "error").
if grep -q 'CONSOLE' "$W/dom.err" "$W/shot.err"; then
	grep -h CONSOLE "$W/dom.err" "$W/shot.err"
	fail "console errors while rendering the report"
fi

# Points (class="pt ...") inside each chart of the rendered DOM.
points() {
	awk -v id="$1" 'BEGIN { RS = "</svg>"; n = -1 }
		index($0, "<svg id=\"" id "\"") { s = substr($0, index($0, "<svg id=\"" id "\""));
		                                  n = gsub(/class="pt[ "]/, "", s) }
		END { print n }' "$W/dom.html"
}
status=0
for spec in chart-objective:9 chart-gate:6 chart-waterfall:3 chart-latency:160; do
	id=${spec%%:*} want=${spec#*:}
	got=$(points "$id")
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
