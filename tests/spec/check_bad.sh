#!/bin/sh
# `ratchet check` on every bad spec: exit code 2, nothing on stdout, and the
# first line of stderr exactly as in NN-name.expect.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
dir="$RATCHET_SRC/tests/spec/bad"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
cd "$dir" || exit 1
for f in *.yaml; do
	name=${f%.yaml}
	want=$(head -n 1 "$name.expect")
	"$RATCHET_BIN" check "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	got=$(head -n 1 "$tmp/err")
	if [ "$rc" -ne 2 ]; then
		echo "FAIL $f: exit $rc, want 2"; fail=$((fail + 1))
	elif [ -s "$tmp/out" ]; then
		echo "FAIL $f: printed on stdout"; fail=$((fail + 1))
	elif [ "$got" != "$want" ]; then
		echo "FAIL $f:"; echo "  want: $want"; echo "  got:  $got"; fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done
# usage errors exit 2 too, with the usual prefix
"$RATCHET_BIN" check >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 2 ] || ! grep -q '^ratchet: check: expected one SPEC file' "$tmp/err"; then
	echo "FAIL no argument: exit $rc"; cat "$tmp/err"; fail=$((fail + 1))
else pass=$((pass + 1)); fi
"$RATCHET_BIN" check /nonexistent/spec.yaml >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 2 ] || ! grep -q '/nonexistent/spec.yaml' "$tmp/err"; then
	echo "FAIL missing file: exit $rc"; cat "$tmp/err"; fail=$((fail + 1))
else pass=$((pass + 1)); fi
"$RATCHET_BIN" check --jsn x.yaml >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "did you mean '--json'" "$tmp/err"; then
	echo "FAIL bad flag: exit $rc"; cat "$tmp/err"; fail=$((fail + 1))
else pass=$((pass + 1)); fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
