/*
 * Strategies over a space that need no model (agents/space.h): `random`
 * (a seeded shuffle of the valid points, each tried once), `coordinate`
 * (from the best point, one parameter at a time, neighbours first, with a
 * pattern move along the last improvement; a converged local search
 * restarts from the seeded order, three local searches in all) and `halving` (successive
 * halving: brackets of nine points measured cheaply, the best third again
 * at a higher fidelity, the best of those in full). Each is a pure function
 * of the observations and the seed.
 */
#include "agents/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"

/* ---- random ---- */

int agent_search_random(const struct agent_search *q, struct agent_pick *pk)
{
	size_t k;
	if (agent_start_due(q)) {
		pk->code = (uint64_t)q->start;
		pk->fidelity = 1;
		snprintf(pk->reason, sizeof(pk->reason), "random: the configuration's current value first");
		return 1;
	}
	if (!agent_first_untried(q, 0, &pk->code, &k)) {
		snprintf(pk->reason, sizeof(pk->reason), "random: all %zu valid points measured", q->n_valid);
		return 0;
	}
	pk->fidelity = 1;
	snprintf(pk->reason, sizeof(pk->reason), "random: point %zu of %zu in the seeded order", k + 1, q->n_valid);
	snprintf(pk->state, sizeof(pk->state), "{\"position\":%zu}", k);
	return 1;
}

/* ---- coordinate ---- */

/* Local searches before coordinate stops by itself (with early stop on). */
#define COORD_RUNS 3

static bool ordered(const struct agent_param *p)
{
	return p->kind != AGENT_PARAM_CHOICE;
}

/* One local search as of step n: its observations are [from, n); a point
 * counts as measured when any of the first n observations measured it.
 * agent_search_coordinate replays every step of the history, so what each
 * step would recompute is built once per proposal: for each point, the
 * first observation that measured it in full (an open-addressing table,
 * slots a power of two at least twice the observations), and the seeded
 * order of the later runs' starts (shuffled on first use). Rebuilding that
 * order at every replayed step was 95% of a proposal's CPU on 100,000
 * points (docs/figures.md, "Search v2, second pass"). */
struct coord {
	const struct agent_search *q; /* the whole history */
	size_t from;                  /* the run's first observation */
	size_t n;                     /* the step: observations known then */
	uint64_t *code;               /* the table's points */
	size_t *first;                /* their first full observation; SIZE_MAX: an empty slot */
	size_t mask;                  /* slots - 1 */
	uint64_t *perm;               /* the seeded order (salt 3), NULL until needed */
	bool no_ties;                 /* converge without walking the best's ties */
};

static size_t slot_of(const struct coord *k, uint64_t code)
{
	uint64_t s = code;
	size_t i = (size_t)rt_splitmix64(&s) & k->mask;
	while (k->first[i] != SIZE_MAX && k->code[i] != code)
		i = (i + 1) & k->mask;
	return i;
}

static void coord_init(struct coord *k, const struct agent_search *q)
{
	size_t slots = 16;
	while (slots < 2 * q->n_obs + 2)
		slots *= 2;
	*k = (struct coord){ .q = q, .mask = slots - 1 };
	k->code = xcalloc(slots, sizeof(*k->code));
	k->first = xcalloc(slots, sizeof(*k->first));
	for (size_t i = 0; i < slots; i++)
		k->first[i] = SIZE_MAX;
	for (size_t i = 0; i < q->n_obs; i++) {
		if (q->obs[i].fidelity < 1 - 1e-9)
			continue;
		size_t s = slot_of(k, q->obs[i].code);
		if (k->first[s] == SIZE_MAX) {
			k->code[s] = q->obs[i].code;
			k->first[s] = i;
		}
	}
}

static void coord_release(struct coord *k)
{
	free(k->code);
	free(k->first);
	free(k->perm);
}

static bool measured_then(const struct coord *k, uint64_t code)
{
	return k->first[slot_of(k, code)] < k->n;
}

