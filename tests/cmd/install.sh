#!/bin/sh
# `make install PREFIX=...` into a temporary prefix: ratchet and simserve,
# a manual page per command that man renders (made from the option tables,
# so it names the options --help prints), and bash completion that completes
# a command and an option (so does zsh, when it is installed:
# tests/cmd/zsh_complete.zsh).
# Cases: binaries installed and runnable; ratchet.1 and ratchet-CMD.1 for every
# command; `man ratchet-run` renders --max-iterations; the page's options are
# --help's; bash completes "ru" to run and "run --max-i" to --max-iterations;
# `ratchet help run` is `ratchet run --help`.
set -u
SRC=${RATCHET_SRC:?} B=${RATCHET_BUILD:?}
. "$(dirname "$0")/lib.sh"
scratch install
P=$tmp/prefix

make -s -C "$SRC" install PREFIX="$P" BUILD="$B" JOBS=1 >"$P.log" 2>&1 ||
	{ cat "$P.log"; rm -f "$P.log"; echo "not ok - make install failed"; exit 1; }
rm -f "$P.log"
R="$P/bin/ratchet"
[ -x "$R" ] && "$R" --version >/dev/null && ok "bin/ratchet runs" || no "bin/ratchet missing"
[ -x "$P/bin/simserve" ] && ok "bin/simserve installed" || no "bin/simserve missing"

M="$P/share/man/man1"
[ -s "$M/ratchet.1" ] && ok "ratchet.1" || no "ratchet.1 missing"
for c in $("$R" help --commands); do
	[ -s "$M/ratchet-$c.1" ] || no "ratchet-$c.1 missing"
done
ok "a page per command ($("$R" help --commands | wc -l) commands)"

if command -v man >/dev/null 2>&1; then
	page=$(MANPATH="$P/share/man" MANWIDTH=100 man ratchet-run 2>&1)
else
	page=$(groff -man -Tutf8 "$M/ratchet-run.1" 2>&1)
fi
printf '%s\n' "$page" | grep -q -- "--max-iterations N" && ok "man ratchet-run renders" ||
	{ printf '%s\n' "$page" | head -20; no "man ratchet-run does not show --max-iterations"; }
# The page and --help come from one table: every option of --help is on the page.
for o in $("$R" log --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$M/ratchet-log.1" || no "ratchet-log.1 lacks $o"
done
ok "ratchet-log.1 has every option of log --help"

C="$P/share/bash-completion/completions/ratchet"
[ -s "$C" ] || no "bash completion missing"
got=$(bash -c '. "$1"; COMP_WORDS=(ratchet ru); COMP_CWORD=1; _ratchet; echo "${COMPREPLY[*]}"' sh "$C")
[ "$got" = run ] && ok "bash completes a command" || no "bash: 'ratchet ru' gives '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(ratchet --db x.db run --max-i); COMP_CWORD=4; _ratchet; echo "${COMPREPLY[*]}"' sh "$C")
[ "$got" = --max-iterations ] && ok "bash completes an option" || no "bash: 'run --max-i' gives '$got'"
got=$(bash -c 'source "$1"; complete -p ratchet' sh "$C")
case $got in *_ratchet*) ok "complete -F _ratchet ratchet" ;; *) no "no complete line: $got" ;; esac
Z="$P/share/zsh/site-functions/_ratchet"
[ -s "$Z" ] && head -1 "$Z" | grep -q '^#compdef ratchet' && ok "zsh completion" || no "zsh completion missing"
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$Z" && ok "zsh -n" || no "zsh -n _ratchet"
	zsh -f "$SRC/tests/cmd/zsh_complete.zsh" "$P/share/zsh/site-functions" || no "zsh completion"
fi

[ "$("$R" help run)" = "$("$R" run --help)" ] && ok "help run = run --help" || no "help run differs from run --help"
"$R" help nosuch >/dev/null 2>"$P/err"; rc=$?
[ $rc -eq 2 ] && ok "help of an unknown command: exit 2" || no "help nosuch: exit $rc"
finish
