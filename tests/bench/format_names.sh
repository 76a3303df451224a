#!/bin/sh
# The command-benchmark format names in the docs are the ones `ratchet check`
# accepts (issue 11: docs/variants.md said `llama-bench-json`, check knows
# `llama-bench`): each name of docs/variants.md's format table and of the
# reference's (docs/spec.md) `format` row passes `ratchet check`, and together with `none` and
# `json` they are exactly the loader's table (runner/spec/spec_enums.c).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
W=$(mktemp -d /tmp/ratchet-fmtnames-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
# docs/variants.md: the rows under "| format | reads | metrics |"
sed -n '/^| format | reads | metrics |/,/^$/p' "$RATCHET_SRC/docs/variants.md" |
	sed -n 's/^| `\([a-z0-9-]*\)` |.*/\1/p' > "$W/docs"
# docs/spec.md: the `format` row of the command benchmark keys
grep '^| `format` |' "$RATCHET_SRC/docs/spec.md" | head -1 | cut -d'|' -f3 | tr ',' '\n' |
	sed -n 's/.*`\([a-z0-9-]*\)`.*/\1/p' > "$W/readme"
# the loader's table
sed -n '/spec_format_names\[\] = {/,/NULL };/p' "$RATCHET_SRC/runner/spec/spec_enums.c" |
	grep -o '"[a-z0-9-]*"' | tr -d '"' | sort > "$W/loader"
[ -s "$W/docs" ] && [ -s "$W/readme" ] && [ -s "$W/loader" ] || { echo "FAIL: a list is empty"; exit 1; }
for f in $(cat "$W/docs" "$W/readme"); do
	[ "$f" = none ] && continue
	printf 'name: f\nbenchmarks:\n  - {name: b, command: [true], format: %s, metrics: {x: /x}}\nobjective: {metric: b.x, goal: max}\nvariants:\n  - {name: e, env: {A: "1"}}\n' "$f" > "$W/s.yaml"
	if "$RATCHET_BIN" check "$W/s.yaml" > /dev/null 2> "$W/err"; then
		echo "ok - $f"
	else
		echo "not ok - documented format '$f' refused by check:"; cat "$W/err"; fail=1
	fi
done
(cat "$W/docs"; echo none; echo json) | sort -u > "$W/documented"
diff "$W/loader" "$W/documented" || { echo "FAIL: docs/variants.md's formats (+ none, json) differ from the loader's"; fail=1; }
sort -u "$W/readme" | diff "$W/loader" - || { echo "FAIL: docs/spec.md's format list differs from the loader's"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
