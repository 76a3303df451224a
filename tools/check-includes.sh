#!/bin/sh
# Fails when a source file includes a header of a module it may not use: the
# layering in docs/layout.md. Each line of the table below is
# "module: modules it may include" (besides itself); a module not listed
# (tests/, experiments/) may include anything. Run by `make check` and CI.
set -eu
cd "$(dirname "$0")/.."
allowed='
runner/base:
db: runner/base
variants: runner/base
reports: runner/base db
agents/research: runner/base db variants
agents: runner/base db variants agents/research
runner/stats: runner/base
runner/oai: runner/base
runner/device: runner/base
runner/spec: runner/base variants agents agents/research
runner/load: runner/base runner/oai runner/stats runner/spec db
runner/gate: runner/base runner/oai runner/stats runner/spec db
runner/engine: runner/base runner/oai runner/spec
runner/bench: runner/base runner/load runner/device runner/stats runner/spec runner/oai db
runner/campaign: runner/base runner/spec runner/stats runner/oai runner/load runner/gate runner/engine runner/bench runner/device db variants reports agents agents/research
runner/cmd: runner/base runner/spec runner/stats runner/oai runner/load runner/gate runner/engine runner/bench runner/device runner/campaign db variants reports agents agents/research
'
git ls-files '*.c' '*.h' | grep -E '^(runner|db|variants|reports|agents)/' |
while read -r f; do
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | sed "s|^|$f:|" || true
done | awk -v allowed="$allowed" '
BEGIN {
	n = split(allowed, lines, "\n")
	for (i = 1; i <= n; i++) {
		if (lines[i] == "") continue
		split(lines[i], kv, ":")
		mod[kv[1]] = 1
		m = split(kv[2], deps, " ")
		for (j = 1; j <= m; j++) ok[kv[1] SUBSEP deps[j]] = 1
	}
	bad = 0
}
function module_of(p,   parts, k) {
	k = split(p, parts, "/")
	if ((parts[1] == "runner" || parts[1] == "agents") && k > 2) return parts[1] "/" parts[2]
	return parts[1]
}
{
	split($0, a, ":")
	file = a[1]; line = a[2]
	match($0, /"[^"]+"/)
	inc = substr($0, RSTART + 1, RLENGTH - 2)
	from = module_of(file)
	if (!(from in mod)) next
	if (inc !~ /\//) {
		printf "%s:%s: include \"%s\" by its full path from the repository root\n", file, line, inc
		bad = 1; next
	}
	to = module_of(inc)
	if (to == from || (from SUBSEP to) in ok) next
	printf "%s:%s: %s may not include %s (\"%s\"); see tools/check-includes.sh\n", file, line, from, to, inc
	bad = 1
}
END { exit bad }
'
echo "includes: every module includes only the modules below it"
