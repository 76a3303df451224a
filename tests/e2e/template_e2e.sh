#!/bin/sh
# One template of experiments/templates/ end to end against its simulated
# engine: PATH starts with experiments/simserve/bin, so the template's own
# engine command ([vllm, serve, ...], [llama-server, ...],
# [python3, -m, sglang.launch_server, ...]) runs simserve in that program's
# personality. The template's engine section is used as written, except that
# the readiness timeout is cut to seconds; the benchmark and gate are small.
# Checks, in one campaign: the baseline, a kept change, a gated change (GSM8K)
# and a change whose engine never gets ready; then, in a second campaign on a
# fixed port, another process tree that takes the port over between two
# launches is caught and never measured.
#   template_e2e.sh vllm-nvidia|vllm-rocm|llama-server|sglang
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}" "${RATCHET_GSM8K_DIR:?}"
T=$1
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
W=$(mktemp -d /tmp/ratchet-tpl-XXXXXX)
SQLOOP=
cleanup() {
	[ -z "$SQLOOP" ] || kill "$SQLOOP" 2>/dev/null || true
	[ ! -s "$W/sq.pid" ] || kill "$(cat "$W/sq.pid")" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
cp -r "$RATCHET_SRC/experiments/templates/configs" "$W/"
mkdir "$W/models" && : > "$W/models/gemma-3-27b-it-Q4_K_M.gguf"
export PATH="$RATCHET_SRC/experiments/simserve/bin:$RATCHET_BUILD:$PATH"
export SIMSERVE="$RATCHET_BUILD/simserve"
export SIMSERVE_GSM8K="$RATCHET_GSM8K_DIR/test.jsonl"
export SIMSERVE_DECODE_US_PER_STEP=100 SIMSERVE_DECODE_US_PER_SEQ=500
export SIMSERVE_SLOW_START=0.1 SIMSERVE_CAPTURE_MS=10 SIMSERVE_RSS_MIB=8

# the template's engine section, readiness cut from minutes to seconds
awk '/^engine:/ {on = 1; print; next} on && /^[a-z_]+:/ {on = 0} on' \
	"$RATCHET_SRC/experiments/templates/$T.yaml" | sed 's/timeout: [0-9]*m}/timeout: 4s}/' > "$W/engine.yaml"
grep -q 'timeout: 4s}' "$W/engine.yaml" || { echo "FAIL: no ready timeout in $T's engine section"; exit 1; }

conc=8
case $T in
vllm-nvidia)
	kept='{name: kernel-decode-le8, flag: [--kernel-config, "{\"decode.BS_LE_8\": {\"BLOCK_M\": 16, \"BLOCK_N\": 64, \"num_warps\": 4}}"]}'
	gated='{name: kv-fp8-e5m2, flag: [--kv-cache-dtype, fp8_e5m2]}'
	never='{name: graphs-8192, flag: [--compilation-config, "{\"level\": 3, \"max_cudagraph_capture_size\": 8192}"]}'
	events='{recompiles: "Compiling a graph for", graph_capture: "Graph capturing finished"}' ;;
vllm-rocm)
	key='"gfx942,304,8,4096,4096,False,torch.bfloat16,torch.bfloat16,False,False"'
	cols='[gfx, cu_num, M, N, K, bias, dtype, outdtype, scaleAB, bpreshuffle]'
	kept="{name: gemm-m8-asm, table: {file: configs/aiter_bf16_tuned_gemm.csv, key_columns: $cols, set: {$key: {libtype: asm, solidx: 2, splitK: 4}}}}"
	gated="{name: gemm-m8-splitk16, table: {file: configs/aiter_bf16_tuned_gemm.csv, key_columns: $cols, set: {$key: {libtype: asm, solidx: 2, splitK: 16}}}}"
	never='{name: graphs-8192, flag: [--compilation-config, "{\"level\": 3, \"max_cudagraph_capture_size\": 8192}"]}'
	events='{gemm_fallback: "not found tuned config", graph_capture: "Graph capturing finished"}' ;;
