/*
 * bench_stats: how good is the keep/revert rule? Simulates changes with
 * known true effects (-3%, 0%, +2%, +2.5%, +5%, +10%) under 3%
 * multiplicative lognormal noise, min_gain 2% (the zone 0..+5%),
 * confidence 0.95, repeats 3..10, looking after every pair; clean, and with
 * 5% of samples 30% slow (throughput divided by 1.3). Three rules see the
 * same sample streams:
 *   new       runner/stats' rule inside a campaign: changes come in
 *             campaigns of 12 (two of each effect, rotated), and each
 *             decision gets the noise of the campaign's earlier ones, as
 *             `ratchet run` passes it;
 *   new-lone  the same rule on a change with no earlier noise (the first
 *             change of a campaign);
 *   old       the previous rule (bootstrap CI of the ratio of medians wholly
 *             >= min_gain keeps, wholly < min_gain reverts, reverted as
 *             inconclusive at max), kept here only for the comparison.
 * Prints the goal's figures (wrong keeps at effect <= 0, wrong reverts at
 * effect >= 2.5 x min_gain, mean repeats per arm), then one row per effect
 * with a Wilson 95% interval for each rate, then the new rule at other
 * noise levels.
 * Usage: bench_stats [changes per effect, default 5000] [old rule's bootstrap B, default 500].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"
#include "runner/base/rt.h"
#include "runner/stats/stats.h"
#include "runner/stats/stats_binom.h"

#define MAXR 10   /* repeats.max */
#define MINR 3    /* repeats.min */
#define NEFF 6    /* effects */
#define PER_CAMPAIGN 12

static const double effects[NEFF] = { -0.03, 0.0, 0.02, 0.025, 0.05, 0.10 };

enum rule { NEW, LONE, OLD, NRULES };
static const char *const rule_names[NRULES] = { "new", "new-lone", "old" };

/* What one rule did at one effect. */
struct tally {
	long n;     /* changes */
	long keep;  /* kept */
	long reps;  /* repeats per arm, summed */
};

/* ---- the previous rule, for the comparison only ---- */
static enum run_stats_verdict old_decide(const double *best, const double *cand, int n, int B,
					 uint64_t seed)
{
	double ratio, lo, hi;
	if (n < MINR)
		return RUN_STATS_CONTINUE;
	if (run_stats_boot_ratio(best, (size_t)n, cand, (size_t)n, 0.95, B, seed, &ratio, &lo, &hi))
		return RUN_STATS_REVERT;
	if (lo - 1 >= 0.02)
		return RUN_STATS_KEEP;
	if (hi - 1 < 0.02 || n >= MAXR)
		return RUN_STATS_REVERT;
	return RUN_STATS_CONTINUE;
}

/* One change's samples: 100 x (1 + effect) for the candidate, lognormal
 * noise of sd sigma, and with p_out a sample is 30% slow. */
static void draw(struct rt_rand *r, double sigma, double effect, double p_out, double *best,
		 double *cand)
{
	for (int i = 0; i < MAXR; i++) {
		best[i] = 100.0 * exp(sigma * rt_rand_normal(r));
		cand[i] = 100.0 * (1 + effect) * exp(sigma * rt_rand_normal(r));
		if (rt_rand_uniform(r) < p_out)
			best[i] /= 1.3;
		if (rt_rand_uniform(r) < p_out)
			cand[i] /= 1.3;
	}
}

/* The new rule, pair after pair; *noise gains this change's noise. */
static int new_decide(const double *best, const double *cand, struct run_stats_noise *noise,
		      int *reps, bool *keep)
{
	struct run_stats_decide_opts o = { .minimize = false, .min_gain = 0.02, .confidence = 0.95,
					   .min_repeats = MINR, .max_repeats = MAXR,
					   .prior = noise ? *noise : (struct run_stats_noise){ 0, 0 } };
	struct run_stats_decision d;
	for (int n = 1; n <= MAXR; n++) {
		if (run_stats_decide(best, (size_t)n, cand, (size_t)n, &o, &d))
			return 3;
		if (d.verdict != RUN_STATS_CONTINUE) {
			*reps = n;
			*keep = d.verdict == RUN_STATS_KEEP;
			if (noise)
				run_stats_noise_add(noise, &d.noise);
			return 0;
		}
	}
	return 3;
}

