#!/bin/sh
# SQLite's shared-memory file made immutable under a running campaign
# (issue 17, item 18). WAL mode maps `<database>-shm`; once the file is
# immutable the kernel answers SQLite's next write to the mapping with
# SIGBUS, which killed ratchet (exit 135, no word said). Now ratchet says
# what happened and exits 3, leaving the campaign as a kill -9 would, and
# --resume (the file writable again) reaches the decisions and the table of
# an uninterrupted run. Where chattr +i is refused (no CAP_LINUX_IMMUTABLE,
# a file system without the flag) the file is truncated instead, which
# raises the same SIGBUS.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-sigbus-XXXXXX)
cleanup() { chattr -i "$W/run/c.db-shm" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"

kill9_setup "$W/ref"
(cd "$W/ref" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
want=$(decisions "$W/ref/c.db")

mkdir "$W/run" && cd "$W/run"
cp "$RATCHET_SRC/tests/campaign/table.json" .
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|50|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
R=$!
i=0
while [ "$(q "SELECT count(*) FROM iterations WHERE seq >= 1" 2>/dev/null || echo 0)" -lt 1 ]; do
	i=$((i+1)); [ $i -lt 400 ] || { cat err; echo "FAIL: the campaign never reached iteration 1"; exit 1; }; sleep 0.05
done
if chattr +i c.db-shm 2>/dev/null; then how="chattr +i"; else truncate -s 0 c.db-shm; how="truncate"; fi
rc=0
wait $R || rc=$?
cat err
[ $rc -ne 0 ] || { echo "FAIL: the campaign finished although its -shm file was broken ($how)"; exit 1; }
[ $rc -eq 3 ] || { echo "FAIL: $how: exit $rc, expected 3 (135: killed by SIGBUS)"; exit 1; }
grep -q "SIGBUS" err && grep -q "c.db-shm" err && grep -q "ratchet run --resume spec.yaml" err ||
	{ echo "FAIL: $how: the message does not say what happened and how to recover"; exit 1; }
chattr -i c.db-shm 2>/dev/null || true
run_ok --resume spec.yaml
got=$(decisions c.db)
[ "$got" = "$want" ] || { echo "FAIL: decisions after resume: $got, want $want"; exit 1; }
cmp -s table.json "$W/ref/table.json" || { echo "FAIL: the final table differs"; exit 1; }
echo "$how: exit 3 with a message; resumed to the same decisions"
echo PASS
