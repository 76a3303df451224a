#!/bin/sh
# Ctrl-C twice against a real campaign (issue 11), with a real engine
# (simserve) and a command benchmark that takes 3 s per sample:
#  1. the first SIGINT is acknowledged on stderr within 100 ms, and the run
#     goes on with the sample in progress;
#  2. the second SIGINT abandons that sample: the run exits 3 within 5 s,
#     the engine's process group is gone, the iteration is interrupted;
#  3. `--resume` (with the benchmark fast again) finishes the campaign with
#     the decisions of an uninterrupted one.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/common.sh"
. "$RATCHET_SRC/tests/lib/procs.sh"
W=$(mktemp -d /tmp/ratchet-sigtwice-XXXXXX)
cleanup() { [ -n "${R:-}" ] && kill -9 "$R" 2>/dev/null; [ -n "${ENG:-}" ] && kill -9 "-$ENG" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The kill9 campaign with an engine; the benchmark sleeps while {workdir}/slow exists.
setup() {
	mkdir "$1"
	cp "$RATCHET_SRC/tests/campaign/table.json" "$1/"
	sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|0|' \
		"$RATCHET_SRC/tests/campaign/kill9.yaml.in" |
	sed -e 's|^    command: \["\([^"]*\)", "{workdir}/table.json", "0"\]|    command: [sh, -c, "if [ -e {workdir}/slow ]; then sleep 3; fi; exec \1 {workdir}/table.json 0"]|' \
		> "$1/spec.yaml"
	cat >> "$1/spec.yaml" <<Y
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sig-test]
  ready: {http: /health, timeout: 10s}
  stop_grace: 2s
Y
	grep -q 'sleep 3' "$1/spec.yaml" || { echo "FAIL: spec rewrite"; exit 1; }
}

# Reference: uninterrupted.
setup "$W/ref" && cd "$W/ref"
run_ok spec.yaml
REF=$(decisions c.db)
echo "reference: $REF"

setup "$W/t" && cd "$W/t"
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
R=$!
# Wait until the first change is being measured, then slow the benchmark down.
i=0
until [ "$(q "SELECT count(*) FROM iterations WHERE kind != 'baseline'" 2>/dev/null || echo 0)" -ge 1 ]; do
	i=$((i+1)); [ $i -lt 600 ] || { cat err; echo "FAIL: no iteration started"; exit 1; }; sleep 0.05
done
touch slow
sleep 1
t0=$(now_ms)
kill -INT $R
until grep -q "stopping after this sample; Ctrl-C again to stop now" err; do
	[ $(( $(now_ms) - t0 )) -lt 2000 ] || { cat err; echo "FAIL: the first SIGINT was not acknowledged"; exit 1; }
	sleep 0.005
done
ack=$(( $(now_ms) - t0 ))
echo "first SIGINT acknowledged after ${ack} ms"
[ $ack -le 100 ] || { echo "FAIL: acknowledged after ${ack} ms (> 100)"; exit 1; }
kill -0 $R 2>/dev/null || { cat err; echo "FAIL: the first SIGINT stopped the run at once"; exit 1; }
# A sample is in progress (the benchmark sleeps 3 s): the second stops it.
sleep 0.5
ENG=$(q "SELECT value FROM env_facts WHERE key='engine.pgid' ORDER BY id DESC LIMIT 1")
group_ours "$ENG" "$W" || { echo "FAIL: no engine running when the second SIGINT came"; exit 1; }
t0=$(now_ms)
kill -INT $R
rc=0
wait $R || rc=$?
R=
took=$(( $(now_ms) - t0 ))
cat err
echo "second SIGINT: exit $rc after ${took} ms"
[ $rc -eq 3 ] || { echo "FAIL: expected exit 3, got $rc"; exit 1; }
[ $took -le 5000 ] || { echo "FAIL: the run took ${took} ms to stop (> 5000)"; exit 1; }
grep -q "stopping now" err || { echo "FAIL: the second SIGINT was not acknowledged"; exit 1; }
group_ours "$ENG" "$W" && { echo "FAIL: the engine's process group outlived the run"; exit 1; }
ENG=
n=$(q "SELECT count(*) FROM iterations WHERE state='interrupted' AND reason LIKE 'interrupted by a signal%'")
[ "$n" -eq 1 ] || { echo "FAIL: $n interrupted iterations (expected 1)"; exit 1; }
n=$(q "SELECT count(*) FROM iterations WHERE state IN ('pending','applying','applied','measuring')")
[ "$n" -eq 0 ] || { echo "FAIL: $n iterations left unfinished"; exit 1; }
# the report of the stopped campaign says how it goes on
"$RATCHET_BIN" --db c.db report --format md -o stopped.md > /dev/null
grep -q "stopped (resumable): its last iteration was interrupted; ratchet run --resume continues" stopped.md ||
	{ head -5 stopped.md; echo "FAIL: the report does not say the campaign was stopped"; exit 1; }

rm slow
run_ok --resume spec.yaml
"$RATCHET_BIN" --db c.db report --format md -o done.md > /dev/null
grep -q "run --resume continues" done.md && { echo "FAIL: the finished campaign's report still says resume"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" = finished ] || { echo "FAIL: resume did not finish"; exit 1; }
GOT=$(decisions c.db)
echo "resumed:   $GOT"
[ "$GOT" = "$REF" ] || { echo "FAIL: the resumed campaign decided differently"; exit 1; }
echo PASS
