/*
 * Summary metrics of a load run, with vLLM's definitions (see load.h), and
 * the SLO checks that goodput and the capacity search use. Percentiles
 * interpolate linearly between order statistics, like numpy's default.
 */
#include "runner/load/load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double run_load_percentile_sorted(const double *x, size_t n, double p)
{
	if (n == 0)
		return NAN;
	if (p <= 0)
		return x[0];
	if (p >= 1)
		return x[n - 1];
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return x[n - 1];
	double f = h - (double)lo;
	if (isinf(x[lo + 1]) || f == 0)
		return f == 0 ? x[lo] : x[lo + 1];
	return x[lo] + f * (x[lo + 1] - x[lo]);
}

double run_load_percentile(double *x, size_t n, double p)
{
	if (n == 0)
		return NAN;
	qsort(x, n, sizeof(*x), cmp_dbl);
	return run_load_percentile_sorted(x, n, p);
}

static void summarize(double *x, size_t n, struct run_load_dist *d)
{
	d->n = n;
	if (!n) {
		d->mean = d->median = d->p90 = d->p95 = d->p99 = d->max = NAN;
		return;
	}
	qsort(x, n, sizeof(*x), cmp_dbl);
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	d->mean = s / (double)n;
	d->median = run_load_percentile_sorted(x, n, 0.5);
	d->p90 = run_load_percentile_sorted(x, n, 0.9);
	d->p95 = run_load_percentile_sorted(x, n, 0.95);
	d->p99 = run_load_percentile_sorted(x, n, 0.99);
	d->max = x[n - 1];
}

enum which { W_TTFT, W_TPOT, W_ITL, W_E2EL, W_TTFT_SCHED, W_SEND_LAG, W_N };
static const char *const which_names[W_N] = { "ttft", "tpot", "itl", "e2el", "ttft_sched",
					      "send_lag" };

static int which_of(const char *name, size_t len)
{
	for (int i = 0; i < W_N; i++)
		if (strlen(which_names[i]) == len && !strncmp(which_names[i], name, len))
			return i;
	return -1;
}

/* Per-request value of one quantity; false when the request has none. */
static bool req_value(const struct run_load_result *r, const struct run_load_req *q, int w,
		      double *v)
{
	switch (w) {
	case W_TTFT:
		*v = q->ttft_s;
		return q->ok && !isnan(q->ttft_s);
	case W_TPOT:
		if (!q->ok || q->output_tokens < 2 || isnan(q->ttft_s))
			return false;
		*v = (q->e2el_s - q->ttft_s) / (double)(q->output_tokens - 1);
		return true;
	case W_E2EL:
		*v = q->e2el_s;
		return q->ok;
	case W_TTFT_SCHED:
		*v = (double)(q->first_ns - q->intended_ns) / 1e9;
		return q->ok && q->first_ns > 0;
	case W_SEND_LAG:
		*v = (double)(q->sent_ns - q->intended_ns) / 1e9;
		return q->sent_ns >= 0;
	}
	(void)r;
	return false;
}

/* Values of quantity w over measured requests; with failed_inf, failed
 * requests count as +inf (for SLO checks). Caller frees. */
static double *collect(const struct run_load_result *r, int w, bool failed_inf, size_t *n)
{
	size_t cap = w == W_ITL ? r->n_itl : r->n_reqs;
	double *x = xmalloc((cap ? cap : 1) * sizeof(*x));
	size_t k = 0;
	if (w == W_ITL) {
		for (size_t i = 0; i < r->n_reqs; i++) {
			const struct run_load_req *q = &r->reqs[i];
			if (q->warmup || !q->ok || q->n_chunks < 2)
				continue;
			for (int j = 0; j < q->n_chunks - 1; j++)
				x[k++] = r->itl[q->itl_off + (size_t)j];
		}
	} else {
		for (size_t i = 0; i < r->n_reqs; i++) {
			const struct run_load_req *q = &r->reqs[i];
			double v;
			if (q->warmup)
				continue;
			if (req_value(r, q, w, &v))
				x[k++] = v;
			else if (failed_inf && !q->ok && w != W_SEND_LAG)
				x[k++] = INFINITY;
		}
	}
	*n = k;
	return x;
}

int run_load_dist(const struct run_load_result *r, const char *which, struct run_load_dist *out)
{
	int w = which_of(which, strlen(which));
	if (w < 0)
		return RT_EINVAL;
	size_t n;
	double *x = collect(r, w, false, &n);
	summarize(x, n, out);
	free(x);
	return 0;
}

