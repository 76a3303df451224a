/*
 * ratchet's load generator for OpenAI-compatible servers (/v1/completions and
 * /v1/chat/completions, streamed SSE with stream_options.include_usage).
 *
 * One thread drives runner/oai's client (libcurl's multi interface; the SSE
 * parser is there too). Open-loop sends are scheduled at absolute
 * CLOCK_MONOTONIC times precomputed from the seed and woken by a timerfd, so
 * send lag stays far below a millisecond; every timestamp is taken in the
 * data callback. Metrics follow vLLM's `bench serve` definitions:
 *   ttft   first content chunk - actual send
 *   tpot   (e2el - ttft) / (output_tokens - 1), requests with > 1 output token
 *   itl    gaps between successive content chunks (all of them pooled)
 *   e2el   last byte - actual send
 *   ttft_sched  first content chunk - INTENDED send (no coordinated omission)
 *   send_lag    actual send - intended send
 * Percentiles interpolate linearly between order statistics (numpy's default,
 * run_stats_quantile_sorted): p of sorted x[0..n-1] is
 * x[h] + (h - floor h)(x[h+1] - x[h]), h = (n-1) p.
 *
 * Ownership: run_load_run() fills a struct run_load_result the caller frees
 * with run_load_result_release(); run_load_capacity() likewise with
 * run_load_capacity_release().
 */
#ifndef RT_LOAD_H
#define RT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "runner/spec/spec.h"
#include "runner/base/rt.h"

/* One request, as measured. Times are ns relative to the run's start (t0). */
struct run_load_req {
	int seq;                /* 0.. for measured requests, negative for warm-up */
	bool warmup;            /* excluded from metrics */
	int64_t intended_ns;    /* scheduled send time (closed loop: when a slot freed) */
	int64_t sent_ns;        /* actual send (curl about to write the request) */
	int64_t first_ns;       /* first content chunk arrived; 0 if none */
	int64_t done_ns;        /* last byte or failure */
	double ttft_s;          /* first content chunk - sent; NAN if none */
	double e2el_s;          /* done - sent */
	double itl_mean_s;      /* mean gap between content chunks; NAN if < 2 chunks */
	double itl_max_s;       /* largest gap; NAN if < 2 chunks */
	size_t itl_off;         /* this request's gaps in run_load_result.itl */
	int n_chunks;           /* content chunks received */
	int prompt_tokens;      /* from usage; -1 unknown */
	int output_tokens;      /* from usage, else the number of content chunks */
	bool usage_missing;     /* the server sent no usage: output_tokens counted from chunks */
	bool ok;                /* HTTP 200, well-formed stream, [DONE] seen */
	long status;            /* HTTP status, 0 if none */
	char *error;            /* why it failed (owned), or NULL */
	int64_t server_recv_ns; /* X-Server-Recv-Ns header (server CLOCK_MONOTONIC), 0 if absent */
	int64_t server_first_ns;/* "server_ns" of the first content chunk, 0 if absent */
};

/* A finished run. */
struct run_load_result {
	struct run_load_req *reqs; /* warm-up requests first, then measured ones, by seq */
	size_t n_reqs;
	double *itl;            /* every inter-chunk gap (s), grouped by request */
	size_t n_itl;
	size_t itl_alloc;       /* allocated entries of itl */
	int64_t t0_abs_ns;      /* CLOCK_MONOTONIC of the run's start (first intended send) */
	double duration_s;      /* t0 .. last measured completion */
	double offered_rate;    /* req/s asked for (0 for closed loop) */
	int completed;          /* measured requests that succeeded */
	int failed;             /* measured requests that failed */
	long long prompt_tokens_total;  /* over completed requests */
	long long output_tokens_total;  /* over completed requests */
	double words_per_token; /* random dataset calibration (words sent per prompt token), 0 if none */
	bool deadline_hit;      /* the run-level deadline stopped it */
	int resent;             /* measured requests sent a second time: libcurl gave up on
				 * dropped kept-alive connections before any byte (runner/oai) */
	struct spec_slo *slo;   /* per-request SLOs for goodput (owned copy) */
	size_t n_slo;
};

void run_load_result_release(struct run_load_result *r);

struct db;
/* Store every record of r in the requests table (load_store.c). iteration_id
 * 0 stores NULL (ratchet bench load); arm and label may be NULL. Returns the
 * number of rows stored, or a negative RT_E* with err filled. */
int load_store_requests(struct db *db, int64_t iteration_id, const char *bench, const char *arm,
			int rep, const char *label, const struct run_load_result *r,
			struct rt_sb *err);

/* Extra knobs not in the spec (tests and the bench program use them). */
struct run_load_opts {
	double deadline_s;      /* run-level deadline; 0: derived (duration + timeout + 60 s) */
	bool no_calibrate;      /* skip the random-dataset probe (words = tokens) */
	int max_connections;    /* curl connection cache; 0: concurrency or 1024 */
	const char *api_key;    /* sent as Authorization: Bearer, never stored; NULL: none.
				 * The caller resolves it (library code reads no environment). */
	int default_max_tokens; /* max_tokens of dataset records without one (and of random
				 * prompts) when cfg->output_tokens is 0; 0: 128 */
	size_t resp_total_cap;  /* bytes all streams' parsers may hold together (a stream
				 * that passes it fails, saying so); 0: 1 GiB */
};

