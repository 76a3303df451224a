/*
 * The gate's statistics against values worked out by hand: Wilson interval
 * ends, the normal quantile, McNemar mid-p as exact fractions of 2^n, and
 * Newcombe's paired interval (its reduction to the independent-samples
 * form when phi is 0, and its narrowing when the runs agree).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "runner/stats/stats_binom.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) < (tol))

static void test_z(void **state)
{
	(void)state;
	NEAR(rt_z_two_sided(0.05), 1.959963984540054, 1e-9);
	NEAR(rt_z_two_sided(0.01), 2.5758293035489, 1e-9);
	NEAR(rt_z_two_sided(0.3173105078629141), 1.0, 1e-9); /* P(|Z| > 1) */
}

static void test_wilson(void **state)
{
	(void)state;
	double lo, hi, z = 1.959963984540054;
	/* 0/10: lo 0, hi = z^2 / (n + z^2) = 3.8415 / 13.8415 */
	rt_wilson(0, 10, z, &lo, &hi);
	NEAR(lo, 0, 1e-12);
	NEAR(hi, z * z / (10 + z * z), 1e-12);
	/* 10/10 mirrors it */
	rt_wilson(10, 10, z, &lo, &hi);
	NEAR(lo, 10 / (10 + z * z), 1e-12);
	NEAR(hi, 1, 1e-12);
	/* 5/10 is symmetric about 0.5: 0.5 +- z/(1+z^2/n) * sqrt(0.025 + z^2/400) */
	rt_wilson(5, 10, z, &lo, &hi);
	double half = z / (1 + z * z / 10) * sqrt(0.025 + z * z / 400);
	NEAR(lo, 0.5 - half, 1e-12);
	NEAR(hi, 0.5 + half, 1e-12);
	NEAR(lo, 0.2366, 1e-4); /* the usual table value */
	/* 1/10: [0.0179, 0.4042] in published tables */
	rt_wilson(1, 10, z, &lo, &hi);
	NEAR(lo, 0.0179, 1e-4);
	NEAR(hi, 0.4042, 1e-4);
	/* n = 0: no information */
	rt_wilson(0, 0, z, &lo, &hi);
	NEAR(lo, 0, 1e-15);
	NEAR(hi, 1, 1e-15);
}

static void test_mcnemar(void **state)
{
	(void)state;
	NEAR(rt_mcnemar_midp(0, 0), 1, 1e-15);
	/* n = 1, k = 0: 2 * (0 + 1/2 * 1/2) */
	NEAR(rt_mcnemar_midp(0, 1), 0.5, 1e-12);
	/* n = 10, k = 2: 2 * ((1 + 10) + 45 / 2) / 1024 = 67 / 1024 */
	NEAR(rt_mcnemar_midp(2, 8), 67.0 / 1024, 1e-12);
	NEAR(rt_mcnemar_midp(8, 2), 67.0 / 1024, 1e-12);
	/* b == c: 2 * (386 + 252 / 2) / 1024 = 1 */
	NEAR(rt_mcnemar_midp(5, 5), 1, 1e-12);
	/* n = 3, k = 0: 2 * (1/2 * 1/8) */
	NEAR(rt_mcnemar_midp(3, 0), 0.125, 1e-12);
	/* large n stays finite and tiny */
	double p = rt_mcnemar_midp(0, 2000);
	assert_true(p >= 0 && p < 1e-300 * 1e10);
	NEAR(rt_mcnemar_midp(1000, 1000), 1, 1e-9);
}

static void test_newcombe(void **state)
{
	(void)state;
	double z = 1.959963984540054, d, lo, hi;
	/* Identical runs: diff 0, interval around 0. */
	rt_newcombe_paired(90, 0, 0, 10, z, &d, &lo, &hi);
	NEAR(d, 0, 1e-12);
	assert_true(lo < 0 && hi > 0);
	/* phi = 0 (n11*n00 == n10*n01): the independent-samples (Newcombe 10) form. */
	rt_newcombe_paired(25, 25, 25, 25, z, &d, &lo, &hi);
	double l1, u1, l2, u2;
	rt_wilson(50, 100, z, &l1, &u1);
	rt_wilson(50, 100, z, &l2, &u2);
	NEAR(d, 0, 1e-12);
	NEAR(lo, -sqrt((0.5 - l1) * (0.5 - l1) + (u2 - 0.5) * (u2 - 0.5)), 1e-12);
	NEAR(hi, sqrt((u1 - 0.5) * (u1 - 0.5) + (0.5 - l2) * (0.5 - l2)), 1e-12);
	/* Strong agreement (phi > 0) narrows the interval for the same margins. */
	double d2, lo2, hi2;
	rt_newcombe_paired(48, 2, 2, 48, z, &d2, &lo2, &hi2);
	NEAR(d2, 0, 1e-12);
	assert_true(hi2 - lo2 < hi - lo);
	/* 3 flips to wrong, 1 to right of 100: diff -0.02, inside its interval. */
	rt_newcombe_paired(85, 1, 3, 11, z, &d, &lo, &hi);
	NEAR(d, -0.02, 1e-12);
	assert_true(lo < d && d < hi && lo > -1 && hi < 1);
	/* n = 0 */
	rt_newcombe_paired(0, 0, 0, 0, z, &d, &lo, &hi);
	NEAR(lo, -1, 1e-15);
	NEAR(hi, 1, 1e-15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_z),        /* normal quantiles */
		cmocka_unit_test(test_wilson),   /* ends, symmetry, table values, n = 0 */
		cmocka_unit_test(test_mcnemar),  /* exact fractions, symmetry, large n */
		cmocka_unit_test(test_newcombe), /* phi = 0 reduction, narrowing, bounds */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
