#!/bin/sh
# A real serving campaign: ratchet starts simserve (a real child process) for
# every measurement, load-tests it, gates it on GSM8K, and decides. Checks
# that the numerically broken tile is gated with its flips recorded, that an
# engine crashing mid-benchmark fails only its iteration, that a real gain is
# kept, and that the review commands work on the result.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_GSM8K_DIR:?}" "${RATCHET_SRC:?}"
. "$RATCHET_SRC/tests/lib/procs.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
W=$(mktemp -d /tmp/ratchet-e2e-XXXXXX)
trap 'rm -rf "$W"' EXIT
cat > "$W/tiles.json" <<'J'
{
  "decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4},
  "prefill.T_GT_512": {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 8}
}
J
cp "$W/tiles.json" "$W/tiles.orig"
cat > "$W/spec.yaml" <<Y
name: e2e-serving
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sim-e2e,
            --tiles, "{workdir}/tiles.json", --gsm8k, "$RATCHET_GSM8K_DIR/test.jsonl",
            --decode-us-per-step, "100", --decode-us-per-seq, "500", --log-recompiles]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-e2e}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 4, prompt_tokens: 64,
           output_tokens: 16, requests: 24, ignore_eos: true, timeout: 2s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 4, confidence: 0.9}
gate: {gsm8k: {min_accuracy: 0.9, max_drop: 0.02, format: gsm8k_cot, concurrency: 8, limit: 30,
                dataset: "$RATCHET_GSM8K_DIR/test.jsonl"}}
log_events: {recompiles: "Compiling kernel"}
variants:
  - name: le8-broken
    table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4, broken: true}}}
  - name: crash-mid-bench
    flag: [--crash-after, "10"]
  - name: hang-mid-bench
    flag: [--hang-after, "10"]
  - name: wrong-model
    flag: [--model, impostor]
  - name: le8-best
    table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4}}}
strategy: list
Y
cd "$W"
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q() { sqlite3 c.db "$1"; }
echo "iterations:"; q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
st=$(q "SELECT state FROM iterations WHERE variant='le8-broken'")
[ "$st" = gated ] || { echo "FAIL: broken tile not gated (state $st)"; exit 1; }
flips=$(q "SELECT g.flips_to_wrong FROM gate_runs g JOIN iterations i ON i.gate_run_id = g.id WHERE i.variant='le8-broken'")
[ "${flips:-0}" -gt 0 ] || { echo "FAIL: no flips recorded for the broken tile"; exit 1; }
st=$(q "SELECT state FROM iterations WHERE variant='crash-mid-bench'")
[ "$st" = failed ] || { echo "FAIL: crashing engine did not fail its iteration (state $st)"; exit 1; }
q "SELECT reason FROM iterations WHERE variant='crash-mid-bench'" | grep -q "exited with status 70\|engine" || { echo "FAIL: crash reason not recorded"; exit 1; }
logs=$(q "SELECT count(*) FROM artifacts WHERE kind='engine-log' AND iteration_id=(SELECT id FROM iterations WHERE variant='crash-mid-bench')")
[ "$logs" -gt 0 ] || { echo "FAIL: crashed engine's log not kept"; exit 1; }
st=$(q "SELECT state FROM iterations WHERE variant='hang-mid-bench'")
[ "$st" = failed ] || { echo "FAIL: hung engine did not fail its iteration (state $st)"; exit 1; }
q "SELECT reason FROM iterations WHERE variant='hang-mid-bench'" | grep -q "stopped answering" || { echo "FAIL: hang reason not recorded"; exit 1; }
st=$(q "SELECT state FROM iterations WHERE variant='wrong-model'")
[ "$st" = invalid ] || { echo "FAIL: an engine answering as another model was measured (state $st)"; exit 1; }
q "SELECT reason FROM iterations WHERE variant='wrong-model'" | grep -q "model is 'impostor', expected 'sim-e2e'" || { echo "FAIL: identity reason not recorded"; exit 1; }
st=$(q "SELECT state FROM iterations WHERE variant='le8-best'")
[ "$st" = kept ] || { echo "FAIL: the real gain was not kept (state $st)"; exit 1; }
ev=$(q "SELECT count(*) FROM measurements WHERE benchmark='log' AND metric='recompiles'")
[ "$ev" -gt 0 ] || { echo "FAIL: log events not counted"; exit 1; }
req=$(q "SELECT count(*) FROM requests")
[ "$req" -gt 0 ] || { echo "FAIL: no per-request records"; exit 1; }
# the kept change is in place, the gated one is not
grep -q '"broken"' tiles.json && { echo "FAIL: broken tile left in place"; exit 1; }
grep -q 'BS_LE_8' tiles.json || { echo "FAIL: kept tile not in place"; exit 1; }
# no stray engines
# every engine this campaign started is gone (other tests may run simserve too)
for pg in $(q "SELECT value FROM env_facts WHERE key='engine.pgid'"); do
	if group_ours "$pg" "$W"; then echo "FAIL: engine $pg outlived the campaign"; exit 1; fi
done
"$RATCHET_BIN" --db c.db restore > /dev/null
cmp -s tiles.json tiles.orig || { echo "FAIL: restore did not give back the original table"; exit 1; }
echo PASS
