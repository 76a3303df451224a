#!/bin/sh
# The research side end to end: `ratchet holes` compares a tuned CSV table
# with a profile of shapes, ranks the holes by their share of the time,
# records them as findings, and suggests one variant per hole. The
# suggestions are pasted into a spec, which must pass `ratchet check` and,
# run as a campaign, fill the holes in the table.
set -eu
: "${RATCHET_BIN:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-holes
cat > tuned.csv <<'C'
M,N,K,tile,splitk
16,4096,4096,2,1
128,4096,4096,3,1
1024,4096,4096,5,2
C
cat > profile.csv <<'C'
M,N,K,time_us
16,4096,4096,120
128,4096,4096,800
256,4096,4096,1500
256,4096,4096,300
8192,4096,4096,2000
C
rc=0
"$RATCHET_BIN" --db c.db holes tuned.csv --profile profile.csv --key-columns M,N,K --weight time_us > out.txt || rc=$?
cat out.txt
[ $rc -eq 1 ] || { echo "FAIL: holes found should exit 1, got $rc"; exit 1; }
grep -q "the profile saw 4 shapes, 2 covered (19.5% of its weight)" out.txt || { echo "FAIL: coverage line"; exit 1; }
# largest hole first: 8192 (2000 of 4720 us), then 256 (1500 + 300)
sed -n '/^holes/,/^$/p' out.txt | grep -E '^ +[0-9]' | head -1 | grep -q "42.4%.*8192,4096,4096 *1024,4096,4096" || { echo "FAIL: ranking"; exit 1; }
[ "$(sqlite3 c.db "SELECT count(*) FROM findings WHERE kind='hole'")" = 2 ] || { echo "FAIL: findings not recorded"; exit 1; }
# The suggestions are a valid spec and fill the holes when run.
{
	echo "name: fill-holes"
	echo "benchmarks:"
	echo "  - name: rows"
	echo "    command: [sh, -c, 'printf \"{\\\"covered\\\": %s}\" \$(wc -l < tuned.csv)']"
	echo "    metrics: {covered: {pointer: /covered, better: higher}}"
	echo "objective: {metric: rows.covered, goal: max, min_gain: 5%}"
	echo "repeats: {min: 3, max: 3}"
	echo "variants:"
	grep '^  - {name: fill-' out.txt
} > spec.yaml
"$RATCHET_BIN" check spec.yaml > /dev/null || { cat spec.yaml; echo "FAIL: the suggested variants do not check"; exit 1; }
"$RATCHET_BIN" --db c.db run --quiet spec.yaml
[ "$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE state='kept'")" = 2 ] || { echo "FAIL: holes not filled"; exit 1; }
grep -q '^8192,4096,4096,5,2' tuned.csv && grep -q '^256,4096,4096,3,1' tuned.csv || { cat tuned.csv; echo "FAIL: rows not added"; exit 1; }
# No hole left: exit 0
"$RATCHET_BIN" --db c.db holes tuned.csv --profile profile.csv --key-columns M,N,K --weight time_us | head -1
# A bad profile names the file, line and column.
printf 'M,N,K,time_us\n16,4096,4096,fast\n' > bad.csv
rc=0
"$RATCHET_BIN" --db c.db holes tuned.csv --profile bad.csv --key-columns M,N,K --weight time_us 2> err.txt || rc=$?
[ $rc -eq 2 ] && grep -q "bad.csv:2: column 'time_us': 'fast' is not a weight" err.txt || { cat err.txt; echo "FAIL: bad profile error"; exit 1; }
echo PASS
