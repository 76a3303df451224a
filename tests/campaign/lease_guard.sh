#!/bin/sh
# The lease's two guards (issue 22, items 12 and 20):
#   1. a lock file that cannot be opened (here a directory at <db>.lock) is
#      an error naming it, never a free campaign: 5 of 70 races once ran two
#      campaigns because lock_byte returned success without a lock file;
#   2. a lease whose owner pid was reused by another ratchet process (same
#      command name, a different start time than the token names) is not a
#      live holder: it is taken over instead of "stop it (kill N)"; with the
#      right start time the same process is still refused (the control).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-leaseg-XXXXXX)
cleanup() { [ -n "${P:-}" ] && kill -9 "$P" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"
HOST=$(hostname)

# 1. <db>.lock is a directory.
kill9_setup "$W/dir"
cd "$W/dir"
mkdir c.db.lock
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err || rc=$?
cat err
[ $rc -eq 3 ] || { echo "FAIL: a run without a usable lock file exited $rc, expected 3"; exit 1; }
grep -q "c.db.lock: cannot open the campaign lock file" err ||
	{ echo "FAIL: the error does not name the lock file"; exit 1; }
[ "$(q "SELECT count(*) FROM campaigns")" -eq 0 ] || { echo "FAIL: a campaign was created without a lock"; exit 1; }
rmdir c.db.lock
run_ok spec.yaml
echo "no lock file: refused ($(head -n 1 err))"

# 2. A reused pid: a live process named ratchet that did not take the lease.
kill9_setup "$W/pid"
cd "$W/pid"
run_ok --max-iterations 1 spec.yaml
cp "$(command -v sleep)" "$W/ratchet"
"$W/ratchet" 120 &
P=$!
start=$(awk '{print $22}' "/proc/$P/stat")
now=$(($(date +%s) * 1000))
q "UPDATE campaigns SET owner_token = '$HOST/$P/$start', owner_pid = $P, owner_host = '$HOST',
	owner_since = $now - 60000, heartbeat_at = $now"
rc=0
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2> err || rc=$?
[ $rc -eq 3 ] && grep -q "being run by pid $P" err ||
	{ cat err; echo "FAIL: the control (the pid that took the lease, alive) was not refused"; exit 1; }
q "UPDATE campaigns SET owner_token = '$HOST/$P/$((start + 1))'"
rc=0
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2> err || rc=$?
[ $rc -eq 0 ] || { cat err; echo "FAIL: a reused pid ($P) was taken for the lease's holder (exit $rc)"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = finished ] || { echo "FAIL: not finished"; exit 1; }
echo "reused pid $P: taken over; the real holder is still refused"
echo PASS
