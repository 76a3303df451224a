#!/bin/sh
# Real database failures on the crash path (an SQLite trigger that aborts
# one kind of write, as a full disk would) are reported and stop the run
# with exit 3, leaving the journal's state for --resume, instead of being
# ignored (the loop once passed no error buffer to ~24 writes and carried on,
# or failed every later iteration on an open intent):
#   intent-close  closing an intent after the file was written
#   state         an iteration entering `applying`
#   best          the campaign's best moving to a kept iteration
# After each, the trigger is dropped and `ratchet run --resume` finishes the
# campaign with the decisions, table and best of an uninterrupted run.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-dberr-XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"
best() {
	sqlite3 "$1" "SELECT i.variant FROM campaigns c JOIN iterations i ON i.id = c.best_iteration"
}
kill9_setup "$W/ref"
(cd "$W/ref" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
want=$(decisions "$W/ref/c.db")
want_best=$(best "$W/ref/c.db")
check() { # NAME TRIGGER-SQL MESSAGE
	kill9_setup "$W/$1"
	cd "$W/$1"
	"$RATCHET_BIN" --db c.db run --quiet --max-iterations 1 spec.yaml # the baseline
	sqlite3 c.db "$2"
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2> err || rc=$?
	cat err
	[ $rc -eq 3 ] || { echo "FAIL: $1: the run exited $rc, expected 3"; exit 1; }
	grep -q "$3" err || { echo "FAIL: $1: the error does not say '$3'"; exit 1; }
	grep -q "injected: disk I/O error" err || { echo "FAIL: $1: the database's message is missing"; exit 1; }
	sqlite3 c.db "DROP TRIGGER fail"
	"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml
	got=$(decisions c.db)
	[ "$got" = "$want" ] || { echo "FAIL: $1: decisions differ: $got"; exit 1; }
	cmp -s table.json "$W/ref/table.json" || { echo "FAIL: $1: the final table differs"; exit 1; }
	[ "$(best c.db)" = "$want_best" ] || { echo "FAIL: $1: the campaign's best is $(best c.db)"; exit 1; }
	echo "$1: ok"
}
check intent-close "CREATE TRIGGER fail BEFORE UPDATE OF state ON intents WHEN NEW.state = 'done'
	BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END" "update intents (close)"
check state "CREATE TRIGGER fail BEFORE UPDATE OF state ON iterations WHEN NEW.state = 'applying'
	BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END" "update iterations (state)"
check best "CREATE TRIGGER fail BEFORE UPDATE OF best_iteration ON campaigns WHEN NEW.best_iteration > 1
	BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END" "injected"
echo PASS
