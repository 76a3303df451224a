#!/bin/sh
# The docs name only options that exist (issue 23): every `--flag` that
# README.md and docs/*.md give a ratchet command must be in that command's
# `--help`, read from the binary at test time (so a new option or a new
# page needs no edit here), and every command line of the README's quick
# start must parse: a `ratchet` line names a command and its flags, a
# `make` line a target of the Makefile.
#
# A mention is a command line in a fenced block or an inline code span that
# starts with `ratchet CMD` (or `$ ratchet CMD`), up to a pipe, `;`, `&&`, a
# comment or the span's end; and a row of a table whose first cell is
# `CMD ...` for a known command (the reference's command table). Flags of
# the global options (`--db`, `--json`, `--quiet`, `--version`) and
# `--help` pass everywhere.
#   tools/check-docs.sh RATCHET_BIN [SRC]
set -u
R=${1:?usage: tools/check-docs.sh RATCHET_BIN [SRC]}
SRC=${2:-.}
tmp=$(mktemp -d /tmp/ratchet-check-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$R" help --commands > "$tmp/commands" || { echo "check-docs: $R help --commands failed"; exit 1; }
# every known command (and SUBCOMMAND pair) with its --help text
while read -r c; do
	"$R" "$c" --help > "$tmp/help.$c" 2>&1
	sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$tmp/help.$c" | while read -r sub; do
		"$R" "$c" "$sub" --help > "$tmp/help.$c.$sub" 2>&1 || rm -f "$tmp/help.$c.$sub"
	done
done < "$tmp/commands"

# file:line<TAB>command<TAB>subword<TAB>text of each mention
for f in "$SRC"/README.md "$SRC"/docs/*.md; do
	[ -f "$f" ] || continue
	awk -v file="${f#"$SRC"/}" -v cmds="$(tr '\n' ' ' < "$tmp/commands")" '
	BEGIN { n = split(cmds, a, " "); for (i = 1; i <= n; i++) known[a[i]] = 1 }
	function cut(s) {
		sub(/[|;#`].*$/, "", s); sub(/&&.*$/, "", s)
		return s
	}
	function emit(s, w) {
		split(s, w, /[ \t]+/)
		if (known[w[2]]) printf "%s:%d\t%s\t%s\t%s\n", file, NR, w[2], w[3], s
	}
	/^```/ { fence = !fence; next }
	{
		line = $0
		if (fence) {
			s = line; sub(/^[ \t]*(\$ )?/, "", s)
			if (s ~ /^ratchet /) emit(cut(s))
			next
		}
		# a table row whose first cell is `CMD ...`
		if (line ~ /^\| `[a-z]+[ `]/) {
			s = line; sub(/^\| `/, "", s); sub(/`.*$/, "", s)
			split(s, w, " ")
			if (known[w[1]]) emit("ratchet " s)
		}
		# inline code spans starting with ratchet
		while (match(line, /`(\$ )?ratchet [^`]*`/)) {
			s = substr(line, RSTART + 1, RLENGTH - 2); sub(/^\$ /, "", s)
			emit(cut(s))
			line = substr(line, RSTART + RLENGTH)
		}
	}' "$f"
done > "$tmp/mentions"

fail=0
n=0
while IFS='	' read -r at cmd sub text; do
	help="$tmp/help.$cmd"
	if [ -n "$sub" ] && [ -f "$tmp/help.$cmd.$sub" ]; then help="$tmp/help.$cmd.$sub"; else sub=; fi
	for flag in $(printf '%s\n' "$text" | grep -o -e '--[a-z][a-z0-9-]*' | sort -u); do
		n=$((n + 1))
		case "$flag" in --db | --json | --quiet | --version | --help) continue ;; esac
		if ! grep -q -e "$flag\([^a-z0-9-]\|\$\)" "$help"; then
			echo "$at: \`ratchet $cmd${sub:+ $sub}\`: $flag is not an option of \`ratchet $cmd --help\`"
			fail=$((fail + 1))
		fi
	done
done < "$tmp/mentions"

# the README's quick start: every `make` line names a target, every
# `ratchet` line a known command (its flags were checked above)
awk '/^```/ { fence = !fence; next } fence { sub(/^[ \t]*(\$ )?/, ""); print FILENAME ":" NR "\t" $0 }' \
	"$SRC/README.md" | sed "s|^$SRC/||" > "$tmp/lines"
q=0
while IFS='	' read -r at line; do
	set -- $line
	case "${1:-}" in
	make)
		q=$((q + 1))
		if ! make -n -C "$SRC" "$2" > /dev/null 2>&1; then
			echo "$at: \`make $2\` is not a target of the Makefile"
			fail=$((fail + 1))
		fi
		;;
	ratchet)
		q=$((q + 1))
		w=$2
		[ "$w" = --db ] && w=$4
		if ! grep -qx -e "$w" "$tmp/commands"; then
			echo "$at: \`ratchet $w\` is not a command (ratchet help --commands)"
			fail=$((fail + 1))
		fi
		;;
	esac
done < "$tmp/lines"

if [ "$fail" -ne 0 ]; then
	echo "check-docs: $fail problem(s) in README.md and docs/*.md"
	exit 1
fi
echo "check-docs: $(wc -l < "$tmp/mentions") command mentions, $n flags, $q quick-start lines: ok"
