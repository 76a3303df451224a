#!/bin/sh
# `ratchet restore` and the campaign's lease (issue 17): restore once put a
# campaign's files back under a runner that was still running it. Now it
# takes the campaign's lease first:
#   1. while a runner on this host lives, restore is refused with exit 3,
#      naming its pid and host, and changes nothing; once the runner is
#      killed (-9), restore takes the stale lease and puts the table back;
#   2. a lease held from another host is refused while its heartbeat is
#      fresh and taken over once it is stale.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-restore-lease-XXXXXX)
cleanup() { [ -n "${A:-}" ] && kill -9 "$A" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"
HOST=$(hostname)
orig="$RATCHET_SRC/tests/campaign/table.json"

# refused NAME PID HOST: restore must be refused, naming the owner.
refused() {
	rc=0
	"$RATCHET_BIN" --db c.db restore > out 2> err || rc=$?
	cat err
	[ $rc -eq 3 ] || { echo "FAIL: $1: restore exited $rc, expected 3 (refused)"; exit 1; }
	grep -q "being run by pid $2 on host $3" err || { echo "FAIL: $1: the owner is not named"; exit 1; }
	! grep -q "restored" out || { echo "FAIL: $1: restore says it restored"; exit 1; }
}

# 1. A live runner, slow enough to be caught running.
mkdir "$W/live" && cd "$W/live"
cp "$orig" .
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|300|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > a.out 2> a.err &
A=$!
i=0
while [ "$(q "SELECT count(*) FROM intents" 2>/dev/null || echo 0)" -lt 1 ]; do
	i=$((i+1)); [ $i -lt 400 ] || { cat a.err; echo "FAIL: the runner never touched the table"; exit 1; }; sleep 0.05
done
undone=$(q "SELECT count(*) FROM intents WHERE state = 'undone'")
refused "restore while a runner lives" $A "$HOST"
kill -0 $A 2>/dev/null || { cat a.err; echo "FAIL: the runner ended too soon to test"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = running ] || { echo "FAIL: the refused restore changed the campaign's state"; exit 1; }
[ "$(q "SELECT count(*) FROM intents WHERE state = 'undone'")" = "$undone" ] ||
	{ echo "FAIL: the refused restore undid the runner's intents"; exit 1; }
kill -9 $A
wait $A 2>/dev/null || true
A=
"$RATCHET_BIN" --db c.db restore > out 2> err || { cat err; echo "FAIL: restore after kill -9"; exit 1; }
cmp -s table.json "$orig" || { echo "FAIL: restore after kill -9 did not put the table back"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = aborted ] || { echo "FAIL: the campaign is not aborted"; exit 1; }
[ -z "$(q "SELECT owner_token FROM campaigns")" ] || { echo "FAIL: restore kept the lease"; exit 1; }
echo "refused while the runner lived; restored after kill -9"

# 2. A lease held on another host: its heartbeat decides.
kill9_setup "$W/host"
cd "$W/host"
run_ok spec.yaml
cp table.json kept.json
cmp -s kept.json "$orig" && { echo "FAIL: nothing kept, so nothing to restore"; exit 1; }
now=$(($(date +%s) * 1000))
q "UPDATE campaigns SET owner_token = 'other', owner_pid = 4242, owner_host = 'elsewhere',
	owner_since = $now - 60000, heartbeat_at = $now"
refused "a fresh lease on another host" 4242 elsewhere
cmp -s table.json kept.json || { echo "FAIL: the refused restore wrote the table"; exit 1; }
q "UPDATE campaigns SET heartbeat_at = $now - 120000"
"$RATCHET_BIN" --db c.db restore > out 2> err || { cat err; echo "FAIL: restore of a stale lease"; exit 1; }
cmp -s table.json "$orig" || { echo "FAIL: restore of a stale lease did not put the table back"; exit 1; }
echo "another host: refused while fresh, restored once stale"
echo PASS
