#!/bin/sh
# `ratchet replay` across two simserve "models" whose hidden best tiles
# differ (docs/replay.md). Model A is simserve's own (the class table of
# experiments/simserve/model.c); model B moves decode.BS_LE_32's and
# prefill.T_LE_512's best tiles with --best. A campaign on A keeps two table
# levers and a flag lever; the replay on B (a fresh copy of the workdir)
# must give each lever the verdict the simulator's cost formula says:
# factor 1 + 0.15 per power of two away from the model's best, summed over
# BLOCK_M, BLOCK_N and num_warps, 1.6 for a missing entry; lower is faster.
# A lever whose factor on B is lower than B's baseline entry's is held, equal
# is lost, higher is reversed; the decode step cost (the flag) does not depend
# on the model and is held. Nothing below hard-codes a verdict: the expected
# ones are computed from model.c's table and B's --best. Also: replay exits 1
# (a lever reversed) and writes JUnit with one failed case; `report` and
# `report --campaigns` show the levers side by side with their lineage.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "SKIP: simserve not built"; exit 77; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-replay-models
# model A's best tile of a class, from the simulator's own table: "M N W"
best_a() {
	sed -n "s/.*{ \"$1\", \([0-9]*\), \([0-9]*\), \([0-9]*\) }.*/\1 \2 \3/p" "$RATCHET_SRC/experiments/simserve/model.c"
}
# the factor of tile "M N W" for best "M N W" (model.c's formula); "-" is a missing entry
factor() {
	[ "$1" = - ] && { echo 1.6; return; }
	echo "$1 $2" | awk '{ s = 0; for (i = 1; i <= 3; i++) { d = log($i) / log(2) - log($(i + 3)) / log(2);
		s += d < 0 ? -d : d } printf "%.4f\n", 1 + 0.15 * s }'
}
DEC=decode.BS_LE_32
PRE=prefill.T_LE_512
dec_a=$(best_a $DEC)
pre_a=$(best_a $PRE)
[ -n "$dec_a" ] && [ -n "$pre_a" ] || { echo "FAIL: cannot read model.c's best tiles"; exit 1; }
# model B: decode's best BLOCK_M 8x (the workdir's decode entry is B's best: A's
# campaign moves it away), prefill's BLOCK_M and BLOCK_N a quarter
set -- $dec_a; dec_b="$(($1 * 8)) $2 $3"; base_dec="$dec_b"
set -- $pre_a; pre_b="$(($1 / 4)) $(($2 / 4)) $3"
best_flag() { set -- $1; echo "$1,$2,$3"; }
BEST_B="$DEC=$(best_flag "$dec_b") $PRE=$(best_flag "$pre_b")"
tile() { set -- $1; echo "{BLOCK_M: $1, BLOCK_N: $2, num_warps: $3}"; }
mkdir a
set -- $base_dec
cat > a/tiles.json <<J
{"$DEC": {"BLOCK_M": $1, "BLOCK_N": $2, "num_warps": $3}}
J
cp -a a b
spec() { # spec NAME DIR EXTRA-FLAGS
	cat <<Y
name: $1
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --tiles, "{workdir}/tiles.json",
            --prefill-us-per-token, "900", --decode-us-per-step, "6000", --decode-us-per-seq, "1500"$3]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 16, prompt_tokens: 16,
           output_tokens: 8, requests: 32, ignore_eos: true, timeout: 5s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 7%}
repeats: {min: 3, max: 8, confidence: 0.9}
variants:
  - name: dec-tile
    table: {file: tiles.json, set: {"$DEC": $(tile "$dec_a")}}
  - name: pre-tile
    table: {file: tiles.json, set: {"$PRE": $(tile "$pre_a")}}
  - name: step-300
    flag: [--decode-us-per-step, "300"]
