#!/bin/sh
# Journal fault injection (RATCHET_FAULT_JOURNAL=N, a testing hook: see
# docs/campaign.md). For every journal write of the first two iterations of
# the kill9 campaign (pre-campaign bytes, intent opened, atomic write,
# intent closed), a run whose Nth journal write fails exits 3 with a message
# naming that write; `ratchet run --resume` without the fault then recovers:
# the campaign finishes with the decisions and the final table of an
# uninterrupted run, no intent is left open and no temp file behind, and
# `ratchet restore` puts back the pre-campaign bytes.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-jfault-XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"
fail() { echo "FAIL: N=$n: $1"; exit 1; }
kill9_setup "$W/ref"
(cd "$W/ref" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
want=$(decisions "$W/ref/c.db")
echo "uninterrupted: $want"
# Four journal writes per intent; the intents of iterations 1 and 2.
writes=$(sqlite3 "$W/ref/c.db" "SELECT 4 * count(*) FROM intents n JOIN iterations i ON i.id = n.iteration_id WHERE i.seq BETWEEN 1 AND 2")
[ "$writes" -gt 0 ] || { echo "FAIL: the reference campaign journaled nothing"; exit 1; }
n=1
while [ "$n" -le "$writes" ]; do
	d="$W/f$n"
	kill9_setup "$d"
	cd "$d"
	rc=0
	RATCHET_FAULT_JOURNAL=$n "$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err || rc=$?
	[ $rc -eq 3 ] || { cat err; fail "the faulty run exited $rc, expected 3"; }
	grep -Eq "journal write $n \((original|intent-open|write|intent-close|remove) [^)]+\) failed" err ||
		{ cat err; fail "the error does not name the failed write"; }
	grep -q "ratchet run --resume spec.yaml" err || { cat err; fail "no resume hint"; }
	[ $n -gt 1 ] || cat err
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out2 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat out2; fail "the resume exited $rc"; }
	[ "$(sqlite3 c.db "SELECT state FROM campaigns")" = finished ] || fail "the campaign did not finish"
	got=$(decisions c.db)
	[ "$got" = "$want" ] || fail "decisions differ: $got"
	cmp -s table.json "$W/ref/table.json" || fail "the final table differs from the uninterrupted run's"
	[ "$(sqlite3 c.db "SELECT count(*) FROM intents WHERE state='open'")" -eq 0 ] || fail "open intents"
	[ "$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE state='interrupted'")" -le 1 ] ||
		fail "more than one iteration interrupted"
	if ls | grep -q ratchet-tmp; then fail "a temp file was left behind"; fi
	"$RATCHET_BIN" --db c.db restore > /dev/null
	cmp -s table.json "$RATCHET_SRC/tests/campaign/table.json" || fail "restore did not give back the original bytes"
	cd "$W"
	rm -rf "$d"
	n=$((n + 1))
done
echo "$writes journal writes failed one at a time, each recovered by --resume"
# A fault during the recovery itself (its first write: undoing the open
# intent) is reported too, and the next --resume recovers.
n=recovery
kill9_setup "$W/r"
cd "$W/r"
RATCHET_FAULT_JOURNAL=3 "$RATCHET_BIN" --db c.db run --quiet spec.yaml > /dev/null 2>&1 && fail "the faulty run succeeded"
rc=0
RATCHET_FAULT_JOURNAL=1 "$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2> err || rc=$?
[ $rc -eq 3 ] || { cat err; fail "a resume whose recovery fails exited $rc"; }
grep -q "journal write 1 (write .*undoing the half-applied change" err || { cat err; fail "the recovery's failed write is not named"; }
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml
got=$(decisions c.db)
[ "$got" = "$want" ] || fail "decisions differ: $got"
cmp -s table.json "$W/ref/table.json" || fail "the final table differs from the uninterrupted run's"
echo "a fault in the recovery: reported, then recovered"
echo PASS
