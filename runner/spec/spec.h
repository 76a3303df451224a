/*
 * The campaign spec: typed structs filled by the YAML loader (spec.c).
 *
 * Everything here is validated at load time: units are converted (durations
 * to seconds, percentages to fractions), every key is known, every template
 * placeholder is one of {port} {workdir} {nonce} {iteration}, and every
 * constraint names a benchmark and metric that exist. Consumers never see
 * raw YAML. Each struct that came from the file keeps its position
 * (struct rt_pos) so later errors can still name file:line:col.
 *
 * Ownership: spec_load() returns a struct spec the caller frees with
 * spec_free(); every pointer inside is owned by it.
 */
#ifndef RT_SPEC_H
#define RT_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/agent.h"
#include "agents/research/findings.h"
#include "runner/base/opt.h"
#include "runner/base/rt.h"
#include "variants/var_def.h"

struct spec_space;

/* ---- engine: the server the benchmarks measure ---- */

/* When a running engine is stopped and a new one started (engine.restart). */
enum spec_restart {
	SPEC_RESTART_ARM,    /* reused by consecutive samples of one arm within an iteration (default) */
	SPEC_RESTART_SAMPLE, /* a fresh engine for every sample */
	SPEC_RESTART_SWITCH, /* reused until the configuration under test changes, across iterations */
};
extern const char *const spec_restart_names[];

struct spec_engine {
	bool present;              /* false when the spec has no engine: */
	struct rt_strv command;  /* argv; placeholders allowed */
	struct rt_envv env;      /* added to the inherited environment */
	char *host;                /* default "127.0.0.1" */
	int port;                  /* 0: pick a free port per launch */
	char *ready_http;          /* readiness path, default "/health" */
	double ready_timeout_s;    /* default 300 */
	char *identity_http;       /* default "/v1/models"; NULL disables the model check */
	char *model;               /* expected model id; NULL: take the first one seen at baseline */
	bool nonce_check;          /* identity must echo {nonce} (default: true when command uses {nonce}) */
	double stop_grace_s;       /* SIGTERM -> SIGKILL grace, default 10 */
	size_t log_cap_bytes;      /* engine log cap, default 64 MiB */
	bool port_owner;           /* prove the port's owner is the engine's tree (default true; false for containers) */
	enum spec_restart restart; /* engine lifetime, default arm */
	int concurrent;            /* engines kept up at once (1 or 2: best and candidate), default 1 */
	struct rt_strv provenance; /* optional command whose output is stored with each launch (pip freeze) */
	struct rt_pos pos;
};

/* ---- benchmarks ---- */
enum spec_bench_kind {
	SPEC_BENCH_COMMAND,
	SPEC_BENCH_LOAD,
	SPEC_BENCH_KERNEL,
};

/* Which way is better for a metric. */
enum spec_better {
	SPEC_BETTER_AUTO = 0, /* not declared: `check` refuses a user metric without it */
	SPEC_BETTER_HIGHER,
	SPEC_BETTER_LOWER,
};

enum spec_extract_kind {
	SPEC_EXTRACT_POINTER, /* JSON pointer (RFC 6901) into stdout or file */
	SPEC_EXTRACT_REGEX,   /* PCRE2 regex, first capture group (or whole match) */
};

/* One metric pulled out of a command benchmark's output. */
struct spec_metric {
	char *name;                  /* metric name, unique within the benchmark */
	enum spec_extract_kind kind; /* pointer or regex */
	char *expr;                  /* the pointer or regex */
	char *file;                  /* read from this file instead of stdout; NULL: stdout */
	char *unit;                  /* free text unit, may be NULL */
	enum spec_better better;     /* direction */
	struct rt_pos pos;
};

/* Built-in output formats a command benchmark can declare instead of (or in
 * addition to) explicit metrics. The metrics each one yields:
 *  - llama-batched-bench (table or jsonl): s_pp, s_tg, s (tokens/s) and
 *    t_pp, t_tg, t (seconds) of the row format_row (default: the last row);
 *  - llama-bench (-o json, or -o jsonl): pp_tps, tg_tps (avg tokens/s of the
 *    prompt-only and generation-only tests), pp_tps_stddev, tg_tps_stddev;
 *  - vllm bench serve JSON: every key of SPEC_VLLM_RUN_KEYS below under its
 *    metric name, and {metric}_{stat} for each metric of SPEC_VLLM_METRICS
 *    and SPEC_VLLM_EXTRAS and each stat of SPEC_VLLM_STATS, ms converted
 *    to seconds (ttft_p95, itl_std, e2el_median, ...).
 *
 * Load benchmarks yield: request_throughput (req/s), output_throughput and
 * total_token_throughput (tok/s), goodput (req/s meeting every SLO),
 * completed, failed, and {ttft,tpot,itl,e2el,ttft_sched,send_lag} each with
 * _mean _median _p90 _p95 _p99 (seconds; ttft_sched is TTFT from the
 * intended send time), plus max_rate (req/s) when `rates:` asks for an SLO
 * capacity search (SPEC_LOAD_QUANTITIES and enum spec_load_metric below).
 * The name lists of every producer live in spec_metrics.c.
 *
 * Kernel benchmarks yield: time (median seconds), time_min, gbps, gflops,
 * pct_peak_bw, pct_peak_flops, rsd (fraction), samples. */
