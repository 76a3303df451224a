#!/bin/sh
# The seed's evening in miniature, on simserve (the simulated engine):
#  1. a campaign tries two theories (a graph capture flag, a retuned
#     prefill.T_GT_512 tile): neither helps this load (400-token prompts,
#     4 output tokens, one at a time);
#  2. the current best is profiled (simserve --profile-dir writes a Chrome
#     trace of its simulated kernels) and `ratchet observe` records that
#     profile as an iteration of its own, with its findings;
#  3. the top finding is the missing prefill entry for the prompts' shape
#     class (prefill.T_LE_512, 78% of kernel time on the slow default tile);
#     the observation corrects the earlier theory's narrative;
#  4. `ratchet propose` gives a variant for it, pasted into the spec;
#  5. the campaign of the edited spec keeps that change, the gate passing.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_GSM8K_DIR:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
SIM=
scratch_dir ratchet-evening SIM
R() { "$RATCHET_BIN" --db c.db "$@"; }
q() { sqlite3 c.db "$1"; }

cp "$RATCHET_SRC/experiments/simserve/tiles.json" tiles.json
. "$RATCHET_SRC/tests/lib/evening.sh"
# Two null theories must be reverted even when parallel tests load the host: 5 to 8 samples an
# arm at 95% (the shared head's 3 to 5 at 90% kept one once under ctest -j2 beside other jobs).
# The filled hole of step 5 gains +16% against a keep line near +6%, so it is kept either way.
{ evening_head evening; echo "strategy: list"; } |
	sed 's/^repeats: .*/repeats: {min: 5, max: 8, confidence: 0.95}/' > head.yaml
grep -q '^repeats: {min: 5' head.yaml || { echo "FAIL: the evening's head has no repeats line to set"; exit 1; }
{ cat head.yaml; cat <<'Y'
variants:
  - name: graphs-16
    flag: [--max-graph-bs, "16"]
  - name: tune-gt512
    table: {file: tiles.json, set: {"prefill.T_GT_512": {BLOCK_M: 128, BLOCK_N: 128, num_warps: 8}}}
Y
} > spec.yaml

# 1. the theories
rc=0
R run --quiet spec.yaml > run1.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run1.out; echo "FAIL: the first run exited $rc"; exit 1; }
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
[ "$(q "SELECT state FROM iterations WHERE variant = 'tune-gt512'")" = reverted ] &&
	ok "the retuned T_GT_512 tile does not help this load" || no "tune-gt512 kept?"

# 2. profile the best configuration, as one profiles vLLM with its profiler
"$RATCHET_BUILD/simserve" --port 0 --model sim-ev --tiles tiles.json $SIMARGS --profile-dir prof \
	> sim.out 2>&1 &
SIM=$!
for _ in $(seq 50); do grep -q listening sim.out && break; sleep 0.1; done
port=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' sim.out)
R bench load --endpoint "http://127.0.0.1:$port" --model sim-ev -c 1 -n 16 --prompt-tokens 400 \
	--output-tokens 4 --ignore-eos --no-store > bench.out 2>&1 || { cat bench.out; no "bench load"; }
kill -TERM "$SIM"; wait "$SIM" || true; SIM=
trace=$(ls prof/*.trace.json)
R observe --campaign 1 "$trace" > observe.out 2>&1 || { cat observe.out; echo "FAIL: observe"; exit 1; }
cat observe.out
st=$(q "SELECT kind || ':' || state FROM iterations WHERE seq = (SELECT max(seq) FROM iterations WHERE campaign_id = 1) AND campaign_id = 1")
[ "$st" = observe:observed ] && ok "the observe iteration is recorded ($st)" || no "observe iteration: $st"
obs=$(q "SELECT id FROM iterations WHERE kind = 'observe'")
[ "$(q "SELECT count(*) FROM profiles WHERE iteration_id = $obs AND steps > 0")" = 1 ] &&
	ok "its profile is stored with its steps" || no "profile row"
cps=$(q "SELECT printf('%.1f', calls_per_step) FROM profile_ops p JOIN profiles f ON f.id = p.profile_id WHERE f.iteration_id = $obs AND op = 'attention'")
[ -n "$cps" ] && ok "attention calls per step: $cps" || no "calls per step"
R log > log.out && grep -q observe log.out && ok "log lists it" || no "log"
# a live runner holds the campaign: observe would race it for the next seq
q "UPDATE campaigns SET owner_token = 't', owner_pid = 1, owner_host = 'h', owner_since = 0,
   heartbeat_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE id = 1"
rc=0; R observe --campaign 1 "$trace" > busy.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'being run by pid 1 on host h' busy.out && ok "observe waits for a running campaign" ||
	{ cat busy.out; no "busy exit $rc"; }
q "UPDATE campaigns SET owner_token = NULL, owner_pid = NULL, owner_host = NULL, owner_since = NULL,
   heartbeat_at = NULL WHERE id = 1"

# 3. the top finding
R findings --campaign 1 > findings.out
cat findings.out
sed -n 2p findings.out | grep -q 'hole .*tiles.json has no entry for prefill.T_LE_512' &&
	ok "the top finding is the missing prefill.T_LE_512 entry" || no "top finding: $(sed -n 2p findings.out)"
sed -n 2p findings.out | grep -Eq '^  1 +[0-9]+ +[0-9.]+%  [0-9.]+% x 1.5' && ok "its bound is printed" || no "bound"
grep -q 'hot_op' findings.out && grep -q 'recompile_storm' findings.out && grep -q 'default kernel ran' findings.out &&
	ok "hot op, recompile storm and the default kernel in the evidence" || no "other findings"
tune=$(q "SELECT seq FROM iterations WHERE variant = 'tune-gt512'")
oseq=$(q "SELECT seq FROM iterations WHERE id = $obs")
R correct "1:$tune" --by "1:$oseq" "the profile shows no prompt reaches T_GT_512: the prefill time is T_LE_512's, on the default tile" >/dev/null &&
	ok "the observation corrects the theory's narrative" || no "correct"
R note "1:$oseq" "profiled with simserve --profile-dir" >/dev/null && ok "the observation takes notes" || no "note"

# 4. propose
R propose --campaign 1 --top 1 > propose.out || { cat propose.out; no "propose exit"; }
cat propose.out
grep -q 'name: fill-prefill-t-le-512' propose.out && ok "propose gives a variant for it" || no "propose"
grep -q 'prefill.T_LE_512' propose.out && ok "keyed by the hole" || no "propose key"
{ cat head.yaml; echo "variants:"; cat propose.out; } > spec2.yaml
R check spec2.yaml > check.out 2>&1 && ok "the pasted variant is a valid spec entry" || { cat check.out; no "check"; }

# 5. the campaign keeps it, the gate passing
rc=0
R run --quiet spec2.yaml > run2.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run2.out; echo "FAIL: the second run exited $rc"; exit 1; }
q "SELECT campaign_id, seq, variant, state, reason FROM iterations WHERE campaign_id = 2 ORDER BY seq"
st=$(q "SELECT state FROM iterations WHERE variant = 'fill-prefill-t-le-512'")
[ "$st" = kept ] && ok "the campaign keeps the filled hole" || no "fill state: $st"
g=$(q "SELECT g.passed FROM gate_runs g JOIN iterations i ON i.gate_run_id = g.id WHERE i.variant = 'fill-prefill-t-le-512'")
[ "$g" = 1 ] && ok "with the gate passing" || no "gate: $g"
grep -q '"prefill.T_LE_512"' tiles.json && ok "tiles.json now has the entry" || no "tiles.json"
finish
