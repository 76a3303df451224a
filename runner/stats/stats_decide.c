/*
 * The keep/revert rule (see stats.h and docs/statistics.md): a truncated
 * sequential test of an indifference zone on paired log-ratios, robust to
 * slow outliers, with its noise pooled over the campaign. It looks after
 * every pair; its constants were calibrated by simulation so that it stays
 * within its error bounds while doing so (tests/perf/bench_stats.c prints
 * the figures). Scratch arrays live on the heap and are freed before
 * returning.
 */
#include "runner/stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"
#include "runner/stats/stats_binom.h"

/* The rule's constants, calibrated at confidence 0.95 (the lines' widths a
 * and b scale with the one-sided normal quantile of another confidence). */
static const struct {
	double a;           /* sequential term: the lines sit a * se^2 / zone from the middle */
	double b;           /* and b standard errors more */
	double q;           /* small samples widen the lines by (1 + q / degrees of freedom) */
	double outlier;     /* a sample this many noise sds from its arm's median is an outlier */
	double penalty;     /* standard errors added to the lines while outliers are left out */
	double at_max;      /* at max a keep needs the estimate this many se above 0 */
	double prior_ratio; /* the prior is set aside when this comparison's variance is this many times it */
	double zone_min;    /* the smallest zone, as a log-ratio (min_gain 0 still has one) */
} K = { 2.0, 0.45, 3.0, 3.5, 1.0, 1.0, 4.0, 1e-3 };

/* Shamos' consistency factor: median |x - y| of two N(0, s^2) draws is s / 1.0483. */
#define SHAMOS_NORMAL 1.0483

const char *run_stats_verdict_name(enum run_stats_verdict v)
{
	switch (v) {
	case RUN_STATS_KEEP:
		return "keep";
	case RUN_STATS_REVERT:
		return "revert";
	default:
		return "continue";
	}
}

void run_stats_noise_add(struct run_stats_noise *acc, const struct run_stats_noise *x)
{
	if (!(x->df > 0) || !isfinite(x->ss))
		return;
	acc->ss += x->ss;
	acc->df += x->df;
	if (acc->df > RUN_STATS_NOISE_DF_MAX) {
		acc->ss *= RUN_STATS_NOISE_DF_MAX / acc->df;
		acc->df = RUN_STATS_NOISE_DF_MAX;
	}
}

/* One comparison on the log scale: both arms and what the rule needs of them. */
struct cmp {
	double *x[2];       /* log(sample) of best [0] and candidate [1], n each */
	size_t n;           /* pairs */
	bool *out[2];       /* the sample was left out as an outlier */
	bool bimodal[2];    /* the arm is two clusters: nothing of it was left out */
	size_t k[2];        /* samples kept in each arm */
	double mean[2];     /* mean of the kept samples */
	double ss;          /* within-arm sum of squares of the kept samples */
	double df;          /* its degrees of freedom */
	double s2;          /* variance of one log(sample): this comparison pooled with the prior */
	double df_total;    /* degrees of freedom behind s2 */
	double m;           /* mean log-ratio, signed so that + is better */
	double se;          /* its standard error, NAN when unknown */
};

static void cmp_release(struct cmp *c)
{
	for (int a = 0; a < 2; a++) {
		free(c->x[a]);
		free(c->out[a]);
	}
}

/* log of each sample; RT_EINVAL when one is not a positive finite number. */
static int cmp_load(struct cmp *c, const double *best, const double *cand, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->n = n;
	const double *src[2] = { best, cand };
	for (int a = 0; a < 2; a++) {
		c->x[a] = xmalloc((n ? n : 1) * sizeof(double));
		c->out[a] = xcalloc(n ? n : 1, sizeof(bool));
		for (size_t i = 0; i < n; i++) {
			if (!(src[a][i] > 0) || !isfinite(src[a][i]))
				return RT_EINVAL;
			c->x[a][i] = log(src[a][i]);
		}
	}
	return 0;
}

