#!/bin/sh
# A change whose build fails is a failed iteration, and its files are put
# back: the next iteration is measured on the best configuration, not on
# top of the failed change, and the failed change is not left in the file
# at the end (the loop once left a table entry in place when its build failed).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-applyfail-XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
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
echo PASS
