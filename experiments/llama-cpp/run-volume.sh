#!/bin/sh
# The volume checks against a real llama-server serving the random model:
# 1,000 streamed requests (ignore_eos) with `ratchet bench load`, then the
# full 1,319-question GSM8K gate with `ratchet gate`; both must end with 0
# failed requests. Prints both results.
#   experiments/llama-cpp/run-volume.sh WORK
# Environment: RATCHET, LLAMA_BIN, GSM8K (folder of test.jsonl), THREADS (1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: run-volume.sh WORK}
mkdir -p "$work" && work=$(cd "$work" && pwd)
bin=${LLAMA_BIN:-$(sh "$root/tools/llama.sh" | tail -1)}
ratchet=${RATCHET:-$root/build/ratchet}
SPEC_ONLY=1 LLAMA_BIN="$bin" sh "$here/run.sh" "$work" > /dev/null 2>&1
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/llama-server" -m "$work/random-llama-q8_0.gguf" -a random-llama --host 127.0.0.1 --port "$port" \
	-c 8192 -np 4 -t "${THREADS:-1}" > "$work/server.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
i=0
until curl -sf "http://127.0.0.1:$port/health" > /dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] && kill -0 $srv || { cat "$work/server.log"; exit 1; }; sleep 0.1
done
t=$(date +%s)
"$ratchet" --db "$work/volume.db" bench load -e "http://127.0.0.1:$port" -m random-llama -c 4 -n 1000 \
	--prompt-tokens 32 --output-tokens 16 --ignore-eos --warmup 4
echo "1,000 streamed requests: $(( $(date +%s) - t )) s"
t=$(date +%s)
"$ratchet" --db "$work/volume.db" gate --endpoint "http://127.0.0.1:$port" --model random-llama \
	--num-fewshot 1 --max-tokens 16 --concurrency 4 --min-accuracy 0 --max-failed 0 --no-early-stop \
	--dataset "${GSM8K:-$root/../shared/data/gsm8k}/test.jsonl" || echo "gate exit $?"
echo "1,319-question gate: $(( $(date +%s) - t )) s"
grep -c "send_error" "$work/server.log" | sed 's/^/server send_error lines: /'
