#!/bin/sh
# Engine lifetime, identity without a nonce, the engine's cost and each
# launch's provenance, end to end: ratchet campaigns of 6 changes against
# simserve (0.3 s start-up) whose served name carries the launch's nonce
# (identity.model: "sim-{nonce}", expanded per launch), under each
# engine.restart policy. With restart: switch no iteration starts more than
# 2 engines; sample starts one per sample. Each launch is recorded with the
# sha256 of the executable and shown by `show`; engine.ready_s and
# engine.rss_peak are stored and usable in constraints. The wall-clock of
# each policy is printed (figures for docs/engines.md).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-lifetime
. "$RATCHET_SRC/tests/campaign/common.sh"

# spec NAME RESTART INTERLEAVE CONCURRENT
spec() {
	cat > "$1.yaml" <<Y
name: lifetime-$1
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, "sim-{nonce}", --slow-start, "0.3",
            --zero-latency]
  identity: {model: "sim-{nonce}"}
  restart: $2
  concurrent: $4
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 4, requests: 8}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
constraints: [engine.ready_s <= 60s, engine.rss_peak <= 4GiB]
repeats: {min: 2, max: 2, interleave: $3}
variants:
  - {name: g4, flag: [--max-graph-bs, "4"]}
  - {name: g16, flag: [--max-graph-bs, "16"]}
  - {name: g32, flag: [--max-graph-bs, "32"]}
  - {name: b32, flag: [--max-batch, "32"]}
  - {name: b16, flag: [--max-batch, "16"]}
  - {name: chunk, env: {SIMSERVE_CHUNKED_PREFILL: "512"}}
Y
	"$RATCHET_BIN" check "$1.yaml" > /dev/null
}

# run NAME: the campaign in its own database; prints "NAME: S s, L launches"
run() {
	rm -f c.db
	t0=$(date +%s.%N)
	run_ok "$1.yaml"
	t1=$(date +%s.%N)
	mv c.db "$1.db"
	n=$(sqlite3 "$1.db" "SELECT count(*) FROM launches")
	echo "$1: $(echo "$t1 - $t0" | bc) s, $n launches"
}

spec sample sample false 1
spec arm arm false 1
spec switch switch false 1
spec concurrent switch true 2
for p in sample arm switch concurrent; do run $p; done

# every iteration ran: the baseline and the 6 changes, none failed
for p in sample arm switch concurrent; do
	n=$(sqlite3 $p.db "SELECT count(*) FROM iterations WHERE state NOT IN ('failed', 'invalid', 'interrupted')")
	[ "$n" -eq 7 ] || { sqlite3 $p.db "SELECT seq, variant, state, reason FROM iterations"; echo "FAIL: $p: $n of 7 iterations ran"; exit 1; }
done
# restart: switch starts at most 2 engines per iteration; sample one per sample
m=$(sqlite3 switch.db "SELECT max(c) FROM (SELECT count(*) c FROM launches GROUP BY iteration_id)")
[ "$m" -le 2 ] || { echo "FAIL: restart: switch started $m engines in one iteration"; exit 1; }
s=$(sqlite3 sample.db "SELECT count(*) FROM launches")
r=$(sqlite3 sample.db "SELECT count(DISTINCT iteration_id || arm || rep) FROM measurements")
[ "$s" -ge "$r" ] || { echo "FAIL: restart: sample started $s engines for $r samples"; exit 1; }
w=$(sqlite3 switch.db "SELECT count(*) FROM launches")
[ "$w" -lt "$s" ] || { echo "FAIL: switch started $w engines, sample $s"; exit 1; }
# two engines up: interleaved A/B with at most 2 starts per iteration too
m=$(sqlite3 concurrent.db "SELECT max(c) FROM (SELECT count(*) c FROM launches GROUP BY iteration_id)")
[ "$m" -le 2 ] || { echo "FAIL: concurrent: 2 started $m engines in one iteration"; exit 1; }

# provenance: the executable's sha256, the same for every launch, nothing flagged
sha=$(sha256sum "$RATCHET_BUILD/simserve" | cut -d' ' -f1)
n=$(sqlite3 switch.db "SELECT count(*) FROM launches WHERE exe_sha256 != '$sha' OR differs IS NOT NULL")
[ "$n" -eq 0 ] || { echo "FAIL: $n launches with another sha256 or flagged"; exit 1; }
"$RATCHET_BIN" --db switch.db show --full 1 > show.out
grep -q "engine launches" show.out || { cat show.out; echo "FAIL: show lists no launches"; exit 1; }
grep -q "$sha" show.out || { echo "FAIL: show does not give the sha256"; exit 1; }
grep -q "the engine did not say" show.out || { echo "FAIL: show does not say the version is unknown"; exit 1; }
# the engine's cost, per sample
n=$(sqlite3 switch.db "SELECT count(*) FROM measurements WHERE benchmark = 'engine' AND metric = 'ready_s' AND value >= 0.3")
[ "$n" -gt 0 ] || { echo "FAIL: engine.ready_s not stored (or under the 0.3 s start-up)"; exit 1; }
n=$(sqlite3 switch.db "SELECT count(*) FROM measurements WHERE benchmark = 'engine' AND metric = 'rss_peak' AND value > 1000000")
[ "$n" -gt 0 ] || { echo "FAIL: engine.rss_peak not stored"; exit 1; }
sqlite3 switch.db "SELECT value FROM env_facts WHERE key = 'engine.device_mem'" | grep -q "unavailable: cuda: " ||
	{ echo "FAIL: device memory's absence not said"; exit 1; }
echo PASS
