/*
 * Binomial statistics for accuracy gates: the Wilson score interval of a
 * proportion, Newcombe's interval for the difference of two paired
 * proportions (Newcombe 1998, method 10: Wilson intervals of each margin
 * combined with the phi correlation of the 2x2 table), and McNemar's exact
 * test with the mid-p correction on the discordant pairs.
 */
#ifndef RT_STATS_BINOM_H
#define RT_STATS_BINOM_H

/* Two-sided normal quantile for confidence 1 - alpha, e.g. 1.95996 for 0.05. */
double rt_z_two_sided(double alpha);

/* Wilson score interval of k successes out of n at normal quantile z.
 * n == 0 gives [0, 1]. */
void rt_wilson(long k, long n, double z, double *lo, double *hi);

/*
 * Paired 2x2 table of a candidate against a baseline on the same items:
 * n11 both right, n10 candidate right and baseline wrong, n01 candidate
 * wrong and baseline right, n00 both wrong. *diff = p_cand - p_base =
 * (n10 - n01) / n, with its Newcombe (method 10) interval at quantile z.
 * n == 0 gives diff 0 and [-1, 1].
 */
void rt_newcombe_paired(long n11, long n10, long n01, long n00, double z, double *diff, double *lo,
			double *hi);

/* McNemar's exact test, mid-p version, two-sided, on b and c discordant
 * pairs: min(1, 2 * (P(X < k) + P(X = k) / 2)) with X ~ Bin(b + c, 1/2) and
 * k = min(b, c). 1 when b + c == 0. */
double rt_mcnemar_midp(long b, long c);

#endif
