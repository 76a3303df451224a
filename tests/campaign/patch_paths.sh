#!/bin/sh
# Patches whose paths git names in other ways (issue 17, items 1 and 2), end
# to end in real git repositories:
#   - a rename: git 2.39's `--numstat -z` names only the new path, so the old
#     file was never journaled and `restore` left ` D old.c`; now the kept
#     rename is undone and `git status` is clean;
#   - a patch whose dir is a subfolder of a larger work tree: git names
#     "sub/k.c", ratchet joined it to dir ("sub/sub/k.c"), so the revert
#     never happened and the best arm ran on the patched code;
#   - the same with the patch's paths written relative to dir (`git diff
#     --relative`): git apply skipped every file with exit 0, and the patch
#     was measured as a no-op, "reverted -0.0%" (issue 22, item 18); it is
#     refused, naming the skipped file.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v git >/dev/null || { echo "git missing"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/common.sh"
. "$RATCHET_SRC/tests/campaign/patch_common.sh"
W=$(mktemp -d /tmp/ratchet-patch-paths-XXXXXX)
trap 'rm -rf "$W"' EXIT
commit() { git -c user.email=t@example.com -c user.name=t commit -qm "$1"; }

# ---- a rename, kept, then restored ----
mkdir -p "$W/rename/src"
cd "$W/rename/src"
git init -q
echo 100 > speed.txt
printf 'int old(void) { return 1; }\n' > old.c
echo built.txt > .gitignore
git add . && commit init
git mv old.c new.c
echo 130 > speed.txt
git add -A && git diff --cached -M > ../rename.diff
git reset -q --hard
grep -q '^rename from old.c' ../rename.diff || { echo "FAIL: the test patch is not a rename"; exit 1; }
cp speed.txt built.txt
cd ..
patch_spec patch-rename src/built.txt <<'Y'
  - name: rename
    patch: {file: rename.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
Y
run_ok spec.yaml
[ "$(q "SELECT state FROM iterations WHERE variant='rename'")" = kept ] || { echo "FAIL: the rename was not kept"; exit 1; }
[ -f src/new.c ] && [ ! -e src/old.c ] || { echo "FAIL: the kept rename is not in place"; exit 1; }
q "SELECT path FROM originals ORDER BY path" | grep -q '/src/old.c$' || { echo "FAIL: old.c was not journaled"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
[ "$(cat src/old.c)" = 'int old(void) { return 1; }' ] || { echo "FAIL: restore did not bring old.c back"; exit 1; }
[ ! -e src/new.c ] || { echo "FAIL: restore left new.c"; exit 1; }
st=$(cd src && git status --porcelain)
[ -z "$st" ] || { echo "FAIL: git status after restore:"; echo "$st"; exit 1; }

# ---- dir below the top of a work tree: a slower patch is reverted ----
mkdir -p "$W/sub/repo/sub"
cd "$W/sub/repo"
git init -q
echo 100 > sub/speed.txt
echo 'int x = 1;' > sub/k.c
printf 'built.txt\n/*.diff\n/spec.yaml\n/c.db*\n/run.out\n' > .gitignore
git add . && commit init
echo 70 > sub/speed.txt
echo 'int x = 2;' > sub/k.c
git diff > slower.diff # paths from the top: sub/k.c, sub/speed.txt
git checkout -q .
grep -q '^+++ b/sub/k.c' slower.diff || { echo "FAIL: the test patch does not name sub/k.c"; exit 1; }
cp sub/speed.txt sub/built.txt
patch_spec patch-subfolder sub/built.txt <<'Y'
  - name: slower
    patch: {file: slower.diff, dir: sub}
    build: [sh, -c, "cp speed.txt built.txt"]
  - name: slower-again
    patch: {file: slower.diff, dir: sub}
    build: [sh, -c, "cp speed.txt built.txt && echo again"]
Y
run_ok spec.yaml
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
[ "$(q "SELECT count(*) FROM iterations WHERE state='kept'")" = 0 ] || { echo "FAIL: a slower patch was kept"; exit 1; }
[ "$(cat sub/k.c)" = 'int x = 1;' ] || { echo "FAIL: sub/k.c not reverted: $(cat sub/k.c)"; exit 1; }
[ "$(cat sub/speed.txt)" = 100 ] || { echo "FAIL: sub/speed.txt not reverted"; exit 1; }
[ ! -e sub/sub ] || { echo "FAIL: ratchet wrote under sub/sub"; exit 1; }
# the second iteration's best arm ran on the reverted code
best=$(q "SELECT group_concat(DISTINCT m.value) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant='slower-again' AND m.arm='best' AND m.metric='gflops'")
[ "$best" = 100.0 ] || { echo "FAIL: the best arm measured $best, not the unpatched 100"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
st=$(git status --porcelain -- sub)
[ -z "$st" ] || { echo "FAIL: git status after restore:"; echo "$st"; exit 1; }

# ---- paths relative to dir, in a "diff --git" patch: git skips them all ----
echo 130 > sub/speed.txt
(cd sub && git diff --relative > ../relative.diff) # names k.c, speed.txt
git checkout -q .
grep -q '^diff --git a/speed.txt' relative.diff || { echo "FAIL: the test patch is not relative"; exit 1; }
rm -f c.db*
patch_spec patch-relative sub/built.txt <<'Y'
  - name: relative
    patch: {file: relative.diff, dir: sub}
    build: [sh, -c, "cp speed.txt built.txt"]
Y
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
cat run.out
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
[ "$(q "SELECT count(*) FROM iterations WHERE variant = 'relative' AND state IN ('reverted', 'kept')")" = 0 ] ||
	{ echo "FAIL: a patch git skipped was measured"; exit 1; }
{ grep -q "relative.diff: git apply skips 'speed.txt'" run.out ||
	q "SELECT reason FROM iterations WHERE variant = 'relative'" | grep -q "git apply skips 'speed.txt'"; } ||
	{ echo "FAIL: the refusal does not name the skipped file (exit $rc)"; exit 1; }
[ "$(cat sub/speed.txt)" = 100 ] || { echo "FAIL: sub/speed.txt changed"; exit 1; }
echo PASS