/*
 * The keys of `vllm bench serve --save-result`'s result file, following
 * vllm/benchmarks/serve.py of vLLM's main branch at commit 009e6d4a1cd6
 * (calculate_metrics, benchmark): ratchet's writer of that file
 * (runner/load/load_vllm.c) and the vllm-bench-serve format's reader
 * (runner/bench/bench_cmd_extract.c) share these lists, and the spec
 * declares the reader's metric names from them (spec_metrics.c).
 * Run-level numbers: X(key in the file, ratchet's metric name, which way is
 * better: HIGHER or LOWER, as enum spec_better's SPEC_BETTER_HIGHER).
 */
#define SPEC_VLLM_RUN_KEYS(X)                                                    \
	X("request_throughput", "request_throughput", HIGHER)                    \
	X("request_goodput", "goodput", HIGHER) /* null unless --goodput SLOs */  \
	X("output_throughput", "output_throughput", HIGHER)                      \
	X("total_token_throughput", "total_token_throughput", HIGHER)            \
	X("max_output_tokens_per_s", "max_output_tokens_per_s", HIGHER)          \
	X("max_concurrent_requests", "max_concurrent_requests", HIGHER)          \
	X("completed", "completed", HIGHER)                                      \
	X("failed", "failed", LOWER)                                             \
	X("duration", "duration", LOWER)
/* vLLM's percentile metrics (--percentile-metrics), in its order; each is
 * summarized as {mean,median,std,pP}_{metric}_ms keys. They are times, and
 * every statistic of a time is better LOWER (SPEC_VLLM_TIMES_BETTER). */
#define SPEC_VLLM_TIMES_BETTER LOWER
#define SPEC_VLLM_METRICS(X)                                              \
	X("ttft") X("tpot") X("itl") X("e2el") X("client_queue_time")     \
	X("e2el_including_client_queue")
/* ratchet's own metrics, written alongside in the same form. */
#define SPEC_VLLM_EXTRAS(X) X("ttft_sched") X("send_lag")
/* The statistics the reader takes, X(a, word of the key): std is numpy's;
 * a pP key is there when --metric-percentiles names P (vLLM's default is
 * 99 alone). */
#define SPEC_VLLM_STATS(X, a) \
	X(a, "mean") X(a, "median") X(a, "std") X(a, "p90") X(a, "p95") X(a, "p99")

enum spec_cmd_format {
	SPEC_FMT_NONE = 0,
	SPEC_FMT_JSON,                 /* explicit metrics only */
	SPEC_FMT_LLAMA_BATCHED_BENCH,  /* llama-batched-bench markdown table */
	SPEC_FMT_LLAMA_BATCHED_JSONL,  /* llama-batched-bench --output-format jsonl */
	SPEC_FMT_LLAMA_BENCH_JSON,     /* llama-bench -o json */
	SPEC_FMT_VLLM_BENCH_SERVE,     /* vllm bench serve --save-result JSON */
};

struct spec_cmd_bench {
	struct rt_strv command;     /* argv; placeholders allowed */
	struct rt_envv env;         /* extra environment */
	double timeout_s;             /* default 600 */
	enum spec_cmd_format format;  /* built-in extractor, or NONE */
	char *format_file;            /* file the built-in format reads; NULL: stdout */
	char *format_row;             /* llama-batched-bench row "PP,TG,B"; NULL: the last row */
	struct spec_metric *metrics;  /* explicit metrics */
	size_t n_metrics;
};

enum spec_load_api { SPEC_API_COMPLETIONS, SPEC_API_CHAT };

enum spec_load_pattern {
	SPEC_LOAD_CLOSED,   /* fixed concurrency, closed loop */
	SPEC_LOAD_POISSON,  /* open loop, exponential gaps */
	SPEC_LOAD_GAMMA,    /* open loop, gamma gaps with burstiness */
	SPEC_LOAD_CONSTANT, /* open loop, equal gaps */
	SPEC_LOAD_PREFILL,  /* N prompts released together, max_tokens 1 */
};

