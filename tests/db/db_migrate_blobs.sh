#!/bin/sh
# Version 4 stores the journal's bytes once, in blobs; rows written before it
# held their bytes inline, and the migration to version 8 moves them into
# blobs. A database built at version 3 (the version-1 fixture and
# migrations 2 and 3) with a campaign stopped mid-apply (inline originals
# and intents, the file half-changed) is migrated by `ratchet restore`: every
# inline copy is in blobs afterwards, keyed by its sha256, the inline columns
# are empty, and the restore reads those rows to undo the open intent and put
# the pre-campaign bytes back; the export still shows the bytes.
set -u
R="$RATCHET_BIN"
tmp=$(mktemp -d /tmp/rt-db-blobs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset RATCHET_DB
export NO_COLOR=1
fails=0
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
f="$tmp/t.txt"
printf 'v1 half' >"$f"
cat "$RATCHET_SRC/tests/db/fixtures/schema_v1.sql" "$RATCHET_SRC"/db/migrations/002_*.sql \
	"$RATCHET_SRC"/db/migrations/003_*.sql | sqlite3 ratchet.db || exit 1
sqlite3 ratchet.db <<SQL || exit 1
PRAGMA user_version = 3;
INSERT INTO campaigns (id, name, spec_path, spec_text, spec_sha256, workdir, seed, state, created_at)
  VALUES (1, 'b', '/s.yaml', 'name: b', 'x', '$tmp', 1, 'running', 1000);
INSERT INTO iterations (id, campaign_id, seq, variant, kind, state, decision, started_at)
  VALUES (1, 1, 0, 'baseline', 'baseline', 'baseline', 'keep', 1000),
         (2, 1, 1, 'a', 'table', 'kept', 'keep', 1001),
         (3, 1, 2, 'b', 'table', 'applying', NULL, 1002);
INSERT INTO originals (campaign_id, path, existed, content, sha256, mode, created_at)
  VALUES (1, '$f', 1, X'$(hex 'v1 original')', '$(sha 'v1 original')', 420, 1000);
INSERT INTO intents (iteration_id, action, path, before_exists, before, before_sha256,
                     after_exists, after, after_sha256, state, created_at)
  VALUES (2, 'apply', '$f', 1, X'$(hex 'v1 original')', '$(sha 'v1 original')',
          1, X'$(hex 'v1 kept')', '$(sha 'v1 kept')', 'done', 1001),
         (3, 'apply', '$f', 1, X'$(hex 'v1 kept')', '$(sha 'v1 kept')',
          1, X'$(hex 'v1 half')', '$(sha 'v1 half')', 'open', 1002);
SQL
"$R" restore >out.txt 2>&1 || bad "restore on a version-1 database: $(cat out.txt)"
v=$(sqlite3 ratchet.db "PRAGMA user_version")
[ "$v" -ge 4 ] && echo "ok - migrated to version $v" || bad "user_version $v"
[ "$(cat "$f")" = "v1 original" ] && echo "ok - restore read the inline bytes" ||
	bad "restore left '$(cat "$f")'"
[ "$(sqlite3 ratchet.db "SELECT state FROM intents WHERE id = 2")" = undone ] &&
	echo "ok - the open intent was undone" || bad "intent state"
[ "$(sqlite3 ratchet.db "SELECT count(*) FROM blobs")" = 3 ] &&
	echo "ok - the three inline contents are in blobs, once each" ||
	bad "blobs: $(sqlite3 ratchet.db "SELECT count(*) FROM blobs")"
inline=$(sqlite3 ratchet.db "SELECT (SELECT count(*) FROM originals WHERE content IS NOT NULL)
	+ (SELECT count(*) FROM intents WHERE before IS NOT NULL OR after IS NOT NULL)")
[ "$inline" = 0 ] && echo "ok - no inline bytes are left" || bad "$inline rows keep inline bytes"
refs=$(sqlite3 ratchet.db "SELECT content_blob FROM originals UNION ALL
	SELECT before_blob || ' ' || after_blob FROM intents ORDER BY 1")
want=$(printf '%s\n%s\n%s\n' "$(sha 'v1 kept') $(sha 'v1 half')" "$(sha 'v1 original')" \
	"$(sha 'v1 original') $(sha 'v1 kept')" | sort)
[ "$refs" = "$want" ] && echo "ok - each row refers to the blob of its own bytes" ||
	bad "references: $refs"
b1=$(sqlite3 ratchet.db "SELECT hex(content) FROM blobs WHERE sha256 = '$(sha 'v1 kept')'")
[ "$b1" = "$(hex 'v1 kept' | tr a-f A-F)" ] && echo "ok - a blob holds its bytes" || bad "blob $b1"
"$R" export --format json --table intents --blobs >exp.txt 2>&1 || bad "export: $(cat exp.txt)"
b64=$(printf 'v1 kept' | base64)
grep -q "\"base64\":\"$b64\"" exp.txt && echo "ok - export shows inline bytes" ||
	bad "export: $(cat exp.txt)"
echo "$fails failed"
[ "$fails" -eq 0 ]
