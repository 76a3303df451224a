#!/bin/sh
# Completion and help from the option tables (issue 23, item 4): an
# internal option (run's --pool-worker) is in no --help, man page or
# completion, yet still parses; an option whose placeholder lists its
# values completes them (`report --format <TAB>`: md html); `profile <TAB>`
# offers its subcommand `import`, not files; zsh gets the same values.
set -u
. "$(dirname "$0")/lib.sh"
: "${RATCHET_BIN:?}"
scratch complete
R=$RATCHET_BIN
"$R" run --help > run.help
grep -q -e '--pool-worker' run.help && no "run --help shows --pool-worker" || ok "run --help hides --pool-worker"
"$R" help --man run > run.1
grep -q 'pool\\-worker' run.1 && no "the man page shows --pool-worker" || ok "the man page hides --pool-worker"
"$R" help --completion bash > c.bash
"$R" help --completion zsh > c.zsh
grep -q 'pool-worker' c.bash c.zsh && no "completion offers --pool-worker" || ok "completion hides --pool-worker"
comp() { # WORDS...: what bash completes for the last word
	bash -c '. ./c.bash; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ratchet; echo "${COMPREPLY[*]}"' sh x "$@"
}
got=$(comp ratchet report --format "")
[ "$got" = "md html" ] && ok "report --format completes md html" || no "report --format gives '$got'"
got=$(comp ratchet report -f h)
[ "$got" = "html" ] && ok "report -f h completes html" || no "report -f h gives '$got'"
got=$(comp ratchet profile "")
[ "$got" = "import" ] && ok "profile completes import" || no "profile gives '$got'"
got=$(comp ratchet run --max-i)
[ "$got" = "--max-iterations" ] && ok "run --max-i still completes" || no "run --max-i gives '$got'"
grep -q -e "--format\[.*\]:md|html:(md html)" c.zsh && ok "zsh offers md html" || no "zsh has no values for --format"
# the hidden option still parses (an unknown one would be a usage error, exit 2)
"$R" --db none.db run --pool-worker x nospec.yaml > /dev/null 2> pw.err
grep -q "unknown option" pw.err && no "--pool-worker is refused: $(cat pw.err)" || ok "--pool-worker still parses"
finish