llama-server)
	# llama.cpp decode is bound by reading the weights once per step
	export SIMSERVE_DECODE_US_PER_STEP=2000 SIMSERVE_DECODE_US_PER_SEQ=100
	kept='{name: slots-8, flag: [-np, "8"]}'
	gated='{name: kv-q4, flag: [-ctk, q4_0]}'
	never='{name: missing-gguf, flag: [-m, models/missing.gguf]}'
	events='{graphs_off: "disabling CUDA graphs"}' ;;
sglang)
	conc=16
	kept='{name: graphs-16, flag: [--cuda-graph-max-bs, "16"]}'
	gated='{name: kv-fp8-e5m2, flag: [--kv-cache-dtype, fp8_e5m2]}'
	never='{name: graphs-4096, flag: [--cuda-graph-max-bs, "4096"]}'
	events='{graph_miss: "cuda graph: False"}' ;;
*) echo "usage: template_e2e.sh vllm-nvidia|vllm-rocm|llama-server|sglang"; exit 2 ;;
esac

spec() { # spec FILE [extra engine line] VARIANTS...
	f=$1; extra=$2; shift 2
	{
		echo "name: tpl-$T"
		if [ -n "$extra" ]; then sed "1a\\
$extra" "$W/engine.yaml"; else cat "$W/engine.yaml"; fi
		cat <<Y
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: $conc, prompt_tokens: 64,
           output_tokens: 16, requests: 32, ignore_eos: true, timeout: 5s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 2, max: 3, confidence: 0.9}
gate: {gsm8k: {min_accuracy: 0.95, max_drop: 0.02, format: gsm8k_cot, concurrency: 8, limit: 50,
                dataset: "$RATCHET_GSM8K_DIR/test.jsonl"}}
log_events: $events
strategy: list
variants:
Y
		for v in "$@"; do echo "  - $v"; done
	} > "$W/$f"
}
spec spec.yaml "" "$gated" "$never" "$kept"
cd "$W"
"$RATCHET_BIN" check spec.yaml > /dev/null
"$RATCHET_BIN" check "$RATCHET_SRC/experiments/templates/$T.yaml" > /dev/null
q() { sqlite3 c.db "$1"; }
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
echo "iterations:"; q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
state() { q "SELECT state FROM iterations WHERE variant='$1'"; }
name() { printf '%s' "$1" | sed 's/^{name: \([^,]*\),.*/\1/'; }
n=$(q "SELECT count(*) FROM measurements WHERE benchmark='decode'")
[ "$n" -gt 0 ] || { echo "FAIL: the baseline was not measured"; exit 1; }
st=$(state "$(name "$gated")")
[ "$st" = gated ] || { echo "FAIL: $(name "$gated") not gated (state $st)"; exit 1; }
st=$(state "$(name "$never")")
[ "$st" = failed ] || { echo "FAIL: $(name "$never"), whose engine never gets ready, ended '$st'"; exit 1; }
st=$(state "$(name "$kept")")
[ "$st" = kept ] || { echo "FAIL: $(name "$kept") not kept (state $st)"; exit 1; }
ev=$(q "SELECT count(*) FROM measurements WHERE benchmark='log'")
[ "$ev" -gt 0 ] || { echo "FAIL: the engine's log lines were not counted"; exit 1; }

