# zsh -f zsh_complete.zsh DIR: with DIR/_ratchet on fpath, an interactive zsh
# (in a zpty) completes `ratchet ru<TAB>` to run and `ratchet run --max-i<TAB>`
# to --max-iterations. Prints "ok - ..." or "not ok - ..." per case, and
# exits 1 when one failed. Used by tests/cmd/install.sh when zsh is installed.
setopt extendedglob
zmodload zsh/zpty || exit 1
zpty z 'zsh -f -i'
# An empty folder: no file name may complete in place of ratchet's words.
zpty -w z "PROMPT='%% '; cd \$(mktemp -d); fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; function ratchet { }"
local failed=0 chunk out
# typed<TAB> must turn into want within 10 s
expect() {
	zpty -n -w z "$1"$'\t'
	out=""
	repeat 100; do
		while zpty -r -t z chunk; do out+=$chunk; done
		out=${out//$'\e'\[[0-9;?]#[a-zA-Z]/}
		out=${out//$'\a'/}
		[[ $out == *"$2"* ]] && break
		sleep 0.1
	done
	if [[ $out == *"$2"* ]]; then
		print -r -- "ok - zsh completes '$1' to '$2'"
	else
		print -r -- "not ok - zsh: '$1' gave: ${(q)out[-200,-1]}"
		failed=1
	fi
	zpty -n -w z $'\C-u'
	sleep 0.2
	while zpty -r -t z chunk; do :; done
}
expect 'ratchet ru' 'ratchet run '
expect 'ratchet run --max-i' 'ratchet run --max-iterations '
zpty -d z
exit $failed
