#!/bin/sh
# `ratchet check` on every good spec: exit 0; the normalized output is itself
# a valid spec that normalizes to the same text; --json prints an object.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for f in "$RATCHET_SRC"/tests/spec/good/*.yaml; do
	b=$(basename "$f")
	if ! "$RATCHET_BIN" check "$f" >"$tmp/n1.yaml" 2>"$tmp/err"; then
		echo "FAIL $b:"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if ! "$RATCHET_BIN" check "$tmp/n1.yaml" >"$tmp/n2.yaml" 2>"$tmp/err"; then
		echo "FAIL $b: normalized form does not load:"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if ! cmp -s "$tmp/n1.yaml" "$tmp/n2.yaml"; then
		echo "FAIL $b: normalizing twice differs"; diff "$tmp/n1.yaml" "$tmp/n2.yaml"; fail=$((fail + 1)); continue
	fi
	if ! "$RATCHET_BIN" check --json "$f" >"$tmp/j" 2>"$tmp/err" || [ "$(head -c 1 "$tmp/j")" != "{" ] ||
	   ! grep -q '"benchmarks": \[' "$tmp/j"; then
		echo "FAIL $b: --json"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	pass=$((pass + 1))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 2 ]