/* Try code as the pick: valid and not yet measured. */
static bool offer(const struct coord *k, uint64_t code, struct agent_pick *pk)
{
	if (measured_then(k, code) || !agent_point_valid(k->q->sp, code, NULL))
		return false;
	pk->code = code;
	pk->fidelity = 1;
	return true;
}

/* The best feasible full observation of the run among [from, to), or -1. */
static long run_best(const struct coord *k, size_t to)
{
	long best = -1;
	const struct agent_obs *o = k->q->obs;
	for (size_t i = k->from; i < to; i++)
		if (o[i].fidelity >= 1 && !isnan(o[i].value) && (best < 0 || o[i].value > o[best].value))
			best = (long)i;
	return best;
}

/* The pattern move: from the best, again the step that led to it. */
static bool pattern_move(const struct coord *k, long b, struct agent_pick *pk)
{
	long prev = run_best(k, (size_t)b);
	if (prev < 0)
		return false;
	const struct agent_space *sp = k->q->sp;
	uint64_t from = k->q->obs[prev].code, at = k->q->obs[b].code, c = at;
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
	if (!moved || !offer(k, c, pk))
		return false;
	char *t = agent_point_text(sp, c);
	snprintf(pk->reason, sizeof(pk->reason), "coordinate: pattern move along the last improvement to %s", t);
	free(t);
	return true;
}

/* The nearest valid neighbour of at along parameter i in direction dir
 * (an ordered parameter: the next index that the restrictions allow). */
static bool neighbour(const struct coord *k, uint64_t at, size_t i, int dir, struct agent_pick *pk)
{
	const struct agent_space *sp = k->q->sp;
	long r = (long)json_array_size(sp->params[i].values);
	for (long x = (long)agent_point_index(sp, at, i) + dir; x >= 0 && x < r; x += dir) {
		uint64_t c = agent_point_with(sp, at, i, (size_t)x);
		if (agent_point_valid(sp, c, NULL))
			return offer(k, c, pk);
	}
	return false;
}

/* Every neighbour of at (of), one parameter at a time, in parameter order. */
static bool neighbours(const struct coord *k, uint64_t at, const char *of, struct agent_pick *pk)
{
	const struct agent_space *sp = k->q->sp;
	for (size_t i = 0; i < sp->n_params; i++) {
		const struct agent_param *p = &sp->params[i];
		bool hit = false;
		if (ordered(p)) {
			hit = neighbour(k, at, i, +1, pk) || neighbour(k, at, i, -1, pk);
		} else {
			for (size_t x = 0; x < json_array_size(p->values) && !hit; x++)
				hit = x != agent_point_index(sp, at, i) && offer(k, agent_point_with(sp, at, i, x), pk);
		}
		if (hit) {
			char *t = agent_point_text(sp, pk->code);
			snprintf(pk->reason, sizeof(pk->reason), "coordinate: neighbour of %s along %s: %s", of,
				 p->name, t);
			free(t);
			return true;
		}
	}
	return false;
}

/* A run's first point: for the first run the point the configuration
 * holds now (when known) or else the middle of every parameter, else (or
 * when that is taken) the next untried point of the seeded order. */
static bool start(struct coord *k, int run, struct agent_pick *pk)
{
	const struct agent_space *sp = k->q->sp;
	if (run == 0 && k->q->start >= 0 && offer(k, (uint64_t)k->q->start, pk)) {
		char *t = agent_point_text(sp, pk->code);
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: start at the configuration's current value %s", t);
		free(t);
		return true;
	}
	uint64_t c = 0;
	for (size_t i = 0; i < sp->n_params; i++)
		c = agent_point_with(sp, c, i, (json_array_size(sp->params[i].values) - 1) / 2);
	if (run == 0 && offer(k, c, pk)) {
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: start at the middle of every parameter");
		return true;
	}
	if (!k->perm)
		k->perm = agent_shuffled(k->q, 3);
	bool hit = false;
	for (size_t i = 0; i < k->q->n_valid && !hit; i++)
		hit = offer(k, k->perm[i], pk);
	if (hit)
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: local search %d starts at a point of the seeded "
			 "order", run + 1);
	return hit;
}

