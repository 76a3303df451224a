#!/bin/sh
# The measurement schedule of one iteration, read back from the store:
# interleaved (the default) alternates best and candidate from the first
# sample and records the comparison as paired; `interleave: false` takes the
# best's first `min` samples, then the candidate's, then pairs, and records
# it as not paired. Also checks the regression row the worse tile leaves.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-schedule-XXXXXX)
trap 'rm -rf "$W"' EXIT
order() { sqlite3 "$1" "SELECT group_concat(arm || rep, ' ') FROM (SELECT m.arm, m.rep FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant = '$2' AND m.metric = 'gflops' ORDER BY m.id)"; }
for mode in true false; do
	mkdir "$W/$mode"
	cp "$RATCHET_SRC/tests/campaign/table.json" "$W/$mode/"
	sed -e "s|@FAKEBENCH@|$RATCHET_BUILD/fakebench|" -e 's|@SLEEP_MS@|0|' \
	    -e "s|repeats: {min: 3, max: 8, confidence: 0.95}|repeats: {min: 3, max: 8, confidence: 0.95, interleave: $mode}|" \
	    "$RATCHET_SRC/tests/campaign/kill9.yaml.in" > "$W/$mode/spec.yaml"
	(cd "$W/$mode" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml)
done
# The rule stops when it is sure, so the expected order is built from the
# number of pairs m64-32 took, which must go past min (3) to show the pairs.
n=$(sqlite3 "$W/true/c.db" "SELECT n_cand FROM iterations WHERE variant='m64-32'")
[ "$n" -gt 3 ] || { echo "FAIL: m64-32 took $n pairs, the test needs more than min (3)"; exit 1; }
want_i=""; want_b="best0 best1 best2 cand0 cand1 cand2"
for r in $(seq 0 $((n - 1))); do
	want_i="$want_i best$r cand$r"
	[ "$r" -ge 3 ] && want_b="$want_b best$r cand$r"
done
got=$(order "$W/true/c.db" m64-32)
echo "interleaved: $got"
[ "$got" = "${want_i# }" ] || { echo "FAIL: interleaved schedule"; exit 1; }
got=$(order "$W/false/c.db" m64-32)
echo "blocks then pairs: $got"
[ "$got" = "$want_b" ] || { echo "FAIL: non-interleaved schedule"; exit 1; }
[ "$(sqlite3 "$W/true/c.db" "SELECT paired FROM iterations WHERE variant='m64-32'")" = 1 ] || { echo "FAIL: interleaved not recorded as paired"; exit 1; }
[ "$(sqlite3 "$W/false/c.db" "SELECT paired FROM iterations WHERE variant='m64-32'")" = 0 ] || { echo "FAIL: blocks recorded as paired"; exit 1; }
# The worse tile left a regression row: signed so that negative is worse,
# its interval on the same side, and not marked kept.
row=$(sqlite3 "$W/true/c.db" "SELECT r.delta < 0 AND r.ci_lo <= r.delta AND r.delta <= r.ci_hi AND r.ci_hi < 0 AND r.kept = 0 FROM regressions r JOIN iterations i ON i.id = r.iteration_id WHERE i.variant = 'm256-128' AND r.metric = 'gflops'")
[ "$row" = 1 ] || { echo "FAIL: regression row of m256-128 missing or mis-signed ($row)"; exit 1; }
echo PASS
