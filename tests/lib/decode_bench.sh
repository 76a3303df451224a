# The decode benchmark, objective and repeats shared by the simserve space
# and recipe tests (tests/campaign/pool_space.sh, tests/cmd/recipe.sh,
# tests/agents/search_recipe.sh): 32 closed-loop requests of 16 prompt and
# 8 output tokens at concurrency 16, decode throughput up by 3%, 3 to 4
# repeats. Write $(decode_bench) in the spec's heredoc.
#   . "$RATCHET_SRC/tests/lib/decode_bench.sh"
decode_bench() {
	cat <<'Y'
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 16, prompt_tokens: 16,
           output_tokens: 8, requests: 32, ignore_eos: true, timeout: 5s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 4, confidence: 0.9}
Y
}
