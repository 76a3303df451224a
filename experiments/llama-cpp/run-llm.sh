#!/bin/sh
# strategy: llm with a real llama-server as the chat endpoint: a random-weight
# "tuner" model (mkmodel.py --keep-rows '"]}': only tokens that close a JSON
# string, array or object have non-zero output rows, so under the
# JSON-schema grammar its answers end within a few hundred tokens) answers
# every proposal request with response_format json_schema; llama-server
# turns the schema into a grammar, so every answer parses as JSON, and
# ratchet's own checks decide what it may run. The campaign tunes simserve
# (the engine under test is not the point here). Prints the journal and
# each exchange's verdict.
#   experiments/llama-cpp/run-llm.sh WORK
# Environment: RATCHET, LLAMA_BIN, SIMSERVE (default build/simserve), CALLS (default 3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: run-llm.sh WORK}
mkdir -p "$work" && work=$(cd "$work" && pwd)
bin=${LLAMA_BIN:-$(sh "$root/tools/llama.sh" | tail -1)}
src=$(cd "$bin/../../src" 2>/dev/null && pwd || ls -d "$bin"/../../../*/src 2>/dev/null | head -1)
ratchet=${RATCHET:-$root/build/ratchet}
python3 "$here/mkmodel.py" "$work/tuner.gguf" --vocab "$src/models/ggml-vocab-llama-spm.gguf" \
	--embd 128 --layers 2 --ff 384 --heads 2 --keep-rows '"]}' > "$work/model.txt"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/llama-server" -m "$work/tuner.gguf" -a random-tuner --host 127.0.0.1 --port "$port" -c 4096 -np 1 -t 1 \
	--chat-template llama2 > "$work/chat.log" 2>&1 &
chat=$!
trap 'kill $chat 2>/dev/null || true' EXIT
i=0
until curl -sf "http://127.0.0.1:$port/health" > /dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] && kill -0 $chat || { cat "$work/chat.log"; exit 1; }; sleep 0.1
done
cat > "$work/llm.yaml" <<Y
name: llm-real-chat
engine:
  command: ["${SIMSERVE:-$root/build/simserve}", --port, "{port}", --model, sim]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim}
  stop_grace: 2s
benchmarks:
  - name: serve
    load: {api: completions, concurrency: 2, prompt_tokens: 32, output_tokens: 8, requests: 8, ignore_eos: true}
objective: {metric: serve.output_throughput, goal: max, min_gain: 5%}
repeats: {min: 2, max: 2}
variants:
  - name: graphs-16
    flag: [--max-graph-bs, "16"]
strategy: llm
llm:
  endpoint: http://127.0.0.1:$port/v1
  model: random-tuner
  max_calls: ${CALLS:-3}
  answer_tokens: 256
  temperature: 0
  timeout: 120s
  response_format: json_schema
  kinds: [flag, env]
Y
cd "$work"
"$ratchet" --db "$work/ratchet.db" run --quiet llm.yaml > run.out 2>&1 || echo "ratchet run exited $?"
tail -5 run.out
"$ratchet" --db "$work/ratchet.db" log
sqlite3 "$work/ratchet.db" "SELECT id, seq, attempt, verdict, substr(error, 1, 160), completion_tokens, round(latency_ms) FROM llm_exchanges"
