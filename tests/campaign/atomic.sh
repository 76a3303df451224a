#!/bin/sh
# atomic: true (docs/variants.md): two new entries of one table as one
# change, kept, journaled as one write, the untouched entries byte-identical,
# each entry's before and after in show and in the report; a worse atomic
# change is reverted as one (the table back to the best's bytes exactly).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-atomic-XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$RATCHET_SRC/tests/campaign/table.json" "$W/"
cat > "$W/spec.yaml" <<Y
name: atomic
benchmarks:
  - name: fake
    command: ["$RATCHET_BUILD/fakebench", "{workdir}/table.json", "0"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 3, max: 8, confidence: 0.95}
variants:
  - name: two-new
    table: {file: table.json, atomic: true,
            set: {M_LE_1024: {tile: 128}, M_GT_1024: {tile: 256}}}
  - name: two-worse
    table: {file: table.json, atomic: true, set: {M_LE_64: {tile: 64}, M_LE_256: {tile: 256}}}
strategy: list
Y
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 || { cat check.out; echo "FAIL: check refused atomic"; exit 1; }
run_ok spec.yaml
q "SELECT seq, variant, state, change_text FROM iterations ORDER BY seq"
[ "$(decisions c.db)" = "baseline:baseline two-new:kept two-worse:reverted" ] ||
	{ echo "FAIL: decisions $(decisions c.db)"; exit 1; }
# one journaled write per move: the file only ever holds the best's bytes or
# the candidate's (both entries), never one entry without the other
for v in two-new two-worse; do
	n=$(q "SELECT count(DISTINCT s) FROM (SELECT before_sha256 s FROM intents i JOIN iterations t ON t.id = i.iteration_id WHERE t.variant='$v' UNION SELECT after_sha256 FROM intents i JOIN iterations t ON t.id = i.iteration_id WHERE t.variant='$v')")
	[ "$n" -eq 2 ] || { echo "FAIL: $v's writes left the table in $n states, expected 2"; exit 1; }
	n=$(q "SELECT count(*) FROM intents i JOIN iterations t ON t.id = i.iteration_id WHERE t.variant='$v' AND i.state != 'done'")
	[ "$n" -eq 0 ] || { echo "FAIL: $v has unfinished intents"; exit 1; }
done
# the table: the untouched entries' lines as they were, both new entries in
head -3 "$RATCHET_SRC/tests/campaign/table.json" | sed 's/}$/},/' > want.head
head -3 table.json > got.head
cmp -s want.head got.head || { diff want.head got.head; echo "FAIL: untouched entries changed"; exit 1; }
grep -q '"M_LE_1024": {"tile": 128}' table.json && grep -q '"M_GT_1024": {"tile": 256}' table.json ||
	{ cat table.json; echo "FAIL: the new entries are not in the table"; exit 1; }
"$RATCHET_BIN" --db c.db show 1:1 > show.out
grep -q 'table.json: 2 entries as one change' show.out || { cat show.out; echo "FAIL: show lacks the change"; exit 1; }
grep -q '+ "M_LE_1024" {"tile":128}' show.out && grep -q '+ "M_GT_1024" {"tile":256}' show.out ||
	{ cat show.out; echo "FAIL: show lacks an entry"; exit 1; }
"$RATCHET_BIN" --db c.db show 1:2 | grep -q '"M_LE_64": tile 16 -> 64' || { echo "FAIL: show lacks before/after"; exit 1; }
"$RATCHET_BIN" --db c.db report -o report.md > /dev/null
grep -q 'M_GT_1024' report.md || { echo "FAIL: the report lacks the entries"; exit 1; }
# a spec that sets two entries without atomic is still refused
sed -e '/two-new/,+2s/atomic: true, *//' spec.yaml > two.yaml
"$RATCHET_BIN" check two.yaml > two.out 2>&1 && { echo "FAIL: two entries without atomic accepted"; exit 1; }
grep -q 'split them' two.out || { cat two.out; echo "FAIL: no reason"; exit 1; }
"$RATCHET_BIN" --db c.db restore > /dev/null
cmp -s table.json "$RATCHET_SRC/tests/campaign/table.json" || { echo "FAIL: restore"; exit 1; }
echo PASS