/* A per-request SLO, e.g. ttft <= 4s; used for goodput and capacity search.
 * metric is a name spec_slo_parse() accepts. */
struct spec_slo {
	char *metric;   /* ttft_p95, tpot_p99, e2el_p90, ttft (every request), ... */
	double limit;   /* seconds */
};

/*
 * The load generator's metrics and the SLO grammar, in one place
 * (spec_metrics.c): the spec loader, `ratchet bench load --slo` and the load
 * generator all use these tables, so they accept and yield the same names.
 *
 * A load benchmark measures the per-request quantities below (seconds) and
 * summarizes each with the statistics below. Its metrics, in this order, are
 * the run metrics, QUANTITY_STAT for every quantity and statistic, and
 * max_rate when `rates:` asks for a capacity search. An SLO bounds one
 * quantity marked slo: a statistic over the run (ttft_p95: 4s) or, bare,
 * every request (ttft: 4s).
 */
/* X(ENUM, name, slo, better): every statistic of a quantity is better that way. */
#define SPEC_LOAD_QUANTITIES(X)                                                               \
	X(TTFT, "ttft", true, LOWER)             /* first content chunk - actual send */     \
	X(TPOT, "tpot", true, LOWER)             /* (e2el - ttft) / (output tokens - 1) */    \
	X(ITL, "itl", true, LOWER)               /* gaps between content chunks */           \
	X(E2EL, "e2el", true, LOWER)             /* last byte - actual send */               \
	X(TTFT_SCHED, "ttft_sched", true, LOWER) /* first content chunk - intended send */   \
	X(SEND_LAG, "send_lag", false, LOWER)    /* actual send - intended send */
/* X(ENUM, name, quantile) for each statistic, with a passed through. */
#define SPEC_LOAD_STATS(X, a)                                                          \
	X(a, MEAN, "mean", NAN) X(a, MEDIAN, "median", 0.5) X(a, P90, "p90", 0.90)    \
	X(a, P95, "p95", 0.95) X(a, P99, "p99", 0.99)
/* X(ENUM, name, unit, better) */
#define SPEC_LOAD_RUN_METRICS(X)                                               \
	X(REQUEST_THROUGHPUT, "request_throughput", "req/s", HIGHER)           \
	X(OUTPUT_THROUGHPUT, "output_throughput", "tok/s", HIGHER)             \
	X(TOTAL_TOKEN_THROUGHPUT, "total_token_throughput", "tok/s", HIGHER)   \
	X(GOODPUT, "goodput", "req/s", HIGHER) /* requests meeting every SLO */ \
	X(COMPLETED, "completed", "requests", HIGHER)                          \
	X(FAILED, "failed", "requests", LOWER)

enum spec_load_q {
#define SPEC_X(e, name, slo, better) SPEC_LQ_##e,
	SPEC_LOAD_QUANTITIES(SPEC_X)
#undef SPEC_X
	SPEC_LQ_N
};

enum spec_load_stat {
#define SPEC_X(a, e, name, q) SPEC_LS_##e,
	SPEC_LOAD_STATS(SPEC_X, _)
#undef SPEC_X
	SPEC_LS_N,
	SPEC_LS_EACH = SPEC_LS_N, /* an SLO without a statistic: every request */
};

/* Index of each load metric in run_load_metrics()' output. */
enum spec_load_metric {
#define SPEC_X(e, name, unit, better) SPEC_LM_##e,
	SPEC_LOAD_RUN_METRICS(SPEC_X)
#undef SPEC_X
	SPEC_LM_DIST, /* first of the SPEC_LQ_N * SPEC_LS_N QUANTITY_STAT metrics */
	SPEC_LM_MAX_RATE = SPEC_LM_DIST + SPEC_LQ_N * SPEC_LS_N, /* capacity search only */
	SPEC_LM_N
};

/* "ttft", "send_lag", ... */
const char *spec_load_q_name(enum spec_load_q q);
/* The quantity called name, or -1. */
int spec_load_q_find(const char *name);
/* The quantile a statistic takes (0.95 for p95), NAN for the mean. */
double spec_load_stat_quantile(enum spec_load_stat s);
/* Name and unit of load metric m (static strings); m < SPEC_LM_N. */
const char *spec_load_metric_name(size_t m);
const char *spec_load_metric_unit(size_t m);
/* Index of QUANTITY_STAT. */
size_t spec_load_metric_of(enum spec_load_q q, enum spec_load_stat s);
/* Split an SLO metric name into its quantity and statistic (SPEC_LS_EACH when
 * bare). Returns 0, or RT_EINVAL with why (if non-NULL) given one line:
 * "unknown SLO metric 'x' (...): SLO metrics are ...". */
