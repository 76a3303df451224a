/*
 * `genetic`: a genetic algorithm over the valid points of a space
 * (agents/space.h). The idea is Kernel Tuner 1.4's genetic_algorithm
 * (kernel_tuner/strategies/genetic_algorithm.py: a population of 20, rank-
 * weighted selection of two parents, uniform crossover of their parameter
 * values, each value mutated with a chance of 1 in 10, an invalid child
 * drawn again); no code is taken from it. The needle it is here for: on a
 * space with a single point within 2% of the optimum, Kernel Tuner's GA
 * reached it in 23 of 30 runs where the model reached it in 10 (issue 28),
 * because crossover combines good values of different parameters that no
 * walk along one parameter's list reaches.
 *
 *   generations  the history is cut into generations of GEN_POP
 *                observations, by position: generation g's children are
 *                proposed while the history holds g * GEN_POP to
 *                (g + 1) * GEN_POP observations. Generation 0 is the
 *                configuration's current value (when known), then the
 *                seeded order;
 *   parents      generation g's parents are the feasible full-fidelity
 *                points of generation g - 1 (the GEN_POP observations
 *                before g * GEN_POP, whoever proposed them: in `auto`
 *                they hold the other arms' points too) and the GEN_ELITE
 *                best points of the whole history before it, distinct,
 *                ranked by value; parent r of m (0 the best) is drawn with
 *                a chance proportional to m - r. Failed, gated and invalid
 *                points are never parents;
 *   children     uniform crossover: each parameter's value from either
 *                parent; then each value is mutated with a chance of
 *                1 / GEN_MUTATE, half the time to a neighbour in its list
 *                (the next value up or down; any other for a categorical
 *                parameter), half the time to any value of the list (a
 *                jump along an irregular list); a child that breaks a
 *                restriction, was measured before the generation began,
 *                or repeats an earlier child is drawn again (at most
 *                GEN_TRIES times, then a point of the seeded order);
 *   proposal     the generation's first child not measured yet (in `auto`
 *                another arm may have measured one since);
 *   stop         after GEN_STALL generations without a gain of min_gain,
 *                or when every valid point was measured.
 *
 * A generation's children depend only on the seed, g and the observations
 * before g * GEN_POP, so the proposal is a pure function of the history
 * and the seed (a resumed campaign proposes what an uninterrupted one
 * would). Cost: one sort of the history and at most GEN_SLOTS children of
 * GEN_TRIES draws each, each draw a restriction check and a binary search;
 * memory: the history and the children, never the space.
 */
#include "agents/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"

/* Kernel Tuner 1.4's defaults: popsize 20, mutation_chance 10. */
#define GEN_POP 20
#define GEN_MUTATE 10
/* The best points of the whole history that join each generation's parents. */
#define GEN_ELITE 2
/* Draws for one child before it is taken from the seeded order instead. */
#define GEN_TRIES 64
/* Children a generation may make at most (in `auto`, other arms may have
 * measured the first ones). */
#define GEN_SLOTS (4 * GEN_POP)
/* Generations without a gain of min_gain before the search stops itself. */
#define GEN_STALL 10

/* One parent: its point and value. */
struct parent {
	uint64_t code;
	double value;
};

static int by_value(const void *a, const void *b)
{
	const struct parent *p = a, *q = b;
	if (p->value != q->value)
		return p->value > q->value ? -1 : 1;
	return agent_code_cmp(&p->code, &q->code);
}

static void add_parent(struct parent *ps, size_t *m, uint64_t code, double value)
{
	for (size_t i = 0; i < *m; i++)
		if (ps[i].code == code) {
			ps[i].value = fmax(ps[i].value, value);
			return;
		}
	ps[(*m)++] = (struct parent){ code, value };
}

/* Generation g's parents into ps (GEN_POP + GEN_ELITE entries), best
 * first: the feasible full points of generation g - 1 and the GEN_ELITE
 * best of obs[0 .. g * GEN_POP). Returns how many. */
static size_t parents_of(const struct agent_search *q, size_t g, struct parent *ps)
{
	size_t m = 0, end = g * GEN_POP;
	const struct agent_obs *o = q->obs;
	for (size_t i = end - GEN_POP; i < end; i++)
		if (o[i].fidelity >= 1 - 1e-9 && !isnan(o[i].value))
			add_parent(ps, &m, o[i].code, o[i].value);
	for (int e = 0; e < GEN_ELITE; e++) { /* the e-th best of the history, not yet in */
		long b = -1;
		for (size_t i = 0; i < end; i++) {
			bool in = false;
			for (size_t k = 0; k < m && !in; k++)
				in = ps[k].code == o[i].code;
			if (!in && o[i].fidelity >= 1 - 1e-9 && !isnan(o[i].value) && (b < 0 || o[i].value > o[b].value))
				b = (long)i;
		}
		if (b >= 0)
			add_parent(ps, &m, o[b].code, o[b].value);
	}
	qsort(ps, m, sizeof(*ps), by_value);
	return m;
}

