#!/bin/sh
# A full disk must not turn a transient error into a permanent decision
# (issue 17, item 7). An iteration whose step failed because the disk was
# full was recorded `failed`, and --resume never tried it again; now it is
# recorded `interrupted`, the run stops (exit 3) and --resume tries it again:
#   1. the campaign's folder and database on a 3 MiB tmpfs, every build
#      writing 4 MB: the first build fails with ENOSPC; once the tmpfs is
#      enlarged, --resume reaches the decisions and the table of a run on a
#      roomy disk (without a tmpfs, when mount is refused: the same with a
#      build that says "No space left on device" while a marker exists);
#   2. a revert whose build fails: the iteration is interrupted, not failed,
#      and --resume tries it again.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-diskfull-XXXXXX)
cleanup() { cd /; umount "$W/full" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
. "$RATCHET_SRC/tests/campaign/common.sh"

# setup DIR BUILD: the kill9 campaign with BUILD (a YAML list) after every table change.
setup() {
	mkdir -p "$1"
	cp "$RATCHET_SRC/tests/campaign/table.json" "$1/"
	b=$(printf '%s' "$2" | sed 's/[&#\\]/\\&/g')
	sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|0|' \
		-e "s#table: {file: table.json, set: \(.*\)}}#table: {file: table.json, set: \1}, build: $b}#" \
		"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > "$1/spec.yaml"
}
stopped() { # NAME: a run here must stop with exit 3, nothing recorded failed
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err || rc=$?
	cat err
	[ $rc -eq 3 ] || { echo "FAIL: $1: exit $rc, expected 3"; exit 1; }
	n=$(q "SELECT count(*) FROM iterations WHERE state = 'failed'")
	[ "$n" -eq 0 ] || { q "SELECT seq, variant, reason FROM iterations WHERE state = 'failed'"
		echo "FAIL: $1: $n iterations recorded failed"; exit 1; }
}
resumed() { # NAME REF: --resume must reach REF's decisions and table
	run_ok --resume spec.yaml
	got=$(decisions c.db)
	[ "$got" = "$(decisions "$2/c.db")" ] || { echo "FAIL: $1: decisions $got"; exit 1; }
	cmp -s table.json "$2/table.json" || { echo "FAIL: $1: the final table differs"; exit 1; }
	[ "$(q "SELECT state FROM campaigns")" = finished ] || { echo "FAIL: $1: not finished"; exit 1; }
}

# 1. ENOSPC in a build.
BIG='[sh, -c, "head -c 4000000 /dev/zero > blob.bin; s=$?; rm -f blob.bin; exit $s"]'
setup "$W/ref" "$BIG"
(cd "$W/ref" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
mkdir "$W/full"
if mount -t tmpfs -o size=3m tmpfs "$W/full" 2>/dev/null; then
	setup "$W/full" "$BIG"
	cd "$W/full"
	stopped "tmpfs"
	grep -q "No space left on device" err || { echo "FAIL: tmpfs: the error does not say the disk is full"; exit 1; }
	[ "$(q "SELECT state FROM iterations WHERE seq = 1")" = interrupted ] ||
		{ echo "FAIL: tmpfs: iteration 1 is $(q "SELECT state FROM iterations WHERE seq = 1")"; exit 1; }
	mount -o remount,size=64m "$W/full"
	resumed "tmpfs" "$W/ref"
	cd "$W"
	echo "tmpfs: interrupted when full, decided once there was room"
else
	setup "$W/sim" '[sh, -c, "if [ -e full ]; then echo \"blob.bin: No space left on device\" >&2; exit 1; fi"]'
	cd "$W/sim"
	touch full
	stopped "simulated"
	rm full
	resumed "simulated" "$W/ref"
	cd "$W"
	echo "no tmpfs (mount refused): a build that reports ENOSPC is interrupted, decided on resume"
fi

# 2. The revert's build fails: every second build fails while 'fail' exists
#    (with interleaved arms the builds alternate: apply, revert, ...).
ODD='[sh, -c, "n=$(cat n 2>/dev/null || echo 0); echo $((n + 1)) > n; [ -e fail ] && [ $((n % 2)) -eq 1 ] && exit 1; exit 0"]'
setup "$W/ref2" "$ODD"
(cd "$W/ref2" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
setup "$W/revert" "$ODD"
cd "$W/revert"
touch fail
stopped "revert"
grep -q "the revert to the best configuration failed" err || { echo "FAIL: revert: not said"; exit 1; }
rm fail
resumed "revert" "$W/ref2"
echo "revert: interrupted, tried again on resume"
echo PASS