int spec_slo_parse(const char *name, enum spec_load_q *q, enum spec_load_stat *s,
		   struct rt_sb *why);

struct spec_load {
	enum spec_load_api api;        /* completions (default) or chat */
	char *endpoint;                /* base URL; NULL: the engine's http://host:{port} */
	char *model;                   /* model name sent; NULL: engine model or "default" */
	enum spec_load_pattern pattern;/* default: closed if concurrency given, poisson if rate */
	int concurrency;               /* closed loop / prefill width; also open-loop max in flight (0 = unlimited) */
	double rate;                   /* requests per second for open loop */
	double burstiness;             /* gamma shape, default 1 (= poisson) */
	int requests;                  /* number of measured requests (0: use duration) */
	double duration_s;             /* measured duration (0: use requests) */
	int warmup;                    /* warm-up requests, excluded, default 0 */
	int prompt_tokens;             /* random dataset prompt length */
	int output_tokens;             /* max_tokens per request */
	char *dataset;                 /* JSONL prompts (ShareGPT or {"prompt","max_tokens"}); NULL: random */
	double *rates;                 /* capacity search: bracket of rates [lo, hi] (or list) */
	size_t n_rates;
	uint64_t *seeds;               /* seeds per rate; default {1} */
	size_t n_seeds;
	struct spec_slo *slo;          /* SLOs (capacity search bound and goodput) */
	size_t n_slo;
	double request_timeout_s;      /* per request, default 600 */
	bool ignore_eos;               /* send ignore_eos: true (vLLM extension) */
};

enum spec_dtype {
	SPEC_DT_F32, SPEC_DT_F16, SPEC_DT_BF16, SPEC_DT_F64,
	SPEC_DT_I32, SPEC_DT_I64, SPEC_DT_U8,
};

enum spec_karg_kind { SPEC_KARG_BUFFER, SPEC_KARG_SCALAR };
enum spec_karg_init { SPEC_INIT_RANDOM, SPEC_INIT_ZERO, SPEC_INIT_VALUE, SPEC_INIT_FILE };

/* One kernel argument, in launch order. */
struct spec_karg {
	char *name;                 /* for messages and reference checks */
	enum spec_karg_kind kind;   /* buffer or scalar */
	enum spec_dtype dtype;      /* element type (buffer) or scalar type */
	uint64_t count;             /* buffer: number of elements */
	bool output;                /* buffer is written by the kernel: poisoned and checked */
	enum spec_karg_init init;   /* buffer initial contents (inputs) */
	double value;               /* SPEC_INIT_VALUE fill, or the scalar value */
	char *init_file;            /* SPEC_INIT_FILE */
	char *reference_file;       /* expected output bytes for this output buffer, or NULL */
};

struct spec_kernel {
	char *backend;              /* host, cuda, hip, ze */
	int device;                 /* device index, default 0 */
	char *module;               /* .so / .cubin / .ptx / .fatbin / code object / .spv; placeholders allowed */
	char *name;                 /* kernel (function) name */
	struct spec_karg *args;
	size_t n_args;
	unsigned grid[3];           /* 0 means: derive from items / block */
	unsigned block[3];          /* default {256,1,1} for GPU backends */
	uint64_t items[3];          /* grid = ceil(items / block) when grid is 0 */
	unsigned shared_bytes;
	char *launch_table;         /* optional JSON file whose entry gives grid/block/shared */
	char *launch_key;           /* key of that entry */
	double bytes;               /* declared bytes moved per launch */
	double flops;               /* declared FLOPs per launch */
	char *ref_module;           /* reference kernel module (NULL: same module) */
	char *ref_name;             /* reference kernel name, or NULL */
	double max_rel_l2;          /* correctness threshold, default 1e-5 */
	int warmup;                 /* default 3 */
	double target_rsd;          /* stop when rel. std dev of samples < this (fraction), default 0.005 */
	double max_time_s;          /* time budget per measurement, default 5 */
	int min_samples;            /* default 10 */
	int rotate;                 /* rotate among this many input copies (0/1 = off) */
	bool flush_l2;              /* flush L2 between launches */
};

struct spec_bench {
	char *name;                 /* unique; used as "name.metric" */
	enum spec_bench_kind kind;
	struct spec_cmd_bench cmd;  /* kind == COMMAND */
	struct spec_load load;      /* kind == LOAD */
	struct spec_kernel kernel;  /* kind == KERNEL */
	struct rt_pos pos;
	const char **metric_names;  /* what spec_bench_metrics() returns; strings not owned here */
	enum spec_better *metric_better; /* which way each of metric_names is better (owned) */
	size_t n_metric_names;      /* entries in metric_names */
};

