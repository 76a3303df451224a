/*
 * Metric names, one table per producer: the load generator (its run metrics
 * and the QUANTITY_STAT summaries of spec.h's SPEC_LOAD_QUANTITIES and
 * SPEC_LOAD_STATS), the kernel benchmark, and each built-in output format of
 * command benchmarks. The SLO grammar is read here too, so the spec loader,
 * `ratchet bench load --slo` and the load generator accept the same names.
 * The engine's own metrics (SPEC_ENGINE_METRICS) are named here too.
 * What each benchmark of a spec yields (spec_bench_metrics) is built from
 * these tables once it is parsed.
 */
#include "runner/spec/spec_int.h"

#include <math.h>
#include <string.h>

/* ---- the load generator ---- */

static const char *const q_names[] = {
#define Q(e, name, slo) name,
	SPEC_LOAD_QUANTITIES(Q)
#undef Q
};
static const bool q_slo[] = {
#define Q(e, name, slo) slo,
	SPEC_LOAD_QUANTITIES(Q)
#undef Q
};
static const char *const stat_names[] = {
#define S(a, e, name, q) name,
	SPEC_LOAD_STATS(S, _)
#undef S
};
static const double stat_q[] = {
#define S(a, e, name, q) q,
	SPEC_LOAD_STATS(S, _)
#undef S
};

/* Every load metric in output order: name and unit. */
static const struct {
	const char *name; /* as stored and referenced (bench.name) */
	const char *unit; /* as stored */
} load_metrics[] = {
#define RUN(e, name, unit) { name, unit },
	SPEC_LOAD_RUN_METRICS(RUN)
#undef RUN
#define STAT(qname, e, sname, q) { qname "_" sname, "s" },
#define QUANT(e, qname, slo) SPEC_LOAD_STATS(STAT, qname)
	SPEC_LOAD_QUANTITIES(QUANT)
#undef QUANT
#undef STAT
	{ "max_rate", "req/s" },
};

_Static_assert(RT_ARRAY_SIZE(q_names) == SPEC_LQ_N, "one name per quantity");
_Static_assert(RT_ARRAY_SIZE(stat_names) == SPEC_LS_N, "one name per statistic");
_Static_assert(RT_ARRAY_SIZE(load_metrics) == SPEC_LM_N, "one row per load metric");

const char *spec_load_q_name(enum spec_load_q q)
{
	return q_names[q];
}

int spec_load_q_find(const char *name)
{
	for (int q = 0; q < SPEC_LQ_N; q++)
		if (!strcmp(q_names[q], name))
			return q;
	return -1;
}

double spec_load_stat_quantile(enum spec_load_stat s)
{
	return stat_q[s];
}

const char *spec_load_metric_name(size_t m)
{
	return load_metrics[m].name;
}

const char *spec_load_metric_unit(size_t m)
{
	return load_metrics[m].unit;
}

size_t spec_load_metric_of(enum spec_load_q q, enum spec_load_stat s)
{
	return SPEC_LM_DIST + (size_t)q * SPEC_LS_N + (size_t)s;
}

/* "unknown SLO metric 'x' (did you mean 'y'?): SLO metrics are ttft, ... or p99" */
static void slo_refusal(const char *name, struct rt_sb *why)
{
	const char *cands[SPEC_LQ_N * (SPEC_LS_N + 1)];
	size_t n = 0;
	for (int q = 0; q < SPEC_LQ_N; q++) {
		if (!q_slo[q])
			continue;
		cands[n++] = q_names[q];
		for (int s = 0; s < SPEC_LS_N; s++)
			cands[n++] = load_metrics[spec_load_metric_of(q, s)].name;
	}
	const char *dym = rt_did_you_mean(name, cands, n);
	rt_sb_addf(why, "unknown SLO metric '%s'", name);
	if (dym)
		rt_sb_addf(why, " (did you mean '%s'?)", dym);
	rt_sb_adds(why, ": SLO metrics are ");
	for (size_t i = 0, k = 0; i < n; i += SPEC_LS_N + 1, k++)
		rt_sb_addf(why, "%s%s", k ? (i + SPEC_LS_N + 1 < n ? ", " : " or ") : "", cands[i]);
	rt_sb_adds(why, ", bare (every request) or with ");
	for (int s = 0; s < SPEC_LS_N; s++)
		rt_sb_addf(why, "%s_%s", s ? (s + 1 < SPEC_LS_N ? ", " : " or ") : "", stat_names[s]);
}

