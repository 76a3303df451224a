/*
 * Decision statistics (see stats.h): summaries, the bootstrap of the ratio
 * of medians, Mann-Whitney U and the regression check of any metric (the
 * keep/revert rule is stats_decide.c).
 * Samples are copied before sorting; scratch space for the bootstrap lives
 * on the heap and is freed before returning.
 */
#include "runner/stats/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"
#include "runner/stats/stats_binom.h"
#include "runner/base/rt.h"

/* Type 7 quantile of already sorted data. */
static double quantile_sorted(const double *s, size_t n, double q)
{
	if (n == 0)
		return NAN;
	if (q <= 0)
		return s[0];
	if (q >= 1)
		return s[n - 1];
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);
	double f = h - (double)i;
	if (i + 1 >= n)
		return s[n - 1];
	if (f == 0 || s[i] == s[i + 1])
		return s[i];
	if (isinf(s[i]) || isinf(s[i + 1])) /* the limit; the formula gives NAN */
		return isinf(s[i]) ? s[i] : s[i + 1];
	return s[i] + f * (s[i + 1] - s[i]);
}

double run_stats_quantile_sorted(const double *s, size_t n, double q)
{
	return quantile_sorted(s, n, q);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *s = xmalloc((n ? n : 1) * sizeof(*s));
	if (n)
		memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), rt_cmp_double);
	return s;
}

double run_stats_quantile(const double *x, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double *s = sorted_copy(x, n);
	double v = quantile_sorted(s, n, q);
	free(s);
	return v;
}

double run_stats_median(const double *x, size_t n)
{
	return run_stats_quantile(x, n, 0.5);
}

double run_stats_mad(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double m = run_stats_median(x, n);
	double *d = xmalloc(n * sizeof(*d));
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(x[i] - m);
	double v = run_stats_median(d, n);
	free(d);
	return v;
}