/* ---- objective, constraints, repeats ---- */
enum spec_goal { SPEC_GOAL_MAX, SPEC_GOAL_MIN };

struct spec_objective {
	char *bench;                /* benchmark name */
	char *metric;               /* metric name within it */
	enum spec_goal goal;
	double min_gain;            /* fraction, e.g. 0.02 for "2%" */
	struct rt_pos pos;
};

enum spec_op { SPEC_OP_LE, SPEC_OP_LT, SPEC_OP_GE, SPEC_OP_GT };

struct spec_constraint {
	char *text;                 /* as written, for messages */
	char *bench;
	char *metric;
	enum spec_op op;
	double value;               /* in base units (seconds for durations) */
	bool unitless;              /* the value was written without a unit (a bare number) */
	struct rt_pos pos;
};

struct spec_repeats {
	int min;                    /* default 3 */
	int max;                    /* default 10 */
	double confidence;          /* default 0.95 */
	int warmup;                 /* warm-up runs per arm, default 0 */
	bool interleave;            /* A/B interleaved (default true when no engine or restart is cheap) */
};

/* ---- the GSM8K gate ---- */
enum spec_gsm8k_format { SPEC_GSM8K, SPEC_GSM8K_COT, SPEC_GSM8K_CHAT };
enum spec_extract_mode { SPEC_EXTRACT_FLEXIBLE, SPEC_EXTRACT_STRICT };

struct spec_gate {
	bool present;
	double min_accuracy;        /* default 0 (no absolute bound) */
	bool use_wilson_lower;      /* compare the Wilson lower bound, not the point estimate */
	double max_drop;            /* vs baseline, fraction; default 0.01 */
	double alpha;               /* significance for the paired drop test, default 0.05 */
	double min_identical;       /* identical-answer rate bound, 0 = off */
	double max_failed;          /* fraction of failed requests that makes the run an error, default 0.02 */
	enum spec_gsm8k_format format;
	enum spec_extract_mode extract;
	enum spec_load_api api;
	int concurrency;            /* default 32 */
	int limit;                  /* 0 = all 1319 */
	int offset;
	uint64_t seed;              /* subset seed (0 = first `limit` questions from offset) */
	int num_fewshot;            /* gsm8k format, default 5 */
	int max_tokens;             /* default 256 */
	char *dataset;              /* path, or NULL for the usual search */
	char *endpoint;             /* NULL: the engine */
	char *model;
	double request_timeout_s;   /* default 300 */
	struct rt_pos pos;
};

/* A log-event counter: regex over the engine log, stored per iteration as
 * metric "log.<name>". */
struct spec_log_event {
	char *name;
	char *regex;
	bool timed;          /* the regex has a named group seconds, s, ms or us: log.<name>.seconds */
	struct rt_pos pos;
};

/* profile.when: when the runner profiles the best configuration itself. */
#define SPEC_PROFILE_WHEN(X)                                                  \
	X(SPEC_PROFILE_NEVER, "never")       /* no command: profiles are imported by hand */ \
	X(SPEC_PROFILE_BASELINE, "baseline") /* once, after the baseline */          \
	X(SPEC_PROFILE_KEEP, "keep")         /* after each keep (a new best) */       \
	X(SPEC_PROFILE_EVERY, "every")       /* after every profile.every changes */
enum spec_profile_when {
#define W(e, name) e,
	SPEC_PROFILE_WHEN(W)
#undef W
};
extern const char *const spec_profile_when_names[];

/* profile: how imported profiles are read (spec_profile.c); NULL: the default. */
struct spec_profile {
	bool present;                  /* the spec has a profile: section */
	struct rt_strv command;        /* run on the best configuration; writes into $RATCHET_PROFILE_DIR */
	enum spec_profile_when when;   /* when the runner runs it (command given: default baseline) */
	int every;                     /* when: every, the changes between profiles */
	double timeout_s;              /* the command's limit, seconds */
	struct rt_strv engine_flags;   /* flags added to the engine while it is profiled */
	struct rt_envv engine_env;     /* environment added to it then */
	char *format;                  /* a profile format (research_formats), NULL: detect */
	char **key_match;              /* keys: regexes with named groups over a kernel's subject */
	char **key_tmpl;               /* keys: the table key each gives, "{M},{N},{K}" */
	size_t n_keys;
	char *op[RESEARCH_N_OPS];      /* regex per op over kernel names */
	char *step;                    /* annotations that mark a step */
	char *shape;                   /* first group: the shape in a kernel name */
	char *fallback;                /* names of default (untuned) kernels */
};

