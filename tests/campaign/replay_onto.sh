#!/bin/sh
# `ratchet replay --onto REV` (docs/replay.md): a patch kept on one revision
# of a git repository, replayed onto others. The benchmark's figure is the
# larger of src/speed.txt and src/boost.txt; faster.diff moves speed.txt
# from 100 to 130 and was kept on rev1 (+30%).
#   rev2 already has speed 130: the patch no longer applies forward but
#        applies reversed, so rev2 contains it: superseded;
#   rev3 has speed 90: the patch does not apply: not applicable, with git's
#        reason ("patch failed: speed.txt:1");
#   rev4 has boost 200: the patch applies but gains nothing, and rev4 alone
#        (200) beats rev1 with the patch (130): superseded;
#   rev5 touches another file: the patch still gives +30%: held.
set -eu
: "${RATCHET_BIN:?}"
command -v git >/dev/null && command -v sqlite3 >/dev/null || { echo "git and sqlite3 needed"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-replay-onto
g() { git -C src -c user.email=t@example.com -c user.name=t "$@"; }
mkdir src && g init -q
echo 100 > src/speed.txt && echo 0 > src/boost.txt && echo a > src/other.txt
g add . && g commit -qm rev1 && g tag rev1
echo 130 > src/speed.txt && g diff > faster.diff && g checkout -q speed.txt
echo 130 > src/speed.txt && g commit -qam rev2 && g tag rev2
g checkout -q rev1 && echo 90 > src/speed.txt && g commit -qam rev3 && g tag rev3
g checkout -q rev1 && echo 200 > src/boost.txt && g commit -qam rev4 && g tag rev4
g checkout -q rev1 && echo b > src/other.txt && g commit -qam rev5 && g tag rev5
g checkout -q rev1
cat > spec.yaml <<'Y'
name: onto
benchmarks:
  - name: app
    command: [sh, -c, "s=$(cat src/speed.txt); b=$(cat src/boost.txt); [ $b -gt $s ] && s=$b; printf '{\"gflops\": %s}' $s"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: app.gflops, goal: max, min_gain: 5%}
repeats: {min: 3, max: 3}
variants:
  - name: faster
    patch: {file: faster.diff, dir: src}
strategy: list
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || { cat run.out; echo "FAIL: the campaign on rev1"; exit 1; }
[ "$(sqlite3 c.db "SELECT state FROM iterations WHERE campaign_id = 1 AND variant = 'faster'")" = kept ] ||
	{ echo "FAIL: faster not kept on rev1"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
fails=0
onto() { # onto REV VERDICT [REASON-PATTERN] [EXIT] [ANOTHER-PATTERN]
	rc=0
	"$RATCHET_BIN" --db c.db replay --quiet --from 1 --onto "$1" spec.yaml > "$1.out" 2>&1 || rc=$?
	id=$(sqlite3 c.db "SELECT max(id) FROM campaigns")
	v=$(sqlite3 c.db "SELECT verdict FROM replay_levers WHERE campaign_id = $id")
	why=$(sqlite3 c.db "SELECT reason FROM replay_levers WHERE campaign_id = $id")
	head=$(git -C src rev-parse HEAD)
	if [ "$v" != "$2" ] || [ $rc -ne "${4:-0}" ] || [ "$head" != "$(git -C src rev-parse "$1")" ] ||
	   ! echo "$why" | grep -q "${3:-.}" || ! echo "$why" | grep -q "${5:-.}"; then
		cat "$1.out"
		echo "not ok - --onto $1: $v (exit $rc, HEAD $head): $why"
		fails=$((fails + 1))
	else
		echo "ok - --onto $1: $v: $why"
	fi
	"$RATCHET_BIN" --db c.db restore --campaign "$id" > /dev/null
}
onto rev2 superseded "rev2 already contains it"
onto rev3 not_applicable "^the patch does not apply: " 0 "patch failed: speed.txt:1"
onto rev4 superseded "rev4 alone gives app.gflops 200, the old revision with it gave 130"
onto rev5 held
# --onto refuses a revision that git would read as an option (issue 22): before it, `--onto=-q`
# ran `git checkout -q --detach -q` and replayed onto whatever was checked out, exit 0
n0=$(sqlite3 c.db "SELECT count(*) FROM campaigns")
h0=$(git -C src rev-parse HEAD)
for bad in -q --orphan=x -; do
	rc=0; "$RATCHET_BIN" --db c.db replay --quiet --from 1 "--onto=$bad" spec.yaml > opt.out 2>&1 || rc=$?
	if [ $rc -ne 2 ] || ! grep -q "not a revision" opt.out || [ "$(git -C src rev-parse HEAD)" != "$h0" ] ||
	   [ "$(sqlite3 c.db "SELECT count(*) FROM campaigns")" != "$n0" ]; then
		cat opt.out; echo "not ok - --onto=$bad was not refused (exit $rc)"; fails=$((fails + 1))
	else
		echo "ok - --onto=$bad refused"
	fi
done
# --onto refuses a tree with uncommitted changes, and names it
echo c > src/other.txt
rc=0; "$RATCHET_BIN" --db c.db replay --quiet --from 1 --onto rev1 spec.yaml > dirty.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "has uncommitted changes" dirty.out || { cat dirty.out; echo "not ok - a dirty tree ($rc)"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo PASS
