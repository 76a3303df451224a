/*
 * Unit tests of search v2 (issue 28): the model finds the single narrow
 * optimum of the synthetic needle (an irregular ordered parameter, a cliff
 * beside it) within a budget; on the synthetic 100k-point space (80%
 * infeasible) it proposes points beyond any fixed 20k prefix and finds the
 * optimum that the old prefix hid, each proposal under 0.25 s of CPU;
 * past a broad plateau it finds the single best point of a second, narrow
 * basin; halving falls back to full fidelity when cheap measurements rank points
 * unlike full ones, and says so; auto is a pure function of the history
 * and names its arm; the GP's power-of-two term predicts an untried
 * power of two from the others, not from its slow neighbours; expected
 * improvement keeps off a cliff beside the best; the chance that a point is feasible keeps off a failed point's twins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/agent.h"
#include "agents/gp.h"
#include "agents/space.h"
#include "search_synth.h"

/* Both generators are for bench_search; the values above are used here. */
static void (*const unused_generators[])(FILE *) __attribute__((unused)) = { synth_needle, synth_large };

typedef double (*value_fn)(const struct agent_space *sp, uint64_t c, double fidelity);

/* Search on past the strategy's own stop (an offline replay's setting). */
static bool no_early_stop;
/* End a run at its first full measurement that reaches the goal. */
static bool stop_at_goal;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Run fn on the space from seed for at most budget proposals; returns the
 * proposal at which the value first reached at least goal in full (0:
 * never); *cpu_max the longest proposal; last the last reason. */
static size_t run(const struct agent_space *sp, agent_search_fn fn, value_fn val, uint64_t seed, size_t budget,
		  double goal, struct agent_obs *obs, size_t *n, double *cpu_max, char *last, size_t lastn)
{
	size_t nv, found = 0;
	uint64_t *valid = agent_space_valid(sp, &nv);
	*n = 0;
	*cpu_max = 0;
	for (size_t it = 0; it < budget; it++) {
		struct agent_search q = { .sp = sp, .valid = valid, .n_valid = nv, .obs = obs, .n_obs = *n, .seed = seed,
					  .min_gain = 0.01, .no_early_stop = no_early_stop };
		struct agent_pick pk;
		memset(&pk, 0, sizeof(pk));
		double t0 = cpu_now();
		int rc = fn(&q, &pk);
		*cpu_max = fmax(*cpu_max, cpu_now() - t0);
		snprintf(last, lastn, "%s", pk.reason);
		if (rc != 1)
			break;
		double v = val(sp, pk.code, pk.fidelity);
		if (getenv("SEARCH_TRACE")) /* every proposal, while tuning a strategy */
			printf("%3zu %8.3f %s %s\n", *n + 1, v, pk.reason, pk.state);
		obs[(*n)++] = (struct agent_obs){ pk.code, v, pk.fidelity };
		if (!found && pk.fidelity >= 1 && v >= goal)
			found = *n;
		if (found && stop_at_goal)
			break;
	}
	free(valid);
	return found;
}

static void test_model_finds_the_needle(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_needle_space(&sp);
	struct agent_obs *obs = xcalloc(800, sizeof(*obs));
	size_t n;
	double cpu;
	char last[200];
	size_t found = run(&sp, agent_search_model, synth_needle_point, 1, 200, 99.9, obs, &n, &cpu, last, sizeof(last));
	printf("needle: the optimum after %zu proposals (budget 200 of 7,936 valid points); longest proposal %.3f s\n",
	       found, cpu);
	assert_true(found > 0);
	free(obs);
	agent_space_release(&sp);
}

/* The optimum of the large space, where the old fixed prefix (the first
 * 20,000 points of the seeded shuffle with salt 2) did not reach: the
 * issue's bar, within 2% on at least 9 of 10 such seeds, each proposal
 * under 0.25 s of CPU. Each run stops at the optimum (the only point within
 * 2%), at the model's own stop, or after LARGE_BUDGET proposals (0.5% of
 * the space). Model v2 (a grid and one pass of relevance, on 80 points)
 * needed restarts here: without them seeds 4, 10 and 11 circled the second
 * basin, at 90% of the optimum, for all 500 proposals (7 of 10; 9 of 10
 * with them). The model with every weight fitted by gradient (agents/gp.c)
 * on up to 256 points, and no restarts, gets there on 10 of 10 (95 to 382
 * proposals, the longest 0.089 s of CPU). The test holds the 9. */
