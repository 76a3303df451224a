#!/bin/sh
# `ratchet report --campaigns`: two real serving campaigns on simserve in one
# database, as two models would be (sim-qwen, then sim-gemma with a slower
# per-sequence decode), then the comparison checked for content against the
# database, then bad input, then the HTML rendered in headless Chromium at
# 1200 and 390 px (that part is skipped, saying so, without Chromium).
# Cases: each campaign's objective, engine and model, machine and totals;
# le8-best tried in both (decision and effect per campaign as the database
# has them, its "carried over" verdict from the two decisions); the env change
# named chunked-512 in one and prefill-chunks in the other matched by its
# fingerprint; graphs-16 only in campaign 1 and prefill-le512 only in 2 listed
# apart; Markdown and HTML say the same; --campaigns 1,x, --campaigns 1,
# --campaigns 1,1, --campaigns 1,99 and --campaign with --campaigns refused
# with a clear message; HTML: sections in order, at 390 px everything fits,
# no console error, screenshots made (REP_KEEP=1 keeps them).
set -u
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
W=$(mktemp -d /tmp/rep-compare-XXXXXX)
KEEP=${REP_KEEP:-}
cleanup() { [ -n "$KEEP" ] || rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
status=0
no() { echo "FAIL: $*"; status=1; }

# campaign DIR NAME MODEL US_PER_SEQ VARIANTS: one small campaign in DIR.
campaign() {
	mkdir -p "$W/$1"
	echo '{"decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4}}' >"$W/$1/tiles.json"
	cat >"$W/$1/spec.yaml" <<Y
name: $2
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, $3,
            --tiles, "{workdir}/tiles.json", --decode-us-per-step, "100", --decode-us-per-seq, "$4"]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: $3}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {concurrency: 4, prompt_tokens: 32, output_tokens: 16, requests: 16, ignore_eos: true}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 3}
