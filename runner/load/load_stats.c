/*
 * Summary metrics of a load run, with vLLM's definitions (see load.h), and
 * the SLO checks that goodput and the capacity search use. The quantities,
 * statistics, metric names and the SLO grammar come from one table in the
 * spec module (spec.h, SPEC_LOAD_QUANTITIES); percentiles are
 * run_stats_quantile_sorted(), linear between order statistics like
 * numpy's default (Hyndman-Fan type 7).
 */
#include "runner/load/load.h"
#include "runner/stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sorts x in place. */
static void summarize(double *x, size_t n, struct run_load_dist *d)
{
	d->n = n;
	if (!n) {
		d->mean = d->median = d->p90 = d->p95 = d->p99 = d->max = NAN;
		return;
	}
	qsort(x, n, sizeof(*x), rt_cmp_double);
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	d->mean = s / (double)n;
	d->median = run_stats_quantile_sorted(x, n, spec_load_stat_quantile(SPEC_LS_MEDIAN));
	d->p90 = run_stats_quantile_sorted(x, n, spec_load_stat_quantile(SPEC_LS_P90));
	d->p95 = run_stats_quantile_sorted(x, n, spec_load_stat_quantile(SPEC_LS_P95));
	d->p99 = run_stats_quantile_sorted(x, n, spec_load_stat_quantile(SPEC_LS_P99));
	d->max = x[n - 1];
}

/* One statistic of a summary; SPEC_LS_EACH is the largest value. */
static double dist_stat(const struct run_load_dist *d, enum spec_load_stat s)
{
	switch (s) {
	case SPEC_LS_MEAN:
		return d->mean;
	case SPEC_LS_MEDIAN:
		return d->median;
	case SPEC_LS_P90:
		return d->p90;
	case SPEC_LS_P95:
		return d->p95;
	case SPEC_LS_P99:
		return d->p99;
	default:
		return d->max;
	}
}

/* Per-request value of one quantity; false when the request has none. */
static bool req_value(const struct run_load_req *q, enum spec_load_q w, double *v)
{
	switch (w) {
	case SPEC_LQ_TTFT:
		*v = q->ttft_s;
		return q->ok && !isnan(q->ttft_s);
	case SPEC_LQ_TPOT:
		if (!q->ok || q->output_tokens < 2 || isnan(q->ttft_s))
			return false;
		*v = (q->e2el_s - q->ttft_s) / (double)(q->output_tokens - 1);
		return true;
	case SPEC_LQ_ITL:
		*v = q->itl_max_s; /* the request's worst gap */
		return q->ok && q->n_chunks >= 2;
	case SPEC_LQ_E2EL:
		*v = q->e2el_s;
		return q->ok;
	case SPEC_LQ_TTFT_SCHED:
		*v = (double)(q->first_ns - q->intended_ns) / 1e9;
		return q->ok && q->first_ns > 0;
	case SPEC_LQ_SEND_LAG:
		*v = (double)(q->sent_ns - q->intended_ns) / 1e9;
		return q->sent_ns >= 0;
	case SPEC_LQ_N:
		break;
	}
	return false;
}

/* Values of quantity w over measured requests (itl: every gap); with
 * failed_inf, failed requests count as +inf (for SLO checks; itl and
 * send_lag excepted: a failed request has no gaps and was still sent).
 * Caller frees. */
static double *collect(const struct run_load_result *r, enum spec_load_q w, bool failed_inf,
		       size_t *n)
{
	size_t cap = (w == SPEC_LQ_ITL ? r->n_itl : 0) + r->n_reqs;
	double *x = xmalloc((cap ? cap : 1) * sizeof(*x));
	size_t k = 0;
	for (size_t i = 0; i < r->n_reqs; i++) {
		const struct run_load_req *q = &r->reqs[i];
		double v;
		if (q->warmup)
			continue;
		if (w == SPEC_LQ_ITL && q->ok && q->n_chunks >= 2) {
			for (int j = 0; j < q->n_chunks - 1; j++)
				x[k++] = r->itl[q->itl_off + (size_t)j];
		} else if (w != SPEC_LQ_ITL && req_value(q, w, &v)) {
			x[k++] = v;
		} else if (failed_inf && !q->ok && w != SPEC_LQ_SEND_LAG && w != SPEC_LQ_ITL) {
			x[k++] = INFINITY;
		}
	}
	*n = k;
	return x;
}