/*
 * Run one load benchmark against base_url (e.g. "http://127.0.0.1:8000").
 * model may be NULL ("default"). Returns 0 when the run finished (requests may
 * have failed: see out->failed) or a negative RT_E* when it could not run at
 * all (bad config, dataset unreadable, calibration probe failed).
 */
int run_load_run(const struct spec_load *cfg, const char *base_url, const char *model,
		 uint64_t seed, const struct run_load_opts *opts, struct run_load_result *out,
		 struct rt_sb *err);

/* ---- metrics (load_stats.c) ---- */

/* Summary of one distribution. */
struct run_load_dist {
	double mean, median, p90, p95, p99, max; /* seconds; NAN when n == 0 */
	size_t n;                               /* samples */
};
/* which: "ttft", "tpot", "itl", "e2el", "ttft_sched", "send_lag". RT_EINVAL otherwise. */
int run_load_dist(const struct run_load_result *r, const char *which, struct run_load_dist *out);
/* The samples run_load_dist summarizes (unsorted): one per measured request
 * that has the quantity (itl: every gap), *n of them; NULL for an unknown
 * name. Caller frees. */
double *run_load_values(const struct run_load_result *r, const char *which, size_t *n);
/* Achieved mean prompt and output tokens per completed request (usage), NAN
 * when none completed. */
double run_load_mean_input(const struct run_load_result *r);
double run_load_mean_output(const struct run_load_result *r);

struct run_load_capacity;
/*
 * The metric names, values and units of a run (names and units are static
 * strings), in the order of enum spec_load_metric (spec.h):
 * request_throughput, output_throughput, total_token_throughput, goodput,
 * completed, failed, {ttft,tpot,itl,e2el,ttft_sched,send_lag}_
 * {mean,median,p90,p95,p99}, and max_rate when cap is non-NULL. A value is
 * NAN when it has no samples (e.g. tpot when every output is one token);
 * callers that store metrics skip NANs. Returns the count (at most max).
 */
size_t run_load_metrics(const struct run_load_result *r, const struct run_load_capacity *cap,
			const char **names, double *values, const char **units, size_t max);
#define RUN_LOAD_MAX_METRICS SPEC_LM_N

/* Value of one SLO metric of a run: a name spec_slo_parse() accepts
 * ("ttft_p95", "tpot_mean", bare "e2el" = the largest); RT_EINVAL otherwise.
 * Failed requests count as infinitely slow (itl excepted: they have no gaps). */
int run_load_slo_value(const struct run_load_result *r, const char *metric, double *out);
/* Does the run meet every SLO? */
bool run_load_slo_ok(const struct run_load_result *r, const struct spec_slo *slo, size_t n);

/* ---- SLO capacity search (load_capacity.c) ---- */

/* One rate tried. */
struct run_load_cap_point {
	double rate;            /* offered req/s */
	int n_seeds;            /* runs at this rate */
	int n_pass;             /* runs meeting every SLO and not saturated */
	double achieved;        /* mean achieved request throughput (req/s) */
	bool saturated;         /* achieved fell below 90% of offered in some run */
	struct run_load_result *runs; /* one per seed (owned) */
};

struct run_load_capacity {
	double max_rate;        /* highest passing rate, 0 when even the lowest fails */
	double next_rate;       /* the lowest failing rate above it, 0 if none */
	double conf_bound;      /* fraction of seeds passing at max_rate */
	double conf_next;       /* fraction of seeds passing at next_rate */
	double saturation_rate; /* lowest rate found saturated, 0 if none */
	bool bracketed;         /* a failing rate was found above max_rate */
	double tolerance;       /* relative width the bisection stopped at */
	struct run_load_cap_point *points; /* in the order tried */
	size_t n_points;
	size_t bound_point;     /* index of max_rate's point (valid when max_rate > 0) */
};

/*
 * Highest offered rate (open loop, cfg->pattern or poisson) at which every
 * SLO in cfg->slo holds for every seed in cfg->seeds: bracket from
 * cfg->rates[0..1] (widening by 2x up to twice each way), then bisect to a
 * relative tolerance of 5% (at most 8 steps). Each run uses cfg's duration or
 * requests. progress (may be NULL) is called after each run.
 */
int run_load_capacity(const struct spec_load *cfg, const char *base_url, const char *model,
		      const struct run_load_opts *opts,
		      void (*progress)(void *arg, double rate, uint64_t seed,
				       const struct run_load_result *r, bool pass),
		      void *progress_arg, struct run_load_capacity *out, struct rt_sb *err);
void run_load_capacity_release(struct run_load_capacity *c);
/* The run of a finished search at offered `rate` (req/s), where two arms
 * compare latencies and throughputs: *at is the search's own run when it
 * tried that rate (first seed), else a new run at it (the search's pattern
 * and first seed) filled into own, which the caller releases with
 * run_load_result_release (own is zeroed when unused). */
