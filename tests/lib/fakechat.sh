# Shared by the strategy-llm tests that talk to the scripted chat server
# (tests/agents/llm_answers.sh, tests/agents/llm_contain.sh). Sourcing it
# sets -eu, checks RATCHET_BIN, RATCHET_BUILD and sqlite3, and exits 77
# (ctest's skip) when fakechat was not built.
#   . "$RATCHET_SRC/tests/lib/fakechat.sh"
#   chat_scratch PREFIX  T=/tmp/PREFIX-XXXXXX; the EXIT trap stops the chat
#                        server and removes T
#   chat_start DIR       a fakechat (the one before it stopped) serving the
#                        script DIR/script.txt, read from stdin, and logging
#                        each request to DIR/chat.log; its port in PORT
#   ok, no, finish, ...  tests/lib/common.sh's (port_of finds the chat's port)
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/fakechat" ] || { echo "fakechat not built"; exit 77; }
. "$RATCHET_SRC/tests/lib/common.sh"
FC=

chat_scratch() {
	T=$(mktemp -d "/tmp/$1-XXXXXX")
	trap '[ -n "$FC" ] && kill "$FC" 2>/dev/null; rm -rf "$T"' EXIT
}

chat_start() {
	[ -n "$FC" ] && kill "$FC" 2>/dev/null
	mkdir -p "$1"
	cat > "$1/script.txt"
	"$RATCHET_BUILD/fakechat" --script "$1/script.txt" --log "$1/chat.log" > "$1/fc.out" 2>&1 &
	FC=$!
	PORT=$(port_of "$1/fc.out")
}
