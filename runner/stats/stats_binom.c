/*
 * Binomial intervals and tests for the accuracy gate (see stats_binom.h).
 * Probabilities of Bin(n, 1/2) are summed in log space so n in the
 * thousands neither overflows nor underflows.
 */
#include "runner/stats/stats_binom.h"

#include <math.h>

double rt_z_two_sided(double alpha)
{
	if (!(alpha > 0 && alpha < 1))
		return 1.959963984540054;
	/* Solve 0.5 * erfc(z / sqrt 2) = alpha / 2 by bisection: slow but exact
	 * to the last bit, and only called once per run. */
	double lo = 0, hi = 40, target = alpha / 2;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > target)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void rt_wilson(long k, long n, double z, double *lo, double *hi)
{
	if (n <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	double p = (double)k / (double)n, nn = (double)n, z2 = z * z;
	double denom = 1 + z2 / nn;
	double center = (p + z2 / (2 * nn)) / denom;
	double half = z / denom * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
	*lo = center - half;
	*hi = center + half;
	/* Exact ends at k = 0 and k = n (rounding can leave 1e-17 off). */
	if (k == 0)
		*lo = 0;
	if (k == n)
		*hi = 1;
	if (*lo < 0)
		*lo = 0;
	if (*hi > 1)
		*hi = 1;
}

void rt_newcombe_paired(long n11, long n10, long n01, long n00, double z, double *diff, double *lo,
			double *hi)
{
	long n = n11 + n10 + n01 + n00;
	if (n <= 0) {
		*diff = 0;
		*lo = -1;
		*hi = 1;
		return;
	}
	double nn = (double)n;
	/* Margins: p1 the candidate's accuracy, p2 the baseline's. */
	long k1 = n11 + n10, k2 = n11 + n01;
	double p1 = (double)k1 / nn, p2 = (double)k2 / nn;
	double l1, u1, l2, u2;
	rt_wilson(k1, n, z, &l1, &u1);
	rt_wilson(k2, n, z, &l2, &u2);
	/* phi of the 2x2 table; 0 when a margin is empty. */
	double r1 = (double)(n11 + n10), r0 = (double)(n01 + n00);
	double c1 = (double)(n11 + n01), c0 = (double)(n10 + n00);
	double phi = 0;
	if (r1 > 0 && r0 > 0 && c1 > 0 && c0 > 0)
		phi = ((double)n11 * (double)n00 - (double)n10 * (double)n01) / sqrt(r1 * r0 * c1 * c0);
	double d = p1 - p2;
	double dl = (p1 - l1) * (p1 - l1) - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) * (u2 - p2);
	double du = (u1 - p1) * (u1 - p1) - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) * (p2 - l2);
	*diff = d;
	*lo = d - sqrt(dl > 0 ? dl : 0);
	*hi = d + sqrt(du > 0 ? du : 0);
	if (*lo < -1)
		*lo = -1;
	if (*hi > 1)
		*hi = 1;
}

/* log P(X = i) for X ~ Bin(n, 1/2). */
static double log_pmf_half(long n, long i)
{
	return lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
	       (double)n * log(2.0);
}

double rt_mcnemar_midp(long b, long c)
{
	long n = b + c;
	if (n <= 0)
		return 1;
	long k = b < c ? b : c;
	double below = 0;
	for (long i = 0; i < k; i++)
		below += exp(log_pmf_half(n, i));
	double p = 2 * (below + 0.5 * exp(log_pmf_half(n, k)));
	return p > 1 ? 1 : p;
}
