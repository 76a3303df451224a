/*
 * Statistics for decisions: robust summaries (median, MAD, quantiles),
 * mean and standard deviation, NVBench-style relative standard deviation, a
 * percentile bootstrap of the ratio of medians (its draws come from the one
 * PRNG, runner/base/rand.h), the Mann-Whitney U test, the "worse beyond the
 * noise" regression check for any metric (stats.c), and the
 * keep/revert/continue rule the campaign loop asks after every pair of
 * samples (stats_decide.c).
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
/* The smallest relative change between two arms of `repeats` samples each
 * that samples as spread as x can resolve at `confidence`: the half-width
 * z * sqrt(2 / repeats) * 1.2533 * cv of the difference of two medians
 * (1.2533 = sqrt(pi / 2), a median's standard error over a mean's), where
 * cv is the robust relative spread 1.4826 * MAD / |median| (the standard
 * deviation over |mean| when the MAD is 0). NAN when n < 2 or the median
 * is 0; 0 when x does not vary. */
double run_stats_resolvable_gain(const double *x, size_t n, int repeats, double confidence);

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

/* ---- the decision rule (stats_decide.c) ---- */
/*
 * Keep or revert a candidate against the current best, looking after every
 * pair of samples (interleaved A/B). The question is an indifference zone:
 * a change whose true gain is <= 0 should be reverted, one whose gain is
 * >= 2.5 x min_gain should be kept; in between either answer is fine. The
 * statistic is the mean paired log-ratio log(cand/best) (a sample flagged
 * as an outlier is left out of its arm's mean), its standard error comes
 * from the within-arm spread pooled with the campaign's noise so far, and
 * the rule stops as soon as the estimate is far enough from the middle of
 * the zone; at repeats.max the nearer end decides. docs/statistics.md
 * gives the rule, its constants and their calibration (tests/perf/bench_stats.c).
 */
enum run_stats_verdict {
	RUN_STATS_CONTINUE = 0, /* not settled: take another pair */
	RUN_STATS_KEEP,         /* the gain is nearer 2.5 x min_gain than 0, clearly or at max */
	RUN_STATS_REVERT,       /* the gain is nearer 0, clearly or at max, or too noisy at max */
};

/* Noise of log(sample): the pooled sum of squared deviations from each
 * arm's mean, outliers left out, and its degrees of freedom (samples minus
 * arms). A campaign adds every decided comparison's noise and hands the sum
 * to the next comparison as its prior; all zero is "nothing known yet". */
struct run_stats_noise {
	double ss; /* sum of squared deviations of log(sample) */
	double df; /* degrees of freedom */
};
/* The prior's degrees of freedom are kept at most this many: older
 * comparisons weigh less, and a campaign whose noise drifts follows it. */
#define RUN_STATS_NOISE_DF_MAX 40.0
/* Add x to acc, scaling acc down so that it keeps at most RUN_STATS_NOISE_DF_MAX. */
void run_stats_noise_add(struct run_stats_noise *acc, const struct run_stats_noise *x);

struct run_stats_decide_opts {
	bool minimize;                /* goal: min (lower is better); false: max */
	double min_gain;              /* fraction, e.g. 0.02; the zone is 0 .. 2.5 x min_gain */
	double confidence;            /* e.g. 0.95: the interval shown, and how wide the lines are */
	int min_repeats;              /* no verdict before both arms have this many usable samples */
	int max_repeats;              /* at this many pairs the nearer end of the zone decides */
	struct run_stats_noise prior; /* the campaign's noise before this comparison (zero: none) */
};

struct run_stats_decision {
	enum run_stats_verdict verdict; /* keep, revert or continue */
	double effect;       /* relative gain, + is better: max: r - 1, min: 1 - r, r = cand / best centres */
	double lo;           /* interval of the gain at the confidence */
	double hi;
	double p_value;      /* Mann-Whitney U two-sided, descriptive (not the rule) */
	const char *test;    /* RUN_STATS_TEST */
	double centre_best;  /* geometric mean of the best's samples, outliers left out */
	double centre_cand;  /* the same of the candidate's */
	size_t n_best;       /* samples of the best looked at (pairs: min of both arms) */
	size_t n_cand;       /* samples of the candidate looked at */
	int outliers;        /* samples left out as outliers, at most (n - 1) / 2 of each arm */
	bool bimodal;        /* an arm had more far samples than that: two clusters, none left out */
	double se;           /* standard error of the mean log-ratio; NAN when unknown */
	bool at_max;         /* decided at max_repeats by the nearer end of the zone */
	bool inconclusive;   /* at max, reverted because the estimate was within the noise of 0 */
	struct run_stats_noise noise; /* this comparison's noise, for the campaign's prior */
	char reason[256];    /* one line: change [interval] (direction), why, zone, n */
};

#define RUN_STATS_TEST "sequential paired log-ratio, indifference zone"

/* Decide on the candidate against the best, on the first min(nb, nc) pairs.
 * Returns 0, or RT_EINVAL for bad options or a sample that is not a
 * positive finite number (the rule works on logarithms). */
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
