#!/bin/sh
# One iteration number everywhere: `ratchet log` prints CAMPAIGN:SEQ first and
# the global id second, and every command that names an iteration takes
# either form (show, note, correct, invalidate). `show --artifact NAME`
# prints a stored artifact byte for byte.
# Cases: log's first column; show 1:4 = show 5; note 1:1 and correct 1:1 --by
# 1:3 land on the right rows; show 1:99 and show 1:x exit 2 with a message;
# show 1:4 --artifact build.log; an unknown artifact lists the names.
set -u
R=${RATCHET_BIN:?} T="${RATCHET_BUILD:?}/db_tool"
. "$(dirname "$0")/lib.sh"
scratch iterref
"$T" load ratchet.db "$RATCHET_SRC/tests/fixtures/small_campaign.sql" || exit 1

"$R" log >log.txt 2>&1
grep -q '^ *1:4 *5 ' log.txt && ok "log prints 1:4 then id 5" || { cat log.txt; no "log lacks '1:4 5'"; }

"$R" show 1:4 >a.txt 2>&1 && "$R" show 5 >b.txt 2>&1 && cmp -s a.txt b.txt &&
	ok "show 1:4 = show 5" || no "show 1:4 differs from show 5: $(head -2 a.txt)"
head -1 a.txt | grep -q '^iteration 1:4 (id 5, campaign ' && ok "show's title: $(head -1 a.txt)" ||
	no "show's title: $(head -1 a.txt)"

"$R" note 1:1 "seen by 1:1" >out.txt 2>&1 && grep -q 'iteration 1:1 (id 2' out.txt &&
	ok "note 1:1: $(cat out.txt)" || no "note 1:1: $(cat out.txt)"
"$R" correct 1:1 --by 1:3 "see 1:3" >out.txt 2>&1 && grep -q 'corrected by 1:3' out.txt &&
	ok "correct 1:1 --by 1:3: $(cat out.txt)" || no "correct: $(cat out.txt)"
[ "$("$T" query ratchet.db "SELECT iteration_id || '/' || by_iteration_id FROM notes ORDER BY id DESC LIMIT 1")" = 2/4 ] &&
	ok "the correction points from id 2 to id 4" || no "correction row"

for bad in 1:99 1:x 0; do
	"$R" show "$bad" >out.txt 2>err.txt; rc=$?
	[ $rc -eq 2 ] && [ -s err.txt ] && ok "show $bad: exit 2: $(cat err.txt)" || no "show $bad: exit $rc: $(cat err.txt)"
done

"$R" show 1:4 --artifact build.log >art.txt 2>err.txt &&
	[ "$(cat art.txt)" = "patching file scalem.c
scalem.c:41: error: expected ';'" ] && ok "show --artifact build.log" || no "show --artifact: $(cat art.txt err.txt)"
"$R" show 1:4 --artifact engine.log >out.txt 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -q "has no artifact 'engine.log' (it has: build.log)" err.txt &&
	ok "unknown artifact: $(cat err.txt)" || no "unknown artifact: exit $rc: $(cat err.txt)"
finish
