# Sourced by the shell tests in tests/cmd/ (after `set -u`): ok and no count
# the cases, scratch makes a folder that is removed on exit and enters it
# (no $RATCHET_DB, no colour), finish prints the count and is the exit status.
#   . "$(dirname "$0")/lib.sh"
#   scratch NAME; ...; ok "what held" || no "what did not"; ...; finish
fails=0
ok() { echo "ok - $*"; }
no() { echo "not ok - $*"; fails=$((fails + 1)); }
scratch() {
	tmp=$(mktemp -d "/tmp/rt-$1-XXXXXX") || exit 1
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	cd "$tmp" || exit 1
	unset RATCHET_DB
	export NO_COLOR=1
}
finish() {
	echo "$fails failed"
	[ "$fails" -eq 0 ]
}