#define LARGE_SEEDS 10
#define LARGE_BUDGET 500

/* Does the old prefix of seed s hold the point opt? */
static bool in_prefix(const struct agent_space *sp, const uint64_t *valid, size_t nv, uint64_t s, uint64_t opt)
{
	struct agent_search q = { .sp = sp, .valid = valid, .n_valid = nv, .seed = s };
	uint64_t *perm = agent_shuffled(&q, 2);
	bool in = false;
	for (size_t k = 0; k < 20000 && !in; k++)
		in = perm[k] == opt;
	free(perm);
	return in;
}

static void test_model_beyond_the_prefix(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_large_space(&sp);
	size_t nv;
	uint64_t *valid = agent_space_valid(&sp, &nv);
	uint64_t opt = 7 + 10 * 2 + 100 * 8 + 1000 * 5 + 10000 * 3;
	struct agent_obs *obs = xcalloc(LARGE_BUDGET + 1, sizeof(*obs));
	size_t seeds = 0, hits = 0;
	double worst = 0;
	stop_at_goal = true;
	for (uint64_t seed = 1; seed < 100 && seeds < LARGE_SEEDS; seed++) {
		if (in_prefix(&sp, valid, nv, seed, opt))
			continue;
		size_t n;
		double cpu;
		char last[200];
		size_t found = run(&sp, agent_search_model, synth_large_point, seed, LARGE_BUDGET, 0.98 * 50, obs, &n, &cpu,
				   last, sizeof(last));
		printf("large: seed %llu (optimum beyond the old prefix): within 2%% after %zu proposals (0: not in %zu); "
		       "longest proposal %.3f s of CPU%s%s\n", (unsigned long long)seed, found, n, cpu, found ? "" : "; ",
		       found ? "" : last);
		seeds++;
		hits += found > 0;
		worst = fmax(worst, cpu);
	}
	stop_at_goal = false;
	printf("large: within 2%% on %zu of %zu seeds; longest proposal %.3f s of CPU\n", hits, seeds, worst);
	assert_int_equal(seeds, LARGE_SEEDS);
	assert_true(hits >= 9);
#if !defined(__SANITIZE_ADDRESS__)
	assert_true(worst < 0.25);
#endif
	free(obs);
	free(valid);
	agent_space_release(&sp);
}

/* coordinate on the 100k space: each proposal replays the whole history,
 * and that replay once rebuilt the seeded order of all 100,000 points at
 * every replayed step (57 ms a proposal on average over 500, the longest
 * 146 ms); it now builds it once a proposal. The longest of 400 proposals
 * stays under 40 ms of CPU (it was about 100 ms). */
static void test_coordinate_scales(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_large_space(&sp);
	struct agent_obs *obs = xcalloc(800, sizeof(*obs));
	size_t n;
	double cpu;
	char last[200];
	no_early_stop = true;
	run(&sp, agent_search_coordinate, synth_large_point, 1, 400, 1e9, obs, &n, &cpu, last, sizeof(last));
	no_early_stop = false;
	printf("coordinate on 100,000 points: %zu proposals, longest %.4f s of CPU\n", n, cpu);
	assert_int_equal(n, 400);
#if !defined(__SANITIZE_ADDRESS__)
	assert_true(cpu < 0.04);
#endif
	free(obs);
	agent_space_release(&sp);
}

/* A dense landscape over the large space (every point feasible). */
static double dense(const struct agent_space *sp, uint64_t c)
{
	static const int best[5] = { 7, 2, 8, 5, 3 };
	double v = 100;
	for (size_t k = 0; k < 5; k++)
		v -= (double)(k + 1) * fabs((double)agent_point_index(sp, c, k) - best[k]);
	return v;
}

/* A 4,096-point space of four ordered parameters of 8 values. */
static void small_space(struct agent_space *sp)
{
	synth_grid(sp, 4, 8, "q");
}

