/*
 * The chance that a point of a space is feasible, for `model`
 * (agents/model.c), private to agents/. It may include agents/gp.h and
 * agents/space.h.
 *
 * It comes from the outcomes of the last FEAS_OBS (128) full
 * observations (1 for a point that ran, 0 for one that failed; p0 the
 * share that ran). On a space where every point measured so far ran, it is
 * 1 everywhere. Otherwise a GP of its own (length scales and
 * noise by marginal likelihood, as the objective's) is fitted on the
 * outcomes around p0, and the chance is p0 plus its posterior mean, within
 * [FEAS_MIN, 1], when its fitted noise is at most FEAS_NOISE (0.3): the
 * parameters explain the failures. Else (failures that look random) it
 * is a kernel-weighted share of the outcomes under the objective's kernel,
 * pulled to p0 by one pseudo-observation, as it always was before.
 * Why a GP of its own: on a real GPU space (experiments/search-cuda-conv,
 * 39% of the points do not compile or launch) what fails is a product of a
 * few parameters (a tile that needs more shared memory than a block may
 * have), and the parameters that do not matter to it (the padding, the
 * read-only path) must not keep a failed point's twins likely to run. Under
 * the objective's kernel they did: 59% of the model's proposals there
 * failed (26% with the GP; auto's, 62% and 30%), and auto took 122
 * evaluations to within 2% against 71 (bench_search, 30 seeds;
 * docs/figures.md, "eleventh pass").
 * The noise test keeps the old estimate where failures are random (the
 * synthetic 100k space: 75% of its points fail by a hash): with the GP
 * there too, the model reached its optimum on 8 of test_search_v2's 10
 * seeds, not 9.
 */
#ifndef AGENT_FEAS_H
#define AGENT_FEAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/gp.h"

struct agent_feas {
	struct agent_gp g; /* fitted on the outcomes, when both occur */
	bool fitted;
	double p0;         /* the share that ran */
	double sd;         /* the outcomes' standard deviation */
	/* else, when failures occur: the share under the objective's kernel */
	uint32_t *xi;              /* n x d value indices of the outcomes */
	bool *ok;                  /* each one ran */
	size_t n;                  /* outcomes */
};

/* The estimate from q's history (a function of it alone). */
struct agent_feas agent_feas_of(const struct agent_search *q);
/* The chance at the point with value indices idx; og is the objective's
 * fitted GP, whose kernel weighs the outcomes where the estimate's own GP
 * is not believed. */
double agent_feas_p(const struct agent_feas *f, const struct agent_gp *og, const uint32_t *idx);
void agent_feas_release(struct agent_feas *f);

#endif
