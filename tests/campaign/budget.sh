#!/bin/sh
# The run's budget (docs/campaign.md): --for and --until stop at an
# iteration boundary, saying why, from the measured iteration times, and
# --resume goes on; a deadline far away changes nothing; a bad --until or
# both options are usage errors; --max-iterations says why it stopped too.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-budget
. "$RATCHET_SRC/tests/campaign/common.sh"
mkdir a && cp "$RATCHET_SRC/tests/campaign/table.json" a/
# every benchmark run sleeps 150 ms: an iteration (6 runs at least) takes about 1 s
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|150|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > a/spec.yaml
R() { "$RATCHET_BIN" --db c.db run "$@"; }
# usage errors, before anything runs
for bad in "--until 25:00" "--until 7" "--for soon" "--for 0s" "--until 07:00 --for 1h"; do
	rc=0; R $bad a/spec.yaml > bad.out 2>&1 || rc=$?
	[ $rc -eq 2 ] || { cat bad.out; echo "FAIL: '$bad' exited $rc, expected 2"; exit 1; }
done
[ "$(q 'SELECT count(*) FROM campaigns' 2>/dev/null || echo 0)" -eq 0 ] || { echo "FAIL: a bad budget started a campaign"; exit 1; }
# --for 1s: the baseline (3 runs, 0.45 s at least), then the next iteration
# would take twice that: it does not fit, and the run says so
R --for 1s a/spec.yaml > for.out 2>&1 || { cat for.out; echo "FAIL: run --for exited non-zero"; exit 1; }
grep -q "^stopped: --for 1s: the next iteration would take about .* (twice the baseline's time, before any change finished)" for.out ||
	{ cat for.out; echo "FAIL: no reason for the stop"; exit 1; }
grep -q 'not finished' for.out || { echo "FAIL: the campaign claims to be finished"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations")" -eq 1 ] || { echo "FAIL: more than the baseline ran"; exit 1; }
# one change (6 runs at least, 0.9 s), and --max-iterations says why it stopped
R --resume --max-iterations 1 a/spec.yaml > max.out 2>&1 || { cat max.out; echo "FAIL: --max-iterations"; exit 1; }
grep -q '^stopped: --max-iterations 1 reached' max.out || { cat max.out; echo "FAIL: no reason for --max-iterations"; exit 1; }
# the spec's max_iterations counts as --max-iterations does, the baseline
# included (issue 23: max_iterations 12 ran 13): 3 is the baseline and 2 changes
mkdir m && cp "$RATCHET_SRC/tests/campaign/table.json" m/
sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|0|' \
	"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > m/spec.yaml
echo "max_iterations: 3" >> m/spec.yaml
"$RATCHET_BIN" --db m.db run m/spec.yaml > m.out 2>&1 || { cat m.out; echo "FAIL: max_iterations run"; exit 1; }
n=$(sqlite3 m.db "SELECT count(*) FROM iterations")
[ "$n" -eq 3 ] || { cat m.out; echo "FAIL: max_iterations 3 ran $n iterations"; exit 1; }
grep -q "^stopped: the spec's max_iterations 3 reached (the campaign's iterations, the baseline included)" m.out ||
	{ cat m.out; echo "FAIL: no reason for max_iterations"; exit 1; }
mkdir m2 && cp "$RATCHET_SRC/tests/campaign/table.json" m2/ && grep -v '^max_iterations' m/spec.yaml > m2/spec.yaml
"$RATCHET_BIN" --db m2.db run --max-iterations 3 m2/spec.yaml > m2.out 2>&1 || { cat m2.out; echo "FAIL: --max-iterations 3"; exit 1; }
[ "$(sqlite3 m2.db "SELECT count(*) FROM iterations")" -eq 3 ] || { echo "FAIL: --max-iterations 3 and max_iterations 3 differ"; exit 1; }
# --for 500ms: the longest finished iteration does not fit, nothing starts
R --resume --for 500ms a/spec.yaml > half.out 2>&1 || { cat half.out; echo "FAIL: --for 500ms"; exit 1; }
grep -q '^stopped: --for 500ms: the next iteration would take about .* (the longest of 1 finished iteration)' half.out ||
	{ cat half.out; echo "FAIL: no estimate from the finished iteration"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations")" -eq 2 ] || { echo "FAIL: an iteration started past the budget"; exit 1; }
# --until a minute ago is tomorrow: far enough, the campaign finishes
past=$(date -d '-1 minute' +%H:%M)
R --resume --until "$past" a/spec.yaml > until.out 2>&1 || { cat until.out; echo "FAIL: resume --until"; exit 1; }
grep -q '; finished' until.out || { cat until.out; echo "FAIL: not finished with a far deadline"; exit 1; }
grep -q '^stopped:' until.out && { echo "FAIL: stopped with a far deadline"; exit 1; }
# --until a few seconds from now: stops at a boundary, saying why, in time
rm -f c.db && cp "$RATCHET_SRC/tests/campaign/table.json" a/
t0=$(date +%s)
soon=$(date -d '+3 seconds' +%H:%M:%S)
R --until "$soon" a/spec.yaml > soon.out 2>&1 || { cat soon.out; echo "FAIL: run --until"; exit 1; }
t1=$(date +%s)
grep -Eq "^stopped: --until $soon: (the next iteration would take about|the deadline .* has passed)" soon.out ||
	{ cat soon.out; echo "FAIL: no --until reason"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE finished_at IS NULL OR finished_at = 0")" -eq 0 ] ||
	{ echo "FAIL: an unfinished iteration"; exit 1; }
[ $((t1 - t0)) -le 9 ] || { echo "FAIL: --until 3 s from now ran $((t1 - t0)) s"; exit 1; }
echo PASS