/* The local search's next point: 1, or 0 when it converged (the run has a
 * best and every neighbour of it and of its ties was measured). */
static int local_step(struct coord *k, int run, struct agent_pick *pk)
{
	long b = run_best(k, k->n);
	if (b < 0)
		return start(k, run, pk) ? 1 : 0;
	if (pattern_move(k, b, pk) || neighbours(k, k->q->obs[b].code, "the best", pk))
		return 1;
	/* A point of the run that its best does not beat by min_gain
	 * (agent_gains) is a tie that the measurement cannot break: its
	 * neighbours are tried too before the search converges. Without
	 * it, a draw of noise that ranked the better of two neighbours
	 * second ended the search beside the best (on the first, noisy
	 * simserve sweep: 12 of 30 seeds within 10% of the space before, 22
	 * after; docs/figures.md, "twelfth pass"). */
	if (k->no_ties)
		return 0;
	const struct agent_obs *o = k->q->obs;
	for (size_t i = k->from; i < k->n; i++)
		if (o[i].fidelity >= 1 && !isnan(o[i].value) && !agent_gains(k->q, o[i].value, o[b].value) &&
		    o[i].code != o[b].code && neighbours(k, o[i].code, "a tie with the best (within min_gain)", pk))
			return 1;
	return 0;
}

/* The runs so far: an observation made when the run before it had
 * converged started a new one. Returns the run now (0: the first);
 * *first: the observations after which the first run had converged
 * (SIZE_MAX: it has not). */
static int replay_runs(struct coord *k, size_t *first)
{
	int run = 0;
	struct agent_pick tmp;
	*first = SIZE_MAX;
	for (k->n = 1; k->n < k->q->n_obs; k->n++) {
		if (!local_step(k, run, &tmp)) {
			*first = run ? *first : k->n;
			k->from = k->n;
			run++;
		}
	}
	k->n = k->q->n_obs;
	return run;
}

size_t agent_coordinate_converged(const struct agent_search *q, bool ties)
{
	struct coord k;
	size_t first;
	coord_init(&k, q);
	k.no_ties = !ties;
	int run = replay_runs(&k, &first);
	struct agent_pick tmp;
	if (!run && q->n_obs && !local_step(&k, run, &tmp))
		first = q->n_obs;
	coord_release(&k);
	return first;
}

