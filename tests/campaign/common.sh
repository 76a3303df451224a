# Sourced by the campaign's shell tests, run in the campaign's folder:
#   q SQL          query its c.db
#   run_ok ARGS    `ratchet run --quiet ARGS` on c.db; shows the output and
#                  fails the test unless it exits 0
q() { sqlite3 c.db "$1"; }
run_ok() {
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet "$@" > run.out 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
}
