#!/bin/sh
# kill -9 mid-replay, then `ratchet replay --resume`: the same verdicts as an
# uninterrupted replay (docs/replay.md). Three table levers (one JSON file
# each) are kept by a campaign on model "a"; the replay's new base is model
# "b", where the benchmark reads lever y the other way round, lever z not
# at all, and refuses the flag of lever f: held, reversed, lost, not
# applicable (the flag refused). The replay is killed with -9 while its
# second lever is being measured, resumed, and its verdicts and lineage are
# compared with those of an uninterrupted replay of the same database.
# --order best-first puts the largest gain then first, and the resume keeps
# the first run's order even when --order is left out.
set -eu
: "${RATCHET_BIN:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-replay-kill9
mkdir wd
for k in x y z; do echo "{\"knob\": {\"on\": 0}}" > wd/$k.json; done
# gflops = 100 + 20 x + 40 y (model a) or - 40 y (model b) + 10 z (model a
# only) + 10 with --fast (model a; model b refuses the option)
cat > wd/bench.sh <<'S'
on() { tr -d ' \n' < "$1.json" | sed 's/.*"on":\([0-9]*\).*/\1/'; }
sleep 0.3
x=$(on x); y=$(on y); z=$(on z); f=0
[ "${2:-}" = --fast ] && f=1
[ $f = 1 ] && [ "$1" = b ] && { echo "bench.sh: unknown option --fast" >&2; exit 2; }
if [ "$1" = a ]; then v=$((100 + 20 * x + 40 * y + 10 * z + 10 * f)); else v=$((100 + 20 * x - 40 * y)); fi
printf '{"gflops": %s}' $v
S
spec() {
	cat <<Y
name: $1
workdir: $W/wd
benchmarks:
  - name: app
    command: [sh, bench.sh, $1]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: app.gflops, goal: max, min_gain: 3%}
repeats: {min: 3, max: 3}
variants:
Y
	for k in x y z; do echo "  - {name: lever-$k, table: {file: $k.json, set: {knob: {on: 1}}}}"; done
	echo "  - {name: lever-f, flag: [--fast]}"
	echo "strategy: list"
}
spec a > a.yaml
spec b > b.yaml
"$RATCHET_BIN" --db c.db run --quiet a.yaml > a.out 2>&1 || { cat a.out; echo "FAIL: campaign a"; exit 1; }
[ "$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE campaign_id = 1 AND state = 'kept'")" = 4 ] ||
	{ sqlite3 c.db "SELECT seq, variant, state, reason FROM iterations"; echo "FAIL: a did not keep four"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
cp c.db u.db
verdicts() { sqlite3 "$1" "SELECT group_concat(ord || ':' || variant || '=' || verdict || '@' || from_campaign || ':' || from_seq, ' ') FROM (SELECT * FROM replay_levers WHERE campaign_id = 2 ORDER BY ord)"; }
# uninterrupted
rc=0; "$RATCHET_BIN" --db u.db replay --quiet --order best-first --from 1 b.yaml > u.out 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat u.out; echo "FAIL: the uninterrupted replay exited $rc (a lever reversed: 1)"; exit 1; }
want=$(verdicts u.db)
echo "uninterrupted: $want"
why=$(sqlite3 u.db "SELECT reason FROM replay_levers WHERE variant = 'lever-f'")
echo "$why" | grep -q "the flag was refused" || { echo "FAIL: lever-f's reason: $why"; exit 1; }
case "$want" in
"1:lever-y=reversed@1:2 2:lever-x=held@1:1 3:lever-z=lost@1:3 4:lever-f=not_applicable@1:4") ;;
*) echo "FAIL: best-first order or the verdicts"; exit 1 ;;
esac
"$RATCHET_BIN" --db u.db restore > /dev/null
# killed with -9 while the second lever is measured
"$RATCHET_BIN" --db c.db replay --quiet --order best-first --from 1 b.yaml > k.out 2>&1 &
pid=$!
i=0
until [ "$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE campaign_id = 2 AND seq = 2 AND state = 'measuring'" 2>/dev/null)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || { cat k.out; echo "FAIL: the second lever never started"; kill -9 $pid; exit 1; }
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null || true
echo "killed mid-replay: $(sqlite3 c.db "SELECT group_concat(seq || ':' || variant || '=' || state, ' ') FROM iterations WHERE campaign_id = 2")"
# a plain run of the replay is refused, --resume (without --order) continues
rc=0; "$RATCHET_BIN" --db c.db replay --quiet --from 1 b.yaml > again.out 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q -- "--resume" again.out || { cat again.out; echo "FAIL: a second replay was not refused ($rc)"; exit 1; }
rc=0; "$RATCHET_BIN" --db c.db replay --resume --quiet --from 1 b.yaml > r.out 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat r.out; echo "FAIL: the resumed replay exited $rc"; exit 1; }
got=$(verdicts c.db)
echo "resumed:       $got"
[ "$got" = "$want" ] || { echo "FAIL: the resumed replay's verdicts differ"; exit 1; }
[ "$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE campaign_id = 2 AND state = 'interrupted'")" = 1 ] ||
	{ echo "FAIL: no interrupted iteration"; exit 1; }
echo PASS
