#!/bin/sh
# A build that fails on the reverted tree every time (issue 22, item 19):
# here the change's build leaves a stale object that the best's build then
# trips on. The first run stops with the iteration interrupted, --resume
# tries the change again; when its revert fails again the change is recorded
# failed, and the next --resume finishes the campaign. Before, every
# --resume stopped at the same change, forever.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v git >/dev/null || { echo "git missing"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/common.sh"
. "$RATCHET_SRC/tests/campaign/patch_common.sh"
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-revert-build
patch_repo
patch_spec revert-build src/built.txt <<'Y'
  - name: stale-object
    patch: {file: faster.diff, dir: src}
    build: [sh, -c, "if grep -q 130 speed.txt; then touch ../stale.o; elif [ -e ../stale.o ]; then echo 'error: stale.o' >&2; exit 1; fi; cp speed.txt built.txt"]
Y
runs=0 rc=3
while [ $rc -ne 0 ] && [ $runs -lt 4 ]; do
	runs=$((runs + 1))
	rc=0
	if [ $runs -eq 1 ]; then
		"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2>&1 || rc=$?
	else
		"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2>&1 || rc=$?
	fi
	echo "run $runs: exit $rc: $(tail -n 1 out)"
done
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
[ "$(q "SELECT state FROM campaigns")" = finished ] || { echo "FAIL: the campaign never finished ($runs runs)"; exit 1; }
[ "$(q "SELECT state FROM iterations WHERE variant = 'stale-object' ORDER BY seq DESC LIMIT 1")" = failed ] ||
	{ echo "FAIL: the change was not recorded failed"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE variant = 'stale-object' AND state = 'interrupted'")" -eq 1 ] ||
	{ echo "FAIL: not tried again once before it was dropped"; exit 1; }
q "SELECT reason FROM iterations WHERE variant = 'stale-object' AND state = 'failed'" | grep -q "as in an earlier attempt" ||
	{ echo "FAIL: the reason does not say why"; exit 1; }
echo PASS
