# Sourced by the shell tests in tests/cmd/ (after `set -u`): ok, no and
# finish come from tests/lib/common.sh; scratch makes a folder that is
# removed on exit and enters it (no $RATCHET_DB, no colour).
#   . "$(dirname "$0")/lib.sh"
#   scratch NAME; ...; ok "what held" || no "what did not"; ...; finish
. "$(dirname "$0")/../lib/common.sh"
scratch() {
	tmp=$(mktemp -d "/tmp/rt-$1-XXXXXX") || exit 1
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	cd "$tmp" || exit 1
	unset RATCHET_DB
	export NO_COLOR=1
}
