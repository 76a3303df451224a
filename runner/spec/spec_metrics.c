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
#define Q(e, name, slo, better) name,
	SPEC_LOAD_QUANTITIES(Q)
#undef Q
};
static const bool q_slo[] = {
#define Q(e, name, slo, better) slo,
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

/* Every load metric in output order: name, unit and which way is better. */
static const struct {
	const char *name;        /* as stored and referenced (bench.name) */
	const char *unit;        /* as stored */
	enum spec_better better; /* the X-macro's column */
} load_metrics[] = {
#define RUN(e, name, unit, better) { name, unit, SPEC_BETTER_##better },
	SPEC_LOAD_RUN_METRICS(RUN)
#undef RUN
#define NAME_OF(name, better) name
#define BETTER_OF(name, better) BETTER(better)
#define BETTER(b) BETTER_(b) /* b expanded first: SPEC_VLLM_TIMES_BETTER is LOWER */
#define BETTER_(b) SPEC_BETTER_##b
#define STAT(qb, e, sname, q) { NAME_OF qb "_" sname, "s", BETTER_OF qb },
#define QUANT(e, qname, slo, better) SPEC_LOAD_STATS(STAT, (qname, better))
	SPEC_LOAD_QUANTITIES(QUANT)
#undef QUANT
#undef STAT
	{ "max_rate", "req/s", SPEC_BETTER_HIGHER },
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

/* A built-in metric and which way it is better. */
struct named_metric {
	const char *name;        /* as stored and referenced */
	enum spec_better better; /* higher or lower */
};

static const struct named_metric kernel_metrics[] = {
	{ "time", SPEC_BETTER_LOWER },	       { "time_min", SPEC_BETTER_LOWER },
	{ "gbps", SPEC_BETTER_HIGHER },	       { "gflops", SPEC_BETTER_HIGHER },
	{ "pct_peak_bw", SPEC_BETTER_HIGHER }, { "pct_peak_flops", SPEC_BETTER_HIGHER },
	{ "rsd", SPEC_BETTER_LOWER },	       { "samples", SPEC_BETTER_HIGHER },
};
/* llama-batched-bench: s_* are tokens/s, t_* seconds. */
static const struct named_metric batched_metrics[] = {
	{ "s_pp", SPEC_BETTER_HIGHER }, { "s_tg", SPEC_BETTER_HIGHER }, { "s", SPEC_BETTER_HIGHER },
	{ "t_pp", SPEC_BETTER_LOWER },	{ "t_tg", SPEC_BETTER_LOWER },	{ "t", SPEC_BETTER_LOWER },
};
static const struct named_metric llama_bench_metrics[] = {
	{ "pp_tps", SPEC_BETTER_HIGHER },	{ "tg_tps", SPEC_BETTER_HIGHER },
	{ "pp_tps_stddev", SPEC_BETTER_LOWER }, { "tg_tps_stddev", SPEC_BETTER_LOWER },
};
/* vllm-bench-serve: spec.h's lists of vLLM's result keys. */
static const struct named_metric vllm_serve_metrics[] = {
#define RUN(key, name, better) { name, BETTER(better) },
#define STAT(metric, stat) { metric "_" stat, BETTER(SPEC_VLLM_TIMES_BETTER) },
#define METRIC(metric) SPEC_VLLM_STATS(STAT, metric)
	SPEC_VLLM_RUN_KEYS(RUN) SPEC_VLLM_METRICS(METRIC) SPEC_VLLM_EXTRAS(METRIC)
#undef METRIC
#undef STAT
#undef RUN
};

/* The metrics each built-in output format yields. */
static const struct {
	enum spec_cmd_format format;          /* the format */
	const struct named_metric *metrics;   /* what it yields */
	size_t n;                             /* entries in metrics */
} format_metrics[] = {
	{ SPEC_FMT_LLAMA_BATCHED_BENCH, batched_metrics, RT_ARRAY_SIZE(batched_metrics) },
	{ SPEC_FMT_LLAMA_BATCHED_JSONL, batched_metrics, RT_ARRAY_SIZE(batched_metrics) },
	{ SPEC_FMT_LLAMA_BENCH_JSON, llama_bench_metrics, RT_ARRAY_SIZE(llama_bench_metrics) },
	{ SPEC_FMT_VLLM_BENCH_SERVE, vllm_serve_metrics, RT_ARRAY_SIZE(vllm_serve_metrics) },
};

static const struct named_metric *format_table(enum spec_cmd_format f, size_t *n)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(format_metrics); i++)
		if (format_metrics[i].format == f) {
			*n = format_metrics[i].n;
			return format_metrics[i].metrics;
		}
	*n = 0;
	return NULL;
}

bool spec_format_has_metric(enum spec_cmd_format f, const char *name)
{
	size_t n;
	const struct named_metric *t = format_table(f, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return true;
	return false;
}

void spec_bench_metric_names(struct spec_bench *b)
{
	const struct named_metric *fixed = NULL;
	size_t nf = 0, ne = 0;
	if (b->kind == SPEC_BENCH_LOAD) {
		nf = SPEC_LM_N - (b->load.n_rates ? 0 : 1); /* max_rate only with rates: */
	} else if (b->kind == SPEC_BENCH_KERNEL) {
		fixed = kernel_metrics;
		nf = RT_ARRAY_SIZE(kernel_metrics);
	} else {
		fixed = format_table(b->cmd.format, &nf);
		ne = b->cmd.n_metrics;
	}
	b->metric_names = xcalloc(nf + ne + 1, sizeof(char *));
	b->metric_better = xcalloc(nf + ne + 1, sizeof(*b->metric_better));
	for (size_t i = 0; i < nf; i++) {
		b->metric_better[b->n_metric_names] = fixed ? fixed[i].better : load_metrics[i].better;
		b->metric_names[b->n_metric_names++] = fixed ? fixed[i].name : load_metrics[i].name;
	}
	for (size_t i = 0; i < ne; i++) {
		b->metric_better[b->n_metric_names] = b->cmd.metrics[i].better;
		b->metric_names[b->n_metric_names++] = b->cmd.metrics[i].name;
	}
}

/* ---- the engine's own cost ---- */

static const char *const em_names[] = {
#define EM(e, name, unit, better) name,
	SPEC_ENGINE_METRICS(EM)
#undef EM
};
static const char *const em_units[] = {
#define EM(e, name, unit, better) unit,
	SPEC_ENGINE_METRICS(EM)
#undef EM
};
static const enum spec_better em_better[] = {
#define EM(e, name, unit, better) BETTER(better),
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

/* ---- which way a metric is better: the tables' column, or the spec's ---- */

enum spec_better spec_metric_better(const struct spec *s, const char *bench, const char *metric)
{
	int i;
	if (bench && !strcmp(bench, "log"))
		return SPEC_BETTER_LOWER; /* log event counts: recompiles, graph misses */
	if (bench && !strcmp(bench, "engine"))
		return (i = spec_engine_metric_find(metric)) >= 0 ? em_better[i] : SPEC_BETTER_AUTO;
	if (bench && !strcmp(bench, "telemetry"))
		return (i = spec_telemetry_metric_find(metric)) >= 0 ? spec_telemetry_metric_better(i)
								     : SPEC_BETTER_AUTO;
	const struct spec_bench *b = spec_bench_find(s, bench);
	for (size_t k = 0; b && k < b->n_metric_names; k++)
		if (!strcmp(b->metric_names[k], metric))
			return b->metric_better[k];
	return SPEC_BETTER_AUTO;
}