double run_stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double run_stats_stddev(const double *x, size_t n)
{
	if (n < 2)
		return 0;
	double m = run_stats_mean(x, n), s = 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

double run_stats_rsd(const double *x, size_t n)
{
	double m = run_stats_mean(x, n);
	if (n == 0 || m == 0)
		return 0;
	return run_stats_stddev(x, n) / fabs(m);
}

double run_stats_resolvable_gain(const double *x, size_t n, int repeats, double confidence)
{
	double med = run_stats_median(x, n);
	if (n < 2 || repeats < 1 || !(fabs(med) > 0))
		return NAN;
	double cv = 1.4826 * run_stats_mad(x, n) / fabs(med);
	if (cv == 0)
		cv = run_stats_rsd(x, n);
	return rt_z_two_sided(1 - confidence) * sqrt(2.0 / repeats) * 1.2533 * cv;
}

void run_stats_summarize(const double *x, size_t n, struct run_stats_summary *o)
{
	memset(o, 0, sizeof(*o));
	o->n = n;
	if (n == 0) {
		o->mean = o->median = o->mad = o->min = o->max = NAN;
		o->p90 = o->p95 = o->p99 = NAN;
		return;
	}
	double *s = sorted_copy(x, n);
	o->mean = run_stats_mean(x, n);
	o->stddev = run_stats_stddev(x, n);
	o->rsd = o->mean != 0 ? o->stddev / fabs(o->mean) : 0;
	o->median = quantile_sorted(s, n, 0.5);
	o->mad = run_stats_mad(x, n);
	o->min = s[0];
	o->max = s[n - 1];
	o->p90 = quantile_sorted(s, n, 0.90);
	o->p95 = quantile_sorted(s, n, 0.95);
	o->p99 = quantile_sorted(s, n, 0.99);
	free(s);
}

/* ---- bootstrap ---- */
/* Median of n values drawn with replacement from x, using scratch. */
static double resample_median(struct rt_rand *r, const double *x, size_t n, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = x[rt_rand_below(r, n)];
	/* n is small (repeats); insertion sort beats qsort here */
	for (size_t i = 1; i < n; i++) {
		double v = scratch[i];
		size_t j = i;
		while (j > 0 && scratch[j - 1] > v) {
			scratch[j] = scratch[j - 1];
			j--;
		}
		scratch[j] = v;
	}
	return quantile_sorted(scratch, n, 0.5);
}

int run_stats_boot_ratio(const double *a, size_t na, const double *b, size_t nb,
			 double confidence, int B, uint64_t seed, double *ratio, double *lo,
			 double *hi)
{
	if (na == 0 || nb == 0 || !(confidence > 0 && confidence < 1))
		return RT_EINVAL;
	double ma = run_stats_median(a, na), mb = run_stats_median(b, nb);
	if (!(ma > 0))
		return RT_EINVAL;
	if (B <= 0)
		B = 2000;
	struct rt_rand r;
	rt_rand_seed(&r, seed);
	double *scratch = xmalloc((na > nb ? na : nb) * sizeof(double));
	double *rs = xmalloc((size_t)B * sizeof(double));
	int k = 0;
	for (int i = 0; i < B; i++) {
		double xa = resample_median(&r, a, na, scratch);
		double xb = resample_median(&r, b, nb, scratch);
		if (xa > 0)
			rs[k++] = xb / xa;
	}
	int rc = 0;
	if (k == 0) {
		rc = RT_EINVAL;
	} else {
		qsort(rs, (size_t)k, sizeof(double), rt_cmp_double);
		double alpha = 1 - confidence;
		*ratio = mb / ma;
		*lo = quantile_sorted(rs, (size_t)k, alpha / 2);
		*hi = quantile_sorted(rs, (size_t)k, 1 - alpha / 2);
	}
	free(rs);
	free(scratch);
	return rc;
}

/* ---- Mann-Whitney U ---- */
double run_stats_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

struct ranked {
	double v; /* value */
	int arm;  /* 0: a, 1: b */
};

static int cmp_ranked(const void *x, const void *y)
{
	return rt_cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/* P(U <= u) under H0 without ties, by the recurrence on the number of
 * arrangements: f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1). */
static double exact_cdf(int m, int n, int u)
{
	int umax = m * n;
	/* dp[i][j][k] flattened over (i <= m, j <= n, k <= umax) is small here */
	size_t sz = (size_t)(m + 1) * (size_t)(n + 1) * (size_t)(umax + 1);
	double *f = xcalloc(sz, sizeof(double));
#define F(i, j, k) f[(((size_t)(i) * (size_t)(n + 1)) + (size_t)(j)) * (size_t)(umax + 1) + (size_t)(k)]
	for (int i = 0; i <= m; i++)
		for (int j = 0; j <= n; j++) {
			if (i == 0 || j == 0) {
				F(i, j, 0) = 1;
				continue;
			}
			for (int k = 0; k <= i * j; k++) {
				double s = F(i, j - 1, k);
				if (k - j >= 0)
					s += F(i - 1, j, k - j);
				F(i, j, k) = s;
			}
		}
	double total = 0, below = 0;
	for (int k = 0; k <= umax; k++) {
		total += F(m, n, k);
		if (k <= u)
			below += F(m, n, k);
	}
#undef F
	free(f);
	return below / total;
}

double run_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u)
{
	if (u)
		*u = 0;
	if (na == 0 || nb == 0)
		return 1;
	size_t N = na + nb;
	struct ranked *r = xmalloc(N * sizeof(*r));
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 0 };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], 1 };
	qsort(r, N, sizeof(*r), cmp_ranked);
	double rank_b = 0, tie_term = 0;
	bool ties = false;
	for (size_t i = 0; i < N;) {
		size_t j = i;
		while (j + 1 < N && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1);
		double avg = ((double)i + (double)j) / 2.0 + 1.0;
		for (size_t k = i; k <= j; k++)
			if (r[k].arm == 1)
				rank_b += avg;
		if (t > 1) {
			ties = true;
			tie_term += t * t * t - t;
		}
		i = j + 1;
	}
	free(r);
	double m = (double)na, n = (double)nb;
	double U = rank_b - n * (n + 1) / 2.0;
	if (u)
		*u = U;
	if (!ties && N <= 20) {
		/* U of b counts pairs b > a; its null distribution is the same
		 * with the roles of m and n swapped, symmetric around mn/2 */
		int ui = (int)llround(U);
		double lower = exact_cdf((int)nb, (int)na, ui);
		double upper = 1 - exact_cdf((int)nb, (int)na, ui - 1);
		double p = 2 * (lower < upper ? lower : upper);
		return p > 1 ? 1 : p;
	}
	double mu = m * n / 2.0;
	double Nd = (double)N;
	double var = m * n / 12.0 * ((Nd + 1) - tie_term / (Nd * (Nd - 1)));
	if (var <= 0)
		return 1;
	double z = (fabs(U - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	double p = 2 * run_stats_norm_sf(z);
	return p > 1 ? 1 : p;
}

/* ---- regressions ---- */
/* snprintf into a fixed reason field; a long reason is cut, not an error. */
static void set_reason(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_reason(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, n, fmt, ap);
	va_end(ap);
}

int run_stats_regression(const double *best, size_t nb, const double *cand, size_t nc,
			 bool higher_is_better, double confidence, double floor, uint64_t seed,
			 struct run_stats_regression *out)
{
	memset(out, 0, sizeof(*out));
	double ratio, lo, hi;
	int rc = run_stats_boot_ratio(best, nb, cand, nc, confidence, 0, seed, &ratio, &lo, &hi);
	if (rc)
		return rc;
	out->delta = ratio - 1;
	out->lo = lo - 1;
	out->hi = hi - 1;
	out->p_value = run_stats_mann_whitney(best, nb, cand, nc, NULL);
	bool worse_ci = higher_is_better ? hi < 1 : lo > 1;
	bool worse_floor = higher_is_better ? out->delta < -floor : out->delta > floor;
	out->regressed = worse_ci && worse_floor;
	set_reason(out->reason, sizeof(out->reason), "%+.1f%% [%+.1f%%, %+.1f%%] %s (%s is better)",
		 out->delta * 100, out->lo * 100, out->hi * 100,
		 out->regressed ? "worse"
		 : worse_ci   ? "worse, below the floor"
			      : "not worse beyond the noise",
		 higher_is_better ? "higher" : "lower");
	return 0;
}
