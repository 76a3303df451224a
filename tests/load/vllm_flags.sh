#!/bin/sh
# `ratchet bench load` given vLLM's connection flags, against simserve (issue
# 23 item 2). First the exact command line of vLLM's docs example for
# `vllm bench serve`, docs/benchmarking/cli.md, "Online Benchmark", of
# vllm-project/vllm, main branch at commit 069c00b0ef0c (the version of the
# docs read; which release tag first carries this text was not checked):
#   vllm bench serve --backend vllm --model NousResearch/Hermes-3-Llama-3.1-8B
#     --endpoint /v1/completions --dataset-name sharegpt
#     --dataset-path <your data path>/ShareGPT_V3_unfiltered_cleaned_split.json
#     --num-prompts 10
# with `ratchet bench load` for `vllm bench serve`: it has no --base-url,
# --host or --port, so it asks vLLM's default server, 127.0.0.1:8000, where
# simserve listens for it (skipped when port 8000 is taken). Then --base-url
# and --host/--port on a free port, a path prefix, and the refusals.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
[ -x "$RATCHET_BUILD/simserve" ] || { echo "SKIP: simserve not built"; exit 77; }
T=$(mktemp -d /tmp/ratchet-vllmflags-XXXXXX)
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
MODEL=NousResearch/Hermes-3-Llama-3.1-8B
serve() { # port, log: simserve with vLLM's docs model, waits for it
	"$RATCHET_BUILD/simserve" --port "$1" --model "$MODEL" --zero-latency > "$2" 2>&1 &
	pids="$pids $!"
	i=0
	until grep -q listening "$2"; do
		i=$((i + 1)); [ $i -lt 200 ] || return 1; sleep 0.05
	done
}
# a ShareGPT file as vLLM's docs download it: a JSON array of conversations
D="$T/data"
mkdir "$D"
python3 - "$D/ShareGPT_V3_unfiltered_cleaned_split.json" <<'P'
import json, sys
conv = [{"id": str(i), "conversations": [
    {"from": "human", "value": "question %d about the weather in town" % i},
    {"from": "gpt", "value": " ".join(["word"] * (4 + i % 5))}]} for i in range(12)]
json.dump(conv, open(sys.argv[1], "w"))
P
R() { "$RATCHET_BIN" --db "$T/r.db" bench load "$@" > "$T/out" 2> "$T/err"; }

# vllm_docs_example: the docs' command line, word for word after the command
if serve 8000 "$T/s8000.log"; then
	R \
	  --backend vllm \
	  --model NousResearch/Hermes-3-Llama-3.1-8B \
	  --endpoint /v1/completions \
	  --dataset-name sharegpt \
	  --dataset-path "$D"/ShareGPT_V3_unfiltered_cleaned_split.json \
	  --num-prompts 10
	rc=$?
	[ $rc -eq 0 ] || fail "docs example: exit $rc: $(cat "$T/err" "$T/out")"
	grep -q "Endpoint: *http://127.0.0.1:8000/v1$" "$T/out" || fail "docs example endpoint: $(cat "$T/out")"
	grep -q "Successful requests: *10$" "$T/out" || fail "docs example: $(cat "$T/out")"
	echo "ok: vLLM's docs example against 127.0.0.1:8000"
else
	echo "note: port 8000 is taken here; the docs example (default server) is skipped"
fi

# a free port for the rest
serve 0 "$T/s.log" || fail "simserve did not start"
PORT=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$T/s.log")
[ -n "$PORT" ] || fail "no port in $(cat "$T/s.log")"
# --base-url with --endpoint PATH joined to it (not taken as the base URL)
R --base-url "http://127.0.0.1:$PORT" --endpoint /v1/completions --model "$MODEL" -n 3 -c 1
[ $? -eq 0 ] || fail "--base-url: $(cat "$T/err")"
grep -q "Endpoint: *http://127.0.0.1:$PORT/v1$" "$T/out" || fail "--base-url endpoint: $(cat "$T/out")"
# --host and --port; --backend openai-chat asks the chat API; --tokenizer taken, said
R --host 127.0.0.1 --port "$PORT" --backend openai-chat --tokenizer "$MODEL" --model "$MODEL" -n 3 -c 1
[ $? -eq 0 ] || fail "--host/--port: $(cat "$T/err")"
grep -q "tokenizer is not used" "$T/err" || fail "--tokenizer not explained: $(cat "$T/err")"
grep -q "Successful requests: *3$" "$T/out" || fail "--host/--port: $(cat "$T/out")"
# --endpoint-type, vLLM's older name, and the chat path
R --host 127.0.0.1 --port "$PORT" --endpoint-type openai-chat --endpoint /v1/chat/completions --model "$MODEL" -n 2 -c 1
[ $? -eq 0 ] || fail "--endpoint-type: $(cat "$T/err")"
# ratchet's own --endpoint URL still works
R --endpoint "http://127.0.0.1:$PORT" -n 2 -c 1 --model "$MODEL"
[ $? -eq 0 ] || fail "--endpoint URL: $(cat "$T/err")"
# refusals, each a usage error that names the flag
refuse() { # want, args...
	want=$1; shift
	R "$@"
	rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$want" "$T/err" || fail "want exit 2 and '$want', got $rc: $(cat "$T/err")"
}
refuse "--backend tgi: ratchet's load generator speaks" --port "$PORT" --backend tgi -n 1
refuse "--endpoint /v1/embeddings: a path ends in /completions" --port "$PORT" --endpoint /v1/embeddings -n 1
refuse "give --base-url or --host/--port, not both" --base-url http://x --port "$PORT" -n 1
refuse "is a URL: give it alone" --endpoint http://x --port "$PORT" -n 1
refuse "is not the API of --backend openai" --port "$PORT" --backend openai --endpoint /v1/chat/completions -n 1
echo "ok: test_load_vllm_flags"
