#!/bin/sh
# Two runners on one campaign (issue 17, item 4). `ratchet run --resume`
# once accepted a campaign another runner was still running, and the two
# corrupted each other. A runner now holds the campaign's lease (a lock
# beside the database, and owner columns with a heartbeat in it):
#   1. while runner A lives, a second runner is refused, with or without
#      --resume, naming A's pid and host and not advising --resume, and A's
#      heartbeat advances;
#   2. after kill -9 of A, --resume takes the campaign over and reaches the
#      decisions and the table of one uninterrupted run;
#   3. a lease held from another host (which the lock cannot see) is refused
#      while its heartbeat is fresh and taken over once it is stale.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-lease-XXXXXX)
cleanup() { [ -n "${A:-}" ] && kill -9 "$A" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"
HOST=$(hostname)

kill9_setup "$W/ref"
(cd "$W/ref" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
want=$(decisions "$W/ref/c.db")

# refused NAME ARGS...: the run must be refused, naming pid $2 on host $3.
refused() {
	name=$1 pid=$2 host=$3
	shift 3
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet "$@" spec.yaml > out 2> err || rc=$?
	cat err
	[ $rc -eq 3 ] || { echo "FAIL: $name: exit $rc, expected 3 (refused)"; exit 1; }
	grep -q "being run by pid $pid on host $host" err || { echo "FAIL: $name: the owner is not named"; exit 1; }
	! grep -q -- "--resume" err || { echo "FAIL: $name: advises --resume while the campaign is live"; exit 1; }
}

# 1. Runner A, slow enough to be caught running.
mkdir "$W/two" && cd "$W/two"
cp "$RATCHET_SRC/tests/campaign/table.json" .
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|300|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > a.out 2> a.err &
A=$!
i=0
while [ "$(q "SELECT count(*) FROM iterations WHERE seq >= 1" 2>/dev/null || echo 0)" -lt 1 ]; do
	i=$((i+1)); [ $i -lt 400 ] || { cat a.err; echo "FAIL: runner A never reached iteration 1"; exit 1; }; sleep 0.05
done
refused "resume while A runs" $A "$HOST" --resume
refused "a new run while A runs" $A "$HOST"
hb0=$(q "SELECT heartbeat_at FROM campaigns")
[ "$(q "SELECT count(*) FROM campaigns")" -eq 1 ] || { echo "FAIL: a second campaign was created"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE state = 'interrupted'")" -eq 0 ] ||
	{ echo "FAIL: the refused runner marked A's iteration interrupted"; exit 1; }
sleep 5.5
kill -0 $A 2>/dev/null || { cat a.err; echo "FAIL: runner A ended too soon to test"; exit 1; }
hb1=$(q "SELECT heartbeat_at FROM campaigns")
[ "$hb1" -gt "$hb0" ] || { echo "FAIL: A's heartbeat did not advance ($hb0, $hb1)"; exit 1; }
echo "refused while A (pid $A) lives; heartbeat advanced $((hb1 - hb0)) ms"

# 2. kill -9 of A: the lease is taken over.
kill -9 $A
wait $A 2>/dev/null || true
A=
run_ok --resume spec.yaml
got=$(decisions c.db)
[ "$got" = "$want" ] || { echo "FAIL: decisions after the takeover: $got, want $want"; exit 1; }
cmp -s table.json "$W/ref/table.json" || { echo "FAIL: the final table differs"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = finished ] || { echo "FAIL: not finished"; exit 1; }
[ -z "$(q "SELECT owner_token FROM campaigns")" ] || { echo "FAIL: the lease was not given back"; exit 1; }
echo "taken over after kill -9: $got"

# 3. A lease held on another host: the heartbeat decides.
kill9_setup "$W/host"
cd "$W/host"
run_ok --max-iterations 1 spec.yaml
now=$(($(date +%s) * 1000))
q "UPDATE campaigns SET owner_token = 'other', owner_pid = 4242, owner_host = 'elsewhere',
	owner_since = $now - 60000, heartbeat_at = $now"
refused "fresh lease on another host" 4242 elsewhere --resume
grep -q "kill 4242 on elsewhere" err || { echo "FAIL: the refusal does not say where the pid runs"; exit 1; }
q "UPDATE campaigns SET heartbeat_at = $now - 120000"
run_ok --resume spec.yaml
got=$(decisions c.db)
[ "$got" = "$want" ] || { echo "FAIL: decisions after taking over a stale lease: $got"; exit 1; }
echo "another host: refused while fresh, taken over once stale"
echo PASS
