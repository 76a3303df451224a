#!/bin/sh
# A change whose build fails is a failed iteration, and its files are put
# back: the next iteration is measured on the best configuration, not on
# top of the failed change, and the failed change is not left in the file
# at the end (the loop once left a table entry in place when its build failed).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-applyfail
cp "$RATCHET_SRC/tests/campaign/table.json" .
cp table.json table.orig
cat > spec.yaml <<Y
name: apply-fail
benchmarks:
  - name: fake
    command: ["$RATCHET_BUILD/fakebench", "{workdir}/table.json"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 3, max: 8}
variants:
  - name: bad-build
    table: {file: table.json, set: {M_LE_1024: {tile: 128}}}
    build: [sh, -c, "if grep -q M_LE_1024 table.json; then echo 'error: M_LE_1024 does not build' >&2; exit 1; fi"]
  - {name: m64-32, table: {file: table.json, set: {M_LE_64: {tile: 32}}}}
Y
. "$RATCHET_SRC/tests/campaign/common.sh"
run_ok spec.yaml
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
[ "$(q "SELECT state FROM iterations WHERE variant='bad-build'")" = failed ] || { echo "FAIL: a failed build is not a failed iteration"; exit 1; }
q "SELECT content FROM artifacts a JOIN iterations i ON i.id = a.iteration_id WHERE i.variant='bad-build' AND a.kind='build-log'" | grep -q "does not build" || { echo "FAIL: build log not kept"; exit 1; }
grep -q M_LE_1024 table.json && { echo "FAIL: the failed change was left in table.json"; cat table.json; exit 1; }
# m64-32 was measured on the best configuration: its best arm has the baseline's speed
n=$(q "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant='m64-32' AND m.arm='best' AND m.rep=0 AND m.value = (SELECT value FROM measurements m2 JOIN iterations i2 ON i2.id = m2.iteration_id WHERE i2.seq = 0 AND m2.rep = 0 AND m2.metric = 'gflops')")
[ "$n" -eq 1 ] || { echo "FAIL: the next iteration was not measured on the best configuration"; exit 1; }
[ "$(q "SELECT count(*) FROM intents WHERE state='open'")" = 0 ] || { echo "FAIL: open intents"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
cmp -s table.json table.orig || { echo "FAIL: restore"; exit 1; }

# Changes that all fail to apply for the same reason (issue 23, item 3): the
# run stops after three in a row, exits non-zero and names the reason; the
# fourth change is never tried and the campaign can be resumed.
mkdir same && cp table.orig same/table.json && cd same
b='build: [sh, -c, "if grep -q NEW_ table.json; then echo error: no compiler >&2; exit 1; fi"]'
cat > spec.yaml <<Y
name: apply-same
benchmarks:
  - name: fake
    command: ["$RATCHET_BUILD/fakebench", "{workdir}/table.json"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 3, max: 8}
variants:
  - {name: a, table: {file: table.json, set: {NEW_A: {tile: 32}}}, $b}
  - {name: b, table: {file: table.json, set: {NEW_B: {tile: 16}}}, $b}
  - {name: c, table: {file: table.json, set: {NEW_C: {tile: 8}}}, $b}
  - {name: d, table: {file: table.json, set: {NEW_D: {tile: 4}}}, $b}
Y
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2> run.err || rc=$?
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
cat run.err
[ $rc -eq 3 ] || { echo "FAIL: the run exited $rc, expected 3"; exit 1; }
grep -q "3 changes in a row failed to apply for the same reason" run.err ||
	{ echo "FAIL: the stop does not say why"; exit 1; }
grep -q "ratchet run --resume" run.err || { echo "FAIL: the stop does not say how to go on"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE state = 'failed'")" = 3 ] || { echo "FAIL: not 3 failed"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE variant = 'd'")" = 0 ] || { echo "FAIL: d was tried"; exit 1; }
[ "$(q "SELECT state FROM campaigns")" != finished ] || { echo "FAIL: the campaign reads finished"; exit 1; }
cmp -s table.json ../table.orig || { echo "FAIL: a failed change was left in table.json"; exit 1; }
echo PASS