static void tally_add(struct tally *t, int reps, bool keep)
{
	t->n++;
	t->reps += reps;
	t->keep += keep;
}

/* Every change of `campaigns` campaigns under one noise model. */
static int simulate(long campaigns, double p_out, int B, uint64_t seed, struct tally t[NRULES][NEFF])
{
	struct rt_rand rng;
	rt_rand_seed(&rng, seed);
	for (long c = 0; c < campaigns; c++) {
		struct run_stats_noise noise = { 0, 0 };
		for (int j = 0; j < PER_CAMPAIGN; j++) {
			int e = (int)((j + c) % NEFF), reps;
			bool keep;
			double best[MAXR], cand[MAXR];
			draw(&rng, 0.03, effects[e], p_out, best, cand);
			if (new_decide(best, cand, &noise, &reps, &keep))
				return 3;
			tally_add(&t[NEW][e], reps, keep);
			if (new_decide(best, cand, NULL, &reps, &keep))
				return 3;
			tally_add(&t[LONE][e], reps, keep);
			int n = MINR;
			enum run_stats_verdict v;
			while ((v = old_decide(best, cand, n, B, (uint64_t)(c * PER_CAMPAIGN + j) + 1)) ==
			       RUN_STATS_CONTINUE)
				n++;
			tally_add(&t[OLD][e], n, v == RUN_STATS_KEEP);
		}
	}
	return 0;
}

/* Rate in percent of k out of n, with its Wilson 95% interval. */
static void rate(long k, long n, double *pct, double *lo, double *hi)
{
	double z = rt_z_two_sided(0.05);
	rt_wilson(k, n, z, lo, hi);
	*pct = 100.0 * (double)k / (double)n;
	*lo *= 100;
	*hi *= 100;
}

/* The goal's figures for one noise model: the worst wrong-keep rate over
 * effects <= 0, the worst wrong-revert rate over effects >= +5%, and the
 * largest mean repeats over the effects outside the zone. */
static void figures(const char *model, struct tally t[NRULES][NEFF], bool repeats_goal)
{
	for (int r = 0; r < NRULES; r++) {
		double wk = 0, wr = 0, mr = 0, lo, hi, p;
		long wkk = 0, wkn = 1, wrk = 0, wrn = 1;
		for (int e = 0; e < NEFF; e++) {
			const struct tally *x = &t[r][e];
			double keep = (double)x->keep / (double)x->n, reps = (double)x->reps / (double)x->n;
			if (effects[e] <= 0 && 100 * keep >= wk)
				wk = 100 * keep, wkk = x->keep, wkn = x->n;
			if (effects[e] >= 0.05 && 100 * (1 - keep) >= wr)
				wr = 100 * (1 - keep), wrk = x->n - x->keep, wrn = x->n;
			if ((effects[e] <= 0 || effects[e] >= 0.05) && reps > mr)
				mr = reps;
		}
		rate(wkk, wkn, &p, &lo, &hi);
		printf("wrong_keeps_%s_%s: %.2f %% [%.2f, %.2f] (target: <= 5)\n", model, rule_names[r], p,
		       lo, hi);
		rate(wrk, wrn, &p, &lo, &hi);
		printf("wrong_reverts_%s_%s: %.2f %% [%.2f, %.2f] (target: <= 5)\n", model, rule_names[r],
		       p, lo, hi);
		printf("mean_repeats_%s_%s: %.2f per arm (target: %s)\n", model, rule_names[r], mr,
		       repeats_goal ? "<= 6" : "informational");
	}
}