# A second campaign on a fixed port: once the first sample is measured,
# another process tree waits for the port and takes it between two launches.
"$RATCHET_BUILD/simserve" --port 0 > free.out 2>&1 &
sp=$!
i=0
until grep -q listening free.out; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "FAIL: simserve did not start"; exit 1; }; sleep 0.05
done
kill $sp; wait $sp || true
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' free.out)
spec spec2.yaml "  port: $PORT" "$kept"
sed -i 's/min: 2, max: 3/min: 3, max: 3/' spec2.yaml
# a fresh engine per sample: many launches, so the squatter wins the port
# during the run (with engines kept per arm a loaded machine can finish
# before the squatter's first bind, and there is nothing to detect)
sed -i 's/^engine:$/engine:\n  restart: sample/' spec2.yaml
grep -q '^  restart: sample' spec2.yaml || { echo "FAIL: spec2 has no engine: line"; exit 1; }
# The takeover is a race: on a loaded host the squatter can miss every gap
# between two launches, or bind only after ratchet's last launch (CI saw
# this: nothing was left to catch). Such a run tests nothing and is
# repeated (at most 3 runs). A run counts when the squatter was listening
# while decode samples were still to come: each sample is a launch
# (restart: sample), and ratchet must catch the next one. The count is read
# after the bind is seen, so it can only overstate how far the run was.
# Every check below applies to the run that counts.
samples() { # decode samples measured so far (one per launch); fails while c.db can't be read
	sqlite3 -cmd ".timeout 2000" c.db "SELECT count(*) FROM (SELECT DISTINCT iteration_id, arm, rep
		FROM measurements WHERE benchmark='decode')" 2>/dev/null
}
all=9 # baseline 3 + the candidate's 3 and the best's 3 beside them
counted=
for attempt in 1 2 3; do
	rm -f sq.log sq.bound c.db
	(
		until [ "$(samples || echo 0)" -gt 0 ]; do
			sleep 0.05
		done
		while :; do
			"$RATCHET_BUILD/simserve" --port "$PORT" --model squatter --log-recompiles >> sq.log 2>&1 &
			pid=$!
			echo $pid > sq.pid
			while kill -0 $pid 2>/dev/null; do
				# a failed read is tried again: the count only grows
				if [ ! -e sq.bound ] && grep -q listening sq.log && n=$(samples) && [ -n "$n" ]; then
					echo "$n" > sq.bound
				fi
				sleep 0.01
			done
			wait $pid || true
			sleep 0.01
		done
	) &
	SQLOOP=$!
	rc=0
	"$RATCHET_BIN" --db c.db run --quiet spec2.yaml > run2.out 2>&1 || rc=$?
	kill "$SQLOOP" 2>/dev/null || true
	SQLOOP=
	sq=$(cat sq.pid 2>/dev/null || echo none)
	kill "$sq" 2>/dev/null || true # one still starting must not hold the port in the next run
	cat run2.out
	at=$(cat sq.bound 2>/dev/null || echo none)
	if [ "$at" != none ] && [ "$at" -lt $all ]; then
		counted=$attempt
		echo "run $attempt: the squatter took the port after $at of $all decode samples"
		break
	fi
	if [ "$at" != none ]; then
		echo "run $attempt: the squatter took the port after $at of $all decode samples: nothing left to catch"
	elif grep -q listening sq.log; then
		echo "run $attempt: the squatter took the port, after how many decode samples is unknown (c.db could not be read): run again"
	else
		echo "run $attempt: the squatter never got the port"
	fi
	rm -f sq.pid
done
[ -n "$counted" ] || { echo "FAIL: the squatter did not take the port mid-run in 3 runs"; exit 1; }
# caught: ratchet names the process on the port, or the engine's own log says
# it could not bind (the squatter won the race to bind); never measured
why="pid $sq\|squatter\|not by the engine\|in use\|couldn't bind\|Address already in use"
[ $rc -ne 0 ] || q "SELECT reason FROM iterations" | grep -q "$why" ||
	{ echo "FAIL: a port taken over mid-run went unnoticed"; exit 1; }
grep -q "$why" run2.out || q "SELECT reason FROM iterations" | grep -q "$why" ||
	{ echo "FAIL: the takeover is not explained"; exit 1; }
grep -q "Compiling kernel" sq.log && { echo "FAIL: the squatter was measured"; exit 1; }
echo PASS
