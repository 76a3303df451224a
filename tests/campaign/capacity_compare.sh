#!/bin/sh
# Capacity benchmarks compare latencies at one offered load (issue 11): a
# change that raises simserve's SLO capacity (CUDA graphs up to batch 64, so
# decode stops costing 1.5x above batch 8) is kept on its own capacity, the
# objective, and shows no latency "regression": both arms' latencies are
# measured at the best's capacity rate, not the candidate's at its own
# higher rate (which recorded ttft, tpot, itl and e2el regressions before).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-capcmp
cat > spec.yaml <<Y
name: capcmp
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --max-graph-bs, "8",
            --decode-us-per-step, "2000", --decode-us-per-seq, "500"]
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
benchmarks:
  - name: capacity
    load: {rates: [40, 160], requests: 40, prompt_tokens: 16, output_tokens: 16, slo: {tpot_p95: 9ms}}
objective: {metric: capacity.max_rate, goal: max, min_gain: 5%}
repeats: {min: 3, max: 3}
variants:
  - {name: graphs-64, flag: [--max-graph-bs, "64"]}
Y
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: run exited $rc"; exit 1; }
q() { sqlite3 c.db "$1"; }
q "SELECT seq, variant, state, reason FROM iterations"
[ "$(q "SELECT state FROM iterations WHERE variant='graphs-64'")" = kept ] ||
	{ echo "FAIL: the change that raises capacity was not kept"; exit 1; }
q "SELECT benchmark, metric, before, after, delta FROM regressions"
# The server's latencies (ttft_sched and send_lag also measure the load
# generator, which a loaded test machine slows): none more than 10% worse,
# ttft 20% (16-token prompts: a first token waits mostly on the host's
# scheduler, and ttft_p90 read -13% once under ctest -j2 beside other jobs).
# Compared at each arm's own capacity they were 11% to 34% worse.
n=$(q "SELECT count(*) FROM regressions WHERE metric NOT GLOB 'ttft_sched*' AND
	((metric GLOB 'ttft_*' AND delta < -0.20) OR
	 ((metric GLOB 'tpot_*' OR metric GLOB 'itl_*' OR metric GLOB 'e2el_*') AND delta < -0.10))")
[ "$n" -eq 0 ] || { echo "FAIL: $n latency regressions from comparing at different loads"; exit 1; }
echo PASS