/* A smooth landscape with one best point (6, 1, 4, 2) and a 2% step to the next. */
static double smooth(const struct agent_space *sp, uint64_t c, double fidelity)
{
	(void)fidelity;
	static const int best[4] = { 6, 1, 4, 2 };
	double v = 100;
	for (size_t k = 0; k < 4; k++) {
		double d = (double)agent_point_index(sp, c, k) - best[k];
		v *= exp(-0.02 * (double)(k + 1) * d * d);
	}
	return v;
}

/* The model's own stop is honest and not wasteful: on a smooth landscape it
 * stops by itself once the optimum is measured, well before it has seen a
 * large share of the space (seed 1: the optimum at 29; with the stop's
 * uncertainty widened by 2, as in model v1, it had not stopped after 600
 * evaluations; widened by 1.5 it stops after 75). */
static void test_model_stops(void **state)
{
	(void)state;
	struct agent_space sp;
	small_space(&sp);
	struct agent_obs *obs = xcalloc(600, sizeof(*obs));
	size_t n;
	double cpu;
	char last[200];
	size_t found = run(&sp, agent_search_model, smooth, 1, 600, 99.99, obs, &n, &cpu, last, sizeof(last));
	printf("model on a smooth 4,096-point space: the optimum at %zu, stopped by itself after %zu: %s\n", found, n,
	       last);
	assert_true(found > 0);
	assert_non_null(strstr(last, "stopping early"));
	assert_true(n < 150);
	free(obs);
	agent_space_release(&sp);
}

/* Two basins, the MI50 convolution's shape: a broad plateau whose top
 * (1, 1, 1, 1) is 4% below the single best point (6, 6, 6, 6), which sits
 * in a second, narrow basin whose other points are at least 28% below it. */
static double two_basins(const struct agent_space *sp, uint64_t c, double fidelity)
{
	(void)fidelity;
	double a = 0, b = 0;
	for (size_t k = 0; k < 4; k++) {
		double i = (double)agent_point_index(sp, c, k);
		a += (i - 1) * (i - 1);
		b += (i - 6) * (i - 6);
	}
	return fmax(96 * exp(-0.05 * a), b == 0 ? 100 : 80 * exp(-0.1 * b));
}

/* Two basins: the plateau holds every early best point, and the second
 * basin's best point is found within 120 evaluations (3% of the space) on
 * at least 10 seeds of 20. Model v2 needed an exploring proposal outside
 * the best's basin for 9 (0 without it); the model whose weights are each
 * fitted by gradient, with expected improvement alone, reaches 13 (at 67
 * to 90). */
static void test_model_second_basin(void **state)
{
	(void)state;
	struct agent_space sp;
	small_space(&sp);
	struct agent_obs *obs = xcalloc(120, sizeof(*obs));
	size_t n, hits = 0;
	double cpu;
	char last[200];
	no_early_stop = true;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		size_t at = run(&sp, agent_search_model, two_basins, seed, 120, 99.9, obs, &n, &cpu, last, sizeof(last));
		printf("model, two basins, seed %llu: the best point at %zu\n", (unsigned long long)seed, at);
		hits += at > 0;
	}
	no_early_stop = false;
	printf("model, two basins: the best point within 120 evaluations on %zu seeds of 20\n", hits);
	assert_true(hits >= 10);
	free(obs);
	agent_space_release(&sp);
}

/* A cliff beside the best: on a line of 64 points the best (3) sits beside
 * points 20 times slower (5 and 7), and a slope measured from 18 to 63
 * rises toward it. The GP on the log of the values (a cliff is 3 units
 * below, not a drop that flattens every other difference) proposes 35,
 * where the slope is thinly measured, with expected improvement; not 8 to
 * 11, past the cliff. (Model v2's proposal outside the best's basin, which
 * this test was written for, went to 8 without its filter.) */
