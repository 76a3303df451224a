#!/bin/sh
# The HTML report of a real campaign, rendered in headless Chromium: a short
# serving campaign on simserve (a gated broken tile, a kept tile, per-request
# records, gate runs), then `ratchet report --format html`, a DOM dump and a
# screenshot. Each chart must have as many points as the database says, and
# the page must log nothing to the console. Skipped (77) without Chromium.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_GSM8K_DIR:?}"
. "$(dirname "$0")/../lib/chromium.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-report-XXXXXX)
trap 'rm -rf "$W"' EXIT
cat > "$W/tiles.json" <<'J'
{"decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4}}
J
cat > "$W/spec.yaml" <<Y
name: report-e2e
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --tiles, "{workdir}/tiles.json",
            --gsm8k, "$RATCHET_GSM8K_DIR/test.jsonl", --decode-us-per-step, "100", --decode-us-per-seq, "500"]
  ready: {http: /health, timeout: 20s}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {concurrency: 4, prompt_tokens: 32, output_tokens: 16, requests: 16, ignore_eos: true}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 3}
gate: {gsm8k: {min_accuracy: 0.9, format: gsm8k_cot, limit: 20, dataset: "$RATCHET_GSM8K_DIR/test.jsonl"}}
variants:
  - {name: le8-broken, table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4, broken: true}}}}
  - {name: le8-best, table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4}}}}
Y
cd "$W"
"$RATCHET_BIN" --db c.db run --quiet spec.yaml
"$RATCHET_BIN" --db c.db --quiet report --format html -o report.html
chrome dom --dump-dom "file://$W/report.html" > dom.html 2> dom.err || { tail -3 dom.err; echo "FAIL: --dump-dom"; exit 1; }
chrome shot --screenshot="$W/report.png" --window-size=1200,3000 "file://$W/report.html" > /dev/null 2> shot.err ||
	{ echo "FAIL: --screenshot"; exit 1; }
[ -s report.png ] || { echo "FAIL: no screenshot"; exit 1; }
if chrome_console dom.err shot.err; then echo "FAIL: console output while rendering"; exit 1; fi
q() { sqlite3 c.db "$1"; }
want_obj=$(q "SELECT count(*) FROM iterations WHERE obj_cand IS NOT NULL")
want_gate=$(q "SELECT count(*) FROM gate_runs")
want_fall=$(q "SELECT count(*) FROM iterations WHERE state='kept'")  # one bar per kept change
status=0
for spec in chart-objective:$want_obj chart-gate:$want_gate chart-waterfall:$want_fall; do
	id=${spec%%:*} want=${spec#*:}
	got=$(chart_points "$id" dom.html)
	if [ "$got" = "$want" ]; then echo "ok: $id $got points"; else echo "FAIL: $id has $got points, the database says $want"; status=1; fi
done
lat=$(chart_points chart-latency dom.html)
[ "$lat" -gt 0 ] && echo "ok: chart-latency $lat points" || { echo "FAIL: no latency points"; status=1; }
[ "$(q "SELECT state FROM iterations WHERE variant='le8-broken'")" = gated ] || { echo "FAIL: the broken tile was not gated"; status=1; }
exit $status