strategy: list
Y
}
spec model-a "$W/a" "" > a/spec.yaml
spec model-b "$W/b" ", --best, \"$BEST_B\"" > b/spec.yaml
"$RATCHET_BIN" --db c.db run --quiet a/spec.yaml > a.out 2>&1 || { cat a.out; echo "FAIL: campaign on A"; exit 1; }
kept=$(sqlite3 c.db "SELECT group_concat(variant, ' ') FROM (SELECT variant FROM iterations WHERE campaign_id = 1 AND state = 'kept' ORDER BY seq)")
[ "$kept" = "dec-tile pre-tile step-300" ] || { sqlite3 c.db "SELECT seq, variant, state, reason FROM iterations"; echo "FAIL: A kept '$kept'"; exit 1; }
# the expected verdicts on B, from the formula
expect() { # expect LEVER-TILE BASE-TILE BEST
	l=$(factor "$1" "$3"); b=$(factor "$2" "$3")
	awk -v l="$l" -v b="$b" 'BEGIN { print ((l < b - 0.05) ? "held" : (l > b + 0.05) ? "reversed" : "lost") }'
}
e_dec=$(expect "$dec_a" "$base_dec" "$dec_b")
e_pre=$(expect "$pre_a" - "$pre_b")
echo "B: $DEC base $(factor "$base_dec" "$dec_b") lever $(factor "$dec_a" "$dec_b") -> $e_dec;" \
     "$PRE base 1.6 lever $(factor "$pre_a" "$pre_b") -> $e_pre; step-300 -> held"
rc=0
"$RATCHET_BIN" --db c.db replay --quiet --from 1 --junit b.xml --summary b.md b/spec.yaml > b.out 2>&1 || rc=$?
cat b.out
want_rc=0
[ "$e_dec" = reversed ] || [ "$e_pre" = reversed ] && want_rc=1
[ $rc -eq $want_rc ] || { echo "FAIL: replay exited $rc, expected $want_rc"; exit 1; }
got() { sqlite3 c.db "SELECT verdict FROM replay_levers WHERE campaign_id = 2 AND variant = '$1'"; }
[ "$(got dec-tile)" = "$e_dec" ] || { echo "FAIL: dec-tile is $(got dec-tile), the formula says $e_dec"; exit 1; }
[ "$(got pre-tile)" = "$e_pre" ] || { echo "FAIL: pre-tile is $(got pre-tile), the formula says $e_pre"; exit 1; }
[ "$(got step-300)" = held ] || { echo "FAIL: step-300 is $(got step-300), expected held"; exit 1; }
# lineage: each lever names the iteration that kept it on A
lin=$(sqlite3 c.db "SELECT group_concat(l.variant || '=' || l.from_campaign || ':' || l.from_seq, ' ') FROM replay_levers l WHERE campaign_id = 2")
want=$(sqlite3 c.db "SELECT group_concat(variant || '=1:' || seq, ' ') FROM (SELECT variant, seq FROM iterations WHERE campaign_id = 1 AND state = 'kept' ORDER BY seq)")
[ "$lin" = "$want" ] || { echo "FAIL: lineage '$lin', expected '$want'"; exit 1; }
# gain then is A's kept iteration's
then=$(sqlite3 c.db "SELECT count(*) FROM replay_levers l JOIN iterations i ON i.id = l.from_iteration WHERE l.campaign_id = 2 AND l.then_delta = i.obj_delta AND l.then_lo = i.obj_ci_lo")
[ "$then" = 3 ] || { echo "FAIL: gain then differs from the source iterations ($then of 3)"; exit 1; }
# JUnit: one case per lever, the reversed ones failed
n_fail=$(grep -c '<failure message="reversed"' b.xml || true)
n_rev=$(sqlite3 c.db "SELECT count(*) FROM replay_levers WHERE campaign_id = 2 AND verdict = 'reversed'")
[ "$(grep -c '<testcase ' b.xml)" = 3 ] && [ "$n_fail" = "$n_rev" ] || { cat b.xml; echo "FAIL: junit"; exit 1; }
grep -q "| .dec-tile. | table | 1:" b.md || { cat b.md; echo "FAIL: summary lacks the lever row"; exit 1; }
# reports: the replay's journal and the two campaigns compared show the levers side by side
"$RATCHET_BIN" --db c.db report --campaign 2 -o r.md > /dev/null
"$RATCHET_BIN" --db c.db report --campaigns 1,2 -o cmp.md > /dev/null
for f in r.md cmp.md; do
	grep -q "Replay #2 of campaign #1" $f && grep -q "| lever | kind | lineage | gain then | gain now | verdict | why |" $f &&
		grep -q "\*\*$e_dec\*\*" $f || { cat $f; echo "FAIL: $f lacks the replay table"; exit 1; }
done
echo PASS