int spec_slo_parse(const char *name, enum spec_load_q *q, enum spec_load_stat *s,
		   struct rt_sb *why)
{
	for (int i = 0; i < SPEC_LQ_N; i++) {
		size_t len = strlen(q_names[i]);
		if (!q_slo[i] || strncmp(name, q_names[i], len))
			continue;
		const char *rest = name + len;
		for (int k = 0; k <= SPEC_LS_N; k++) {
			if (k == SPEC_LS_N ? *rest == '\0'
					   : rest[0] == '_' && !strcmp(rest + 1, stat_names[k])) {
				*q = (enum spec_load_q)i;
				*s = (enum spec_load_stat)k;
				return 0;
			}
		}
	}
	if (why)
		slo_refusal(name, why);
	return RT_EINVAL;
}

/* ---- kernel benchmarks and command output formats ---- */

static const char *const kernel_names[] = { "time",	    "time_min", "gbps", "gflops",
					    "pct_peak_bw", "pct_peak_flops", "rsd", "samples" };
static const char *const batched_names[] = { "s_pp", "s_tg", "s", "t_pp", "t_tg", "t" };
static const char *const llama_bench_names[] = { "pp_tps", "tg_tps", "pp_tps_stddev",
						 "tg_tps_stddev" };
/* vllm-bench-serve: spec.h's lists of vLLM's result keys. */
static const char *const vllm_serve_names[] = {
#define RUN(key, name) name,
#define STAT(metric, stat) metric "_" stat,
#define METRIC(metric) SPEC_VLLM_STATS(STAT, metric)
	SPEC_VLLM_RUN_KEYS(RUN) SPEC_VLLM_METRICS(METRIC) SPEC_VLLM_EXTRAS(METRIC)
#undef METRIC
#undef STAT
#undef RUN
};

/* The metrics each built-in output format yields. */
static const struct {
	enum spec_cmd_format format; /* the format */
	const char *const *names;    /* what it yields */
	size_t n;                    /* entries in names */
} format_metrics[] = {
	{ SPEC_FMT_LLAMA_BATCHED_BENCH, batched_names, RT_ARRAY_SIZE(batched_names) },
	{ SPEC_FMT_LLAMA_BATCHED_JSONL, batched_names, RT_ARRAY_SIZE(batched_names) },
	{ SPEC_FMT_LLAMA_BENCH_JSON, llama_bench_names, RT_ARRAY_SIZE(llama_bench_names) },
	{ SPEC_FMT_VLLM_BENCH_SERVE, vllm_serve_names, RT_ARRAY_SIZE(vllm_serve_names) },
};

size_t spec_format_metrics(enum spec_cmd_format f, const char *const **names)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(format_metrics); i++)
		if (format_metrics[i].format == f) {
			*names = format_metrics[i].names;
			return format_metrics[i].n;
		}
	*names = NULL;
	return 0;
}

void spec_bench_metric_names(struct spec_bench *b)
{
	const char *const *fixed = NULL;
	size_t nf = 0, ne = 0;
	if (b->kind == SPEC_BENCH_LOAD) {
		nf = SPEC_LM_N - (b->load.n_rates ? 0 : 1); /* max_rate only with rates: */
	} else if (b->kind == SPEC_BENCH_KERNEL) {
		fixed = kernel_names;
		nf = RT_ARRAY_SIZE(kernel_names);
	} else {
		nf = spec_format_metrics(b->cmd.format, &fixed);
		ne = b->cmd.n_metrics;
	}
	b->metric_names = xcalloc(nf + ne + 1, sizeof(char *));
	for (size_t i = 0; i < nf; i++)
		b->metric_names[b->n_metric_names++] = fixed ? fixed[i] : load_metrics[i].name;
	for (size_t i = 0; i < ne; i++)
		b->metric_names[b->n_metric_names++] = b->cmd.metrics[i].name;
}

/* ---- the engine's own cost ---- */

static const char *const em_names[] = {
#define EM(e, name, unit) name,
	SPEC_ENGINE_METRICS(EM)
#undef EM
};
static const char *const em_units[] = {
#define EM(e, name, unit) unit,
	SPEC_ENGINE_METRICS(EM)
#undef EM
};

const char *spec_engine_metric_name(enum spec_engine_metric m)
{
	return em_names[m];
}

const char *spec_engine_metric_unit(enum spec_engine_metric m)
{
	return em_units[m];
}

int spec_engine_metric_find(const char *name)
{
	for (int i = 0; i < SPEC_EM_N; i++)
		if (!strcmp(em_names[i], name))
			return i;
	return -1;
}
