# Shared by the tests that render an HTML report in headless Chromium
# (tests/rep/chromium.sh, tests/campaign/report_chromium.sh). Sourcing it
# exits 77 (ctest's skip) when Chromium is missing; CHROMIUM overrides
# /usr/bin/chromium. The functions keep their files under $W, which the
# test sets before calling them.
#   . "$(dirname "$0")/../lib/chromium.sh"
CHROME=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROME" ]; then
	echo "SKIP: $CHROME not installed (apt-get install chromium)"
	exit 77
fi

# chrome PROFILE ARGS...: headless Chromium with its own profile folder;
# timeout guards against a hung browser, ctest's own timeout is the backstop.
chrome() {
	prof=$1
	shift
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$W/profile-$prof" --enable-logging=stderr --v=0 "$@"
}

# chrome_console LOG...: prints the console messages in Chromium's logs and
# succeeds when there is any. Reports have no script, so any message is an
# error (console.error("x") logs as INFO:CONSOLE without the word "error").
chrome_console() {
	grep -h CONSOLE "$@"
}

# chart_points ID DOM: the points (class="pt ...") inside <svg id="ID"> of a
# DOM dump; -1 when there is no such chart.
chart_points() {
	awk -v id="$1" 'BEGIN { RS = "</svg>"; n = -1 }
		index($0, "<svg id=\"" id "\"") { s = substr($0, index($0, "<svg id=\"" id "\""));
		                                  n = gsub(/class="pt[ "]/, "", s) }
		END { print n }' "$2"
}