static void test_model_keeps_off_the_cliff(void **state)
{
	(void)state;
	static const struct {
		unsigned x;   /* the point's position */
		double value; /* its value (higher is better) */
	} hist[] = {
		{ 3, 100 }, { 1, 95 }, { 5, 5 }, { 7, 5 }, { 0, 90 },
		{ 18, 85 }, { 21, 80 }, { 24, 76 }, { 28, 72 }, { 34, 68 },
		{ 40, 62 }, { 48, 60 }, { 55, 57 }, { 63, 55 },
	};
	struct agent_space sp;
	synth_grid(&sp, 1, 64, "x");
	size_t nv;
	uint64_t *valid = agent_space_valid(&sp, &nv);
	struct agent_obs obs[RT_ARRAY_SIZE(hist)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(hist); i++)
		obs[i] = (struct agent_obs){ hist[i].x, hist[i].value, 1 };
	struct agent_search q = { .sp = &sp, .valid = valid, .n_valid = nv, .obs = obs, .n_obs = RT_ARRAY_SIZE(obs),
				  .seed = 1, .min_gain = 0.01, .start = -1 };
	struct agent_pick pk;
	memset(&pk, 0, sizeof(pk));
	assert_int_equal(agent_search_model(&q, &pk), 1);
	size_t at = agent_point_index(&sp, pk.code, 0);
	printf("model, a cliff beside the best: %s\n", pk.reason);
	assert_non_null(strstr(pk.reason, "expected improvement"));
	assert_true(at >= 12); /* not beside the cliff at 5 and 7 */
	free(valid);
	agent_space_release(&sp);
}

/* A tile of tile_x x tile_y (each 1 to 128) that needs more than 128
 * elements of shared memory fails; the rest run at a speed that rises with
 * the tile's area (a square tile a little faster), whatever pad and ldg. */
static double smem_tile(const struct agent_space *sp, uint64_t c)
{
	int a = (int)agent_point_index(sp, c, 0), b = (int)agent_point_index(sp, c, 1);
	if ((1 << (a + b)) > 128)
		return NAN;
	return ldexp(1 - 0.03 * abs(a - b), a + b);
}

/* The chance that a point is feasible is a GP of its own on the outcomes
 * (agents/feas.h), not a share of them under the objective's kernel: on the
 * 256 points of smem_tile, 14 tiles of 256 elements or more failed (in
 * twins that differ only in pad or ldg, which failures do not depend on)
 * and 16 of at most 64 ran, the best 8x8. The objective's GP rates the
 * failed side highest (expected improvement 0.67 sd at 16x32 pad=1 ldg=0,
 * untried, against 0.37 at 8x16 pad=1 ldg=0, which fits). The old share
 * rated both alike (0.47 and 0.53; 0.50 at 16x16 pad=1 ldg=1, the twin of
 * two failures), and the proposal was 16x32, which fails; the GP (its
 * fitted noise 0.3, at FEAS_NOISE) rates them 0.015 and 0.54 (the
 * twin 0.23), and the proposal is 8x16. Checked: with agent_feas_of's fitted
 * forced false (the old share always) the test fails; with any one of the
 * 30 observations left out, the proposal still fits (with the old share,
 * 16 of those 30 fail). */
