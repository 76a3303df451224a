/*
 * `auto`: a portfolio of the space strategies run by a multi-armed bandit,
 * so that a user need not know the space to choose one. The arms are
 * `model` and `coordinate` (the order below says why); each proposal goes
 * to one arm, which
 * sees the whole history (every arm's points), so the model is fitted on
 * what coordinate found and coordinate walks from the model's best.
 *
 * Early elimination: once coordinate's first local search has converged
 * (every neighbour of its best measured, none better), its next points
 * would be the neighbours of the best's ties, then restarts from the
 * seeded order (random points in effect), so the arm is retired and the
 * model (whose expected improvement weighs what it does not know) takes
 * every later turn.
 * The ties are left to the model's expected improvement: with coordinate
 * walking them too, auto needed 49 evaluations on the convolution space's
 * 10 seeds, not 33 (on 30 seeds, 50 and 53; on simserve, 23 and 22 of 30
 * within 10% of the space). `random` is no arm: on the repository's spaces
 * each of its turns was an evaluation the other two would have spent
 * better (docs/figures.md, "Search v2, second pass": before and after).
 *
 * The bandit is OpenTuner's AUC bandit (J. Ansel et al., "OpenTuner: An
 * Extensible Framework for Program Autotuning", PACT 2014, section 4.2; the
 * AUCBanditMetaTechnique of OpenTuner 0.8): a use of an arm scores 1 when
 * its point is a new best, and over the arm's last uses in a sliding window
 * V (most recent last) its credit is the area under that curve,
 *
 *   AUC(t) = 2 / (|V_t| (|V_t| + 1)) * sum_i i * V_t,i
 *
 * plus the exploration term C * sqrt(2 ln |V| / |V_t|); the arm of largest
 * sum is asked, an arm never used first. OpenTuner's window is 500 uses and
 * C 0.05; our budgets are tens to hundreds of evaluations, so the window
 * here is AUTO_WINDOW (its C is kept).
 *
 * The arms' order of use is not stored: it is recomputed from the history
 * (each step's arm is the bandit's choice given the uses before it, and
 * coordinate's retirement is a function of the history's prefix), so the
 * choice stays a pure function of the history and the seed. Only the model
 * may stop the search early (its stop is the honest one, agents/model.c);
 * coordinate runs on without its own early stop.
 */
#include "agents/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_WINDOW 50
#define AUTO_C 0.05

/* The arms, in the order ties are broken. The first arm's first feasible
 * point is always a hit (there is nothing yet to beat), so the first arm
 * starts with a credit the other has to earn. With coordinate first, it
 * kept the turns on the H100 convolution space while its walk made gains
 * of 0.1%: auto needed a median of 74 evaluations on 10 seeds, the model
 * alone 29; with the model first, 33 (on seeds 1-30, 71 and 53; on seeds
 * 31-60, 80 and 68: docs/figures.md, "twelfth pass"). */
static const struct {
	const char *name;    /* for reasons */
	agent_search_fn fn;  /* the strategy */
	bool own_stop;       /* may it stop the portfolio early */
} arms[] = {
	{ "model", agent_search_model, true },
	{ "coordinate", agent_search_coordinate, false },
};
#define N_ARMS RT_ARRAY_SIZE(arms)
#define ARM_COORDINATE 1

/* The bandit's choice given the arms' uses so far (arm[i], hit[i] for the
 * window's uses, oldest first), among the arms not off; *score gets each
 * arm's credit (-INFINITY: off). The model is never off. */
static size_t choose(const size_t *arm, const bool *hit, size_t n, double *score, const bool *off)
{
	size_t from = n > AUTO_WINDOW ? n - AUTO_WINDOW : 0, w = n - from, best = N_ARMS;
	for (size_t t = 0; t < N_ARMS; t++) {
		if (off[t]) {
			score[t] = -INFINITY;
			continue;
		}
		double num = 0;
		size_t k = 0;
		for (size_t i = from; i < n; i++)
			if (arm[i] == t)
				num += (double)++k * hit[i];
		score[t] = k ? 2 * num / ((double)k * (double)(k + 1)) + AUTO_C * sqrt(2 * log((double)w) / (double)k)
			     : INFINITY;
		if (best == N_ARMS || score[t] > score[best])
			best = t;
	}
	return best;
}

/* The arms' uses, recomputed: observation i was the bandit's choice given
 * the uses before it (coordinate off from the observation after which its
 * first local search had converged); it is a hit when it beats every full
 * feasible value before it. Returns the arm for the next proposal. */
static size_t replay_arms(const struct agent_search *q, double *score, size_t *uses)
{
	size_t *arm = xcalloc(q->n_obs + 1, sizeof(*arm));
	bool *hit = xcalloc(q->n_obs + 1, sizeof(*hit));
	double best = -INFINITY;
	size_t conv = agent_coordinate_converged(q, false);
	bool off[N_ARMS] = { false };
	memset(uses, 0, N_ARMS * sizeof(*uses));
	for (size_t i = 0; i < q->n_obs; i++) {
		off[ARM_COORDINATE] = i >= conv;
		arm[i] = choose(arm, hit, i, score, off);
		uses[arm[i]]++;
		double v = q->obs[i].value;
		hit[i] = q->obs[i].fidelity >= 1 && !isnan(v) && v > best;
		if (hit[i])
			best = v;
	}
	off[ARM_COORDINATE] = q->n_obs >= conv;
	size_t next = choose(arm, hit, q->n_obs, score, off);
	free(arm);
	free(hit);
	return next;
}

/* An arm's credit for the record: -1 when off or not yet used. */
static double credit(double score)
{
	return isinf(score) ? -1 : score;
}

int agent_search_auto(const struct agent_search *q, struct agent_pick *pk)
{
	double score[N_ARMS];
	size_t uses[N_ARMS];
	size_t a = replay_arms(q, score, uses);
	struct agent_search sub = *q;
	sub.no_early_stop = q->no_early_stop || !arms[a].own_stop;
	struct agent_pick p;
	memset(&p, 0, sizeof(p));
	int rc = arms[a].fn(&sub, &p);
	*pk = p;
	bool retired = isinf(score[ARM_COORDINATE]) && score[ARM_COORDINATE] < 0;
	snprintf(pk->reason, sizeof(pk->reason), "auto: %s (AUC bandit credit %.2f, %zu of %zu uses%s): %.120s",
		 arms[a].name, credit(score[a]) < 0 ? 0.0 : score[a], uses[a], q->n_obs,
		 retired ? "; coordinate retired: converged" : "", p.reason);
	snprintf(pk->state, sizeof(pk->state),
		 "{\"arm\":\"%s\",\"credit\":{\"%s\":%.3f,\"%s\":%.3f},\"uses\":{\"%s\":%zu,\"%s\":%zu},"
		 "\"coordinate_retired\":%s}",
		 arms[a].name, arms[0].name, credit(score[0]), arms[1].name, credit(score[1]), arms[0].name, uses[0],
		 arms[1].name, uses[1], retired ? "true" : "false");
	return rc;
}
