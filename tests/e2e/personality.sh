#!/bin/sh
# simserve's engine personalities (experiments/simserve/persona.c) through
# the wrappers a template runs (experiments/simserve/bin): each program's
# refusal of a bad command line, its routes and their JSON shapes, its
# start-up logs, the start-up cost knobs, AITER's tuned CSV, and flags that
# move performance (--max-num-seqs caps concurrency, a batch above the largest
# captured CUDA-graph size is slower).
set -u
: "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}" "${RATCHET_GSM8K_DIR:?}"
T=$(mktemp -d /tmp/rt-persona-XXXXXX)
PID=
cleanup() { [ -z "$PID" ] || kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
export PATH="$RATCHET_SRC/experiments/simserve/bin:$RATCHET_BUILD:$PATH"
export SIMSERVE="$RATCHET_BUILD/simserve"
fail() { echo "FAIL: $*"; for f in "$T"/out "$T"/err "$T"/log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
has() { grep -q -- "$2" "$1" || fail "$1 lacks '$2'"; }

# refused ARGS...: run, expect a refusal; sets rc, output in $T/err
refused() { rc=0; "$@" > "$T/out" 2> "$T/err" || rc=$?; }

# ---- command lines ----
refused vllm serve m --max-num-seqs 4 --foo 1
[ $rc -eq 2 ] || fail "vllm: unknown flag exit $rc, want 2"
has "$T/err" "vllm serve: error: unrecognized arguments: --foo 1"
refused vllm serve m --port abc
[ $rc -eq 2 ] || fail "vllm: bad int exit $rc"
has "$T/err" "argument --port: invalid int value: 'abc'"
refused vllm serve m --compilation-config '{"cudagraph_sizes":[1]}'
[ $rc -eq 1 ] || fail "vllm: unknown CompilationConfig key exit $rc, want 1"
has "$T/err" "validation error for CompilationConfig"
refused llama-server -m x.gguf --foo
[ $rc -eq 1 ] || fail "llama-server: unknown flag exit $rc, want 1"
has "$T/err" "error: invalid argument: --foo"
refused llama-server -m x.gguf --port
has "$T/err" 'error while handling argument "--port": expected value for argument'
refused python3 -m sglang.launch_server --port 1
[ $rc -eq 2 ] || fail "sglang: missing --model-path exit $rc, want 2"
has "$T/err" "launch_server.py: error: the following arguments are required: --model-path"

# start PATTERN CMD...: start an engine, wait for PATTERN in its output, set URL
start() {
	pat=$1; shift
	[ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
	: > "$T/log" # here, not in the child: it may truncate after the first grep
	"$@" >> "$T/log" 2>&1 &
	PID=$!
	i=0
	until grep -q "$pat" "$T/log"; do
		i=$((i + 1))
		{ [ $i -lt 200 ] && kill -0 "$PID" 2>/dev/null; } || fail "engine did not start: $*"
		sleep 0.05
	done
	URL=http://127.0.0.1:$(grep -o "$pat[^ ]*:[0-9]*" "$T/log" | head -1 | sed 's/.*://')
}
get() { curl -s -o "$T/out" -w '%{http_code}' "$URL$1"; }

# ---- vLLM: routes, logs, start-up cost, memory ----
export SIMSERVE_CAPTURE_MS=50 SIMSERVE_CAPTURE_MIB=4 SIMSERVE_RSS_MIB=16
t0=$(date +%s%N)
start "API server 0 on http://" vllm serve google/gemma-3-27b-it --port 0 --served-model-name g27 \
	--max_num_seqs 8 --max-model-len 16384
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -ge 250 ] || fail "5 captured sizes at 50 ms took under 250 ms"
has "$T/log" "vLLM API server version 0.11.0"
has "$T/log" "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 5/5"
has "$T/log" "Graph capturing finished in"
rss=$(sed -n 's/VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$PID/status")
[ "$rss" -ge $(((16 + 5 * 4) * 1024)) ] || fail "resident $rss kB, want the weights and graphs (36 MiB)"
[ "$(get /health)" = 200 ] && [ ! -s "$T/out" ] || fail "vLLM /health is 200 with an empty body"
[ "$(get /version)" = 200 ] && has "$T/out" '"version":"0.11.0"'
get /v1/models > /dev/null
has "$T/out" '"id":"g27","object":"model"'
has "$T/out" '"owned_by":"vllm","root":"google/gemma-3-27b-it","parent":null,"max_model_len":16384'
has "$T/out" '"object":"model_permission"'
curl -s "$URL/v1/completions" -d '{"prompt":"a b c","max_tokens":5}' > /dev/null
get /metrics > /dev/null
has "$T/out" '# TYPE vllm:num_requests_running gauge'
has "$T/out" 'vllm:generation_tokens_total{engine="0",model_name="g27"} 5.0'
has "$T/out" 'vllm:prompt_tokens_total{engine="0",model_name="g27"} 3.0'
[ "$(get /nope)" = 404 ] && has "$T/out" '{"detail":"Not Found"}'
refused vllm serve m --port "${URL##*:}"
[ $rc -eq 1 ] || fail "vllm on a taken port exit $rc, want 1"
has "$T/err" "Address already in use"
unset SIMSERVE_CAPTURE_MS SIMSERVE_CAPTURE_MIB SIMSERVE_RSS_MIB

# ---- --max-num-seqs caps concurrency: 4 requests, 1 slot take ~4x as long ----
burst() { # burst ARGS...: BURST_MS for 4 concurrent 40-token requests
	start "API server 0 on http://" vllm serve m --port 0 "$@"
	b0=$(date +%s%N)
	pids=
	for k in 1 2 3 4; do
		curl -s "$URL/v1/completions" -d '{"prompt":"x","max_tokens":40,"ignore_eos":true}' > /dev/null &
		pids="$pids $!"
	done
	wait $pids
	BURST_MS=$((($(date +%s%N) - b0) / 1000000))
}
export SIMSERVE_DECODE_US_PER_STEP=5000
burst --max-num-seqs 1; one=$BURST_MS
burst --max-num-seqs 4; four=$BURST_MS
[ "$one" -ge $((four * 2)) ] || fail "--max-num-seqs 1: $one ms, 4: $four ms; the cap does not bind"
# a decode batch of 4 above the largest captured size (1) runs without a graph: 1.5x
burst --compilation-config '{"cudagraph_capture_sizes":[1]}'; nograph=$BURST_MS
[ "$nograph" -ge $((four * 5 / 4)) ] || fail "captured [1]: $nograph ms, default sizes: $four ms"
unset SIMSERVE_DECODE_US_PER_STEP

# ---- llama-server: 503 while loading, then its shapes ----
: > "$T/m.gguf"
export SIMSERVE_SLOW_START=1
start "llama_server: listening on http://" llama-server -m "$T/m.gguf" --port 0 \
	-np 3 -c 12288 -a g27
unset SIMSERVE_SLOW_START
[ "$(get /health)" = 503 ] || fail "llama-server /health is not 503 while loading"
has "$T/out" '"message":"Loading model","type":"unavailable_error"'
i=0
until [ "$(get /health)" = 200 ]; do i=$((i + 1)); [ $i -lt 100 ] || fail "never loaded"; sleep 0.05; done
has "$T/out" '{"status":"ok"}'
get /props > /dev/null
has "$T/out" '"total_slots":3'
has "$T/out" '"n_ctx":4096'
has "$T/log" "load_model: initializing, n_slots = 3, n_ctx_slot = 4096, kv_unified = 'false'"
get /v1/models > /dev/null
has "$T/out" '"id":"g27","object":"model"'
has "$T/out" '"owned_by":"llamacpp","meta":'
[ "$(get /metrics)" = 501 ] || fail "llama-server /metrics without --metrics is not 501"
# per-slot context: -c 12288 -np 3 gives each slot 4096; a prompt of 4095
# words is 4096 tokens with BOS, which llama-server refuses (n_tokens >= n_ctx)
words() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "w "; }'; }
printf '{"prompt":"%s","max_tokens":1}' "$(words 4095)" > "$T/long.json"
code=$(curl -s -o "$T/out" -w '%{http_code}' "$URL/v1/completions" -d @"$T/long.json")
[ "$code" = 400 ] || fail "a prompt over the slot's context answered $code, want 400"
has "$T/out" '"message":"request (4096 tokens) exceeds the available context size (4096 tokens), try increasing it"'
has "$T/out" '"type":"exceed_context_size_error","n_prompt_tokens":4096,"n_ctx":4096'
has "$T/log" "send_error: task id = .*, error: request (4096 tokens) exceeds the available context size"
printf '{"prompt":"%s","max_tokens":1}' "$(words 4094)" > "$T/long.json"
code=$(curl -s -o "$T/out" -w '%{http_code}' "$URL/v1/completions" -d @"$T/long.json")
[ "$code" = 200 ] || fail "a prompt that fits the slot answered $code, want 200"
refused llama-server -m "$T/none.gguf" --port 0
[ $rc -eq 1 ] || fail "llama-server with a missing model exit $rc, want 1"
has "$T/err" "failed to load model"

# ---- SGLang ----
start "Uvicorn running on http://" python3 -m sglang.launch_server --model-path org/m --port 0 \
	--cuda-graph-max-bs 16 --enable-metrics
has "$T/log" "The server is fired up and ready to roll!"
has "$T/log" "Capture cuda graph end"
[ "$(get /health)" = 200 ] || fail "sglang /health"
get /get_server_info > /dev/null
has "$T/out" '"cuda_graph_max_bs":16'
has "$T/out" '"version":"0.5.3"'
get /get_model_info > /dev/null
has "$T/out" '"model_path":"org/m"'
get /v1/models > /dev/null
has "$T/out" '"owned_by":"sglang"'
get /metrics > /dev/null
has "$T/out" "sglang:num_running_reqs"

# ---- AITER's tuned CSV: the hole is reported, a bad table refused ----
csv="$RATCHET_SRC/experiments/templates/configs/aiter_bf16_tuned_gemm.csv"
export VLLM_ROCM_USE_AITER=1 AITER_CONFIG_GEMM_BF16="$csv"
start "API server 0 on http://" vllm serve m --port 0
has "$T/log" "shape is M:8, N:4096, K:4096, not found tuned config in $csv"
grep -q "shape is M:32," "$T/log" && fail "the M=32 row was not read"
printf 'gfx,cu_num,M,N,K\ngfx942,304,8,4096,4096\n' > "$T/bad.csv"
export AITER_CONFIG_GEMM_BF16="$T/bad.csv"
refused vllm serve m --port 0
[ $rc -eq 1 ] || fail "a table without AITER's columns exit $rc, want 1"
has "$T/err" "has no 'bias' column"
echo PASS