static void test_model_feasibility_keeps_off_twins(void **state)
{
	(void)state;
	static const struct {
		int tx, ty, pad, ldg; /* the point (values, not indices) */
	} hist[] = {
		/* failed: 256 elements or more */
		{ 16, 16, 0, 0 }, { 16, 16, 1, 0 }, { 32, 8, 0, 1 }, { 32, 8, 1, 1 }, { 8, 32, 0, 0 },
		{ 8, 32, 0, 1 }, { 64, 4, 1, 0 }, { 64, 4, 1, 1 }, { 4, 64, 0, 0 }, { 4, 64, 1, 1 },
		{ 32, 32, 0, 1 }, { 32, 32, 1, 0 }, { 128, 8, 0, 0 }, { 8, 128, 1, 1 },
		/* ran, the best last */
		{ 1, 1, 0, 0 }, { 1, 1, 1, 1 }, { 4, 2, 1, 0 }, { 4, 2, 0, 1 }, { 2, 8, 0, 0 },
		{ 2, 8, 1, 0 }, { 16, 1, 0, 1 }, { 16, 1, 1, 1 }, { 8, 4, 0, 0 }, { 8, 4, 1, 1 },
		{ 4, 16, 1, 0 }, { 4, 16, 0, 1 }, { 16, 4, 0, 1 }, { 16, 4, 1, 0 }, { 8, 8, 0, 0 },
		{ 8, 8, 1, 1 },
	};
	struct agent_space sp;
	memset(&sp, 0, sizeof(sp));
	sp.n_params = 4;
	sp.params = xcalloc(4, sizeof(*sp.params));
	synth_param(&sp.params[0], "tile_x", AGENT_PARAM_POW2, 8, 1, true);
	synth_param(&sp.params[1], "tile_y", AGENT_PARAM_POW2, 8, 1, true);
	synth_param(&sp.params[2], "pad", AGENT_PARAM_RANGE, 2, 0, false);
	synth_param(&sp.params[3], "ldg", AGENT_PARAM_RANGE, 2, 0, false);
	size_t nv;
	uint64_t *valid = agent_space_valid(&sp, &nv);
	struct agent_obs obs[RT_ARRAY_SIZE(hist)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(hist); i++) {
		uint64_t c = agent_point_with(&sp, 0, 0, (size_t)log2(hist[i].tx));
		c = agent_point_with(&sp, c, 1, (size_t)log2(hist[i].ty));
		c = agent_point_with(&sp, c, 2, (size_t)hist[i].pad);
		c = agent_point_with(&sp, c, 3, (size_t)hist[i].ldg);
		obs[i] = (struct agent_obs){ c, smem_tile(&sp, c), 1 };
		assert_true(isnan(obs[i].value) == (i < 14));
	}
	struct agent_search q = { .sp = &sp, .valid = valid, .n_valid = nv, .obs = obs, .n_obs = RT_ARRAY_SIZE(obs),
				  .seed = 1, .min_gain = 0.01, .start = -1 };
	struct agent_pick pk;
	memset(&pk, 0, sizeof(pk));
	assert_int_equal(agent_search_model(&q, &pk), 1);
	printf("model, failed 16x16 tiles and their twins: %s\n", pk.reason);
	assert_non_null(strstr(pk.reason, "expected improvement"));
	assert_false(isnan(smem_tile(&sp, pk.code))); /* the tile fits */
	free(valid);
	agent_space_release(&sp);
}

/* The first fail_left measurements fail (a design whose points do not
 * run), then smooth's. */
static size_t fail_left;
static double failing_first(const struct agent_space *sp, uint64_t c, double fidelity)
{
	if (fail_left) {
		fail_left--;
		return NAN;
	}
	return smooth(sp, c, fidelity);
}

/* The model's initial design goes on while none of its points ran, and its
 * reason counts past the design's size without claiming "point 12 of 10". */
static void test_model_design_goes_on(void **state)
{
	(void)state;
	struct agent_space sp;
	small_space(&sp);
	struct agent_obs *obs = xcalloc(20, sizeof(*obs));
	size_t n;
	double cpu;
	char last[200];
	fail_left = 12;
	run(&sp, agent_search_model, failing_first, 1, 12, 1e9, obs, &n, &cpu, last, sizeof(last));
	printf("model, the design's first 11 points failed: %s\n", last);
	assert_int_equal(n, 12);
	assert_string_equal(last, "model: initial design, point 12 (none of the 11 before ran) (seeded)");
	fail_left = 0;
	free(obs);
	agent_space_release(&sp);
}

/* Measurements at the cheapest fidelity rank points backwards. */
static double lying(const struct agent_space *sp, uint64_t c, double fidelity)
{
	return fidelity < 0.2 ? 200 - dense(sp, c) : dense(sp, c);
}

static double honest(const struct agent_space *sp, uint64_t c, double fidelity)
{
	(void)fidelity;
	return dense(sp, c);
}

static void test_halving_falls_back(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_large_space(&sp);
	struct agent_obs *obs = xcalloc(200, sizeof(*obs));
	size_t n;
	double cpu;
	char last[200];
	run(&sp, agent_search_halving, lying, 3, 60, 1e9, obs, &n, &cpu, last, sizeof(last));
	printf("halving, cheap measurements reversed: %s\n", last);
	assert_non_null(strstr(last, "fidelities disagree"));
	assert_true(obs[n - 1].fidelity == 1);
	run(&sp, agent_search_halving, honest, 3, 60, 1e9, obs, &n, &cpu, last, sizeof(last));
	printf("halving, honest cheap measurements: %s\n", last);
	assert_null(strstr(last, "fidelities disagree"));
	free(obs);
	agent_space_release(&sp);
}

