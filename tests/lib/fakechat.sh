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
#   ok MSG, no MSG       one TAP-like line each; no counts in $fails
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/fakechat" ] || { echo "fakechat not built"; exit 77; }
FC=
fails=0
ok() { echo "ok - $1"; }
no() { echo "not ok - $1"; fails=$((fails + 1)); }

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
	for _ in $(seq 100); do grep -q listening "$1/fc.out" 2>/dev/null && break; sleep 0.1; done
	PORT=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$1/fc.out")
}
