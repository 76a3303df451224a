#!/bin/sh
# Patch variants end to end, in a real git repository: `git apply --check`,
# apply, build; a build that fails is a failed iteration with its log kept and
# the source put back; a good patch is kept; `restore` puts the patched file
# back to its pre-campaign bytes (build outputs are the build's business).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v git >/dev/null || { echo "git missing"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/patch_common.sh"
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-patch
patch_repo
(
	cd src
	echo BROKEN > speed.txt && git diff > ../broken.diff && git checkout -q speed.txt
	# a patch that applies to the tree as it is (pre-flight passes it) but no
	# longer once faster is kept: its context no longer matches
	sed 's/^+130$/+150/' ../faster.diff > ../stale.diff
)
patch_spec patch-e2e src/built.txt <<'Y'
  - name: broken-build
    patch: {file: broken.diff, dir: src}
    build: [sh, -c, "if grep -q BROKEN speed.txt; then echo 'error: BROKEN is not a number' >&2; exit 1; fi; cp speed.txt built.txt"]
  - name: faster
    patch: {file: faster.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
  - name: stale
    patch: {file: stale.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml
q() { sqlite3 c.db "$1"; }
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
q "SELECT reason FROM iterations WHERE variant='stale'" | grep -q "patch does not apply\|git apply" || { echo "FAIL: stale patch not refused by git apply"; exit 1; }
[ "$(q "SELECT state FROM iterations WHERE variant='stale'")" = failed ] || { echo "FAIL: stale patch state"; exit 1; }
[ "$(q "SELECT state FROM iterations WHERE variant='broken-build'")" = failed ] || { echo "FAIL: failed build not a failed iteration"; exit 1; }
q "SELECT content FROM artifacts a JOIN iterations i ON i.id = a.iteration_id WHERE i.variant='broken-build' AND a.kind='build-log'" | grep -q "BROKEN is not a number" || { echo "FAIL: build log not kept"; exit 1; }
[ "$(q "SELECT state FROM iterations WHERE variant='faster'")" = kept ] || { echo "FAIL: the good patch was not kept"; exit 1; }
[ "$(cat src/speed.txt)" = 130 ] || { echo "FAIL: kept patch not in place"; exit 1; }
[ "$(q "SELECT count(*) FROM intents WHERE state='open'")" = 0 ] || { echo "FAIL: open intents"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
[ "$(cat src/speed.txt)" = 100 ] || { echo "FAIL: restore"; exit 1; }
(cd src && git diff --quiet -- speed.txt) || { echo "FAIL: speed.txt differs from git after restore"; exit 1; }
echo PASS
