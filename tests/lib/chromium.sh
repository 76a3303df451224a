# Shared by the tests that render an HTML report in headless Chromium
# (tests/reports/chromium.sh, tests/reports/compare_e2e.sh, tests/campaign/report_chromium.sh). Sourcing it
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

# phone_frame PAGE EXTRA_HTML > wrapper: headless Chromium lays a window
# narrower than 500 px out at 500, so the phone is an iframe 390 px wide.
phone_frame() {
	printf '<!DOCTYPE html><html><body style="margin:0"><iframe src="%s" style="width:390px;height:6000px;border:0"></iframe>%s</body></html>\n' "$1" "$2"
}

# phone_probe PAGE (a file in $W): prints "390:ok" when, with every <details>
# open, the page, each chart and each table (.tw) fit 390 px, no code in a
# table cell may break mid-word, every chart's text is drawn at 9.5 px or
# more and no two of a chart's legend, axis and title texts overlap; else
# "390:" and what did not fit. The probe
# runs in a copy of the page inside the 390 px frame and posts what it
# measured to the wrapper.
phone_probe() {
	probe='<script>(function(){var W=innerWidth,bad=[];
if(document.documentElement.scrollWidth>W)bad.push("page "+document.documentElement.scrollWidth);
document.querySelectorAll("svg.chart").forEach(function(s){var r=s.getBoundingClientRect();if(r.right>W+0.5)bad.push(s.id+" "+r.right)});
document.querySelectorAll(".tw").forEach(function(t,i){if(t.scrollWidth>t.clientWidth)bad.push("table "+i+" "+t.scrollWidth+">"+t.clientWidth)});
document.querySelectorAll("td code").forEach(function(c){var w=getComputedStyle(c).overflowWrap;if(w!=="normal")bad.push("td code "+w)});
document.querySelectorAll("svg.chart").forEach(function(s){var k=s.getBoundingClientRect().width/s.viewBox.baseVal.width,b=[];
s.querySelectorAll("text").forEach(function(t){var px=parseFloat(getComputedStyle(t).fontSize)*k;if(px<9.5)bad.push(s.id+" text "+px.toFixed(1)+"px: "+t.textContent)});
s.querySelectorAll("text.legend,text.axis,text.ctitle").forEach(function(t){var r=t.getBoundingClientRect();b.forEach(function(q){if(r.left<q.r.right&&q.r.left<r.right&&r.top<q.r.bottom&&q.r.top<r.bottom)bad.push(s.id+" overlap: "+q.t+" / "+t.textContent)});b.push({r:r,t:t.textContent})})});
parent.postMessage(W+":"+(bad.length?bad.join(";"):"ok"),"*")})()</script>'
	sed 's/<details id=/<details open id=/g' "$W/$1" >"$W/probe-$1"
	printf '%s\n' "$probe" >>"$W/probe-$1"
	phone_frame "probe-$1" '<script>addEventListener("message",function(e){document.body.setAttribute("data-narrow",e.data)})</script>' >"$W/probe-frame-$1"
	chrome "probe-$1" --virtual-time-budget=5000 --window-size=800,2000 --dump-dom "file://$W/probe-frame-$1" 2>/dev/null |
		sed -n 's/.*data-narrow="\([^"]*\)".*/\1/p'
}