/* ---- where measurements run (spec_exec.c) ---- */
enum spec_exec_kind { SPEC_EXEC_LOCAL, SPEC_EXEC_SLURM };
extern const char *const spec_exec_kind_names[];

/* executor.slurm: the holding job's sbatch options and the steps' srun options. */
struct spec_slurm {
	char *partition;            /* --partition, or NULL: the cluster's default */
	char *account;              /* --account, or NULL */
	char *gres;                 /* --gres, e.g. "gpu:1", or NULL */
	double time_s;              /* --time of the holding job (seconds); 0: the partition's limit */
	struct rt_strv sbatch;      /* extra sbatch options, passed as they are */
	struct rt_strv srun;        /* extra srun options for every step */
};

struct spec_exec {
	enum spec_exec_kind kind;   /* local (default) or slurm */
	struct spec_slurm slurm;    /* kind slurm only */
};

/* Release what an executor: section allocated. */
void spec_exec_release(struct spec_exec *x);
/* Release what an llm: section allocated (spec_llm.c). */
void spec_llm_release(struct agent_llm_cfg *l);

/* telemetry: (spec_telemetry.c). */
struct spec_telemetry {
	bool enabled;               /* sample during benchmarks, default true */
	double period_s;            /* time between readings, default 0.1 */
	char *device;               /* as written (BACKEND[:INDEX] or none), NULL: chosen at run time */
	char *backend;              /* its backend (host, cuda, hip, ze, none), NULL when not written */
	int index;                  /* its index, -1 when not written */
};

/* ---- the local device pool (spec_devices.c) ---- */
enum spec_device_kind { SPEC_DEV_CUDA, SPEC_DEV_HIP, SPEC_DEV_ZE, SPEC_DEV_HOST };
extern const char *const spec_device_kind_names[];

/* One device of the pool: KIND:INDEX. */
struct spec_device {
	enum spec_device_kind kind; /* cuda, hip, ze or host */
	int index;                  /* the runtime's device index */
};

/* "cuda:1" into *d; RT_EINVAL with one line in err otherwise. */
int spec_device_parse(const char *text, struct spec_device *d, struct rt_sb *err);
/* "cuda:1" */
void spec_device_name(const struct spec_device *d, char *buf, size_t n);
/* "cuda:0,cuda:1" (--devices): one kind, each device once; *out is the
 * caller's (free). RT_EINVAL with one line in err otherwise. */
int spec_devices_parse_list(const char *text, struct spec_device **out, size_t *n, struct rt_sb *err);

struct spec {
	char *warnings;             /* "file:line:col: key: warning: ..." lines, each ending in a newline,
				     * for `check` and `run` to print (owned); NULL when none */
	char *path;                 /* file it was loaded from */
	char *text;                 /* the file's bytes */
	char sha256[65];            /* of text */
	char *name;
	char *workdir;              /* absolute; default: the spec's folder */
	uint64_t seed;              /* default 1 */
	struct spec_engine engine;
	struct spec_bench *benches;
	size_t n_benches;
	struct spec_objective objective;
	struct spec_constraint *constraints;
	size_t n_constraints;
	struct spec_repeats repeats;
	struct spec_gate gate;
	struct spec_log_event *log_events;
	size_t n_log_events;
	struct var_def *variants;
	size_t n_variants;
	enum agent_strategy strategy;
	int max_iterations;         /* 0: no cap */
	struct spec_profile profile; /* how its profiles are read */
	struct spec_space *space;   /* space: (runner/spec/spec_space.h), NULL when none */
	struct spec_exec exec;      /* executor: where the measurements' processes run */
	struct agent_llm_cfg llm;   /* llm: strategy llm's endpoint, budget and what it may touch */
	struct spec_telemetry telemetry; /* the sampler during benchmarks */
	struct spec_device *devices; /* devices: the local pool, NULL when none */
	size_t n_devices;           /* entries in devices (0: no pool) */
};

/*
 * Load and validate a spec. On error returns RT_EUSAGE (bad spec) or RT_EIO
 * and appends to err one message per line, each
 * "file:line:col: key.path: what is wrong" (at most 20 messages, then one
 * line "file: N more errors not shown").
 */
int spec_load(const char *path, struct spec **out, struct rt_sb *err);
/* Same, from memory; name is used in messages. */
int spec_load_text(const char *name, const char *text, size_t len, struct spec **out,
		   struct rt_sb *err);
