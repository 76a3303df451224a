#!/bin/sh
# Telemetry on every sample, end to end: a simserve campaign whose device is
# the host backend's telemetry stand-in (RATCHET_TELEMETRY_FAKE, a file of
# readings the sampler re-reads at every tick). The engine is started
# through a wrapper that writes the readings before it execs simserve, and
# engine.restart is sample, so a variant's env (HEAT=hot) makes the device
# read hot and throttled for exactly that arm's samples. Checks:
#   - every stored sample has telemetry.* metrics (and the sampler ticked
#     several times per sample at its 20 ms period);
#   - the hot variant is faster, yet the constraint telemetry.temp_c <= 85
#     rejects it, and its decision says it used throttled samples;
#   - its throttled samples are marked (telemetry.throttled = 1 and a fact);
#   - the cool fast variant is kept and its decision says no sample was
#     throttled;
#   - percent of peak needs no kernel here; the throttle mask names the bits.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-tel
RATCHET_TELEMETRY_FAKE="$W/readings"
export RATCHET_TELEMETRY_FAKE
cat > engine.sh <<'S'
#!/bin/sh
# Stand-in device readings for this engine's samples, then the engine.
if [ "${HEAT:-cool}" = hot ]; then
	r="sm_clock_mhz=1500 mem_clock_mhz=2619 max_clock_mhz=1980 power_w=700 temp_c=95 mem_used_bytes=70e9 throttle=thermal,power"
else
	r="sm_clock_mhz=1980 mem_clock_mhz=2619 max_clock_mhz=1980 power_w=450 temp_c=61 mem_used_bytes=70e9 throttle=none"
fi
echo "$r" > "$RATCHET_TELEMETRY_FAKE.tmp" && mv "$RATCHET_TELEMETRY_FAKE.tmp" "$RATCHET_TELEMETRY_FAKE"
exec "$@"
S
cat > spec.yaml <<Y
name: telemetry-e2e
engine:
  command: [sh, "{workdir}/engine.sh", "$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}",
            --model, sim-tel, --decode-us-per-seq, "50"]
  env: {SIMSERVE_DECODE_US_PER_STEP: "2000"}
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-tel}
  restart: sample
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 4, prompt_tokens: 16,
           output_tokens: 16, requests: 16, ignore_eos: true, timeout: 5s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
constraints: [telemetry.temp_c <= 85]
repeats: {min: 3, max: 3, confidence: 0.9}
telemetry: {period: 20ms}
variants:
  - {name: hot-fast, env: {HEAT: hot, SIMSERVE_DECODE_US_PER_STEP: "500"}}
  - {name: cool-fast, env: {SIMSERVE_DECODE_US_PER_STEP: "500"}}
strategy: list
Y
"$RATCHET_BIN" check spec.yaml > /dev/null
. "$RATCHET_SRC/tests/campaign/common.sh"
run_ok spec.yaml
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
fail() { echo "FAIL: $*"; exit 1; }

# Every sample has its telemetry.
samples=$(q "SELECT count(*) FROM (SELECT DISTINCT iteration_id, arm, rep FROM measurements WHERE benchmark='decode')")
for m in sm_clock_mhz mem_clock_mhz power_w temp_c mem_used_bytes engine_rss_bytes throttled_frac throttled throttle_mask; do
	n=$(q "SELECT count(*) FROM measurements WHERE benchmark='telemetry' AND metric='$m'")
	[ "$n" -eq "$samples" ] || fail "telemetry.$m stored for $n of $samples samples"
done
[ "$samples" -ge 12 ] || fail "only $samples samples"
rss=$(q "SELECT min(value) FROM measurements WHERE benchmark='telemetry' AND metric='engine_rss_bytes'")
awk -v r="$rss" 'BEGIN { exit !(r > 1e6) }' || fail "engine RSS $rss"
q "SELECT value FROM env_facts WHERE key='telemetry.device'" | grep -qx "host:0" || fail "telemetry.device fact"

# The hot variant: faster, but too hot, and said to be throttled.
st=$(q "SELECT state FROM iterations WHERE variant='hot-fast'")
[ "$st" = reverted ] || fail "hot-fast was $st, not reverted by the temperature constraint"
r=$(q "SELECT reason FROM iterations WHERE variant='hot-fast'")
echo "$r" | grep -q "constraint telemetry.temp_c <= 85 violated (candidate median 95)" || fail "reason: $r"
echo "$r" | grep -q "used 3 throttled samples (best 0 of 3, candidate 3 of 3)" || fail "reason: $r"
hot=$(q "SELECT id FROM iterations WHERE variant='hot-fast'")
t=$(q "SELECT count(*) FROM measurements WHERE iteration_id=$hot AND arm='cand' AND benchmark='telemetry' AND metric='throttled' AND value=1")
[ "$t" -eq 3 ] || fail "$t candidate samples marked throttled"
t=$(q "SELECT count(*) FROM measurements WHERE iteration_id=$hot AND arm='best' AND benchmark='telemetry' AND metric='throttled' AND value=0")
[ "$t" -eq 3 ] || fail "$t best samples marked unthrottled"
f=$(q "SELECT count(*) FROM env_facts WHERE iteration_id=$hot AND key='telemetry.throttled' AND value LIKE 'cand sample _: power,thermal (100% of % readings)'")
[ "$f" -eq 3 ] || { q "SELECT key, value FROM env_facts WHERE iteration_id=$hot"; fail "$f throttled facts"; }
clk=$(q "SELECT value FROM measurements WHERE iteration_id=$hot AND arm='cand' AND benchmark='telemetry' AND metric='sm_clock_mhz' LIMIT 1")
[ "$clk" = 1500.0 ] || fail "held clock $clk"
mask=$(q "SELECT value FROM measurements WHERE iteration_id=$hot AND arm='cand' AND benchmark='telemetry' AND metric='throttle_mask' LIMIT 1")
[ "$mask" = 3.0 ] || fail "throttle mask $mask"

# The cool one is kept, and its decision says nothing was throttled.
st=$(q "SELECT state FROM iterations WHERE variant='cool-fast'")
[ "$st" = kept ] || fail "cool-fast was $st"
q "SELECT reason FROM iterations WHERE variant='cool-fast'" | grep -q "no sample was throttled" || fail "cool reason"

# show lists the telemetry metrics like any other.
"$RATCHET_BIN" --db c.db show --full 1:1 > show.out
grep -q "telemetry.temp_c" show.out || { cat show.out; fail "show has no telemetry.temp_c"; }
echo "ok: $samples samples with telemetry, hot-fast rejected by telemetry.temp_c, throttling reported"
