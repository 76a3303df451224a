/*
 * `ratchet bench load`'s command line, shared by its two files: ratchet's
 * own options, the run and the printing (runner/cmd/cmd_bench.c), and the
 * part that speaks vLLM's `vllm bench serve` (runner/cmd/cmd_bench_vllm.c):
 * its flags mapped onto the load generator's configuration, and its result
 * file. vLLM's flags, defaults and file follow vllm/benchmarks/serve.py and
 * vllm/benchmarks/datasets/arg_utils.py of vLLM's main branch at commit
 * 009e6d4a1cd6 (serve.py) and 237145ea190a (datasets).
 */
#ifndef RT_CMD_BENCH_H
#define RT_CMD_BENCH_H

#include <limits.h>

#include "runner/cmd/cmd.h"
#include "runner/load/load.h"

#define CMD_BLOAD_UNSET LONG_MIN /* an integer option that was not given */

/* `ratchet bench load` as asked: the options, and what is built from them. */
struct cmd_bload {
	struct spec_cli cli;    /* a load benchmark's options, from its spec table, then ours */
	struct spec_load cfg;   /* what they say, read by the spec's parsers (spec_cli_load) */
	long seed;              /* --seed: the seed of one run, and of --seeds' default */
	bool prefill;           /* --prefill: pattern prefill, one request per wave by default */
	bool no_store;          /* --no-store */
	const char *key_env;    /* --api-key-env */
	const char *api_key;    /* the key it names, from the environment, or NULL */
	int default_max_tokens; /* records without max_tokens (vLLM's custom dataset: 256), 0: 128 */

	/* vLLM's flags (cmd_bench_vllm.c) */
	long num_prompts;          /* --num-prompts, CMD_BLOAD_UNSET: not given */
	double request_rate;       /* --request-rate (inf too), NAN: not given */
	long max_concurrency;      /* --max-concurrency, CMD_BLOAD_UNSET: not given */
	const char *dataset_name;  /* --dataset-name random | sharegpt | custom, NULL: not given */
	const char *dataset_path;  /* --dataset-path FILE */
	long random_input_len;     /* --random-input-len, CMD_BLOAD_UNSET: not given */
	long random_output_len;    /* --random-output-len, CMD_BLOAD_UNSET: not given */
	const char *pct_metrics;   /* --percentile-metrics, NULL: ttft,tpot,itl */
	const char *metric_pcts;   /* --metric-percentiles, NULL: 99 */
	const char *label;         /* --label */
	const char *result_dir;    /* --result-dir */
	const char *result_file;   /* --result-filename */
	const char *multi_opt;     /* the option table's slot for --goodput and --metadata, whose
				    * values cmd_bench_take_multi takes out of argv first */
	bool save_result;          /* --save-result */
	bool save_detailed;        /* --save-detailed */
	bool append_result;        /* --append-result */
	const char **goodput;      /* every --goodput KEY:MS value (owned array of argv strings) */
	size_t n_goodput;          /* entries in goodput */
	const char **metadata;     /* every --metadata KEY=VALUE value (owned array of argv strings) */
	size_t n_metadata;         /* entries in metadata */
	const char *multi_empty;   /* --goodput given without a value (vLLM needs one), or NULL */
	double *pcts;              /* parsed --metric-percentiles (owned), NULL: 99 */
	size_t n_pcts;             /* entries in pcts */
	bool vllm;                 /* some vLLM flag was given */
	const char *base_url;      /* --base-url URL: the server, joined with --endpoint PATH */
	const char *host;          /* --host H (vLLM's default 127.0.0.1) */
	long port;                 /* --port P (vLLM's default 8000), CMD_BLOAD_UNSET: not given */
	const char *backend;       /* --backend vllm | openai | openai-chat: the API */
	const char *endpoint_type; /* --endpoint-type: the older name of --backend */
	const char *tokenizer;     /* --tokenizer: taken, not used (said in note) */
	const char *note;          /* what ratchet does with a vLLM flag it takes, for stderr, or NULL */
};

