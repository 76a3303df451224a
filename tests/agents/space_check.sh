#!/bin/sh
# `ratchet check` on space: sections: a valid one passes; each mistake is
# named with file, line and key (unknown parameter, syntax error with its
# column, a restriction over two targets, values that are not powers of
# two, two bindings, a space with the wrong strategy, a space strategy
# without a space, an empty space); a space with no strategy: is searched
# by auto, and an explicit strategy: list with a space is still refused.
set -eu
: "${RATCHET_BIN:?}"
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-space-check
fails=0
spec() { # STRATEGY PARAMS RESTRICTIONS
	cat <<EOS
name: s
benchmarks:
  - {name: b, command: [/bin/echo, '{"x": 1}'], metrics: {x: {pointer: /x, better: higher}}}
objective: {metric: b.x, goal: max}
strategy: $1
space:
  parameters:
$2
  restrictions:
$3
EOS
}
P='    - {name: BM, pow2: [8, 256], table: {file: t.json, key: tiles}}
    - {name: W, values: [1, 2, 4, 8], table: {file: t.json, key: tiles}}
    - {name: G, bool: true, flag: --graphs}'
expect() { # NAME WANT (grep -F); the spec in s.yaml
	if "$RATCHET_BIN" check s.yaml > out.txt 2>&1; then
		[ -z "$2" ] && echo "ok - $1" || { echo "not ok - $1: accepted"; fails=$((fails + 1)); }
	elif [ -n "$2" ] && grep -qF "$2" out.txt; then
		echo "ok - $1: $(grep -F "$2" out.txt | head -1)"
	else
		echo "not ok - $1: $(cat out.txt)"; fails=$((fails + 1))
	fi
}
spec model "$P" '    - BM * W <= 1024' > s.yaml; expect "a valid space" ""
spec model "$P" '    - BM * Q <= 1024' > s.yaml; expect "unknown parameter" "s.yaml:12:7: space.restrictions[0]: 'BM * Q <= 1024': unknown parameter 'Q' (parameters: BM, W, G)"
spec model "$P" '    - BM * (W <= 3' > s.yaml; expect "syntax error" "'BM * (W <= 3': at column 13: expected ')'"
spec model "$P" '    - BM < G' > s.yaml; expect "two targets" "relates parameters of two targets (table t.json entry tiles and flag --graphs)"
spec model "$(echo "$P" | sed 's/pow2: \[8, 256\]/pow2: [8, 250]/')" '    - BM > 0' > s.yaml; expect "pow2" "s.yaml:8:24: space.parameters[0].pow2: low and high must be powers of two"
spec model "$(echo "$P" | sed 's/flag: --graphs/flag: --graphs, env: G/')" '    - BM > 0' > s.yaml; expect "two bindings" "two bindings ('flag' and 'env')"
spec list "$P" '    - BM > 0' > s.yaml; expect "list with a space" "strategy 'list' tries the variants one by one"
spec model "$P" '    - BM > 4096' > s.yaml; expect "no valid point" "table t.json entry tiles: no point satisfies the restrictions"
printf 'name: s\nbenchmarks:\n  - {name: b, command: [/bin/echo, "{}"], metrics: {x: {pointer: /x, better: higher}}}\nobjective: {metric: b.x}\nstrategy: coordinate\n' > s.yaml
expect "a space strategy without a space" "strategy 'coordinate' searches a space: declare space:"
spec model "$P" '    - BM > 0' | grep -v '^strategy:' > s.yaml
if "$RATCHET_BIN" check s.yaml > out.txt 2>&1 && grep -qx 'strategy: auto' out.txt; then
	echo "ok - a space with no strategy: is searched by auto"
else
	echo "not ok - a space with no strategy: $(grep -i strategy out.txt || cat out.txt)"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo PASS || { echo "FAIL: $fails"; exit 1; }
