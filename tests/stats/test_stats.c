/*
 * Unit tests of runner/stats/ with answers computed by hand (or once with
 * python3 at development time): quantiles, MAD, standard deviation,
 * Mann-Whitney U (exact and normal approximation with ties), the
 * deterministic bootstrap, the regression check, and the decision rule
 * (stats_decide.c: its verdicts and reasons, outliers, the campaign's
 * noise, and a seeded simulation of looking after every pair).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "runner/base/rand.h"
#include "runner/base/rt.h"
#include "runner/stats/stats.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_quantiles(void **state)
{
	double x[] = { 10, 1, 9, 2, 8, 3, 7, 4, 6, 5 };
	NEAR(run_stats_median(x, 10), 5.5, 1e-12);
	NEAR(run_stats_quantile(x, 10, 0.9), 9.1, 1e-12);
	NEAR(run_stats_quantile(x, 10, 0.0), 1, 1e-12);
	NEAR(run_stats_quantile(x, 10, 1.0), 10, 1e-12);
	double y[] = { 3, 1, 2 };
	NEAR(run_stats_median(y, 3), 2, 1e-12);
	assert_true(isnan(run_stats_median(y, 0)));
	/* the input is not reordered */
	assert_true(x[0] == 10 && x[1] == 1);
}

static void test_mad_mean_sd(void **state)
{
	double x[] = { 1, 1, 2, 2, 4, 6, 9 };
	NEAR(run_stats_mad(x, 7), 1, 1e-12);
	double y[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	NEAR(run_stats_mean(y, 8), 5, 1e-12);
	NEAR(run_stats_stddev(y, 8), sqrt(32.0 / 7.0), 1e-12);
	NEAR(run_stats_rsd(y, 8), sqrt(32.0 / 7.0) / 5, 1e-12);
	struct run_stats_summary s;
	run_stats_summarize(y, 8, &s);
	assert_int_equal(s.n, 8);
	NEAR(s.median, 4.5, 1e-12);
	NEAR(s.min, 2, 0);
	NEAR(s.max, 9, 0);
	NEAR(s.p90, 7.6, 1e-12); /* h = 6.3: 7 + 0.3 * 2 */
}

static void test_mann_whitney_exact(void **state)
{
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	double u;
	NEAR(run_stats_mann_whitney(a, 3, b, 3, &u), 0.1, 1e-12); /* 2 * 1/20 */
	NEAR(u, 9, 0);
	double c[] = { 1, 3, 5 }, d[] = { 2, 4, 6 };
	NEAR(run_stats_mann_whitney(c, 3, d, 3, &u), 0.7, 1e-12); /* 2 * 7/20 */
	NEAR(u, 6, 0);
	double e[] = { 1.1, 2.2, 3.3, 4.4 }, f[] = { 5, 6, 7, 8 };
	NEAR(run_stats_mann_whitney(e, 4, f, 4, NULL), 2.0 / 70.0, 1e-12);
	/* symmetric in direction */
	NEAR(run_stats_mann_whitney(f, 4, e, 4, NULL), 2.0 / 70.0, 1e-12);
	NEAR(run_stats_mann_whitney(a, 0, b, 3, NULL), 1, 0);
}

static void test_mann_whitney_ties(void **state)
{
	/* normal approximation, tie and continuity corrected (python3, by hand) */
	double a[] = { 1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10 };
	double b[] = { 3, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 12, 13 };
	double u;
	double p = run_stats_mann_whitney(a, 12, b, 13, &u);
	NEAR(u, 115.5, 1e-9);
	NEAR(p, 0.043390781029470346, 1e-9);
	/* all equal: no evidence at all */
	double c[] = { 5, 5, 5 }, d[] = { 5, 5, 5 };
	NEAR(run_stats_mann_whitney(c, 3, d, 3, NULL), 1, 0);
}

static void test_bootstrap(void **state)
{
	double a[] = { 100, 101, 99, 100.5, 99.5 };
	double b[] = { 110, 111, 109, 110.5, 109.5 };
	double r, lo, hi, r2, lo2, hi2;
	assert_int_equal(run_stats_boot_ratio(a, 5, b, 5, 0.95, 2000, 7, &r, &lo, &hi), 0);
	NEAR(r, 1.1, 1e-12);
	assert_true(lo <= r && r <= hi);
	/* the CI cannot leave the range of possible ratios */
	assert_true(lo >= 109.0 / 101.0 - 1e-12 && hi <= 111.0 / 99.0 + 1e-12);
	assert_int_equal(run_stats_boot_ratio(a, 5, b, 5, 0.95, 2000, 7, &r2, &lo2, &hi2), 0);
	assert_true(lo == lo2 && hi == hi2);
	/* pinned: the draws come from runner/base/rand.h and must not change */
	assert_true(lo == 1.0889956159795087 && hi == 1.1155778894472361);
	double z[] = { 0, 0, 0 };
	assert_int_equal(run_stats_boot_ratio(z, 3, b, 5, 0.95, 100, 7, &r, &lo, &hi), RT_EINVAL);
	assert_int_equal(run_stats_boot_ratio(a, 0, b, 5, 0.95, 100, 7, &r, &lo, &hi), RT_EINVAL);
}

static struct run_stats_decide_opts opts(bool minimize)
{
	return (struct run_stats_decide_opts){ .minimize = minimize, .min_gain = 0.02,
					       .confidence = 0.95, .min_repeats = 3,
					       .max_repeats = 10 };
}

static void test_decide_keep(void **state)
{
	double best[] = { 100, 101, 99, 100, 100.5 };
	double cand[] = { 110, 111.1, 108.9, 110, 110.55 }; /* 1.1 x best */
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	NEAR(d.effect, 0.10, 1e-12);
	/* the centres are geometric means, and their ratio is the gain */
	NEAR(d.centre_cand / d.centre_best - 1, d.effect, 1e-12);
	NEAR(d.centre_best, exp((log(100) + log(101) + log(99) + log(100) + log(100.5)) / 5), 1e-9);
	assert_true(d.lo > 0.05 && d.hi > d.lo && d.lo < d.effect && d.effect < d.hi);
	assert_true(strncmp(d.reason, "+10.0% [", 8) == 0);
	assert_non_null(strstr(d.reason, "] (better), past the keep line +"));
	assert_non_null(strstr(d.reason, "(zone 0 to +5.0%), n=5+5"));
	assert_false(d.at_max);
	assert_true(d.p_value < 0.05);
	assert_string_equal(d.test, RUN_STATS_TEST);
	assert_true(d.noise.df == 8 && d.noise.ss > 0);
	/* a clear 10% is kept as soon as min_repeats allow */
	assert_int_equal(run_stats_decide(best, 3, cand, 3, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	/* goal min: the same samples mean the candidate got 10% slower */
	o = opts(true);
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	NEAR(d.effect, -0.10, 1e-12);
	assert_true(d.hi < 0);
	assert_true(strncmp(d.reason, "+10.0% [", 8) == 0);
	assert_non_null(strstr(d.reason, "(worse), past the revert line -"));
	assert_non_null(strstr(d.reason, "(zone 0 to -5.0%)"));
	/* ... and the reverse is a keep: the metric fell 9.1%, a 1 - 100/110 gain */
	assert_int_equal(run_stats_decide(cand, 5, best, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	NEAR(d.effect, 1 - 100.0 / 110.0, 1e-12);
	assert_true(strncmp(d.reason, "-9.1% [", 7) == 0);
	assert_non_null(strstr(d.reason, "(better)"));
}

static void test_decide_continue_and_max(void **state)
{
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	double best[] = { 100, 104, 96, 102, 98, 101, 99, 103, 97, 100 };
	double cand[10], cand2[10], wide[] = { 100, 130, 77, 115, 87, 100, 125, 80, 110, 90 };
	double wide3[10];
	for (int i = 0; i < 10; i++) {
		cand[i] = best[i] * 1.03;
		cand2[i] = best[i] * 1.02;
		wide3[i] = wide[i] * 1.03;
	}
	/* below min repeats: continue whatever the numbers */
	assert_int_equal(run_stats_decide(best, 2, cand, 2, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	assert_non_null(strstr(d.reason, "fewer than 3 usable repeats"));
	/* +3%, in the zone 0..+5%, with a 3% spread: between the lines */
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	assert_true(strncmp(d.reason, "+3.0% [", 7) == 0);
	assert_non_null(strstr(d.reason, ", between the lines "));
	/* at max the nearer end decides: +3% is nearer +5% than 0 ... */
	assert_int_equal(run_stats_decide(best, 10, cand, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	assert_true(d.at_max && !d.inconclusive);
	assert_true(strncmp(d.reason, "+3.0% [", 7) == 0);
	assert_non_null(strstr(d.reason, ", at repeats.max nearer the zone's far end than 0"));
	/* ... +2% nearer 0 */
	assert_int_equal(run_stats_decide(best, 10, cand2, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	assert_true(d.at_max && !d.inconclusive);
	assert_non_null(strstr(d.reason, ", at repeats.max nearer 0 than the zone's far end"));
	/* ... and +3% in a 15% spread is within the noise of 0: revert */
	assert_int_equal(run_stats_decide(wide, 10, wide3, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	assert_true(d.at_max && d.inconclusive);
	assert_non_null(strstr(d.reason, ", at repeats.max within the noise of 0"));
	/* clearly nothing: revert at min repeats */
	double same[] = { 100, 100.1, 99.9, 100, 100.05 };
	assert_int_equal(run_stats_decide(same, 3, same, 3, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	assert_false(d.at_max);
	assert_true(strncmp(d.reason, "+0.0% [", 7) == 0);
	assert_non_null(strstr(d.reason, "past the revert line +"));
	/* no samples yet */
	assert_int_equal(run_stats_decide(best, 0, cand, 0, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	assert_string_equal(d.reason, "no samples yet, n=0+0");
	/* bad options, and samples the logarithm refuses */
	o.max_repeats = 1;
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), RT_EINVAL);
	o = opts(false);
	o.confidence = 1;
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), RT_EINVAL);
	o = opts(false);
	double zero[] = { 100, 0, 100 }, inf[] = { 100, INFINITY, 100 };
	assert_int_equal(run_stats_decide(best, 3, zero, 3, &o, &d), RT_EINVAL);
	assert_int_equal(run_stats_decide(inf, 3, best, 3, &o, &d), RT_EINVAL);
}

/* One sample 30% slow among tight ones is left out, and the rule says so. */
static void test_decide_outlier(void **state)
{
	double best[] = { 100, 101, 99, 100.5, 99.5, 100 };
	double cand[] = { 110, 111, 109, 110.5, 109.5 / 1.3, 110 };
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 6, cand, 6, &o, &d), 0);
	assert_int_equal(d.outliers, 1);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	NEAR(d.effect, 0.10, 0.002);
	assert_non_null(strstr(d.reason, ", 1 outlier left out"));
	assert_true(d.noise.df == 9); /* 6 + 5 samples, two arms */
	/* a 30% slow best sample would have faked a gain: left out too */
	double flat[] = { 100, 101, 99, 100.5, 99.5, 100 };
	double slow[] = { 100, 101, 99, 100.5 / 1.3, 99.5, 100 };
	assert_int_equal(run_stats_decide(slow, 6, flat, 6, &o, &d), 0);
	assert_int_equal(d.outliers, 1);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	NEAR(d.effect, 0, 0.005);
}

/* Issue 23's case: on a quiet host (a pooled noise of 4e-8) the best arm's
 * four samples fall in two clusters 3% apart, the median lies between them
 * and every sample is "far" from it. The rule left out all four, its mean
 * became NaN and a +66% candidate was reverted at repeats.max with "no
 * samples yet". An arm keeps a majority; two clusters are said, not cut. */
static void test_decide_bimodal(void **state)
{
	double best[] = { 993.7, 993.8, 964.0, 964.1 };
	double cand[4];
	for (int i = 0; i < 4; i++)
		cand[i] = 1.66 * 978.9 * (1 + 1e-4 * i);
	struct run_stats_decide_opts o = { .minimize = false, .min_gain = 0.03, .confidence = 0.95,
					   .min_repeats = 3, .max_repeats = 4,
					   .prior = { 4e-8, 4 } };
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 4, cand, 4, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	assert_true(isfinite(d.centre_best) && isfinite(d.centre_cand) && isfinite(d.se));
	NEAR(d.effect, 0.66, 0.01);
	assert_int_equal(d.outliers, 0);
	assert_true(d.bimodal);
	assert_null(strstr(d.reason, "no samples yet"));
	assert_non_null(strstr(d.reason, "best bimodal (two clusters, all samples kept)"));
	/* the same best against itself: a clear, finite revert, never a keep */
	assert_int_equal(run_stats_decide(best, 4, best, 4, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	NEAR(d.effect, 0, 1e-12);
	/* one slow sample among three is still left out (at most (n - 1) / 2) */
	double one[] = { 993.7, 993.8, 964.0, 993.75 };
	assert_int_equal(run_stats_decide(one, 4, cand, 4, &o, &d), 0);
	assert_int_equal(d.outliers, 1);
	assert_false(d.bimodal);
}

/* A keep at repeats.max whose interval includes 0 says it is unsure (issue
 * 23: the CPU demo kept +14.3% [-7.2, +40.7] with no caveat); one whose
 * interval excludes 0 does not. */
static void test_decide_unsure_keep(void **state)
{
	double best[] = { 100, 130, 77, 115, 87, 100, 125, 80, 110, 90 };
	double sh[] = { 90, 110, 125, 80, 100, 87, 115, 77, 130, 100 }, cand[10];
	for (int i = 0; i < 10; i++)
		cand[i] = sh[i] * 1.12;
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 10, cand, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	assert_true(d.at_max && d.lo < 0);
	assert_non_null(strstr(d.reason, ", unsure: the interval includes 0"));
	double b2[] = { 100, 104, 96, 102, 98, 101, 99, 103, 97, 100 }, c2[10];
	for (int i = 0; i < 10; i++)
		c2[i] = b2[i] * 1.03;
	assert_int_equal(run_stats_decide(b2, 10, c2, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	assert_true(d.at_max && d.lo > 0);
	assert_null(strstr(d.reason, "unsure"));
}

/* One arm of n samples of a random shape: constants, ties from a few
 * values, two clusters, or lognormal noise, with an occasional slow one. */
static void random_arm(struct rt_rand *r, double *x, int n, double centre)
{
	int shape = (int)rt_rand_below(r, 4);
	double gap = 0.01 + 0.3 * rt_rand_uniform(r);
	for (int i = 0; i < n; i++) {
		switch (shape) {
		case 0: x[i] = centre; break;
		case 1: x[i] = centre * (1 + 0.01 * (double)rt_rand_below(r, 3)); break;
		case 2: x[i] = centre * (rt_rand_below(r, 2) ? 1 + gap : 1) * (1 + 1e-5 * rt_rand_normal(r)); break;
		default: x[i] = centre * exp(0.03 * rt_rand_normal(r)); break;
		}
		if (rt_rand_below(r, 10) == 0)
			x[i] /= 1.3;
	}
}

/* A property over random small samples (n 2..10): no arm is ever emptied,
 * at most (n - 1) / 2 samples of an arm are left out, every verdict has a
 * finite estimate, a keep has a finite standard error, and repeats.max
 * always ends with a verdict. */
static void test_decide_property(void **state)
{
	struct rt_rand r;
	rt_rand_seed(&r, 23);
	static const struct run_stats_noise priors[] = { { 0, 0 }, { 4e-8, 4 }, { 40 * 9e-4, 40 } };
	for (int t = 0; t < 4000; t++) {
		int max = 2 + (int)rt_rand_below(&r, 9);
		struct run_stats_decide_opts o = {
			.minimize = rt_rand_below(&r, 2), .min_gain = 0.01 * (double)rt_rand_below(&r, 6),
			.confidence = 0.95, .min_repeats = 1 + (int)rt_rand_below(&r, (uint64_t)max),
			.max_repeats = max, .prior = priors[rt_rand_below(&r, 3)] };
		double best[10], cand[10];
		random_arm(&r, best, max, 100);
		random_arm(&r, cand, max, 100 * (0.8 + 0.5 * rt_rand_uniform(&r)));
		for (int n = 1; n <= max; n++) {
			struct run_stats_decision d;
			assert_int_equal(run_stats_decide(best, (size_t)n, cand, (size_t)n, &o, &d), 0);
			assert_true(isfinite(d.centre_best) && isfinite(d.centre_cand));
			assert_true(d.outliers <= 2 * ((n - 1) / 2));
			assert_null(strstr(d.reason, "no samples yet"));
			if (d.verdict != RUN_STATS_CONTINUE)
				assert_true(isfinite(d.effect));
			if (d.verdict == RUN_STATS_KEEP)
				assert_true(isfinite(d.se) && isfinite(d.lo) && isfinite(d.hi) && d.effect > 0);
			if (n == max)
				assert_int_not_equal(d.verdict, RUN_STATS_CONTINUE);
			if (d.bimodal)
				assert_non_null(strstr(d.reason, "bimodal"));
		}
	}
}

/* The campaign's noise so far narrows the lines of a comparison with few
 * samples, unless this comparison is plainly noisier. */
static void test_decide_prior(void **state)
{
	double best[] = { 100, 102, 98 }, cand[] = { 105, 107.1, 102.9 };
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 3, cand, 3, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	double se_alone = d.se;
	o.prior = (struct run_stats_noise){ 40 * 0.02 * 0.02, 40 };
	assert_int_equal(run_stats_decide(best, 3, cand, 3, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	assert_true(d.se < 1.5 * se_alone);
	/* a prior four times quieter than this comparison is set aside */
	o.prior = (struct run_stats_noise){ 40 * 0.005 * 0.005, 40 };
	assert_int_equal(run_stats_decide(best, 3, cand, 3, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	NEAR(d.se, se_alone, 1e-15);
	/* the prior keeps at most RUN_STATS_NOISE_DF_MAX degrees of freedom */
	struct run_stats_noise acc = { 0, 0 }, x = { 1, 30 };
	run_stats_noise_add(&acc, &x);
	assert_true(acc.ss == 1 && acc.df == 30);
	run_stats_noise_add(&acc, &x);
	NEAR(acc.df, RUN_STATS_NOISE_DF_MAX, 1e-12);
	NEAR(acc.ss, 2 * RUN_STATS_NOISE_DF_MAX / 60, 1e-12);
	x = (struct run_stats_noise){ 5, 0 };
	run_stats_noise_add(&acc, &x); /* nothing to add */
	NEAR(acc.df, RUN_STATS_NOISE_DF_MAX, 1e-12);
}

/* Looking after every pair stays within the bounds: a seeded simulation of
 * lone changes (no prior) at 3% lognormal noise, min_gain 2%, repeats 3..10.
 * tests/perf/bench_stats.c prints the full figures; this pins that a change
 * to the rule cannot silently break them. */
static void test_decide_every_pair(void **state)
{
	struct rt_rand r;
	rt_rand_seed(&r, 15);
	struct run_stats_decide_opts o = opts(false);
	const int N = 1500;
	long wrong[2] = { 0, 0 }, reps = 0;
	for (int e = 0; e < 2; e++)
		for (int t = 0; t < N; t++) {
			double best[10], cand[10];
			for (int i = 0; i < 10; i++) {
				best[i] = 100 * exp(0.03 * rt_rand_normal(&r));
				cand[i] = 100 * (e ? 1.05 : 1.0) * exp(0.03 * rt_rand_normal(&r));
			}
			struct run_stats_decision d = { .verdict = RUN_STATS_CONTINUE };
			int n;
			for (n = 1; n <= 10 && d.verdict == RUN_STATS_CONTINUE; n++)
				assert_int_equal(run_stats_decide(best, (size_t)n, cand, (size_t)n, &o, &d), 0);
			assert_int_not_equal(d.verdict, RUN_STATS_CONTINUE);
			wrong[e] += e ? d.verdict == RUN_STATS_REVERT : d.verdict == RUN_STATS_KEEP;
			reps += n - 1;
		}
	assert_true(wrong[0] <= N * 6 / 100);
	assert_true(wrong[1] <= N * 6 / 100);
	assert_true(reps <= 2 * N * 66 / 10); /* mean repeats <= 6.6 for a lone change */
}

static void test_regression(void **state)
{
	double best[] = { 1.00, 1.01, 0.99, 1.00, 1.005 };
	double slow[] = { 1.10, 1.11, 1.09, 1.10, 1.105 };
	double tiny[] = { 1.005, 1.015, 0.995, 1.005, 1.01 };
	struct run_stats_regression r;
	/* latency: lower is better, 10% higher is a regression */
	assert_int_equal(run_stats_regression(best, 5, slow, 5, false, 0.95, 0.01, 1, &r), 0);
	assert_true(r.regressed);
	NEAR(r.delta, 0.10, 1e-12);
	assert_true(r.lo > 0);
	assert_non_null(strstr(r.reason, "worse (lower is better)"));
	/* throughput: higher is better, the same numbers are an improvement */
	assert_int_equal(run_stats_regression(best, 5, slow, 5, true, 0.95, 0.01, 1, &r), 0);
	assert_false(r.regressed);
	/* +0.5%: below the 1% floor, not a regression */
	assert_int_equal(run_stats_regression(best, 5, tiny, 5, false, 0.95, 0.01, 1, &r), 0);
	assert_false(r.regressed);
}

/* What the baseline's spread lets repeats resolve: 1.96 * sqrt(2/8) *
 * 1.2533 * cv at 95%; less with more repeats, nothing without spread. */
static void test_resolvable_gain(void **state)
{
	(void)state;
	double x[] = { 90, 95, 100, 105, 110 }; /* MAD 5, median 100: cv 0.07413 */
	double g = run_stats_resolvable_gain(x, 5, 8, 0.95);
	NEAR(g, 1.959964 * 0.5 * 1.2533 * 0.07413, 1e-4);
	assert_true(run_stats_resolvable_gain(x, 5, 32, 0.95) < g);
	double flat[] = { 7, 7, 7 };
	NEAR(run_stats_resolvable_gain(flat, 3, 3, 0.95), 0, 1e-12);
	assert_true(isnan(run_stats_resolvable_gain(x, 1, 3, 0.95)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_mad_mean_sd),
		cmocka_unit_test(test_mann_whitney_exact),
		cmocka_unit_test(test_mann_whitney_ties),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_decide_keep),
		cmocka_unit_test(test_decide_continue_and_max),
		cmocka_unit_test(test_decide_outlier),
		cmocka_unit_test(test_decide_bimodal),
		cmocka_unit_test(test_decide_property),
		cmocka_unit_test(test_decide_unsure_keep),
		cmocka_unit_test(test_decide_prior),
		cmocka_unit_test(test_decide_every_pair),
		cmocka_unit_test(test_regression),
		cmocka_unit_test(test_resolvable_gain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_quantiles                        type-7 quantiles, median, empty input
 *   test_mad_mean_sd                      MAD, mean, sample stddev, rsd, summary
 *   test_mann_whitney_exact               exact p for small samples without ties
 *   test_mann_whitney_ties                normal approximation with ties (python3 value)
 *   test_bootstrap                        observed ratio, CI bounds, determinism, pinned CI, bad input
 *   test_decide_keep                      keep for max, revert/keep for min, centres, reason text
 *   test_decide_continue_and_max          min repeats, between the lines, the nearer end at max,
 *                                         within the noise at max, no samples, bad input
 *   test_decide_outlier                   a 30% slow sample left out (either arm), said in the reason
 *   test_decide_bimodal                   issue 23: a 2/2 split best on a quiet host keeps its samples,
 *                                         says "bimodal", and a +66% candidate is kept
 *   test_decide_property                  random small samples (constants, ties, two clusters, noise):
 *                                         no arm emptied, every verdict on a finite estimate
 *   test_decide_unsure_keep               a keep at repeats.max with 0 in its interval says "unsure"
 *   test_decide_prior                     the campaign's noise narrows the lines; a quieter prior is
 *                                         set aside; run_stats_noise_add's cap
 *   test_decide_every_pair                seeded simulation: error rates and repeats looking after
 *                                         every pair
 *   test_regression                       worse beyond noise, direction, floor
 */