variants:
$5
strategy: list
Y
	(cd "$W/$1" && "$RATCHET_BIN" --db "$W/c.db" run --quiet spec.yaml >run.out 2>&1) ||
		{ cat "$W/$1/run.out"; fail "campaign $2 did not run"; }
}
LE8='  - {name: le8-best, table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4}}}}'
campaign a qwen-like sim-qwen 500 "$LE8
  - {name: chunked-512, env: {SIMSERVE_CHUNKED_PREFILL: \"512\"}}
  - {name: graphs-16, flag: [--max-graph-bs, \"16\"]}"
campaign b gemma-like sim-gemma 800 "$LE8
  - {name: prefill-chunks, env: {SIMSERVE_CHUNKED_PREFILL: \"512\"}}
  - {name: prefill-le512, table: {file: tiles.json, set: {\"prefill.T_LE_512\": {BLOCK_M: 64, BLOCK_N: 64, num_warps: 4}}}}"

q() { sqlite3 "$W/c.db" "$1"; }
"$RATCHET_BIN" --db "$W/c.db" report --campaigns 1,2 >"$W/cmp.md" 2>"$W/cmp.err" || fail "report --campaigns 1,2: $(cat "$W/cmp.err")"
has() { grep -qF -- "$1" "$W/cmp.md" || no "the comparison lacks: $1"; }
# The row of a lever in the Markdown table (its first cell).
row() { grep -F -- "| \`$1\`" "$W/cmp.md" | head -1; }

has '# Campaigns #1 and #2 compared'
# The campaigns: objective, engine and model, machine, totals.
for c in 1:qwen-like:sim-qwen 2:gemma-like:sim-gemma; do
	id=${c%%:*} rest=${c#*:} name=${rest%%:*} model=${rest#*:}
	line=$(grep -F "| #$id \`$name\`" "$W/cmp.md")
	[ -n "$line" ] || { no "no row for campaign $id"; continue; }
	echo "$line" | grep -qF "simserve, model $model" || no "campaign $id: engine and model missing: $line"
	echo "$line" | grep -qF '`decode.output_throughput`, higher is better' || no "campaign $id: objective missing: $line"
	echo "$line" | grep -qF "$(q "SELECT value FROM env_facts WHERE key='host' AND campaign_id=$id LIMIT 1")" ||
		no "campaign $id: host missing: $line"
	tried=$(q "SELECT count(*) FROM iterations WHERE campaign_id=$id AND seq>0")
	kept=$(q "SELECT count(*) FROM iterations WHERE campaign_id=$id AND state='kept'")
	echo "$line" | grep -qF "| $tried | $kept |" || no "campaign $id: totals are not $tried tried, $kept kept: $line"
done
[ $status -eq 0 ] && echo "ok: campaigns with objective, engine, model, machine, totals"

# A lever in both campaigns: decision per campaign as the database has it.
verdict() { # verdict LEVER1 LEVER2: the expected "carried over" cell
	k=$(q "SELECT count(*) FROM iterations WHERE variant IN ('$1','$2') AND state='kept'")
	case $k in 2) echo "yes, kept in all 2" ;; 1) echo "partly, kept in 1 of 2" ;; *) echo "no, kept in none of 2" ;; esac
}
check_shared() { # check_shared NAME1 NAME2
	r=$(row "$1")
	[ -n "$r" ] || { no "no row for lever $1"; return; }
	echo "$r" | grep -qF "$(verdict "$1" "$2")" || no "$1: verdict is not '$(verdict "$1" "$2")': $r"
	for c in 1:$1 2:$2; do
		id=${c%%:*} v=${c#*:}
		st=$(q "SELECT state || ', ' || campaign_id || ':' || seq FROM iterations WHERE campaign_id=$id AND variant='$v'")
		echo "$r" | grep -qF "$st" || no "$1: campaign $id's decision '$st' missing: $r"
	done
	n=$(echo "$r" | grep -o '% CI' | wc -l)
	[ "$n" -ge 2 ] || no "$1: no confidence for both campaigns: $r"
	echo "$r" | grep -qE '[+-][0-9.]+% \\?\[[+-][0-9.]+, [+-][0-9.]+\\?\]' || no "$1: no effect with its interval: $r"
}
check_shared le8-best le8-best
check_shared chunked-512 prefill-chunks
row chunked-512 | grep -qF '(#2: `prefill-chunks`, same change)' || no "the renamed env change is not matched by its fingerprint"
[ $status -eq 0 ] && echo "ok: shared levers with decision, effect, interval and confidence per campaign"

# Levers of one campaign only, apart and after the shared ones.
single=$(sed -n '/^## Levers tried in one campaign only/,$p' "$W/cmp.md")
echo "$single" | grep -qF '| `graphs-16` | flag | #1 `qwen-like` |' || no "graphs-16 not listed apart for campaign 1"
echo "$single" | grep -qF '| `prefill-le512` | table | #2 `gemma-like` |' || no "prefill-le512 not listed apart for campaign 2"
echo "$single" | grep -qF 'le8-best' && no "le8-best listed as a one-campaign lever"
[ "$(sed -n '/^## Levers tried in more than one/,/^## Levers tried in one/p' "$W/cmp.md" | grep -c 'graphs-16')" = 0 ] ||
	no "graphs-16 among the shared levers"
[ $status -eq 0 ] && echo "ok: one-campaign levers listed apart"

# Bad input: a clear message and exit 2 (usage) or 3 (no such campaign).
bad() { # bad WANT_RC WANT_TEXT ARGS...
	want=$1 text=$2
	shift 2
	"$RATCHET_BIN" --db "$W/c.db" report "$@" >/dev/null 2>"$W/bad.err"
	rc=$?
	[ $rc -eq "$want" ] && grep -qF -- "$text" "$W/bad.err" ||
		no "report $*: exit $rc, '$(cat "$W/bad.err")' (want $want and '$text')"
}
bad 2 "--campaigns: 'x' is not a campaign id" --campaigns 1,x
bad 2 "--campaigns: '' is not a campaign id" --campaigns 1,
bad 2 "--campaigns: name at least two campaigns" --campaigns 1
bad 2 "--campaigns: campaign 1 is named twice" --campaigns 1,1
bad 3 "campaign 99: no such campaign" --campaigns 1,99
bad 2 "--campaign and --campaigns" --campaign 1 --campaigns 1,2
[ $status -eq 0 ] && echo "ok: bad input refused with its cause"

# HTML: the same content; rendered at 1200 and 390 px.
"$RATCHET_BIN" --db "$W/c.db" --quiet report --campaigns 1,2 --html -o "$W/cmp.html" || fail "report --campaigns --html"
for s in 'sim-gemma' 'prefill-chunks' 'prefill-le512' 'carried over'; do
	grep -qF "$s" "$W/cmp.html" || no "the HTML lacks $s"
done
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
	echo "SKIP: the Chromium render (no ${CHROMIUM:-/usr/bin/chromium})"
	exit $status
fi
. "$(dirname "$0")/../lib/chromium.sh"
chrome dom --dump-dom "file://$W/cmp.html" >"$W/dom.html" 2>"$W/dom.err" || fail "chromium --dump-dom failed"
chrome desk --screenshot="$W/desktop.png" --window-size=1200,1400 "file://$W/cmp.html" >/dev/null 2>"$W/shot.err" ||
	fail "chromium --screenshot failed"
phone_frame cmp.html "" >"$W/phone-frame.html"
chrome phone --screenshot="$W/phone.png" --window-size=390,2400 "file://$W/phone-frame.html" >/dev/null 2>>"$W/shot.err" ||
	fail "chromium phone screenshot failed"
[ -s "$W/desktop.png" ] && [ -s "$W/phone.png" ] || no "no screenshot written"
chrome_console "$W/dom.err" "$W/shot.err" && no "console errors while rendering the comparison"
prev=0
for id in top campaigns carried single; do
	at=$(grep -b -o "id=\"$id\"" "$W/dom.html" | head -1 | cut -d: -f1)
	if [ -z "$at" ] || [ "$at" -le "$prev" ]; then no "section $id missing or out of order"; else prev=$at; fi
done
narrow=$(phone_probe cmp.html)
[ "$narrow" = "390:ok" ] && echo "ok: HTML sections in order; at 390 px everything fits" || no "at 390 px: ${narrow:-no answer from the probe}"
[ -n "$KEEP" ] && echo "kept $W (desktop.png, phone.png, cmp.md, cmp.html)"
exit $status
