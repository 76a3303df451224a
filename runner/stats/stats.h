/*
 * Statistics for decisions: robust summaries (median, MAD, quantiles),
 * mean and standard deviation, NVBench-style relative standard deviation, a
 * percentile bootstrap of the ratio of medians (its draws come from the one
 * PRNG, runner/base/rand.h), the Mann-Whitney U test, and the
 * keep/revert/continue rule with sequential stopping used by the campaign
 * loop, plus the "worse beyond the noise" regression check for any metric.
 *
 * Nothing here allocates memory the caller must free, and nothing prints.
 * Every function that takes samples leaves them untouched (they are copied
 * before sorting). See docs/statistics.md for the definitions.
 */
#ifndef RT_STATS_H
#define RT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- summaries ---- */
struct run_stats_summary {
	size_t n;       /* number of samples */
	double mean;    /* arithmetic mean */
	double stddev;  /* sample standard deviation (n - 1); 0 when n < 2 */
	double rsd;     /* stddev / |mean| (NVBench's "noise"); 0 when mean is 0 */
	double median;  /* 0.5 quantile */
	double mad;     /* median absolute deviation from the median (unscaled) */
	double min;     /* smallest sample */
	double max;     /* largest sample */
	double p90;     /* 0.90 quantile */
	double p95;     /* 0.95 quantile */
	double p99;     /* 0.99 quantile */
};

/* Quantile q in [0,1] with linear interpolation between order statistics
 * (Hyndman-Fan type 7, the default of numpy and R). NAN when n is 0. */
double run_stats_quantile(const double *x, size_t n, double q);
/* The same on samples already sorted ascending (not copied). Infinite
 * samples are allowed (the load generator counts a failed request as +inf):
 * interpolating towards an infinity gives that infinity. */
double run_stats_quantile_sorted(const double *sorted, size_t n, double q);
double run_stats_median(const double *x, size_t n);
/* Median absolute deviation (unscaled; multiply by 1.4826 for a normal sigma). */
double run_stats_mad(const double *x, size_t n);
double run_stats_mean(const double *x, size_t n);
/* Sample standard deviation (divides by n - 1); 0 when n < 2. */
double run_stats_stddev(const double *x, size_t n);
/* Relative standard deviation stddev / |mean|, as NVBench's noise criterion. */
double run_stats_rsd(const double *x, size_t n);
void run_stats_summarize(const double *x, size_t n, struct run_stats_summary *out);

/* ---- tests ---- */
/* Percentile bootstrap of median(b) / median(a): resample each arm with
 * replacement B times (B <= 0: 2000), deterministic for a seed. Writes the
 * observed ratio and the [lo, hi] interval at `confidence` (e.g. 0.95).
 * Returns 0, or RT_EINVAL when an arm is empty or a median of a is not > 0. */
int run_stats_boot_ratio(const double *a, size_t na, const double *b, size_t nb,
			 double confidence, int B, uint64_t seed, double *ratio, double *lo,
			 double *hi);

/* Mann-Whitney U, two-sided. Exact null distribution when there are no ties
 * and na + nb <= 20, else the normal approximation with tie and continuity
 * correction. *u (if non-NULL) receives U of b (number of pairs b > a, ties
 * count one half). Returns the p-value; 1 when an arm is empty. */
double run_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			      double *u);
/* Standard normal upper tail P(Z > z). */
double run_stats_norm_sf(double z);

/* ---- the decision rule ---- */
enum run_stats_verdict {
	RUN_STATS_CONTINUE = 0, /* not settled: take more samples */
	RUN_STATS_KEEP,         /* gain interval entirely >= min_gain */
	RUN_STATS_REVERT,       /* gain interval entirely < min_gain, or inconclusive at max */
};

struct run_stats_decide_opts {
	bool minimize;      /* goal: min (lower is better); false: max */
	double min_gain;    /* fraction, e.g. 0.02 */
	double confidence;  /* e.g. 0.95 */
	int min_repeats;    /* no verdict before both arms have this many samples */
	int max_repeats;    /* at this many, an unsettled question becomes REVERT */
	int boot_b;         /* bootstrap resamples; <= 0: 2000 */
	uint64_t seed;      /* bootstrap seed */
};

struct run_stats_decision {
	enum run_stats_verdict verdict; /* keep, revert or continue */
	double effect;       /* relative gain, + is better: max: mc/mb - 1; min: 1 - mc/mb */
	double lo;           /* lower end of the gain interval */
	double hi;           /* upper end of the gain interval */
	double p_value;      /* Mann-Whitney U two-sided */
	const char *test;    /* "bootstrap-median-ratio+mann-whitney" */
	double median_best;  /* median of the current best's samples */
	double median_cand;  /* median of the candidate's samples */
	size_t n_best;       /* samples of the best */
	size_t n_cand;       /* samples of the candidate */
	bool inconclusive;   /* REVERT only because max_repeats was reached */
	char reason[192];    /* one line, e.g. "+6.1% [+4.0%, +8.3%] >= 2% at 95%, n=4+4" */
};

/* Decide on the candidate against the best. Returns 0 or RT_EINVAL (bad
 * options, non-positive medians). */
int run_stats_decide(const double *best, size_t nb, const double *cand, size_t nc,
		     const struct run_stats_decide_opts *o, struct run_stats_decision *out);

const char *run_stats_verdict_name(enum run_stats_verdict v);

/* ---- regressions on any tracked metric ---- */
struct run_stats_regression {
	bool regressed;  /* worse beyond the noise */
	double delta;    /* relative change of the median, mc/mb - 1 (raw, not signed by direction) */
	double lo;       /* interval of the relative change */
	double hi;
	double p_value;  /* Mann-Whitney U two-sided */
	char reason[160];/* one line, e.g. "+12.0% [+8.1%, +15.2%] worse (lower is better)" */
};

/* Regressed = the interval of the ratio excludes 1 on the worse side AND
 * |delta| > floor (e.g. 0.01). Returns 0 or RT_EINVAL. */
int run_stats_regression(const double *best, size_t nb, const double *cand, size_t nc,
			 bool higher_is_better, double confidence, double floor, uint64_t seed,
			 struct run_stats_regression *out);

#endif