/* Split "ttft_p95" into quantity and statistic. */
static int split_metric(const char *m, int *w, const char **stat)
{
	static const char *const stats[] = { "_mean", "_median", "_p90", "_p95", "_p99",
					      "_p50", "_max" };
	size_t len = strlen(m);
	for (size_t i = 0; i < RT_ARRAY_SIZE(stats); i++) {
		size_t sl = strlen(stats[i]);
		if (len > sl && !strcmp(m + len - sl, stats[i])) {
			*w = which_of(m, len - sl);
			*stat = stats[i] + 1;
			return *w < 0 ? RT_EINVAL : 0;
		}
	}
	*w = which_of(m, len);
	*stat = "max"; /* a bare name bounds every request */
	return *w < 0 ? RT_EINVAL : 0;
}

int run_load_slo_value(const struct run_load_result *r, const char *metric, double *out)
{
	int w;
	const char *stat;
	if (split_metric(metric, &w, &stat))
		return RT_EINVAL;
	size_t n;
	double *x = collect(r, w, true, &n);
	struct run_load_dist d;
	summarize(x, n, &d);
	free(x);
	if (!strcmp(stat, "mean"))
		*out = d.mean;
	else if (!strcmp(stat, "median") || !strcmp(stat, "p50"))
		*out = d.median;
	else if (!strcmp(stat, "p90"))
		*out = d.p90;
	else if (!strcmp(stat, "p95"))
		*out = d.p95;
	else if (!strcmp(stat, "p99"))
		*out = d.p99;
	else
		*out = d.max;
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
		int w;
		const char *stat;
		double v;
		if (split_metric(r->slo[i].metric, &w, &stat))
			return false;
		if (w == W_ITL) {
			if (q->n_chunks >= 2 && !(q->itl_max_s <= r->slo[i].limit))
				return false;
			continue;
		}
		if (req_value(r, q, w, &v) && !(v <= r->slo[i].limit))
			return false;
	}
	return true;
}

size_t run_load_metrics(const struct run_load_result *r, const struct run_load_capacity *cap,
			const char **names, double *values, const char **units, size_t max)
{
	static const char *const dist_names[W_N][5] = {
		{ "ttft_mean", "ttft_median", "ttft_p90", "ttft_p95", "ttft_p99" },
		{ "tpot_mean", "tpot_median", "tpot_p90", "tpot_p95", "tpot_p99" },
		{ "itl_mean", "itl_median", "itl_p90", "itl_p95", "itl_p99" },
		{ "e2el_mean", "e2el_median", "e2el_p90", "e2el_p95", "e2el_p99" },
		{ "ttft_sched_mean", "ttft_sched_median", "ttft_sched_p90", "ttft_sched_p95",
		  "ttft_sched_p99" },
		{ "send_lag_mean", "send_lag_median", "send_lag_p90", "send_lag_p95",
		  "send_lag_p99" },
	};
	size_t k = 0;
#define PUT(n_, v_, u_)                  \
	do {                             \
		if (k < max) {           \
			names[k] = (n_); \
			values[k] = (v_); \
			units[k] = (u_); \
			k++;             \
		}                        \
	} while (0)
	double dur = r->duration_s > 0 ? r->duration_s : NAN;
	int good = 0;
	for (size_t i = 0; i < r->n_reqs; i++)
		if (!r->reqs[i].warmup && req_good(r, &r->reqs[i]))
			good++;
	PUT("request_throughput", r->completed / dur, "req/s");
	PUT("output_throughput", (double)r->output_tokens_total / dur, "tok/s");
	PUT("total_token_throughput",
	    (double)(r->output_tokens_total + r->prompt_tokens_total) / dur, "tok/s");
	PUT("goodput", good / dur, "req/s");
	PUT("completed", r->completed, "requests");
	PUT("failed", r->failed, "requests");
	for (int w = 0; w < W_N; w++) {
		struct run_load_dist d;
		run_load_dist(r, which_names[w], &d);
		PUT(dist_names[w][0], d.mean, "s");
		PUT(dist_names[w][1], d.median, "s");
		PUT(dist_names[w][2], d.p90, "s");
		PUT(dist_names[w][3], d.p95, "s");
		PUT(dist_names[w][4], d.p99, "s");
	}
	if (cap)
		PUT("max_rate", cap->max_rate, "req/s");
#undef PUT
	return k;
}

int run_load_parse_duration(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0) || isinf(v))
		return RT_EINVAL;
	double mul = 1;
	if (!*end || !strcmp(end, "s"))
		mul = 1;
	else if (!strcmp(end, "ms"))
		mul = 1e-3;
	else if (!strcmp(end, "us"))
		mul = 1e-6;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60;
	else if (!strcmp(end, "h"))
		mul = 3600;
	else
		return RT_EINVAL;
	*out = v * mul;
	return 0;
}
