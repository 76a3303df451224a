/*
 * Batch mode, for a device pool's round (runner/campaign/round.c): up to N
 * distinct proposals against the same best, measured at once, one per
 * device. Every strategy gets one, deterministic from the history and the
 * seed like agent_next:
 *
 *   greedy  its own rounds already try every remaining variant on the same
 *           best: the batch is its next N trials (a pending trial counts as
 *           tried); its confirmation runs alone. So a pool changes only
 *           when greedy's trials are measured, never what it decides.
 *   list    its next N untried variants, as trials of a pool round; once a
 *           round's trials are all decided, the best one that passed is
 *           confirmed (alone) and kept if it still passes. A pool of one
 *           device makes rounds of one: trial, then its confirmation.
 *   spaces  the strategy is asked N times, each pending point added to the
 *           observations as infeasible-pending (value NAN), so the next ask
 *           proposes another point; the points become trials of the round
 *           and the winner is confirmed the same way.
 *
 * A proposal that keeps (a change or a confirmation) is never batched with
 * others: it changes the best the others would be measured against.
 */
#include "agents/agent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The round most recently started in the history, or 0 (none). */
static int last_round(const struct agent_attempt *h, size_t n)
{
	int r = 0;
	for (size_t i = 0; i < n; i++)
		r = h[i].round > r ? h[i].round : r;
	return r;
}

int agent_round_winner(const struct agent_attempt *h, size_t n, size_t *win)
{
	int r = last_round(h, n);
	if (!r)
		return 0;
	double best = -INFINITY;
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (h[i].round != r)
			continue;
		if (h[i].role == DB_ROLE_CONFIRM && h[i].state == DB_ITER_INTERRUPTED)
			continue; /* a confirmation a kill cut short: confirmed again */
		if (h[i].role != DB_ROLE_TRIAL || h[i].state == DB_ITER_INTERRUPTED)
			return 0; /* confirmed already, or a trial to measure again */
		if (h[i].passed && h[i].effect > best) {
			best = h[i].effect;
			*win = i;
			found = 1;
		}
	}
	return found;
}

/* A pending attempt: tried, as far as the strategy can tell, not passed. */
static void add_pending(struct agent_attempt *h, size_t *n, const struct agent_proposal *p)
{
	h[(*n)++] = (struct agent_attempt){ .variant = p->variant, .state = DB_ITER_PENDING, .role = p->role,
					    .effect = NAN, .passed = false };
}

/* The round's confirmation of a winning trial (list and spaces). */
static void confirm_of(const struct agent_ctx *x, size_t win, struct agent_proposal *p)
{
	const struct agent_attempt *w = &x->hist[win];
	memset(p, 0, sizeof(*p));
	p->variant = w->variant;
	p->point = w->point;
	p->target = w->target;
	p->code = w->code;
	p->fidelity = 1;
	p->role = DB_ROLE_CONFIRM;
	snprintf(p->state, sizeof(p->state), "{}");
	snprintf(p->note, sizeof(p->note), "pool round %d: confirm the round's best trial (%+.1f%%)", w->round,
		 w->effect * 100);
}

int agent_round_confirm(const struct agent_ctx *x, struct agent_proposal *p)
{
	const struct agent_ops *o = agent_ops_for(x->strategy);
	size_t win;
	if (!o || !o->confirms_rounds || !agent_round_winner(x->hist, x->n_hist, &win))
		return 0;
	confirm_of(x, win, p);
	return 1;
}

static int batch_variants(const struct agent_ctx *x, const struct agent_ops *o, size_t max,
			  struct agent_proposal *out, size_t *n)
{
	struct agent_attempt *h = xcalloc(x->n_hist + max + 1, sizeof(*h));
	size_t nh = x->n_hist;
	if (nh)
		memcpy(h, x->hist, nh * sizeof(*h));
	int rc = 0;
	while (*n < max) {
		struct agent_proposal p;
		memset(&p, 0, sizeof(p));
		p.fidelity = 1;
		if (o->variants(x->n_variants, h, nh, &p) != 1) {
			if (!*n)
				out[0] = p; /* its note says why it is done */
			break;
		}
		/* A strategy that confirms its rounds proposes trials; one that
		 * confirms by itself (greedy) says which proposal keeps. */
		bool keeps = p.role != DB_ROLE_TRIAL && !o->confirms_rounds;
		if (keeps && *n)
			break; /* a keep runs alone, after this round */
		if (o->confirms_rounds) {
			p.role = DB_ROLE_TRIAL;
			snprintf(p.note, sizeof(p.note), "list in a pool round: %s variant %zu of %zu as a trial",
				 "next untried", p.variant + 1, x->n_variants);
		}
		out[(*n)++] = p;
		rc = 1;
		if (keeps)
			break;
		add_pending(h, &nh, &p);
	}
	free(h);
	return rc;
}

static int batch_points(const struct agent_ctx *x, size_t max, struct agent_proposal *out, size_t *n,
			struct rt_sb *err)
{
	/* Each target's observations, with room for the pending points. */
	struct agent_obs **obs = xcalloc(x->n_targets + 1, sizeof(*obs));
	size_t *nobs = xcalloc(x->n_targets + 1, sizeof(*nobs));
	for (size_t t = 0; t < x->n_targets; t++) {
		obs[t] = xcalloc(x->n_obs[t] + max + 1, sizeof(**obs));
		if (x->n_obs[t])
			memcpy(obs[t], x->obs[t], x->n_obs[t] * sizeof(**obs));
		nobs[t] = x->n_obs[t];
	}
	struct agent_ctx y = *x;
	y.obs = (const struct agent_obs *const *)obs;
	y.n_obs = nobs;
	int rc = 0;
	while (*n < max) {
		struct agent_proposal p;
		memset(&p, 0, sizeof(p));
		int r = agent_next(&y, &p, err);
		if (r < 0)
			rc = r;
		if (r != 1) {
			if (!*n && r == 0)
				out[0] = p;
			break;
		}
		bool dup = false;
		for (size_t i = 0; i < *n; i++)
			dup |= out[i].target == p.target && out[i].code == p.code;
		if (dup)
			break; /* the strategy insists: the round is what it has */
		obs[p.target][nobs[p.target]++] = (struct agent_obs){ .code = p.code, .value = NAN,
								      .fidelity = p.fidelity };
		p.role = DB_ROLE_TRIAL;
		out[(*n)++] = p;
		rc = 1;
	}
	for (size_t t = 0; t < x->n_targets; t++)
		free(obs[t]);
	free(obs);
	free(nobs);
	return rc;
}

int agent_next_batch(const struct agent_ctx *x, size_t max, struct agent_proposal *out, size_t *n,
		     struct rt_sb *err)
{
	const struct agent_ops *o = agent_ops_for(x->strategy);
	*n = 0;
	memset(out, 0, sizeof(*out));
	if (!max)
		return 0;
	if (!x->rounds) { /* one change at a time */
		int r = agent_next(x, out, err);
		*n = r == 1;
		return r;
	}
	if (agent_round_confirm(x, out)) {
		*n = 1;
		return 1;
	}
	if (o && o->variants)
		return batch_variants(x, o, max, out, n);
	if (o && o->search)
		return batch_points(x, max, out, n, err);
	return agent_next(x, out, err);
}