void spec_free(struct spec *s);
/* The op map a spec's profile: section asks for (s NULL: the defaults);
 * out borrows s's strings. */
void spec_profile_def(const struct spec *s, struct research_opmap_def *out);
/* The files its table variants edit and its space binds, once each, as the
 * research side checks profiles against them, each with the entries the
 * space searches: *tables (one allocation, borrowing s) and their absolute
 * *paths (owned, each freed by the caller); returns how many. */
size_t spec_research_tables(const struct spec *s, struct research_table **tables, char ***paths);

/* Print the normalized spec (YAML, units in base form, defaults filled in). */
void spec_dump(const struct spec *s, struct rt_sb *out);
/* The normalized spec as JSON (same keys and values as spec_dump); caller
 * owns the reference. */
json_t *spec_to_json(const struct spec *s);
/* An environment as the spec writes it: {NAME: value, or null to unset}. */
json_t *spec_envv_json(const struct rt_envv *e);
/* What strategy llm's answers may touch (agents/agent.h, the containment
 * model): llm.kinds, files, flags and env, each defaulting to what the
 * spec's variants and space use, and the options that carry a program in a
 * measured command. RT_ENOENT when the workdir cannot be resolved. Release
 * with agent_llm_allow_release. */
int spec_llm_allow(const struct spec *s, struct agent_llm_allow *a, struct rt_sb *err);
/* Read one answer of the chat model: its envelope (agent_llm_answer), its
 * variant through the spec's own parser (spec_variant_from_json), then the
 * containment model (agent_llm_allowed), and no secret in it. 0 with
 * *variant (a new reference), *d (spec_variant_release) and *rationale
 * (new); RT_EPARSE when it is no valid answer, RT_EINVAL when it is not
 * allowed, why saying which. *variant and *rationale may be set on error
 * too (the caller frees them). */
int spec_llm_read(const struct spec *s, const struct agent_llm_allow *a, const char *text, json_t **variant,
		  struct var_def *d, char **rationale, struct rt_sb *why);

/* Whether a log event's regex carries a duration (a named group seconds,
 * s, ms or us): its lines' durations are stored as log.<name>.seconds. */
bool spec_event_timed(const char *re);

/* Values for template placeholders. */
struct spec_vars {
	int port;
	const char *workdir;
	const char *nonce;
	long iteration;
};
/* Expand {port} {workdir} {nonce} {iteration} in s; returns a new string. */
char *spec_expand(const char *s, const struct spec_vars *vars);

/* Where the key path (as the loader's messages write it: "engine.command[0]",
 * "variants[2].patch.file") is written in s's text (spec_pos.c). 0, or
 * RT_ENOENT with *out at the deepest part of the path that is written. */
int spec_pos_of(const struct spec *s, const char *path, struct rt_pos *out);

/* Find a benchmark by name, or NULL. */
const struct spec_bench *spec_bench_find(const struct spec *s, const char *name);
/* Metric names a benchmark produces (explicit metrics, a built-in format's
 * metrics, the load generator's or the kernel benchmark's). */
size_t spec_bench_metrics(const struct spec_bench *b, const char ***names);
/* The engine's own cost, stored per sample under benchmark "engine" and
 * usable in constraints (engine.ready_s <= 60s): name, unit. */
#define SPEC_ENGINE_METRICS(X)                                   \
	X(SPEC_EM_READY_S, "ready_s", "s", LOWER)       /* start to ready */ \
	X(SPEC_EM_RSS_PEAK, "rss_peak", "bytes", LOWER) /* the tree's peak RSS during the sample */ \
	X(SPEC_EM_DEVICE_MEM, "device_mem", "bytes", LOWER) /* device memory of the tree's processes */
enum spec_engine_metric {
#define EM(e, name, unit, better) e,
	SPEC_ENGINE_METRICS(EM)
#undef EM
	SPEC_EM_N
};
/* Name and unit of an engine metric. */
const char *spec_engine_metric_name(enum spec_engine_metric m);
const char *spec_engine_metric_unit(enum spec_engine_metric m);
/* Its index, or -1 when there is no such engine metric. */
int spec_engine_metric_find(const char *name);

/* The sampler's medians per sample, stored under benchmark "telemetry" and
 * usable in constraints (telemetry.temp_c <= 85): name, unit. */
