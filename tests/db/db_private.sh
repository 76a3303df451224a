#!/bin/sh
# The statement layer is private to db/: db/db_int.h (and sqlite3.h) are
# included only by db/*.c and the tests. No public header of db/ includes
# either, so the modules above db/ see the store's API and never SQLite.
set -u
cd "$RATCHET_SRC" || exit 1
fails=0
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\(sqlite3\.h\|db/db_int\.h\)[>"]'
bad=$(find db -name '*.h' ! -name db_int.h -exec grep -l "$inc" {} + 2>/dev/null)
if [ -z "$bad" ]; then echo "ok - no public db header includes sqlite3.h or db_int.h"
else echo "not ok - public headers include the statement layer: $bad"; fails=$((fails + 1)); fi
bad=$(find runner variants reports agents experiments -name '*.[ch]' -exec grep -l "$inc" {} + 2>/dev/null)
if [ -z "$bad" ]; then echo "ok - nothing outside db/ and tests/ includes sqlite3.h or db_int.h"
else echo "not ok - outside db/: $bad"; fails=$((fails + 1)); fi
n=$(find db -name '*.c' -exec grep -l "$inc" {} + | wc -l)
[ "$n" -gt 0 ] && echo "ok - db/*.c use the statement layer ($n files)" ||
	{ echo "not ok - the check found no db/*.c including db_int.h"; fails=$((fails + 1)); }
echo "$fails failed"
[ "$fails" -eq 0 ]
