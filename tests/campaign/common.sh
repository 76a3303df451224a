# Sourced by the campaign's shell tests (RATCHET_BIN, RATCHET_SRC and
# RATCHET_BUILD set):
#   q SQL            query c.db in the current folder
#   run_ok ARGS      `ratchet run --quiet ARGS` on c.db; shows the output and
#                    fails the test unless it exits 0
#   kill9_setup DIR  a new folder with table.json and the kill9 campaign's
#                    spec (no sleep in the benchmark)
#   decisions DB     "variant:state ..." of the finished iterations, in order
q() { sqlite3 c.db "$1"; }
run_ok() {
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet "$@" > run.out 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
}
kill9_setup() {
	mkdir "$1"
	cp "$RATCHET_SRC/tests/campaign/table.json" "$1/"
	sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|0|' \
		"$RATCHET_SRC/tests/campaign/kill9.yaml.in" > "$1/spec.yaml"
}
decisions() {
	sqlite3 "$1" "SELECT group_concat(variant || ':' || state, ' ') FROM (SELECT variant, state FROM iterations WHERE state != 'interrupted' ORDER BY seq)"
}
