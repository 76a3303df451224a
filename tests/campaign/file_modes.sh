#!/bin/sh
# File modes through a campaign, end to end in a git work tree (issue 17):
# the journal kept bytes only, so
#   - a reverted patch that drops a script's +x left it 0644 (the bytes
#     already matched, nothing was written back);
#   - a kept patch that deletes an executable script, once restored, brought
#     it back 0644.
# Now every state is bytes and mode: the script is 0755 again after the
# revert and after the restore, and `git status` is clean.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v git >/dev/null || { echo "git missing"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/common.sh"
. "$RATCHET_SRC/tests/campaign/patch_common.sh"
W=$(mktemp -d /tmp/ratchet-file-modes-XXXXXX)
trap 'rm -rf "$W"' EXIT
commit() { git -c user.email=t@example.com -c user.name=t commit -qm "$1"; }
mode() { stat -c %a "$1"; }

mkdir -p "$W/src"
cd "$W/src"
git init -q
git config core.fileMode true
echo 100 > speed.txt
printf '#!/bin/sh\necho tool\n' > tool.sh
printf '#!/bin/sh\necho old\n' > old.sh
chmod 755 tool.sh old.sh
printf 'built.txt\n' > .gitignore
git add . && commit init
# slower.diff: tool.sh loses +x, the speed drops
chmod 644 tool.sh
echo 70 > speed.txt
git diff > ../slower.diff
git checkout -q . && chmod 755 tool.sh
# faster.diff: old.sh is deleted, the speed rises
git rm -q old.sh
echo 130 > speed.txt
git add -A && git diff --cached > ../faster.diff
git reset -q --hard
grep -q '^old mode 100755' ../slower.diff || { echo "FAIL: the test patch does not change a mode"; exit 1; }
grep -q '^deleted file mode 100755' ../faster.diff || { echo "FAIL: the test patch does not delete old.sh"; exit 1; }
[ "$(mode tool.sh) $(mode old.sh)" = "755 755" ] || { echo "FAIL: setup modes"; exit 1; }
cp speed.txt built.txt
cd ..
patch_spec patch-modes src/built.txt <<'Y'
  - name: slower
    patch: {file: slower.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
  - name: faster
    patch: {file: faster.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
Y
run_ok spec.yaml
[ "$(q "SELECT state FROM iterations WHERE variant='slower'")" = reverted ] || { echo "FAIL: slower was not reverted"; exit 1; }
[ "$(q "SELECT state FROM iterations WHERE variant='faster'")" = kept ] || { echo "FAIL: faster was not kept"; exit 1; }
[ "$(mode src/tool.sh)" = 755 ] || { echo "FAIL: tool.sh is $(mode src/tool.sh) after the revert, want 755"; exit 1; }
[ ! -e src/old.sh ] || { echo "FAIL: the kept deletion is not in place"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
[ -f src/old.sh ] || { echo "FAIL: restore did not bring old.sh back"; exit 1; }
[ "$(mode src/old.sh)" = 755 ] || { echo "FAIL: old.sh is $(mode src/old.sh) after restore, want 755"; exit 1; }
st=$(cd src && git status --porcelain)
[ -z "$st" ] || { echo "FAIL: git status after restore:"; echo "$st"; exit 1; }
echo PASS