static void test_auto(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_needle_space(&sp);
	struct agent_obs *a = xcalloc(100, sizeof(*a)), *b = xcalloc(100, sizeof(*b));
	size_t na, nb;
	double cpu;
	char last[200];
	run(&sp, agent_search_auto, synth_needle_point, 2, 40, 1e9, a, &na, &cpu, last, sizeof(last));
	printf("auto: %s\n", last);
	assert_true(strncmp(last, "auto: ", 6) == 0);
	run(&sp, agent_search_auto, synth_needle_point, 2, 40, 1e9, b, &nb, &cpu, last, sizeof(last));
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++)
		assert_true(a[i].code == b[i].code);
	free(a);
	free(b);
	agent_space_release(&sp);
}

/* coordinate: a neighbour measured within min_gain of the best is a tie
 * that noise may have ranked second, so its own neighbours are tried
 * before the local search converges. On a line of ten, from the middle
 * (4: 1.0), 5 measured 0.995 and 3 0.9: the next point is 6, beside the
 * tie; without the rule the search converged and restarted elsewhere. */
static void test_coordinate_walks_ties(void **state)
{
	(void)state;
	struct agent_space sp;
	memset(&sp, 0, sizeof(sp));
	sp.n_params = 1;
	sp.params = xcalloc(1, sizeof(*sp.params));
	synth_param(&sp.params[0], "x", AGENT_PARAM_RANGE, 10, 0, false);
	size_t nv;
	uint64_t *valid = agent_space_valid(&sp, &nv);
	const struct {
		size_t x;
		double v;
	} hist[] = { { 4, 1.0 }, { 5, 0.995 }, { 3, 0.9 } };
	struct agent_obs obs[RT_ARRAY_SIZE(hist)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(hist); i++)
		obs[i] = (struct agent_obs){ agent_point_with(&sp, 0, 0, hist[i].x), hist[i].v, 1 };
	struct agent_search q = { .sp = &sp, .valid = valid, .n_valid = nv, .obs = obs, .n_obs = 0,
				  .seed = 1, .min_gain = 0.01, .start = -1 };
	struct agent_pick pk;
	for (size_t n = 0; n < RT_ARRAY_SIZE(hist); n++) { /* the history is coordinate's own */
		q.n_obs = n;
		memset(&pk, 0, sizeof(pk));
		assert_int_equal(agent_search_coordinate(&q, &pk), 1);
		assert_int_equal(agent_point_index(&sp, pk.code, 0), hist[n].x);
	}
	q.n_obs = RT_ARRAY_SIZE(hist);
	memset(&pk, 0, sizeof(pk));
	assert_int_equal(agent_search_coordinate(&q, &pk), 1);
	printf("coordinate after a tie: %s\n", pk.reason);
	assert_int_equal(agent_point_index(&sp, pk.code, 0), 6);
	assert_non_null(strstr(pk.reason, "a tie with the best"));
	/* a neighbour 2% below is no tie at min_gain 1%: converged */
	obs[1].value = 0.98;
	memset(&pk, 0, sizeof(pk));
	assert_int_equal(agent_search_coordinate(&q, &pk), 1);
	assert_non_null(strstr(pk.reason, "converged"));
	free(valid);
	agent_space_release(&sp);
}

/* auto asks the model first, then retires coordinate once its first local
 * search has converged: no later proposal goes to it, and the reason says
 * so. */
static void test_auto_retires_coordinate(void **state)
{
	(void)state;
	struct agent_space sp;
	synth_needle_space(&sp);
	size_t nv;
	uint64_t *valid = agent_space_valid(&sp, &nv);
	struct agent_obs *obs = xcalloc(200, sizeof(*obs));
	size_t retired_at = 0, coord_after = 0, coord_before = 0;
	for (size_t n = 0; n < 150; n++) {
		struct agent_search q = { .sp = &sp, .valid = valid, .n_valid = nv, .obs = obs, .n_obs = n, .seed = 4,
					  .min_gain = 0.01, .no_early_stop = true };
		struct agent_pick pk;
		memset(&pk, 0, sizeof(pk));
		assert_int_equal(agent_search_auto(&q, &pk), 1);
		bool coord = strncmp(pk.reason, "auto: coordinate ", 17) == 0;
		if (n == 0) { /* the model is asked first (agents/auto.c, the arms) */
			assert_string_equal(strstr(pk.reason, "auto: model ") == pk.reason ? "model" : pk.reason,
					    "model");
			assert_non_null(strstr(pk.state, "\"uses\":{\"model\":0,\"coordinate\":0}"));
		}
		if (!retired_at && strstr(pk.reason, "coordinate retired"))
			retired_at = n + 1;
		coord_after += retired_at && coord;
		coord_before += !retired_at && coord;
		obs[n] = (struct agent_obs){ pk.code, synth_needle_point(&sp, pk.code, 1), 1 };
	}
	printf("auto: coordinate's %zu turns, then retired at proposal %zu (its first local search converged)\n",
	       coord_before, retired_at);
	assert_true(coord_before > 0);
	assert_true(retired_at > 0);
	assert_int_equal(coord_after, 0);
	assert_true(agent_coordinate_converged(&(struct agent_search){ .sp = &sp, .valid = valid, .n_valid = nv,
								  .obs = obs, .n_obs = 150, .seed = 4 }, false) < retired_at);
	free(obs);
	free(valid);
	agent_space_release(&sp);
}

