#!/bin/sh
# End-to-end: fill a database from tests/fixtures/small_campaign.sql (through
# db_tool, not the sqlite3 CLI), then run `ratchet note / correct / invalidate
# / export` and check exit codes, messages and the rows they leave.
set -u
R="$RATCHET_BIN"
T="$RATCHET_BUILD/db_tool"
tmp=$(mktemp -d /tmp/rt-db-e2e-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset RATCHET_DB
export NO_COLOR=1
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected [$2], got [$3]"; fi
}
q() { "$T" query ratchet.db "$1"; }
run() { # run ARGS...: sets rc, out, err
	"$R" "$@" >out.txt 2>err.txt
	rc=$?
	out=$(cat out.txt)
	err=$(cat err.txt)
}

"$T" load ratchet.db "$RATCHET_SRC/tests/fixtures/small_campaign.sql" || { echo "fixture did not load"; exit 1; }
check "fixture iterations" 9 "$(q 'SELECT count(*) FROM iterations')"

# note
run note 2 the gain held on a rerun
check "note exit" 0 "$rc"
check "note output" "note 4 added to iteration 1:1 (id 2, graphs-256)" "$out"
check "note row" "2|note||the gain held on a rerun" \
	"$(q "SELECT iteration_id, kind, by_iteration_id, text FROM notes WHERE id = 4")"
run note 1:5 by campaign and seq
check "note CAMPAIGN:SEQ exit" 0 "$rc"
check "note CAMPAIGN:SEQ row" "6" "$(q "SELECT iteration_id FROM notes WHERE text = 'by campaign and seq'")"
run note 42 hello
check "note unknown exit" 2 "$rc"
check "note unknown message" "ratchet: note: no iteration 42 in ratchet.db" "$err"
run note 1:99 hello
check "note unknown seq message" "ratchet: note: no iteration 1:99 in ratchet.db" "$err"
run note abc hello
check "note bad ref exit" 2 "$rc"
run note 2
check "note without text exit" 2 "$rc"
run --json note 3 json please
check "note --json exit" 0 "$rc"
case "$out" in *'"note_id": 6'*'"iteration_id": 3'*) ok "note --json output" ;; *) bad "note --json output: $out" ;; esac

# correct: both iterations stay as they were
run correct 2 --by 4 the gain was the attention tile
check "correct exit" 0 "$rc"
check "correct row" "2|correction|4|the gain was the attention tile" \
	"$(q "SELECT iteration_id, kind, by_iteration_id, text FROM notes WHERE id = 7")"
check "correct leaves iterations" "kept|kept" \
	"$(q "SELECT group_concat(state, '|') FROM iterations WHERE id IN (2, 4)")"
run correct 2 --by 2 self
check "correct self exit" 2 "$rc"
check "correct self message" "ratchet: correct: iteration 2 cannot correct itself" "$err"
run correct 2 --by 99 nope
check "correct unknown by" "2 ratchet: correct: no iteration 99 in ratchet.db" "$rc $err"
run correct 2 no by
check "correct without --by exit" 2 "$rc"

# invalidate: stays visible, refused twice
run invalidate 7 --reason "measured a stale server"
check "invalidate exit" 0 "$rc"
check "invalidate row" "7|invalidation|measured a stale server" \
	"$(q "SELECT iteration_id, kind, text FROM notes WHERE id = 8")"
check "invalidated iteration stays" "reverted" "$(q 'SELECT state FROM iterations WHERE id = 7')"
run invalidate 7 --reason again
check "invalidate twice exit" 2 "$rc"
check "invalidate twice message" \
	"ratchet: invalidate: iteration 7 is already invalid (note 8: measured a stale server)" "$err"
check "one invalidation" 1 "$(q "SELECT count(*) FROM notes WHERE iteration_id = 7 AND kind = 'invalidation'")"
run invalidate 7
check "invalidate without reason exit" 2 "$rc"

# export
run export --format json -o all.json
check "export json exit" 0 "$rc"
# every table of the database, so that a table a migration adds and export
# forgets fails here
tables=$(q "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
ntables=$(echo "$tables" | wc -l | tr -d ' ')
check "the schema's tables" 26 "$ntables"
check "export json summary" "exported $ntables tables (69 rows) as JSON to all.json" "$out"
for t in $tables; do
	grep -q "^\"$t\": \[" all.json || bad "export json has $t"
done
[ -f all.json.tmp ] && bad "export json left a temporary file"
ok "export json has every table"
run --json export --table notes
check "--json export exit" 0 "$rc"
check "--json export rows" 8 "$(grep -c '"kind": ' out.txt)"
check "--json export first line" "{" "$(head -n 1 out.txt)"
run export --format json --table originals --blobs
case "$out" in *'"base64":"f0VMRgIBAQA="'*) ok "export --blobs base64" ;; *) bad "export --blobs: $out" ;; esac
run export --format csv -o csv
check "export csv exit" 0 "$rc"
check "export csv files" "$tables" "$(ls csv | sed -n 's/\.csv$//p' | LC_ALL=C sort)"
check "export csv notes lines" 9 "$(wc -l <csv/notes.csv | tr -d ' ')"
check "export csv header" "id,iteration_id,kind,by_iteration_id,text,author,created_at" \
	"$(head -n 1 csv/notes.csv | tr -d '\r')"
grep -q '"She pays 5 + 3 = ""8"" dollars,' csv/gate_answers.csv && ok "export csv quoting" || bad "export csv quoting"
run export --format csv --table notes -o one.csv
check "export one csv" "0 9" "$rc $(wc -l <one.csv | tr -d ' ')"
run export --format csv --table note
check "export unknown table" "2 ratchet: export: --table: no table 'note' (did you mean 'notes'?)" "$rc $err"
run export --format csv -o -
check "export csv to stdout needs --table" 2 "$rc"
run export --format xml
check "export bad format" 2 "$rc"

echo "$fails failed"
[ "$fails" -eq 0 ]