static void dist_of(const struct run_load_result *r, enum spec_load_q w, bool failed_inf,
		    struct run_load_dist *out)
{
	size_t n;
	double *x = collect(r, w, failed_inf, &n);
	summarize(x, n, out);
	free(x);
}

int run_load_dist(const struct run_load_result *r, const char *which, struct run_load_dist *out)
{
	int w = spec_load_q_find(which);
	if (w < 0)
		return RT_EINVAL;
	dist_of(r, (enum spec_load_q)w, false, out);
	return 0;
}

double *run_load_values(const struct run_load_result *r, const char *which, size_t *n)
{
	int w = spec_load_q_find(which);
	*n = 0;
	return w < 0 ? NULL : collect(r, (enum spec_load_q)w, false, n);
}

double run_load_mean_input(const struct run_load_result *r)
{
	return r->completed ? (double)r->prompt_tokens_total / r->completed : NAN;
}

double run_load_mean_output(const struct run_load_result *r)
{
	return r->completed ? (double)r->output_tokens_total / r->completed : NAN;
}

int run_load_slo_value(const struct run_load_result *r, const char *metric, double *out)
{
	enum spec_load_q w;
	enum spec_load_stat stat;
	struct run_load_dist d;
	if (spec_slo_parse(metric, &w, &stat, NULL))
		return RT_EINVAL;
	dist_of(r, w, true, &d);
	*out = dist_stat(&d, stat);
	return 0;
}

bool run_load_slo_ok(const struct run_load_result *r, const struct spec_slo *slo, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v;
		if (run_load_slo_value(r, slo[i].metric, &v))
			return false;
		if (isnan(v)) {
			/* no samples: only ok when nothing failed (e.g. tpot with 1-token outputs) */
			if (r->failed)
				return false;
			continue;
		}
		if (!(v <= slo[i].limit))
			return false;
	}
	return true;
}

/* Does one completed request meet every SLO's per-request bound? */
static bool req_good(const struct run_load_result *r, const struct run_load_req *q)
{
	if (!q->ok)
		return false;
	for (size_t i = 0; i < r->n_slo; i++) {
		enum spec_load_q w;
		enum spec_load_stat stat;
		double v;
		if (spec_slo_parse(r->slo[i].metric, &w, &stat, NULL))
			return false;
		if (req_value(q, w, &v) && !(v <= r->slo[i].limit))
			return false;
	}
	return true;
}

/* Every metric's value, by enum spec_load_metric; max_rate only with cap. */
static void metric_values(const struct run_load_result *r, const struct run_load_capacity *cap,
			  double v[SPEC_LM_N])
{
	double dur = r->duration_s > 0 ? r->duration_s : NAN;
	int good = 0;
	for (size_t i = 0; i < r->n_reqs; i++)
		if (!r->reqs[i].warmup && req_good(r, &r->reqs[i]))
			good++;
	v[SPEC_LM_REQUEST_THROUGHPUT] = r->completed / dur;
	v[SPEC_LM_OUTPUT_THROUGHPUT] = (double)r->output_tokens_total / dur;
	v[SPEC_LM_TOTAL_TOKEN_THROUGHPUT] =
		(double)(r->output_tokens_total + r->prompt_tokens_total) / dur;
	v[SPEC_LM_GOODPUT] = good / dur;
	v[SPEC_LM_COMPLETED] = r->completed;
	v[SPEC_LM_FAILED] = r->failed;
	for (int w = 0; w < SPEC_LQ_N; w++) {
		struct run_load_dist d;
		dist_of(r, (enum spec_load_q)w, false, &d);
		for (int s = 0; s < SPEC_LS_N; s++)
			v[spec_load_metric_of(w, s)] = dist_stat(&d, (enum spec_load_stat)s);
	}
	v[SPEC_LM_MAX_RATE] = cap ? cap->max_rate : NAN;
}

size_t run_load_metrics(const struct run_load_result *r, const struct run_load_capacity *cap,
			const char **names, double *values, const char **units, size_t max)
{
	double v[SPEC_LM_N];
	size_t n = cap ? SPEC_LM_N : SPEC_LM_MAX_RATE;
	metric_values(r, cap, v);
	if (n > max)
		n = max;
	for (size_t k = 0; k < n; k++) {
		names[k] = spec_load_metric_name(k);
		values[k] = v[k];
		units[k] = spec_load_metric_unit(k);
	}
	return n;
}
