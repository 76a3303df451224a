/*
 * Strategies over a space that need no model (agents/space.h): `random`
 * (a seeded shuffle of the valid points, each tried once), `coordinate`
 * (from the best point, one parameter at a time, neighbours first, with a
 * pattern move along the last improvement) and `halving` (successive
 * halving: brackets of nine points measured cheaply, the best third again
 * at a higher fidelity, the best of those in full). Each is a pure function
 * of the observations and the seed.
 */
#include "agents/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random ---- */

int agent_search_random(const struct agent_search *q, struct agent_pick *pk)
{
	uint64_t *perm = agent_shuffled(q, 0);
	int rc = 0;
	for (size_t k = 0; k < q->n_valid && !rc; k++) {
		if (agent_measured(q, perm[k], 1))
			continue;
		pk->code = perm[k];
		pk->fidelity = 1;
		snprintf(pk->reason, sizeof(pk->reason), "random: point %zu of %zu in the seeded order", k + 1,
			 q->n_valid);
		snprintf(pk->state, sizeof(pk->state), "{\"position\":%zu}", k);
		rc = 1;
	}
	if (!rc)
		snprintf(pk->reason, sizeof(pk->reason), "random: all %zu valid points measured", q->n_valid);
	free(perm);
	return rc;
}

/* ---- coordinate ---- */

static bool ordered(const struct agent_param *p)
{
	return p->kind != AGENT_PARAM_CHOICE;
}

/* Try code as the pick: valid and not yet measured. */
static bool offer(const struct agent_search *q, uint64_t code, struct agent_pick *pk)
{
	if (agent_measured(q, code, 1) || !agent_point_valid(q->sp, code, NULL))
		return false;
	pk->code = code;
	pk->fidelity = 1;
	return true;
}

/* The best feasible full observation among the first n. */
static long best_before(const struct agent_search *q, size_t n)
{
	struct agent_search h = *q;
	h.n_obs = n;
	return agent_best_obs(&h);
}

/* The pattern move: from the best, again the step that led to it. */
static bool pattern_move(const struct agent_search *q, long b, struct agent_pick *pk)
{
	long prev = best_before(q, (size_t)b);
	if (prev < 0)
		return false;
	const struct agent_space *sp = q->sp;
	uint64_t from = q->obs[prev].code, at = q->obs[b].code, c = at;
	bool moved = false;
	for (size_t i = 0; i < sp->n_params; i++) {
		if (!ordered(&sp->params[i]))
			continue;
		long r = (long)json_array_size(sp->params[i].values);
		long d = (long)agent_point_index(sp, at, i) - (long)agent_point_index(sp, from, i);
		long to = (long)agent_point_index(sp, at, i) + d;
		if (d && to >= 0 && to < r) {
			c = agent_point_with(sp, c, i, (size_t)to);
			moved = true;
		}
	}
	if (!moved || !offer(q, c, pk))
		return false;
	char *t = agent_point_text(sp, c);
	snprintf(pk->reason, sizeof(pk->reason), "coordinate: pattern move along the last improvement to %s", t);
	free(t);
	return true;
}

/* The nearest valid neighbour of at along parameter i in direction dir
 * (an ordered parameter: the next index that a restriction allows). */
static bool neighbour(const struct agent_search *q, uint64_t at, size_t i, int dir, struct agent_pick *pk)
{
	const struct agent_space *sp = q->sp;
	long r = (long)json_array_size(sp->params[i].values);
	for (long k = (long)agent_point_index(sp, at, i) + dir; k >= 0 && k < r; k += dir) {
		uint64_t c = agent_point_with(sp, at, i, (size_t)k);
		if (!agent_point_valid(sp, c, NULL))
			continue;
		return offer(q, c, pk);
	}
	return false;
}

/* Every neighbour of the best, one parameter at a time, in parameter order. */
static bool neighbours(const struct agent_search *q, uint64_t at, struct agent_pick *pk, size_t *tried)
{
	const struct agent_space *sp = q->sp;
	for (size_t i = 0; i < sp->n_params; i++) {
		const struct agent_param *p = &sp->params[i];
		bool hit = false;
		if (ordered(p)) {
			hit = neighbour(q, at, i, +1, pk) || neighbour(q, at, i, -1, pk);
		} else {
			for (size_t k = 0; k < json_array_size(p->values) && !hit; k++)
				hit = k != agent_point_index(sp, at, i) && offer(q, agent_point_with(sp, at, i, k), pk);
		}
		(*tried)++;
		if (hit) {
			char *t = agent_point_text(sp, pk->code);
			snprintf(pk->reason, sizeof(pk->reason), "coordinate: neighbour of the best along %s: %s",
				 p->name, t);
			free(t);
			return true;
		}
	}
	return false;
}

