#!/bin/sh
# What `log` and `report` say of a campaign a budget stopped (issue 23, item
# 4): a space-like change name longer than the column is cut in the middle,
# so two names that differ only at the end stay apart, and the column fits
# the widest name up to 60 columns; the campaign reads "stopped
# (resumable)" in `log` and the report, not "running"; `report -o x.pdf`
# is refused (exit 2, nothing written) where it used to write Markdown.
set -eu
: "${RATCHET_BIN:?}"
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-report-out
long=BLOCK_M:16+BLOCK_N:32+num_warps:4+num_stages:2+split_k:1+layout:row
cat > spec.yaml <<Y
name: out
benchmarks:
  - name: b
    command: [sh, -c, 'echo "{\"x\": 1}"']
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: b.x, goal: max, min_gain: 2%}
repeats: {min: 2, max: 2}
variants:
  - {name: "${long}-a", env: {A: "1"}}
  - {name: "${long}-b", env: {A: "2"}}
  - {name: "mid-size-name-of-thirty-two-cols", env: {A: "3"}}
  - {name: never, env: {A: "4"}}
strategy: list
Y
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 4 spec.yaml > run.out 2>&1 || { cat run.out; echo "FAIL: run"; exit 1; }
"$RATCHET_BIN" --db c.db log > log.txt
cat log.txt
grep -q "(#1, stopped (resumable))" log.txt || { echo "FAIL: log does not say stopped (resumable)"; exit 1; }
grep -q "mid-size-name-of-thirty-two-cols" log.txt || { echo "FAIL: a 32-column name was cut"; exit 1; }
a=$(grep -c -e "-a  " log.txt || true) b=$(grep -c -e "-b  " log.txt || true)
[ "$a" = 1 ] && [ "$b" = 1 ] || { echo "FAIL: the two long names do not stay apart ($a, $b)"; exit 1; }
grep -q "BLOCK_M:16+BLOCK_N:32+num_war…tages:2+split_k:1+layout:row-a" log.txt || { echo "FAIL: a long name is not cut in the middle"; exit 1; }
"$RATCHET_BIN" --db c.db log --json | grep -q '"resumable": *true' || { echo "FAIL: log --json has no resumable"; exit 1; }
"$RATCHET_BIN" --db c.db report --format md -o r.md
grep -q "stopped (resumable)" r.md || { echo "FAIL: the report does not say stopped (resumable)"; exit 1; }
rc=0
"$RATCHET_BIN" --db c.db report -o x.pdf 2> pdf.err || rc=$?
[ $rc -eq 2 ] && [ ! -e x.pdf ] && grep -q "not '.pdf'" pdf.err || { cat pdf.err; echo "FAIL: report -o x.pdf (exit $rc)"; exit 1; }
"$RATCHET_BIN" --db c.db report -o r.html && grep -q "<html" r.html || { echo "FAIL: -o r.html"; exit 1; }
"$RATCHET_BIN" --db c.db report --format md -o x.txt && [ -s x.txt ] || { echo "FAIL: --format md -o x.txt"; exit 1; }
# a finished campaign reads finished
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > run2.out 2>&1 || { cat run2.out; echo "FAIL: resume"; exit 1; }
"$RATCHET_BIN" --db c.db log | grep -q "(#1, finished)" || { echo "FAIL: finished"; exit 1; }
# the result's figures are labelled, and paired gains that disagree with
# the absolute medians are both shown with why (issue 23, item 1c): a kept
# +504% (its paired ratio) whose arms' medians moved by 0%
sqlite3 c.db "UPDATE iterations SET state = 'kept', obj_best = 1, obj_cand = 6.04, obj_delta = 5.04 WHERE seq = 1;
              UPDATE campaigns SET best_iteration = (SELECT id FROM iterations WHERE seq = 1)"
"$RATCHET_BIN" --db c.db report --format md -o r2.md
grep "Result:" r2.md
grep -q 'Result:\*\* gain +504.0% (better) (the kept changes.* paired gains compounded: the figure of the waterfall)' r2.md &&
	grep -q 'Absolute medians: baseline 1 → final 1 (+0.0%)' r2.md && grep -q 'they disagree with the gain' r2.md ||
	{ echo "FAIL: the result's figures are not labelled, or the disagreement is not said"; exit 1; }
grep -q 'a true gain of 0 or less should be reverted' r2.md ||
	{ grep "Objective:" r2.md; echo "FAIL: the objective does not describe the zone"; exit 1; }
echo PASS
