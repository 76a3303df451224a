#!/bin/sh
# A database written by a newer ratchet (user_version above ours) is refused
# with a clear message (exit 3) and left byte for byte as it was.
set -u
R="$RATCHET_BIN"
T="$RATCHET_BUILD/db_tool"
tmp=$(mktemp -d /tmp/rt-db-newer-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset RATCHET_DB
export NO_COLOR=1
fails=0
"$T" load ratchet.db "$RATCHET_SRC/tests/fixtures/small_campaign.sql" || exit 1
"$T" set-version ratchet.db 99 || exit 1
cp ratchet.db before.db
for cmd in "log" "note 2 hello" "invalidate 2 --reason x" "export --format json"; do
	# shellcheck disable=SC2086
	"$R" $cmd >out.txt 2>err.txt
	rc=$?
	if [ "$rc" -ne 3 ]; then echo "not ok - $cmd: exit $rc, want 3"; fails=$((fails + 1)); fi
	if ! grep -q "ratchet: ratchet.db: database schema version 99 is newer than this ratchet's" err.txt ||
	   ! grep -q "nothing was changed" err.txt; then
		echo "not ok - $cmd: message: $(cat err.txt)"; fails=$((fails + 1))
	fi
	if ! cmp -s ratchet.db before.db; then
		echo "not ok - $cmd: the database file changed"; fails=$((fails + 1))
	fi
	echo "ok - $cmd refused"
done
echo "$fails failed"
[ "$fails" -eq 0 ]
