/*
 * One interface for the three kinds of benchmark (command, load, kernel):
 * run it once and get named metrics. The campaign loop calls only this.
 */
#ifndef RT_BENCH_H
#define RT_BENCH_H

#include <stdint.h>

#include "runner/base/proc.h"
#include "runner/spec/spec.h"

struct db;

/* Where and how one benchmark run happens. */
struct run_bench_ctx {
	struct db *db;                 /* for per-request records and device peaks; may be NULL */
	int64_t iteration_id;          /* 0: not part of a campaign */
	const char *arm;               /* "best" or "cand" */
	int rep;                       /* repeat index within the arm */
	const struct spec_vars *vars;  /* placeholder values */
	const char *engine_url;        /* base URL of the engine, or NULL */
	const char *engine_model;      /* model id the engine reported, or NULL */
	char *const *argv;             /* command benchmark argv with the flag variants applied (no engine), or NULL */
	const struct rt_envmod *env;   /* env variants when there is no engine */
	size_t n_env;
	uint64_t seed;                 /* seed for this run */
	const char *api_key;           /* load benchmarks: Authorization: Bearer; NULL: none; never stored */
	double capacity_rate;          /* SLO capacity searches: latencies and throughputs are measured at
					* this offered rate (req/s: the best's capacity); 0: at the arm's own */
};

/* One result. */
struct run_metric {
	char *name;  /* metric name within the benchmark (owned) */
	double value;
	char *unit;  /* owned, may be NULL */
};

struct run_bench_out {
	struct run_metric *m;    /* results (owned) */
	size_t n;
	struct rt_sb output;     /* captured output of a command benchmark (capped) */
	char *device_id;         /* kernel benchmarks: device identity string (owned), else NULL */
	char **fact_keys;        /* environment facts (owned) */
	char **fact_values;
	size_t n_facts;
};

void run_bench_out_init(struct run_bench_out *o);
void run_bench_out_release(struct run_bench_out *o);
void run_bench_out_add(struct run_bench_out *o, const char *name, double value, const char *unit);
void run_bench_out_fact(struct run_bench_out *o, const char *key, const char *value);

/* Run benchmark b once. RT_* on failure with the reason in err. */
int run_bench_run(const struct spec *s, const struct spec_bench *b, const struct run_bench_ctx *c,
		  struct run_bench_out *out, struct rt_sb *err);

/* The command and kernel kinds (adapters in bench.c over bench_cmd.h and bench_kernel.h). */
int run_bench_command(const struct spec_bench *b, const struct run_bench_ctx *c,
		      struct run_bench_out *out, struct rt_sb *err);
int run_bench_kernel(const struct spec_bench *b, const struct run_bench_ctx *c,
		     struct run_bench_out *out, struct rt_sb *err);

#endif
