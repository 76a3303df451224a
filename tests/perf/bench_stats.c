/*
 * bench_stats: how good is the sequential decision rule? Simulates
 * candidates with known true effects (0%, 2%, 5%, 10%) under 3%
 * multiplicative lognormal noise, min_gain 2%, confidence 0.95, repeats
 * min 3 max 10, and compares sequential stopping (decide after every new
 * pair of samples) with a fixed 10 repeats on the same sample streams.
 * Prints the mean repeats used, the rate of wrong decisions (keeping a 0%
 * change, reverting a 5% or 10% change) and, for the 2% boundary, the keep
 * rate. Usage: bench_stats [trials per effect, default 1000] [bootstrap B].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "runner/stats/stats.h"
#include "runner/base/rand.h"
#include "runner/base/rt.h"

#define MAXR 10

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 1000;
	int B = argc > 2 ? atoi(argv[2]) : 2000;
	const double effects[] = { 0.0, 0.02, 0.05, 0.10 };
	const double noise = 0.03;
	struct rt_rand rng;
	rt_rand_seed(&rng, 20261130);
	double t0 = rt_now_s();
	printf("# %d trials per effect, 3%% lognormal noise, min_gain 2%%, confidence 0.95, "
	       "repeats 3..10, bootstrap B=%d\n", trials, B);
	for (size_t e = 0; e < RT_ARRAY_SIZE(effects); e++) {
		long seq_keep = 0, fix_keep = 0, seq_reps = 0, seq_inconcl = 0;
		for (int t = 0; t < trials; t++) {
			double best[MAXR], cand[MAXR];
			for (int i = 0; i < MAXR; i++) {
				best[i] = 100.0 * exp(noise * rt_rand_normal(&rng));
				cand[i] = 100.0 * (1 + effects[e]) * exp(noise * rt_rand_normal(&rng));
			}
			struct run_stats_decide_opts o = { .minimize = false, .min_gain = 0.02,
							   .confidence = 0.95, .min_repeats = 3,
							   .max_repeats = MAXR, .boot_b = B,
							   .seed = (uint64_t)t + 1 };
			struct run_stats_decision d;
			int n = 3;
			for (;; n++) {
				if (run_stats_decide(best, (size_t)n, cand, (size_t)n, &o, &d))
					return 3;
				if (d.verdict != RUN_STATS_CONTINUE)
					break;
			}
			seq_reps += n;
			seq_keep += d.verdict == RUN_STATS_KEEP;
			seq_inconcl += d.inconclusive;
			o.min_repeats = MAXR;
			if (run_stats_decide(best, MAXR, cand, MAXR, &o, &d))
				return 3;
			fix_keep += d.verdict == RUN_STATS_KEEP;
		}
		double pct = effects[e] * 100;
		double sk = 100.0 * (double)seq_keep / trials, fk = 100.0 * (double)fix_keep / trials;
		double mean_reps = (double)seq_reps / trials;
		printf("effect_%.0fpct_mean_repeats_sequential: %.2f repeats (target: < 10, fixed uses 10)\n",
		       pct, mean_reps);
		printf("effect_%.0fpct_repeats_saved: %.1f %% (target: > 0)\n", pct,
		       100.0 * (MAXR - mean_reps) / MAXR);
		printf("effect_%.0fpct_inconclusive_sequential: %.1f %% (target: informational)\n", pct,
		       100.0 * (double)seq_inconcl / trials);
		if (effects[e] == 0.0) {
			printf("effect_0pct_wrong_keep_sequential: %.2f %% (target: <= 5)\n", sk);
			printf("effect_0pct_wrong_keep_fixed10: %.2f %% (target: <= 5)\n", fk);
		} else if (effects[e] == 0.02) {
			printf("effect_2pct_keep_rate_sequential: %.1f %% (target: informational, boundary)\n", sk);
			printf("effect_2pct_keep_rate_fixed10: %.1f %% (target: informational, boundary)\n", fk);
		} else {
			printf("effect_%.0fpct_wrong_revert_sequential: %.2f %% (target: low)\n", pct, 100 - sk);
			printf("effect_%.0fpct_wrong_revert_fixed10: %.2f %% (target: low)\n", pct, 100 - fk);
		}
	}
	printf("bench_stats_wall: %.1f s (target: informational)\n", rt_now_s() - t0);
	return 0;
}
