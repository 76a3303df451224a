#!/bin/sh
# `ratchet check` on every spec under experiments/ (found now, at test time,
# since specs keep being added); those under a bad/ folder are skipped.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
find "$RATCHET_SRC/experiments" \( -name '*.yaml' -o -name '*.yml' \) -type f 2>/dev/null | sort >"$tmp/list"
while IFS= read -r f; do
	case "$f" in
	*/bad/*) skip=$((skip + 1)); continue ;;
	esac
	if "$RATCHET_BIN" check "$f" >/dev/null 2>"$tmp/err"; then
		pass=$((pass + 1))
	else
		echo "FAIL ${f#"$RATCHET_SRC"/}:"; cat "$tmp/err"; fail=$((fail + 1))
	fi
done <"$tmp/list"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