/* vLLM's options rows, appended to `bench load`'s table. */
#define CMD_BLOAD_VLLM_OPTS(a)                                                                                     \
	{ "num-prompts", 0, RT_OPT_INT, &(a)->num_prompts, "N", "vLLM: measured requests (default 1000)" },   \
	{ "request-rate", 0, RT_OPT_DBL, &(a)->request_rate, "R", "vLLM: open loop at R req/s, inf: all at once (default)" }, \
	{ "max-concurrency", 0, RT_OPT_INT, &(a)->max_concurrency, "N", "vLLM: most requests in flight" },    \
	{ "dataset-name", 0, RT_OPT_STR, &(a)->dataset_name, "NAME", "vLLM: random (default), sharegpt, custom" }, \
	{ "dataset-path", 0, RT_OPT_STR, &(a)->dataset_path, "FILE", "vLLM: the sharegpt or custom dataset" }, \
	{ "random-input-len", 0, RT_OPT_INT, &(a)->random_input_len, "L", "vLLM: random prompt tokens (default 1024)" }, \
	{ "random-output-len", 0, RT_OPT_INT, &(a)->random_output_len, "T", "vLLM: random max_tokens (default 128)" }, \
	{ "percentile-metrics", 0, RT_OPT_STR, &(a)->pct_metrics, "CSV", "vLLM: metrics with percentiles (ttft,tpot,itl)" }, \
	{ "metric-percentiles", 0, RT_OPT_STR, &(a)->metric_pcts, "CSV", "vLLM: percentiles reported (99)" },  \
	{ "goodput", 0, RT_OPT_STR, &(a)->multi_opt, "KEY:MS...", "vLLM: SLOs for goodput: ttft:500 tpot:50 e2el:..." }, \
	{ "save-result", 0, RT_OPT_FLAG, &(a)->save_result, NULL, "vLLM: write vLLM's result JSON" },           \
	{ "save-detailed", 0, RT_OPT_FLAG, &(a)->save_detailed, NULL, "vLLM: with per-request lists" },         \
	{ "append-result", 0, RT_OPT_FLAG, &(a)->append_result, NULL, "vLLM: append to the result file" },     \
	{ "result-dir", 0, RT_OPT_STR, &(a)->result_dir, "DIR", "vLLM: folder of the result file" },           \
	{ "result-filename", 0, RT_OPT_STR, &(a)->result_file, "FILE", "vLLM: result file name" },             \
	{ "metadata", 0, RT_OPT_STR, &(a)->multi_opt, "KEY=VALUE...", "vLLM: keys added to the result JSON" }, \
	{ "label", 0, RT_OPT_STR, &(a)->label, "NAME", "vLLM: result label (file name prefix)" },          \
	{ "base-url", 0, RT_OPT_STR, &(a)->base_url, "URL", "vLLM: the server; --endpoint PATH is joined to it" }, \
	{ "host", 0, RT_OPT_STR, &(a)->host, "HOST", "vLLM: the server's host (default 127.0.0.1), with --port" }, \
	{ "port", 0, RT_OPT_INT, &(a)->port, "PORT", "vLLM: the server's port (default 8000)" },           \
	{ "backend", 0, RT_OPT_STR, &(a)->backend, "NAME", "vLLM: vllm or openai (completions), openai-chat (chat)" }, \
	{ "endpoint-type", 0, RT_OPT_STR, &(a)->endpoint_type, "NAME", "vLLM: the older name of --backend" }, \
	{ "tokenizer", 0, RT_OPT_STR, &(a)->tokenizer, "NAME", "vLLM: taken and not used: tokens are the server's usage" }

/* Take vLLM's multi-value flags (--goodput ttft:500 tpot:50, --metadata
 * k=v ...: every value up to the next option, or --name=value) out of argv
 * into a->goodput and a->metadata; *argc is updated, argv stays NULL-ended. */
void cmd_bench_take_multi(struct cmd_bload *a, int *argc, char **argv);
/* Map vLLM's flags onto ratchet's (before bload_config): vLLM's defaults
 * when no ratchet loop flag is given, conflicts refused. RT_EUSAGE with err. */
int cmd_bench_vllm_config(struct cmd_bload *a, struct rt_sb *err);
/* With --save-result or --append-result, write the run as vLLM's result
 * file; *path gets its name (caller frees). 0 when nothing was asked. */
int cmd_bench_vllm_save(const struct cmd_bload *a, const struct run_load_result *r, char **path,
		    struct rt_sb *err);
void cmd_bench_vllm_release(struct cmd_bload *a);

#endif