/* The first point: the middle of every parameter, else the seeded order. */
static bool start(const struct agent_search *q, struct agent_pick *pk)
{
	const struct agent_space *sp = q->sp;
	uint64_t c = 0;
	for (size_t i = 0; i < sp->n_params; i++)
		c = agent_point_with(sp, c, i, (json_array_size(sp->params[i].values) - 1) / 2);
	if (offer(q, c, pk)) {
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: start at the middle of every parameter");
		return true;
	}
	uint64_t *perm = agent_shuffled(q, 0);
	bool hit = false;
	for (size_t k = 0; k < q->n_valid && !hit; k++)
		hit = offer(q, perm[k], pk);
	free(perm);
	if (hit)
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: no feasible point yet; a point of the seeded order");
	return hit;
}

int agent_search_coordinate(const struct agent_search *q, struct agent_pick *pk)
{
	long b = agent_best_obs(q);
	size_t tried = 0;
	if (b < 0) {
		if (start(q, pk))
			return 1;
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: every valid point failed");
		return 0;
	}
	snprintf(pk->state, sizeof(pk->state), "{\"best\":%llu}", (unsigned long long)q->obs[b].code);
	if (pattern_move(q, b, pk) || neighbours(q, q->obs[b].code, pk, &tried))
		return 1;
	char *t = agent_point_text(q->sp, q->obs[b].code);
	snprintf(pk->reason, sizeof(pk->reason),
		 "coordinate: converged: every neighbour of the best (%s) was measured and none beat it", t);
	free(t);
	return 0;
}

/* ---- halving ---- */

#define HALVING_ETA 3      /* each rung keeps a third */
#define HALVING_BRACKET 9  /* points per bracket: rungs of 9, 3, 1 */

/* The latest value of point code measured at fidelity f, or -INFINITY. */
static double value_at(const struct agent_search *q, uint64_t code, double f)
{
	double v = -INFINITY;
	for (size_t i = 0; i < q->n_obs; i++)
		if (q->obs[i].code == code && fabs(q->obs[i].fidelity - f) < 1e-9)
			v = isnan(q->obs[i].value) ? -INFINITY : q->obs[i].value;
	return v;
}

/* The k best of pts[0..n) by their value at fidelity f, into out (feasible only). */
static size_t top_k(const struct agent_search *q, const uint64_t *pts, size_t n, double f, size_t k,
		    uint64_t *out)
{
	bool used[HALVING_BRACKET] = { false };
	size_t m = 0;
	while (m < k) {
		long w = -1;
		for (size_t i = 0; i < n; i++)
			if (!used[i] && value_at(q, pts[i], f) > -INFINITY &&
			    (w < 0 || value_at(q, pts[i], f) > value_at(q, pts[w], f)))
				w = (long)i;
		if (w < 0)
			break;
		used[w] = true;
		out[m++] = pts[w];
	}
	return m;
}

int agent_search_halving(const struct agent_search *q, struct agent_pick *pk)
{
	uint64_t *perm = agent_shuffled(q, 0);
	size_t nb = (q->n_valid + HALVING_BRACKET - 1) / HALVING_BRACKET;
	int rc = 0;
	for (size_t b = 0; b < nb && !rc; b++) {
		uint64_t rung[HALVING_BRACKET];
		const uint64_t *pts = perm + b * HALVING_BRACKET;
		size_t n = q->n_valid - b * HALVING_BRACKET;
		n = n < HALVING_BRACKET ? n : HALVING_BRACKET;
		double f = 1.0 / (HALVING_ETA * HALVING_ETA);
		size_t keep = n;
		memcpy(rung, pts, n * sizeof(*rung));
		/* Rungs 0, 1, 2 at fidelity 1/9, 1/3, 1. */
		for (int r = 0; r < 3 && !rc && keep; r++) {
			for (size_t i = 0; i < keep && !rc; i++) {
				if (agent_measured(q, rung[i], f))
					continue;
				pk->code = rung[i];
				pk->fidelity = f;
				snprintf(pk->reason, sizeof(pk->reason),
					 "halving: bracket %zu, rung %d: %zu point%s at fidelity %.3g%s", b + 1, r, keep,
					 keep == 1 ? "" : "s", f, f < 1 ? " (cheap: measured, never kept)" : " (full)");
				snprintf(pk->state, sizeof(pk->state), "{\"bracket\":%zu,\"rung\":%d}", b, r);
				rc = 1;
			}
			if (r == 2)
				break;
			uint64_t next[HALVING_BRACKET];
			keep = top_k(q, rung, keep, f, (keep + HALVING_ETA - 1) / HALVING_ETA, next);
			memcpy(rung, next, keep * sizeof(*rung));
			f *= HALVING_ETA;
		}
	}
	if (!rc)
		snprintf(pk->reason, sizeof(pk->reason), "halving: all %zu brackets done", nb);
	free(perm);
	return rc;
}