/* A parent by rank: r of m with a chance proportional to m - r. */
static size_t pick_rank(struct rt_rand *r, size_t m)
{
	uint64_t u = rt_rand_below(r, (uint64_t)m * (m + 1) / 2);
	size_t k = 0;
	for (uint64_t w = m; u >= w; w = m - ++k)
		u -= w;
	return k;
}

/* Parameter i's value index after a mutation from cur. */
static size_t mutate_value(const struct agent_space *sp, size_t i, size_t cur, struct rt_rand *r)
{
	size_t n = json_array_size(sp->params[i].values);
	if (n < 2)
		return cur;
	bool near = rt_rand_below(r, 2) == 0 && sp->params[i].kind != AGENT_PARAM_CHOICE;
	if (near) /* the next value up or down, within the list */
		return cur == 0 ? 1 : cur == n - 1 || rt_rand_below(r, 2) ? cur - 1 : cur + 1;
	size_t v = (size_t)rt_rand_below(r, n - 1); /* any other value */
	return v >= cur ? v + 1 : v;
}

/* What one child came from, for the reason. */
struct birth {
	size_t pa, pb;    /* the parents' ranks */
	size_t mutations; /* values mutated */
	bool immigrant;   /* no child within GEN_TRIES draws: a point of the seeded order */
};

/* A child of two parents: uniform crossover, then mutation. */
static uint64_t breed(const struct agent_space *sp, const struct parent *ps, size_t m, struct rt_rand *r,
		      struct birth *b)
{
	b->pa = pick_rank(r, m);
	b->pb = m > 1 ? pick_rank(r, m - 1) : 0;
	b->pb += m > 1 && b->pb >= b->pa; /* two different parents */
	uint64_t a = ps[b->pa].code, o = ps[b->pb].code, c = a;
	b->mutations = 0;
	for (size_t i = 0; i < sp->n_params; i++) {
		size_t v = agent_point_index(sp, rt_rand_below(r, 2) ? o : a, i);
		if (rt_rand_below(r, GEN_MUTATE) == 0) {
			size_t w = mutate_value(sp, i, v, r);
			b->mutations += w != v;
			v = w;
		}
		c = agent_point_with(sp, c, i, v);
	}
	return c;
}

/* The generation's children, in order, until one is not measured now:
 * 1 with its code and birth, 0 when none (every slot measured since). The
 * children depend on the seed, g, the parents and the points measured
 * before the generation (then, thenn), never on what came after. */
static int child_now(const struct agent_search *q, size_t g, const struct parent *ps, size_t m,
		     const struct agent_seen *then, const struct agent_seen *now, uint64_t *code, struct birth *b,
		     size_t *slot)
{
	uint64_t kids[GEN_SLOTS];
	uint64_t *perm = NULL;
	size_t next = 0; /* the next point of the seeded order for an immigrant */
	struct rt_rand r;
	rt_rand_seed(&r, q->seed ^ (((uint64_t)g + 1) * RT_SPLITMIX64_GAMMA) ^ 0x67656e65ULL);
	int rc = 0;
	for (size_t s = 0; s < GEN_SLOTS && !rc; s++) {
		bool ok = false;
		uint64_t c = 0;
		for (int t = 0; t < GEN_TRIES && !ok && m >= 2; t++) {
			c = breed(q->sp, ps, m, &r, b);
			ok = !agent_seen_has(then, c) && agent_point_valid(q->sp, c, NULL);
			for (size_t k = 0; k < s && ok; k++)
				ok = kids[k] != c;
		}
		if (!ok) { /* no child: an immigrant from the seeded order */
			if (!perm)
				perm = agent_shuffled(q, 5);
			while (next < q->n_valid && !ok) {
				c = perm[next++];
				ok = !agent_seen_has(then, c);
				for (size_t k = 0; k < s && ok; k++)
					ok = kids[k] != c;
			}
			*b = (struct birth){ .immigrant = true };
			if (!ok)
				break;
		}
		kids[s] = c;
		if (!agent_seen_has(now, c)) {
			*code = c;
			*slot = s;
			rc = 1;
		}
	}
	free(perm);
	return rc;
}

