# The seed's evening in miniature, shared by tests/research/evening.sh
# (strategy list, then observe and propose) and tests/agents/llm_e2e.sh
# (strategy llm): simserve with the evening's timings, one closed-loop load
# of 400-token prompts, the GSM8K gate. Needs RATCHET_BUILD and
# RATCHET_GSM8K_DIR.
#   . "$RATCHET_SRC/tests/lib/evening.sh"
#   evening_head NAME > spec.yaml   # everything up to the strategy

# simserve's timings of the evening (also for a simserve started by hand)
SIMARGS="--decode-us-per-step 100 --decode-us-per-seq 500 --prefill-us-per-token 20"

evening_head() {
	cat <<Y
name: $1
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sim-ev,
            --tiles, "{workdir}/tiles.json", --gsm8k, "$RATCHET_GSM8K_DIR/test.jsonl",
            --decode-us-per-step, "100", --decode-us-per-seq, "500", --prefill-us-per-token, "20",
            --log-recompiles]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-ev}
  stop_grace: 2s
benchmarks:
  - name: serve
    load: {api: completions, pattern: closed, concurrency: 1, prompt_tokens: 400,
           output_tokens: 4, requests: 16, ignore_eos: true, timeout: 5s}
objective: {metric: serve.output_throughput, goal: max, min_gain: 5%}
repeats: {min: 3, max: 5, confidence: 0.9}
gate: {gsm8k: {min_accuracy: 0.9, max_drop: 0.02, format: gsm8k_cot, concurrency: 8, limit: 20,
                dataset: "$RATCHET_GSM8K_DIR/test.jsonl"}}
log_events: {recompiles: "Compiling kernel"}
Y
}