int run_load_capacity_at(const struct spec_load *cfg, const char *base_url, const char *model,
			 const struct run_load_opts *opts, const struct run_load_capacity *cap,
			 double rate, const struct run_load_result **at, struct run_load_result *own,
			 struct rt_sb *err);

/* ---- vLLM's `bench serve` result file (load_vllm.c) ---- */

/*
 * What `vllm bench serve --save-result` writes besides the measurements,
 * following vllm/benchmarks/serve.py of vLLM's main branch at commit
 * 009e6d4a1cd6 (main_async, benchmark, compute_result_filename).
 */
struct run_load_vllm_run {
	const char *date;              /* "%Y%m%d-%H%M%S", local time at the end of the run */
	const char *backend;           /* "openai" (completions) or "openai-chat" */
	const char *label;             /* --label, NULL: null (the file name then uses backend) */
	const char *model_id;          /* the model name sent */
	long num_prompts;              /* measured requests asked for */
	double request_rate;           /* req/s; INFINITY is written "inf" */
	double burstiness;             /* gamma shape */
	long max_concurrency;          /* 0: null (no cap) */
	const char *const *metadata;   /* "KEY=VALUE" items, each a top-level key */
	size_t n_metadata;             /* entries of metadata */
	const char *percentile_metrics;/* comma-separated of ttft tpot itl e2el client_queue_time
					* e2el_including_client_queue; NULL: "ttft,tpot,itl" */
	const double *percentiles;     /* --metric-percentiles; NULL: {99} */
	size_t n_percentiles;          /* entries of percentiles */
	bool goodput;                  /* SLOs were given: request_goodput is a number, else null */
	bool detailed;                 /* --save-detailed: the per-request lists too */
};

/* Check a --percentile-metrics list; RT_EUSAGE with err naming the bad one. */
int run_load_vllm_check_metrics(const char *list, struct rt_sb *err);
/* The result object: vLLM's keys in vLLM's order, then ratchet's extras
 * ({mean,median,std,pP}_{ttft_sched,send_lag}_ms, mean_input_tokens,
 * mean_output_tokens). Caller owns the reference. */
json_t *run_load_vllm_result(const struct run_load_result *r, const struct run_load_vllm_run *v);
/* vLLM's default file name, "{label or backend}-{rate}qps[-concurrency{N}]-
 * {model after its last /}-{date}.json" (rate as Python prints a float:
 * "inf", "10.0"). Caller frees. */
char *run_load_vllm_filename(const struct run_load_vllm_run *v);

/* ---- request bodies (load_body.c) ---- */

/*
 * The bodies of a run differ only in their prompt (and a record's own
 * max_tokens): the frame is serialized once per max_tokens around a mark,
 * and each prompt, escaped by jansson, takes the mark's place. The bytes
 * are those json_dumps writes for the whole object (oai_body_new, plus
 * ignore_eos), at a fraction of its cost: building and dumping an object
 * per request was a sixth of a count-bound run's client instructions.
 */
struct run_load_body_tmpl {
	char *frame;    /* a body with the mark for its prompt, NULL before the first */
	int max_tokens; /* the frame's max_tokens */
	size_t at;      /* offset of the mark in frame; SIZE_MAX: no template (the slow path) */
};
/* The body of prompt for cfg's API (caller frees; *len its length). t
 * caches the frame across calls; start it zeroed, free it with
 * run_load_body_tmpl_release. */
char *run_load_body(const struct spec_load *cfg, const char *model, const char *prompt,
		    int max_tokens, struct run_load_body_tmpl *t, size_t *len);
void run_load_body_tmpl_release(struct run_load_body_tmpl *t);

/* ---- datasets (load_data.c) ---- */

/* One prompt to send. */
struct run_load_prompt {
	char *text;             /* prompt (owned) */
	int max_tokens;         /* per request, > 0 */
};

struct run_load_dataset {
	struct run_load_prompt *v;
	size_t n;
};
void run_load_dataset_release(struct run_load_dataset *d);

/* Read a JSONL (or JSON array) file of ShareGPT records (conversations[0].value
 * as prompt, the second turn's word count as max_tokens) or {"prompt","max_tokens"}
 * records. default_max_tokens (> 0) replaces a missing max_tokens, and
 * override_max_tokens (> 0) replaces every one. */
int run_load_dataset_read(const char *path, int default_max_tokens, int override_max_tokens,
			  struct run_load_dataset *out, struct rt_sb *err);
/* n random prompts of `words` words each, from the seed. */
void run_load_dataset_random(size_t n, int words, int max_tokens, uint64_t seed,
			     struct run_load_dataset *out);

/* Schedule: n absolute send offsets (ns from t0) for an open-loop pattern
 * (poisson, gamma with shape `burstiness`, constant) at `rate` req/s. */
void run_load_schedule(enum spec_load_pattern pattern, double rate, double burstiness,
		       uint64_t seed, size_t n, int64_t *out);

#endif
