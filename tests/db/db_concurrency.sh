#!/bin/sh
# Two processes write at once: a loop of `ratchet note` in the background
# while db_tool inserts iterations with measurements, one BEGIN IMMEDIATE
# transaction each, 40 ms apart, so the two really interleave. Nothing may be lost and nobody may see "database is
# locked" (busy_timeout is 10 s).
set -u
R="$RATCHET_BIN"
T="$RATCHET_BUILD/db_tool"
tmp=$(mktemp -d /tmp/rt-db-conc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset RATCHET_DB
export NO_COLOR=1
NOTES=25
ITERS=50
MEAS=40
"$T" load ratchet.db "$RATCHET_SRC/tests/fixtures/small_campaign.sql" || exit 1
notes0=$("$T" query ratchet.db 'SELECT count(*) FROM notes')
meas0=$("$T" query ratchet.db 'SELECT count(*) FROM measurements')

(
	i=1
	while [ $i -le $NOTES ]; do
		"$R" note 2 "concurrent note $i" >/dev/null 2>>notes.err || echo "$i" >>notes.failed
		i=$((i + 1))
	done
) &
loop=$!
"$T" hammer ratchet.db 1 100 $ITERS $MEAS 40 >hammer.out 2>hammer.err
hrc=$?
wait $loop

fails=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "not ok - $1: expected [$2], got [$3]"; fails=$((fails + 1)); fi; }
check "hammer exit" 0 "$hrc"
check "no failed note" "" "$(cat notes.failed 2>/dev/null)"
check "no error output" "" "$(cat notes.err hammer.err 2>/dev/null)"
check "every note" $((notes0 + NOTES)) "$("$T" query ratchet.db 'SELECT count(*) FROM notes')"
check "distinct notes" $NOTES "$("$T" query ratchet.db "SELECT count(DISTINCT text) FROM notes WHERE text LIKE 'concurrent note %'")"
check "every iteration" $ITERS "$("$T" query ratchet.db "SELECT count(*) FROM iterations WHERE variant = 'hammer'")"
check "every measurement" $((meas0 + ITERS * MEAS)) "$("$T" query ratchet.db 'SELECT count(*) FROM measurements')"
# The two writers really overlapped: some note landed between the first and
# the last hammer iteration.
check "writers overlapped" 1 "$("$T" query ratchet.db "SELECT count(*) > 0 FROM notes n WHERE n.text LIKE 'concurrent note %' AND n.created_at BETWEEN (SELECT min(started_at) FROM iterations WHERE variant = 'hammer') AND (SELECT max(started_at) FROM iterations WHERE variant = 'hammer')")"
echo "$fails failed"
[ "$fails" -eq 0 ]