/* Shamos' scale of one log(sample): the median absolute difference of two
 * samples of the same arm, over both arms, made consistent for a normal.
 * Robust (one slow sample moves it little) and fair at n = 3. */
static double shamos_within(const struct cmp *c)
{
	size_t n = c->n, m = 0;
	if (n < 2)
		return NAN;
	double *d = xmalloc(n * (n - 1) * sizeof(double));
	for (int a = 0; a < 2; a++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				d[m++] = fabs(c->x[a][i] - c->x[a][j]);
	double v = run_stats_median(d, m) * SHAMOS_NORMAL;
	free(d);
	return v;
}

/* The most samples of an arm of n that may be left out: fewer than half,
 * floor((n - 1) / 2), so every arm keeps a majority and its mean exists. */
static size_t outlier_cap(size_t n)
{
	return n ? (n - 1) / 2 : 0;
}

/* Leave out the samples further than K.outlier noise sds from their arm's
 * median; the noise is Shamos' scale pooled with the prior. An arm with
 * more such samples than outlier_cap() allows is not one arm with slow
 * samples but two clusters (with n even and a 2/2 split the median falls
 * between them, and every sample is "far" from it): it is flagged bimodal
 * in c->bimodal and keeps all its samples, so its spread shows in the
 * standard error instead of an arbitrary half being dropped. */
static int flag_outliers(struct cmp *c, const struct run_stats_noise *prior)
{
	double r = shamos_within(c), dfr = 2.0 * (double)c->n - 2;
	double num = (prior->df > 0 ? prior->ss : 0) + (dfr > 0 && isfinite(r) ? dfr * r * r : 0);
	double den = (prior->df > 0 ? prior->df : 0) + (dfr > 0 ? dfr : 0);
	if (!(den > 0) || !(num > 0))
		return 0;
	double lim = K.outlier * sqrt(num / den);
	int flagged = 0;
	for (int a = 0; a < 2; a++) {
		double med = run_stats_median(c->x[a], c->n);
		size_t far = 0;
		for (size_t i = 0; i < c->n; i++)
			far += fabs(c->x[a][i] - med) > lim;
		if (far > outlier_cap(c->n)) {
			c->bimodal[a] = true;
			continue;
		}
		for (size_t i = 0; i < c->n; i++)
			if (fabs(c->x[a][i] - med) > lim) {
				c->out[a][i] = true;
				flagged++;
			}
	}
	return flagged;
}

/* Means, spread and standard error of the kept samples; sign: +1 when
 * higher is better, -1 when lower is. */
static void estimate(struct cmp *c, const struct run_stats_noise *prior, double sign)
{
	c->ss = 0;
	for (int a = 0; a < 2; a++) {
		double s = 0;
		c->k[a] = 0;
		for (size_t i = 0; i < c->n; i++)
			if (!c->out[a][i])
				s += c->x[a][i], c->k[a]++;
		c->mean[a] = c->k[a] ? s / (double)c->k[a] : NAN;
		for (size_t i = 0; i < c->n; i++)
			if (!c->out[a][i])
				c->ss += (c->x[a][i] - c->mean[a]) * (c->x[a][i] - c->mean[a]);
	}
	c->df = (double)c->k[0] + (double)c->k[1] - 2;
	if (c->df < 0)
		c->df = 0;
	c->m = sign * (c->mean[1] - c->mean[0]);
	/* The campaign's noise, unless this change is plainly noisier. */
	bool use_prior = prior->df > 0 && prior->ss >= 0 &&
			 !(c->df >= 2 && c->ss / c->df > K.prior_ratio * prior->ss / prior->df);
	double ss = c->ss + (use_prior ? prior->ss : 0);
	c->df_total = c->df + (use_prior ? prior->df : 0);
	c->s2 = c->df_total > 0 ? ss / c->df_total : NAN;
	c->se = c->k[0] && c->k[1] && c->df_total > 0
			? sqrt(c->s2 * (1 / (double)c->k[0] + 1 / (double)c->k[1]))
			: NAN;
}

/* The zone's far end as a log-ratio (+ better). */
static double zone_log(const struct run_stats_decide_opts *o)
{
	double g = 2.5 * o->min_gain;
	double z = o->minimize ? -log(1 - fmin(g, 0.99)) : log1p(g);
	return z > K.zone_min ? z : K.zone_min;
}

/* The relative gain (+ better) of a log-ratio x signed so + is better:
 * max: r - 1, min: 1 - r, with r the ratio cand / best. */
static double gain_of(double x, bool minimize)
{
	return minimize ? -expm1(-x) : expm1(x);
}

/* The metric's relative change (r - 1) for a log-ratio x signed so + is better. */
static double change_of(double x, double sign)
{
	return expm1(sign * x);
}

/* "+6.2% [+3.1%, +9.4%] (better)": the metric's change and its interval. */
static void add_change(struct rt_sb *sb, double x, double lo, double hi, double sign)
{
	double c = change_of(x, sign), a = change_of(lo, sign), b = change_of(hi, sign);
	rt_sb_addf(sb, "%+.1f%%", c * 100 + 0.0);
	if (isfinite(lo) && isfinite(hi))
		rt_sb_addf(sb, " [%+.1f%%, %+.1f%%]", fmin(a, b) * 100 + 0.0, fmax(a, b) * 100 + 0.0);
	if (fabs(c) >= 5e-4)
		rt_sb_adds(sb, x > 0 ? " (better)" : " (worse)");
}

/* The one-line reason. line: the distance of the keep and revert lines from
 * the middle of the zone (NAN when not reached). */
static void explain(struct run_stats_decision *d, const struct cmp *c, double zone, double line,
		    double zc, double sign, int min_repeats, size_t nb, size_t nc)
{
	struct rt_sb sb = RT_SB_INIT;
	double mid = zone / 2;
	if (!isfinite(c->m)) {
		rt_sb_addf(&sb, "no samples yet, n=%zu+%zu", nb, nc);
	} else {
		add_change(&sb, c->m, c->m - zc * c->se, c->m + zc * c->se, sign);
		if (d->inconclusive)
			rt_sb_adds(&sb, ", at repeats.max within the noise of 0");
		else if (d->at_max && d->verdict == RUN_STATS_KEEP && !(c->m - zc * c->se > 0))
			rt_sb_adds(&sb, ", at repeats.max nearer the zone's far end than 0, unsure: the interval "
					"includes 0");
		else if (d->at_max)
			rt_sb_adds(&sb, d->verdict == RUN_STATS_KEEP
						? ", at repeats.max nearer the zone's far end than 0"
						: ", at repeats.max nearer 0 than the zone's far end");
		else if ((int)c->k[0] < min_repeats || (int)c->k[1] < min_repeats)
			rt_sb_addf(&sb, ", fewer than %d usable repeats", min_repeats);
		else if (!isfinite(line))
			rt_sb_adds(&sb, ", no spread to judge by yet");
		else if (d->verdict == RUN_STATS_KEEP)
			rt_sb_addf(&sb, ", past the keep line %+.1f%%", change_of(mid + line, sign) * 100);
		else if (d->verdict == RUN_STATS_REVERT)
			rt_sb_addf(&sb, ", past the revert line %+.1f%%", change_of(mid - line, sign) * 100);
		else
			rt_sb_addf(&sb, ", between the lines %+.1f%% and %+.1f%%",
				   change_of(mid - line, sign) * 100, change_of(mid + line, sign) * 100);
		rt_sb_addf(&sb, " (zone 0 to %+.1f%%), n=%zu+%zu", change_of(zone, sign) * 100, nb, nc);
	}
	if (d->outliers)
		rt_sb_addf(&sb, ", %d outlier%s left out", d->outliers, d->outliers == 1 ? "" : "s");
	if (c->bimodal[0] || c->bimodal[1])
		rt_sb_addf(&sb, ", %s bimodal (two clusters, all samples kept)",
			   c->bimodal[0] && c->bimodal[1] ? "both arms" : c->bimodal[0] ? "best" : "candidate");
	snprintf(d->reason, sizeof(d->reason), "%s", sb.buf);
	rt_sb_release(&sb);
}

/* The verdict from the estimate; *line: the lines' distance from the middle. */
static enum run_stats_verdict verdict(const struct cmp *c, const struct run_stats_decide_opts *o,
				      double zone, int outliers, struct run_stats_decision *d, double *line)
{
	double mid = zone / 2, se = c->se;
	double z95 = rt_z_two_sided(0.10), zc = rt_z_two_sided(2 * (1 - o->confidence));
	*line = NAN;
	if (!isfinite(c->m)) /* never decide on an undefined estimate */
		return RUN_STATS_CONTINUE;
	if (isfinite(se) && c->df_total > 0)
		*line = (K.a * se * se / zone + K.b * se) * (zc / z95) * (1 + K.q / c->df_total) +
			(outliers ? K.penalty * se : 0);
	bool enough = (int)c->n >= o->min_repeats && (int)c->k[0] >= o->min_repeats &&
		      (int)c->k[1] >= o->min_repeats;
	if ((int)c->n >= o->max_repeats) {
		d->at_max = true;
		if (c->m >= mid && isfinite(se) && c->m >= K.at_max * se)
			return RUN_STATS_KEEP;
		d->inconclusive = c->m >= mid;
		return RUN_STATS_REVERT;
	}
	if (!enough || !isfinite(*line))
		return RUN_STATS_CONTINUE;
	if (c->m - mid >= *line)
		return RUN_STATS_KEEP;
	if (mid - c->m >= *line)
		return RUN_STATS_REVERT;
	return RUN_STATS_CONTINUE;
}

int run_stats_decide(const double *best, size_t nb, const double *cand, size_t nc,
		     const struct run_stats_decide_opts *o, struct run_stats_decision *out)
{
	memset(out, 0, sizeof(*out));
	out->test = RUN_STATS_TEST;
	out->effect = out->lo = out->hi = out->se = NAN;
	out->centre_best = out->centre_cand = NAN;
	out->p_value = NAN;
	if (!(o->confidence > 0 && o->confidence < 1) || o->min_repeats < 1 ||
	    o->max_repeats < o->min_repeats || !isfinite(o->min_gain) || o->prior.df < 0)
		return RT_EINVAL;
	size_t n = nb < nc ? nb : nc;
	out->n_best = out->n_cand = n;
	struct cmp c;
	int rc = cmp_load(&c, best, cand, n);
	double sign = o->minimize ? -1 : 1, zone = zone_log(o);
	double zc = rt_z_two_sided(1 - o->confidence);
	if (!rc && n == 0) {
		c.m = NAN;
		explain(out, &c, zone, NAN, zc, sign, o->min_repeats, nb, nc);
	} else if (!rc) {
		out->outliers = flag_outliers(&c, &o->prior);
		out->bimodal = c.bimodal[0] || c.bimodal[1];
		estimate(&c, &o->prior, sign);
		double line;
		out->verdict = verdict(&c, o, zone, out->outliers, out, &line);
		out->se = c.se;
		out->effect = gain_of(c.m, o->minimize);
		out->lo = gain_of(c.m - zc * c.se, o->minimize);
		out->hi = gain_of(c.m + zc * c.se, o->minimize);
		out->centre_best = exp(c.mean[0]);
		out->centre_cand = exp(c.mean[1]);
		out->p_value = run_stats_mann_whitney(best, n, cand, n, NULL);
		out->noise = (struct run_stats_noise){ c.ss, c.df };
		explain(out, &c, zone, line, zc, sign, o->min_repeats, n, n);
	}
	cmp_release(&c);
	return rc;
}