/* Generations (of GEN_POP observations) since the best last rose by
 * min_gain. */
static size_t stalled_generations(const struct agent_search *q)
{
	double best = -INFINITY;
	size_t last = 0;
	for (size_t i = 0; i < q->n_obs; i++) {
		double v = q->obs[i].value;
		if (q->obs[i].fidelity >= 1 - 1e-9 && agent_gains(q, best, v)) {
			best = v;
			last = i;
		}
	}
	return (q->n_obs - last) / GEN_POP;
}

/* Generation 1 (g 0): the configuration's current value, then the seeded
 * order; a later generation with fewer than two feasible parents: the
 * seeded order. */
static int first_generation(const struct agent_search *q, size_t g, struct agent_pick *pk)
{
	size_t k;
	pk->fidelity = 1;
	if (!g && agent_start_due(q)) {
		pk->code = (uint64_t)q->start;
		snprintf(pk->reason, sizeof(pk->reason), "genetic: generation 1 starts at the configuration's current "
			 "value");
		return 1;
	}
	if (!agent_first_untried(q, 5, &pk->code, &k)) {
		snprintf(pk->reason, sizeof(pk->reason), "genetic: all %zu valid points measured", q->n_valid);
		return 0;
	}
	snprintf(pk->reason, sizeof(pk->reason), "genetic: generation %zu (%s), point %zu of %zu in the seeded order",
		 g + 1, g ? "fewer than two feasible parents" : "the first population", k + 1, q->n_valid);
	snprintf(pk->state, sizeof(pk->state), "{\"generation\":%zu,\"position\":%zu}", g + 1, k);
	return 1;
}

int agent_search_genetic(const struct agent_search *q, struct agent_pick *pk)
{
	size_t g = q->n_obs / GEN_POP, stall = stalled_generations(q);
	if (!q->no_early_stop && stall >= GEN_STALL) {
		long b = agent_best_obs(q);
		char *t = b >= 0 ? agent_point_text(q->sp, q->obs[b].code) : xstrdup("no feasible point");
		snprintf(pk->reason, sizeof(pk->reason), "genetic: no gain of min_gain in %zu generations of %d (best %s); "
			 "stopping", stall, GEN_POP, t);
		free(t);
		return 0;
	}
	struct parent ps[GEN_POP + GEN_ELITE];
	size_t m = g ? parents_of(q, g, ps) : 0;
	if (m < 2)
		return first_generation(q, g, pk);
	size_t slot = 0;
	struct agent_seen then = agent_seen_of(q->obs, g * GEN_POP), now = agent_seen_of(q->obs, q->n_obs);
	struct birth b = { 0 };
	int rc = child_now(q, g, ps, m, &then, &now, &pk->code, &b, &slot);
	free(then.code);
	free(now.code);
	size_t pos;
	if (!rc && !agent_first_untried(q, 5, &pk->code, &pos)) {
		snprintf(pk->reason, sizeof(pk->reason), "genetic: all %zu valid points measured", q->n_valid);
		return 0;
	}
	pk->fidelity = 1;
	char *t = agent_point_text(q->sp, pk->code);
	if (!rc)
		snprintf(pk->reason, sizeof(pk->reason), "genetic: generation %zu: every child of its %zu parents "
			 "measured since, point %zu of the seeded order: %s", g + 1, m, pos + 1, t);
	else if (b.immigrant)
		snprintf(pk->reason, sizeof(pk->reason), "genetic: generation %zu, child %zu: no new child of its %zu "
			 "parents in %d draws, a point of the seeded order: %s", g + 1, slot + 1, m, GEN_TRIES, t);
	else
		snprintf(pk->reason, sizeof(pk->reason), "genetic: generation %zu, child %zu: uniform crossover of the "
			 "parents ranked %zu and %zu of %zu, %zu mutation%s: %s", g + 1, slot + 1, b.pa + 1, b.pb + 1, m,
			 b.mutations, b.mutations == 1 ? "" : "s", t);
	snprintf(pk->state, sizeof(pk->state), "{\"generation\":%zu,\"child\":%zu,\"parents\":%zu,\"ranks\":[%zu,%zu],"
		 "\"mutations\":%zu,\"immigrant\":%s,\"stall\":%zu}", g + 1, slot + 1, m, b.pa + 1, b.pb + 1,
		 b.mutations, rc && !b.immigrant ? "false" : "true", stall);
	free(t);
	return 1;
}
