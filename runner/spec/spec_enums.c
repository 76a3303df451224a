/*
 * The names of the spec's enums, by value and NULL-terminated: what the
 * YAML says and what the normalized dump prints. Each table follows the
 * order of its enum in spec.h (or variants/var_def.h).
 */
#include "runner/spec/spec_int.h"

const char *const spec_format_names[] = { "none", "json", "llama-batched-bench",
					  "llama-batched-bench-jsonl", "llama-bench",
					  "vllm-bench-serve", NULL };
const char *const spec_api_names[] = { "completions", "chat", NULL };
const char *const spec_pattern_names[] = { "closed", "poisson", "gamma", "constant", "prefill", NULL };
const char *const spec_dtype_names[] = { "f32", "f16", "bf16", "f64", "i32", "i64", "u8", NULL };
const char *const spec_init_names[] = { "random", "zero", "value", "file", NULL };
const char *const spec_goal_names[] = { "max", "min", NULL };
const char *const spec_gsm8k_format_names[] = { "gsm8k", "gsm8k_cot", "chat", NULL };
const char *const spec_extract_names[] = { "flexible", "strict", NULL };
const char *const spec_tblfmt_names[] = { "auto", "json", "csv", "yaml", NULL };
const char *const spec_better_names[] = { "auto", "higher", "lower", NULL };
/* Not an enum: kernel.backend is a string checked against these. */
const char *const spec_backend_names[] = { "host", "cuda", "hip", "ze", NULL };
/* The key that gives a benchmark its kind, by enum spec_bench_kind. */
const char *const spec_bench_kind_names[] = { "command", "load", "kernel", NULL };