static void rows(const char *model, struct tally t[NRULES][NEFF])
{
	printf("# %s: effect, then per rule: kept %% [Wilson 95%%], mean repeats per arm\n", model);
	for (int e = 0; e < NEFF; e++) {
		printf("#   %+5.1f%%", effects[e] * 100);
		for (int r = 0; r < NRULES; r++) {
			double p, lo, hi;
			rate(t[r][e].keep, t[r][e].n, &p, &lo, &hi);
			printf("  %s %6.2f%% [%5.2f, %6.2f] %5.2f", rule_names[r], p, lo, hi,
			       (double)t[r][e].reps / (double)t[r][e].n);
		}
		printf("%s\n", effects[e] <= 0 ? "  (keeps are wrong)"
			       : effects[e] >= 0.05 ? "  (reverts are wrong)"
						    : "  (indifference zone)");
	}
}

/* The new rule in campaigns at other noise levels (clean): the bounds hold
 * at 3% with 10 repeats; this shows how they degrade, and that less noise
 * buys fewer repeats. */
static int sweep(long per_effect)
{
	static const double sigmas[] = { 0.01, 0.02, 0.04, 0.06 };
	printf("# the new rule at other noise levels (clean, campaigns of %d, %ld changes per effect): "
	       "wrong keeps at 0%%, wrong reverts at +5%%, mean repeats at 0%% and +5%%\n",
	       PER_CAMPAIGN, per_effect);
	for (size_t k = 0; k < RT_ARRAY_SIZE(sigmas); k++) {
		struct rt_rand rng;
		rt_rand_seed(&rng, 7 + k);
		struct tally t[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
		for (long c = 0; c < per_effect * 2 / PER_CAMPAIGN; c++) {
			struct run_stats_noise noise = { 0, 0 };
			for (int j = 0; j < PER_CAMPAIGN; j++) {
				double best[MAXR], cand[MAXR];
				int reps;
				bool keep;
				draw(&rng, sigmas[k], j % 2 ? 0.05 : 0, 0, best, cand);
				if (new_decide(best, cand, &noise, &reps, &keep))
					return 3;
				tally_add(&t[j % 2], reps, keep);
			}
		}
		printf("#   noise %.0f%%: wrong keeps %.2f%%, wrong reverts %.2f%%, mean repeats %.2f / %.2f\n",
		       sigmas[k] * 100, 100.0 * (double)t[0].keep / (double)t[0].n,
		       100.0 * (double)(t[1].n - t[1].keep) / (double)t[1].n,
		       (double)t[0].reps / (double)t[0].n, (double)t[1].reps / (double)t[1].n);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long per_effect = argc > 1 ? atol(argv[1]) : 5000;
	int B = argc > 2 ? atoi(argv[2]) : 500;
	if (per_effect < NEFF)
		per_effect = NEFF;
	long campaigns = per_effect * NEFF / PER_CAMPAIGN;
	double t0 = rt_now_s();
	printf("# %ld changes per effect (campaigns of %d), 3%% lognormal noise, min_gain 2%% "
	       "(zone 0..+5%%), confidence 0.95, repeats %d..%d, old rule's bootstrap B=%d\n",
	       campaigns * PER_CAMPAIGN / NEFF, PER_CAMPAIGN, MINR, MAXR, B);
	static struct tally clean[NRULES][NEFF], outl[NRULES][NEFF];
	if (simulate(campaigns, 0, B, 20261130, clean) || simulate(campaigns, 0.05, B, 20261201, outl))
		return 3;
	figures("clean", clean, true);
	figures("outliers", outl, false);
	rows("clean", clean);
	rows("outliers (5% of samples 30% slow)", outl);
	if (sweep(per_effect / 2))
		return 3;
	printf("bench_stats_wall: %.1f s (target: informational)\n", rt_now_s() - t0);
	return 0;
}
