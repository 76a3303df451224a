#!/bin/sh
# Read commands never create a database: `ratchet --db typo.db report` says
# the file does not exist (exit 3) and leaves no file behind; so do log,
# show, regressions, export and the commands that add to an existing one
# (note, correct, invalidate, restore). A database the user may not write
# (a copy from CI, chmod a-w) is still read.
# Cases: each read or edit command on a missing file; log and report on a
# read-only file; run still creates a new database.
set -u
R=${RATCHET_BIN:?} T="${RATCHET_BUILD:?}/db_tool"
. "$(dirname "$0")/lib.sh"
scratch readdb

for cmd in "report" "log" "show 1" "show 1:0" "regressions" "export --format json" \
	   "note 1 hello" "correct 1 --by 2 x" "invalidate 1 --reason x" "restore"; do
	# shellcheck disable=SC2086
	"$R" --db typo.db $cmd >out.txt 2>err.txt
	rc=$?
	if [ -e typo.db ]; then
		no "$cmd created typo.db"
		rm -f typo.db typo.db-wal typo.db-shm
	elif [ $rc -ne 3 ]; then
		no "$cmd: exit $rc, want 3"
	elif ! grep -q "typo.db: no such database" err.txt; then
		no "$cmd: message: $(cat err.txt)"
	else
		ok "$cmd: $(cat err.txt)"
	fi
done

# A database nobody may write is read all the same.
mkdir ro
"$T" load ro/r.db "$RATCHET_SRC/tests/fixtures/small_campaign.sql" || exit 1
chmod a-w ro/r.db ro
for cmd in "log" "report" "show 1:1"; do
	# shellcheck disable=SC2086
	if "$R" --db ro/r.db $cmd >out.txt 2>err.txt && [ -s out.txt ]; then
		ok "$cmd on a read-only database"
	else
		no "$cmd on a read-only database: $(cat err.txt)"
	fi
done
chmod u+w ro

# Commands that record still create one.
"$R" --db new.db devices >/dev/null 2>&1
[ -s new.db ] && ok "devices creates new.db" || no "devices did not create new.db"
finish
