#!/bin/sh
# What `restore` writes, end to end (issue 17, items 8 and 10):
#   - a table that is a symbolic link stays a link through the campaign and
#     the restore; its target gets the edits and then its original bytes;
#   - an original whose stored bytes no longer match their stored sha256 is
#     refused: restore fails naming the file and writes nothing.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/common.sh"
W=$(mktemp -d /tmp/ratchet-restore-files-XXXXXX)
trap 'rm -rf "$W"' EXIT
orig="$RATCHET_SRC/tests/campaign/table.json"

# ---- a symlinked table ----
kill9_setup "$W/link"
cd "$W/link"
mkdir tables
mv table.json tables/real.json
ln -s tables/real.json table.json
run_ok spec.yaml
[ "$(q "SELECT count(*) FROM iterations WHERE state='kept'")" -ge 1 ] || { echo "FAIL: nothing kept"; exit 1; }
[ -L table.json ] || { echo "FAIL: the campaign replaced the table's link with a file"; exit 1; }
cmp -s tables/real.json "$orig" && { echo "FAIL: the kept change is not in the link's target"; exit 1; }
q "SELECT path FROM originals" | grep -q '/tables/real.json$' || { echo "FAIL: the target was not journaled"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
[ -L table.json ] || { echo "FAIL: restore replaced the table's link with a file"; exit 1; }
[ "$(readlink table.json)" = tables/real.json ] || { echo "FAIL: the link points elsewhere"; exit 1; }
cmp -s tables/real.json "$orig" || { echo "FAIL: restore did not put the target's bytes back"; exit 1; }

# ---- a damaged original is refused ----
kill9_setup "$W/sha"
cd "$W/sha"
run_ok spec.yaml
cp table.json kept.json
cmp -s kept.json "$orig" && { echo "FAIL: nothing kept, so nothing to restore"; exit 1; }
q "UPDATE originals SET content = CAST('{\"damaged\": 1}' AS BLOB)"
rc=0
"$RATCHET_BIN" --db c.db restore > restore.out 2>&1 || rc=$?
cat restore.out
[ $rc -eq 3 ] || { echo "FAIL: restore of a damaged original exited $rc, want 3"; exit 1; }
grep -q "table.json: the stored original bytes do not match their sha256" restore.out ||
	{ echo "FAIL: the refusal does not say why"; exit 1; }
cmp -s table.json kept.json || { echo "FAIL: restore wrote the damaged bytes"; exit 1; }
echo PASS
