#!/bin/sh
# Fails when a C source file under the modules is over 800 lines or a function
# in it is over 120 lines (from its opening brace at column 0 to its closing
# brace at column 0). Run by `make check` and CI.
set -eu
cd "$(dirname "$0")/.."
git ls-files '*.c' '*.h' | grep -E '^(runner|db|variants|reports|agents|experiments)/' |
while read -r f; do
	awk -v f="$f" '
	/^\{/ { start = NR; name = prev }
	/^\}/ && start { if (NR - start + 1 > 120) printf "%s:%d: function %s is %d lines (at most 120)\n", f, start, name, NR - start + 1; start = 0 }
	{ if ($0 ~ /^[A-Za-z_].*\(/) prev = $0 }
	END { if (NR > 800) printf "%s: %d lines (at most 800)\n", f, NR }
	' "$f"
done | tee /tmp/check-size.$$ 
bad=$(wc -l < /tmp/check-size.$$); rm -f /tmp/check-size.$$
[ "$bad" -eq 0 ] || { echo "size: $bad file(s) or function(s) over the limits"; exit 1; }
echo "size: no file over 800 lines, no function over 120 lines"
