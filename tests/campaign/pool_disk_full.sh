#!/bin/sh
# A full disk while a worker's working copy is refilled (issue 22, item
# 22): a short write left errno as it was, and the run said "File exists".
# The database (and so <database>.pool/) sits on a 1 MiB tmpfs and the
# workdir holds 3 MB: the refill must fail naming the file and ENOSPC.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
W=$(mktemp -d /tmp/ratchet-pool-full-XXXXXX)
cleanup() { cd /; umount "$W/full" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
mkdir full
mount -t tmpfs -o size=1m tmpfs full 2>/dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
kill9_setup wd
sed -i 's|^strategy: list|strategy: greedy|' wd/spec.yaml
head -c 3000000 /dev/zero > wd/big.bin
rc=0
(cd wd && "$RATCHET_BIN" --db "$W/full/c.db" run --quiet --devices host:0,host:1 spec.yaml) > out 2>&1 || rc=$?
cat out
[ $rc -eq 3 ] || { echo "FAIL: exit $rc, expected 3"; exit 1; }
grep -q "c.db.pool/[0-9]/big.bin: write failed: No space left on device" out ||
	{ echo "FAIL: the error does not say the disk is full"; exit 1; }
! grep -q "File exists" out || { echo "FAIL: a stale errno was reported"; exit 1; }
echo PASS
