#!/bin/sh
# `ratchet gate` and `ratchet bench load` take the options generated from the
# spec's field tables (runner/spec/spec_cli.c): the same units, words, bounds
# and messages as the spec, and --help's defaults from the rows. No case
# reaches a server: each is a usage error (exit 2), or a runtime error (exit
# 3) after the options were read, for a dataset that is not there.
set -u
: "${RATCHET_BIN:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
R() { "$RATCHET_BIN" --db "$tmp/r.db" "$@" >"$tmp/out" 2>"$tmp/err"; }
check() { # name, want exit, want stderr substring, args...
	name=$1 code=$2 want=$3
	shift 3
	R "$@"
	rc=$?
	if [ "$rc" -ne "$code" ] || ! grep -qF -- "$want" "$tmp/err"; then
		echo "FAIL $name: exit $rc, want $code and '$want':"; cat "$tmp/err"; fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}
G="gate --endpoint http://127.0.0.1:9 --dataset $tmp/none.jsonl"
# the spec's units: a percentage and a duration (the gate's own parser took only plain numbers)
check gate_pct 3 "none.jsonl" $G --max-drop 2% --timeout 5m
# the spec's bounds, in the spec's words, naming the option
check gate_bound 2 "gate: --max-drop: 150% is above the maximum 1" $G --max-drop 150%
check gate_alpha 2 "--alpha: 1 must be below 1" $G --alpha 1
check gate_conc 2 "--concurrency: 0 is below the minimum 1" $G --concurrency 0
# the spec's words, with a did-you-mean
check gate_word 2 "--format: unknown value 'gsm8k_cott' (did you mean 'gsm8k_cot'?)" $G --format gsm8k_cott
check gate_required 2 "gate: --endpoint is required" gate --limit 3
L="bench load --endpoint http://127.0.0.1:9 -n 1"
check load_word 2 "--pattern: unknown value 'closd' (did you mean 'closed'?)" $L --pattern closd
check load_dur 2 "--timeout: 0s must be above 0" $L --timeout 0s
check load_rule 2 "pattern 'gamma' needs rate or rates" $L --pattern gamma
check load_prefill 2 "give --prefill or --pattern, not both" $L --prefill --pattern closed
# the same bound in a spec gives the same words, at file:line:col
cat > "$tmp/s.yaml" <<'Y'
name: t
benchmarks:
  - {name: b, command: [/bin/true], metrics: {x: {regex: "x (\\d+)", better: higher}}}
objective: {metric: b.x}
gate: {gsm8k: {endpoint: "http://127.0.0.1:9", max_drop: 150%}}
Y
check spec_bound 2 "gate.gsm8k.max_drop: 150% is above the maximum 1" check "$tmp/s.yaml"
# --help's defaults and words come from the rows
R gate --help
grep -q -- "--max-drop F .*(default 0.01)" "$tmp/out" && grep -q -- "--extract MODE .*flexible or strict (default flexible)" "$tmp/out" ||
	{ echo "FAIL gate --help defaults:"; cat "$tmp/out"; fail=$((fail + 1)); }
R bench load --help
grep -q -- "--timeout DUR .*(default 600)" "$tmp/out" && grep -q -- "--pattern P .*closed, poisson, gamma, constant or prefill" "$tmp/out" ||
	{ echo "FAIL bench load --help defaults:"; cat "$tmp/out"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
