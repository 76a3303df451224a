#!/bin/sh
# Serial and parallel runs of one seeded greedy campaign make the same
# decisions (the deterministic benchmark of the kill -9 test, table changes):
# no pool, a pool of one device (host:0), and a pool of four (host:0..3,
# --devices over the spec's devices:). The pool of four runs its table
# trials in working copies: the workdir's table ends as the serial run's,
# byte for byte, and every iteration records its round and device.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-pool-greedy
. "$RATCHET_SRC/tests/campaign/common.sh"
for d in none one four; do
	kill9_setup "$d"
	sed -i 's|^strategy: list|strategy: greedy|' "$d/spec.yaml"
done
echo "devices: [host:0]" >> one/spec.yaml
echo "devices: [host:0]" >> four/spec.yaml
(cd none && run_ok spec.yaml)
(cd one && run_ok spec.yaml)
(cd four && run_ok --devices host:0,host:1,host:2,host:3 spec.yaml)
a=$(decisions none/c.db) b=$(decisions one/c.db) c=$(decisions four/c.db)
echo "none: $a"
echo "one:  $b"
echo "four: $c"
[ "$a" = "$b" ] || { echo "FAIL: a pool of one decided otherwise"; exit 1; }
[ "$a" = "$c" ] || { echo "FAIL: a pool of four decided otherwise"; exit 1; }
s1=$(sha256sum < none/table.json) s4=$(sha256sum < four/table.json)
[ "$s1" = "$s4" ] || { echo "FAIL: the workdir's table differs"; exit 1; }
n=$(sqlite3 four/c.db "SELECT count(*) FROM iterations WHERE round IS NULL OR device IS NULL")
[ "$n" -eq 0 ] || { echo "FAIL: $n iterations without a round or device"; exit 1; }
nd=$(sqlite3 four/c.db "SELECT count(DISTINCT device) FROM iterations")
[ "$nd" -eq 4 ] || { echo "FAIL: $nd devices used, expected 4"; exit 1; }
n=$(sqlite3 none/c.db "SELECT count(*) FROM iterations WHERE round IS NOT NULL OR device IS NOT NULL")
[ "$n" -eq 0 ] || { echo "FAIL: a campaign without a pool recorded rounds"; exit 1; }
# Kept changes only by confirmations, made in the workdir (rounds of one).
n=$(sqlite3 four/c.db "SELECT count(*) FROM iterations i WHERE state = 'kept' AND
	(SELECT count(*) FROM iterations j WHERE j.round = i.round) != 1")
[ "$n" -eq 0 ] || { echo "FAIL: a change was kept in a round of several"; exit 1; }
# `ratchet log` shows each iteration's round and device.
(cd four && "$RATCHET_BIN" --db c.db log > log.out)
grep -q "round 1 on host:3" four/log.out || { cat four/log.out; echo "FAIL: log lacks the device"; exit 1; }
# A spec's devices: errors name the line and the key.
sed -i "s/^devices: .*/devices: [cuda:0, gpu:1]/" one/spec.yaml
rc=0
"$RATCHET_BIN" check one/spec.yaml > check.out 2>&1 || rc=$?
cat check.out
[ $rc -eq 2 ] && grep -q "spec.yaml:1[0-9]:.*devices\[1\]: 'gpu:1' is not a device" check.out ||
	{ echo "FAIL: a bad device was not refused with its position"; exit 1; }
rc=0
"$RATCHET_BIN" --db x.db run --devices cuda:0,hip:1 none/spec.yaml > run2.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "one kind" run2.out || { cat run2.out; echo "FAIL: a mixed pool was accepted"; exit 1; }
# A change outside the workdir cannot have a working copy: refused, naming
# the variant and the path, before anything is measured.
kill9_setup out
# (m256-128 moved last: only a check at start-up refuses it before round 1 is measured)
cp out/table.json "$W/outside.json"
sed -i -e 's|^strategy: list|strategy: greedy|' -e "s|file: table.json, set: {M_LE_256|file: $W/outside.json, set: {M_LE_256|" out/spec.yaml
grep -v m256-128 out/spec.yaml > out/s && grep m256-128 out/spec.yaml > out/v && sed -i '/^strategy:/e cat out/v' out/s && mv out/s out/spec.yaml
rc=0
(cd out && "$RATCHET_BIN" --db c.db run --quiet --devices host:0,host:1,host:2 spec.yaml) > out.out 2>&1 || rc=$?
cat out.out
[ $rc -ne 0 ] && grep -q "variant 'm256-128' changes $W/outside.json, outside the workdir" out.out ||
	{ echo "FAIL: a change outside the workdir was not refused"; exit 1; }
n=$(sqlite3 out/c.db "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.seq > 0")
[ "$n" -eq 0 ] || { echo "FAIL: trials were measured before the refusal"; exit 1; }
echo PASS