#define SPEC_TELEMETRY_METRICS(X)                                                        \
	X(SPEC_TM_SM_CLOCK, "sm_clock_mhz", "MHz", HIGHER)      /* core (SM) clock held */          \
	X(SPEC_TM_MEM_CLOCK, "mem_clock_mhz", "MHz", HIGHER)    /* memory clock */                  \
	X(SPEC_TM_POWER, "power_w", "W", LOWER)                 /* board power */                   \
	X(SPEC_TM_TEMP, "temp_c", "C", LOWER)                   /* device temperature */            \
	X(SPEC_TM_MEM_USED, "mem_used_bytes", "bytes", LOWER)   /* device memory in use */          \
	X(SPEC_TM_CPU, "cpu_mhz", "MHz", HIGHER)                /* mean host CPU frequency */       \
	X(SPEC_TM_RSS, "engine_rss_bytes", "bytes", LOWER)      /* the engine tree's RSS */         \
	X(SPEC_TM_THROTTLED_FRAC, "throttled_frac", "fraction", LOWER) /* ticks throttled by power or heat */ \
	X(SPEC_TM_THROTTLED, "throttled", "flag", LOWER)        /* 1: some tick was throttled by power or heat */ \
	X(SPEC_TM_THROTTLE_MASK, "throttle_mask", "bits", LOWER) /* DEV_THR_* bits seen (runner/device/dev.h) */
enum spec_telemetry_metric {
#define TM(e, name, unit, better) e,
	SPEC_TELEMETRY_METRICS(TM)
#undef TM
	SPEC_TM_N
};
const char *spec_telemetry_metric_name(enum spec_telemetry_metric m);
const char *spec_telemetry_metric_unit(enum spec_telemetry_metric m);
/* Its index, or -1 when there is no such telemetry metric. */
int spec_telemetry_metric_find(const char *name);
enum spec_better spec_telemetry_metric_better(enum spec_telemetry_metric m);

/* Which way is better for bench.metric: the metric tables' column for a
 * built-in metric (spec.h's X-macros, spec_metrics.c), the spec's `better:`
 * for a user metric; SPEC_BETTER_AUTO for a metric the spec does not have. */
enum spec_better spec_metric_better(const struct spec *s, const char *bench, const char *metric);

/* ---- a section of the spec on the command line (spec_cli.c) ----
 * `ratchet gate` takes gate.gsm8k's settings and `ratchet bench load` a
 * load benchmark's as options generated from the field tables the loader
 * reads, as redis serves its config file and CONFIG SET from one table:
 * each row offered (FL_CLI) is --KEY ('-' for '_') with the row's alias,
 * placeholder and help, its enum words and default appended. A value is read
 * by the loader's own parser for the row's type (bounds, words, units), and
 * the section's rules between keys are the loader's; an error names the
 * option ("--max-drop: '2' is above the maximum 1"). */
enum spec_section {
	SPEC_SECTION_GATE, /* gate.gsm8k: struct spec_gate */
	SPEC_SECTION_LOAD, /* a load benchmark: struct spec_load */
};

struct spec_cli {
	enum spec_section sec; /* which table */
	size_t n;              /* rows offered, the first n of opts */
	const char **vals;     /* the text given for row i, or NULL (points into argv or set) */
	bool *given;           /* boolean rows: the flag was given */
	char **multi;          /* FL_CLI_MULTI rows: every value, comma-joined (owned), or NULL */
	char **set;            /* texts set by spec_cli_set, per row (owned), or NULL */
	struct rt_opt *opts;   /* the rows, then the command's own, then the end (owned; its
				* names and help lines are made once and kept for the process) */
};

/* The options of sec followed by own (ended by { 0 }); argv is scanned for
 * the repeatable rows' values (before cmd_parse reorders it). Release with
 * spec_cli_release. */
void spec_cli_init(struct spec_cli *c, enum spec_section sec, const struct rt_opt *own, int argc,
		   char **argv);
/* The text given for the row named key ("true" for a flag), or NULL. */
const char *spec_cli_get(const struct spec_cli *c, const char *key);
/* Give key the value text (copied), as if typed: vLLM's twins of ratchet's
 * options are set this way. */
void spec_cli_set(struct spec_cli *c, const char *key, const char *text);
/* The defaults of gate.gsm8k, then the values given, then its rules, into
 * g (spec_gate_release frees its strings); RT_EUSAGE with err. */
int spec_cli_gate(const struct spec_cli *c, struct spec_gate *g, struct rt_sb *err);
/* The same for a load benchmark into l (spec_load_release). */
int spec_cli_load(const struct spec_cli *c, struct spec_load *l, struct rt_sb *err);
void spec_cli_release(struct spec_cli *c);
/* gate.gsm8k's defaults, from its table (spec_gate.c). */
void spec_gate_defaults(struct spec_gate *g);
/* Free what a section's struct owns (its strings and lists). */
void spec_gate_release(struct spec_gate *g);
void spec_load_release(struct spec_load *l);


#endif