/* A block size of 16, 32, ... 256 where every power of two is fast and
 * every other value 20 times slower (the MI50 convolution's shape):
 * trained on every value but 112 and 128, the GP must predict 128 (a power
 * of two between two slow values) well above 112. Without the power-of-two
 * term both sit among slow neighbours and look alike. */
static void test_gp_power_of_two(void **state)
{
	(void)state;
	struct agent_space sp;
	memset(&sp, 0, sizeof(sp));
	sp.n_params = 3;
	sp.params = xcalloc(3, sizeof(*sp.params));
	synth_param(&sp.params[0], "block_size_x", AGENT_PARAM_RANGE, 16, 16, false);
	for (int i = 0; i < 16; i++) /* 16, 32, ... 256 */
		json_array_set_new(sp.params[0].values, (size_t)i, json_integer(16 * (i + 1)));
	synth_param(&sp.params[1], "warps", AGENT_PARAM_POW2, 4, 1, true); /* all powers of two */
	synth_param(&sp.params[2], "lane", AGENT_PARAM_RANGE, 4, 0, false); /* 0 is not positive */
	uint64_t x[14];
	double y[14];
	size_t n = 0;
	for (uint64_t v = 0; v < 16; v++) {
		int bx = 16 * (int)(v + 1);
		if (bx == 112 || bx == 128)
			continue;
		x[n] = v; /* warps and lane at their first value */
		y[n++] = (bx & (bx - 1)) == 0 ? 1.5 : -0.5; /* standardised log: pow2 fast */
	}
	struct agent_gp g;
	agent_gp_init(&g, &sp, x, n);
	assert_non_null(g.pow2[0]);
	assert_null(g.pow2[1]);
	assert_null(g.pow2[2]);
	agent_gp_fit_hyper(&g, y);
	assert_true(g.p2w[0] > 0);
	assert_int_equal(agent_gp_pow2s(&g), 1);
	double *kv = xcalloc(n, sizeof(double)), mu128, mu112, sd;
	uint32_t at[3] = { 7, 0, 0 };
	agent_gp_predict(&g, at, kv, &mu128, &sd);
	at[0] = 6;
	agent_gp_predict(&g, at, kv, &mu112, &sd);
	printf("gp: block_size_x 128 predicted %.2f, 112 %.2f (power-of-two weight %.2g)\n", mu128, mu112, g.p2w[0]);
	assert_true(mu128 > 0.5);
	assert_true(mu112 < 0);
	free(kv);
	agent_gp_release(&g);
	agent_space_release(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_finds_the_needle),
		cmocka_unit_test(test_model_beyond_the_prefix),
		cmocka_unit_test(test_coordinate_scales),
		cmocka_unit_test(test_model_stops),
		cmocka_unit_test(test_model_design_goes_on),
		cmocka_unit_test(test_model_second_basin),
		cmocka_unit_test(test_model_keeps_off_the_cliff),
		cmocka_unit_test(test_model_feasibility_keeps_off_twins),
		cmocka_unit_test(test_halving_falls_back),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_coordinate_walks_ties),
		cmocka_unit_test(test_auto_retires_coordinate),
		cmocka_unit_test(test_gp_power_of_two),
	};
	return cmocka_run_group_tests_name("search_v2", tests, NULL, NULL);
}
