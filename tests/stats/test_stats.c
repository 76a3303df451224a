/*
 * Unit tests of runner/stats/stats.c with answers computed by hand (or once with
 * python3 at development time): quantiles, MAD, standard deviation,
 * Mann-Whitney U (exact and normal approximation with ties), the
 * deterministic bootstrap, the decision rule and the regression check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "runner/stats/stats.h"
#include "runner/base/rt.h"

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
					       .max_repeats = 10, .boot_b = 2000, .seed = 1 };
}

static void test_decide_keep(void **state)
{
	double best[] = { 100, 101, 99, 100, 100.5 };
	double cand[] = { 110, 111, 109, 110, 110.5 };
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	NEAR(d.effect, 0.10, 1e-12);
	assert_true(d.lo >= 0.02 && d.hi > d.lo);
	assert_non_null(strstr(d.reason, "+10.0% ["));
	assert_non_null(strstr(d.reason, "] >= 2% at 95%, n=5+5"));
	assert_true(d.p_value < 0.05); /* complete separation of 5+5 (with ties: normal approx.) */
	assert_string_equal(d.test, "bootstrap-median-ratio+mann-whitney");
	/* goal min: the same samples mean the candidate got 10% slower */
	o = opts(true);
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	NEAR(d.effect, -0.10, 1e-12);
	assert_true(d.hi < 0);
	/* ... and the reverse is a keep with a 1 - 100/110 = 9.1% gain */
	assert_int_equal(run_stats_decide(cand, 5, best, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_KEEP);
	NEAR(d.effect, 1 - 100.0 / 110.0, 1e-12);
	assert_non_null(strstr(d.reason, "+9.1% ["));
}

static void test_decide_continue_and_inconclusive(void **state)
{
	struct run_stats_decide_opts o = opts(false);
	struct run_stats_decision d;
	double best[] = { 100, 104, 96, 102, 98, 101, 99, 103, 97, 100 };
	double cand[] = { 102, 106, 98, 104, 100, 103, 101, 105, 99, 102 };
	/* below min repeats: continue whatever the numbers */
	assert_int_equal(run_stats_decide(best, 2, cand, 2, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	assert_non_null(strstr(d.reason, "< min 3 repeats"));
	/* a +2% shift with 4% spread straddles 2% */
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_CONTINUE);
	assert_non_null(strstr(d.reason, "straddles 2% at 95%, n=5+5"));
	assert_int_equal(run_stats_decide(best, 10, cand, 10, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	assert_true(d.inconclusive);
	assert_true(strncmp(d.reason, "inconclusive after 10 repeats: ", 31) == 0);
	/* clearly nothing: revert before max */
	double same[] = { 100, 100.1, 99.9, 100, 100.05 };
	assert_int_equal(run_stats_decide(same, 5, same, 5, &o, &d), 0);
	assert_int_equal(d.verdict, RUN_STATS_REVERT);
	assert_false(d.inconclusive);
	assert_non_null(strstr(d.reason, "< 2% at 95%, n=5+5"));
	/* bad options */
	o.max_repeats = 1;
	assert_int_equal(run_stats_decide(best, 5, cand, 5, &o, &d), RT_EINVAL);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_mad_mean_sd),
		cmocka_unit_test(test_mann_whitney_exact),
		cmocka_unit_test(test_mann_whitney_ties),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_decide_keep),
		cmocka_unit_test(test_decide_continue_and_inconclusive),
		cmocka_unit_test(test_regression),
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
 *   test_decide_keep                      keep for max, revert/keep for min, reason text
 *   test_decide_continue_and_inconclusive min repeats, straddle, inconclusive at max
 *   test_regression                       worse beyond noise, direction, floor
 */