int agent_search_coordinate(const struct agent_search *q, struct agent_pick *pk)
{
	struct coord k;
	size_t first;
	coord_init(&k, q);
	int run = replay_runs(&k, &first);
	long gb = agent_best_obs(q);
	snprintf(pk->state, sizeof(pk->state), "{\"run\":%d,\"run_from\":%zu,\"best\":%lld}", run + 1, k.from,
		 gb < 0 ? -1LL : (long long)q->obs[gb].code);
	if (local_step(&k, run, pk)) {
		coord_release(&k);
		return 1;
	}
	long b = run_best(&k, k.n);
	char *t = b >= 0 ? agent_point_text(q->sp, q->obs[b].code) : xstrdup("no feasible point");
	bool more = (q->no_early_stop || run + 1 < COORD_RUNS) && start(&k, run + 1, pk);
	if (more) {
		char *why = xasprintf("coordinate: local search %d converged at %s; %s", run + 1, t,
				      pk->reason + strlen("coordinate: "));
		snprintf(pk->reason, sizeof(pk->reason), "%s", why);
		free(why);
	} else {
		snprintf(pk->reason, sizeof(pk->reason), "coordinate: converged %d time%s (last at %s): every "
			 "neighbour of each local best was measured and none beat it", run + 1, run ? "s" : "", t);
	}
	free(t);
	coord_release(&k);
	return more;
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

/* Pairs before the rank correlation between fidelities is trusted, and
 * the correlation below which halving measures in full instead. */
#define HALVING_MIN_PAIRS 6
#define HALVING_MIN_RHO 0.5

/* Ranks of v[0..n) into r (ties: the mean rank). */
static void ranks(const double *v, size_t n, double *r)
{
	for (size_t i = 0; i < n; i++) {
		size_t below = 0, same = 0;
		for (size_t j = 0; j < n; j++) {
			below += v[j] < v[i];
			same += v[j] == v[i];
		}
		r[i] = (double)below + ((double)same - 1) / 2;
	}
}

/* Spearman's rank correlation of a and b (n pairs). */
static double spearman(const double *a, const double *b, size_t n)
{
	double *ra = xcalloc(2 * n + 1, sizeof(double)), *rb = ra + n, sab = 0, saa = 0, sbb = 0, m = ((double)n - 1) / 2;
	ranks(a, n, ra);
	ranks(b, n, rb);
	for (size_t i = 0; i < n; i++) {
		sab += (ra[i] - m) * (rb[i] - m);
		saa += (ra[i] - m) * (ra[i] - m);
		sbb += (rb[i] - m) * (rb[i] - m);
	}
	free(ra);
	return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 1;
}

/* How a cheap measurement ranks points against the next fidelity up: the
 * rank correlation over every point measured (feasibly) at both 1/9 and
 * 1/3, and over those at both 1/3 and 1, each pair of rungs on its own; the
 * lower of the two that have HALVING_MIN_PAIRS pairs (1 when none has).
 * *pairs: the pairs behind the figure returned. */
static double fidelity_rho(const struct agent_search *q, size_t *pairs)
{
	double *lo = xcalloc(q->n_obs + 1, sizeof(double)), *hi = xcalloc(q->n_obs + 1, sizeof(double)), rho = 1;
	*pairs = 0;
	for (int r = 0; r < 2; r++) {
		double f = r ? 1.0 / HALVING_ETA : 1.0 / (HALVING_ETA * HALVING_ETA);
		size_t n = 0;
		for (size_t i = 0; i < q->n_obs; i++) {
			if (fabs(q->obs[i].fidelity - f) > 1e-9 || isnan(q->obs[i].value))
				continue;
			double up = value_at(q, q->obs[i].code, f * HALVING_ETA);
			if (up > -INFINITY) {
				lo[n] = q->obs[i].value;
				hi[n++] = up;
			}
		}
		double rr = n >= HALVING_MIN_PAIRS ? spearman(lo, hi, n) : 1;
		if (n >= HALVING_MIN_PAIRS && (!*pairs || rr < rho)) {
			rho = rr;
			*pairs = n;
		}
	}
	free(lo);
	free(hi);
	return rho;
}

/* Cheap measurements that rank points unlike the full ones mislead the
 * rungs: measure in full, in the seeded order, and say why. */
static int halving_full(const struct agent_search *q, double rho, size_t pairs, struct agent_pick *pk)
{
	size_t k;
	if (!agent_first_untried(q, 0, &pk->code, &k)) {
		snprintf(pk->reason, sizeof(pk->reason), "halving: all %zu valid points measured in full", q->n_valid);
		return 0;
	}
	pk->fidelity = 1;
	snprintf(pk->reason, sizeof(pk->reason),
		 "halving: fidelities disagree (rank correlation %.2f over %zu pairs, below %.2g): full fidelity, "
		 "point %zu of %zu in the seeded order", rho, pairs, HALVING_MIN_RHO, k + 1, q->n_valid);
	snprintf(pk->state, sizeof(pk->state), "{\"fallback\":true,\"rho\":%.3f,\"pairs\":%zu}", rho, pairs);
	return 1;
}

int agent_search_halving(const struct agent_search *q, struct agent_pick *pk)
{
	size_t pairs;
	double rho = fidelity_rho(q, &pairs);
	if (pairs >= HALVING_MIN_PAIRS && rho < HALVING_MIN_RHO)
		return halving_full(q, rho, pairs, pk);
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
				snprintf(pk->state, sizeof(pk->state), "{\"bracket\":%zu,\"rung\":%d,\"rho\":%.3f,\"pairs\":%zu}",
					 b, r, rho, pairs);
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
