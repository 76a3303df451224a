/*
 * Strategies: `list` tries each variant once, in spec order, on the current
 * best. `greedy` runs rounds: every remaining variant is tried on the current
 * best; the best one that passed is then applied again as a confirmation
 * iteration and kept if it still passes; rounds repeat until none passes.
 * Both derive everything from the history, never from memory of the run.
 * The table of every strategy (agent_ops) and the dispatch to a space's
 * strategies (agents/search.c, agents/model.c), one target at a time, are
 * here too.
 */
#include "agents/agent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An attempt that reached a conclusion (an interrupted one is tried again). */
static bool final_state(enum db_iter_state st)
{
	return st != DB_ITER_INTERRUPTED;
}

static int next_list(size_t nv, const struct agent_attempt *h, size_t n,
		     struct agent_proposal *p)
{
	for (size_t v = 0; v < nv; v++) {
		bool done = false;
		for (size_t i = 0; i < n && !done; i++)
			done = h[i].variant == v && final_state(h[i].state);
		if (!done) {
			p->variant = v;
			p->role = DB_ROLE_CHANGE;
			snprintf(p->note, sizeof(p->note), "list: next in spec order (%zu of %zu)", v + 1,
				 nv);
			return 1;
		}
	}
	return 0;
}

/*
 * Greedy rounds, reconstructed from history. Within a round every variant
 * not kept and not dead is tried once as a trial (measured and decided, then
 * reverted whatever the answer); the best trial that passed is then applied
 * again as a confirmation, which is decided (and gated) like any change. A
 * round ends at its confirmation. Dead: gated or failed, or a confirmation
 * that did not hold. A round ends at each attempt whose role is confirm.
 */
static int next_greedy(size_t nv, const struct agent_attempt *h, size_t n,
		       struct agent_proposal *p)
{
	int round = 1;
	size_t round_start = 0;
	bool *kept = xcalloc(nv + 1, sizeof(bool));
	bool *dead = xcalloc(nv + 1, sizeof(bool));
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (!final_state(h[i].state))
			continue;
		bool confirm = h[i].role == DB_ROLE_CONFIRM;
		if (h[i].state == DB_ITER_KEPT)
			kept[h[i].variant] = true;
		else if (h[i].state == DB_ITER_GATED || h[i].state == DB_ITER_FAILED ||
			 h[i].state == DB_ITER_INVALID || confirm)
			dead[h[i].variant] = true;
		if (confirm) {
			round++;
			round_start = i + 1;
		}
	}
	/* Variants still to try in this round. */
	for (size_t v = 0; v < nv; v++) {
		if (kept[v] || dead[v])
			continue;
		bool tried = false;
		for (size_t i = round_start; i < n && !tried; i++)
			tried = h[i].variant == v && final_state(h[i].state);
		if (!tried) {
			p->variant = v;
			p->role = DB_ROLE_TRIAL;
			snprintf(p->note, sizeof(p->note), "greedy round %d: trial on the current best", round);
			rc = 1;
			goto out;
		}
	}
	/* Round over: confirm the best trial that passed. */
	double best = -INFINITY;
	size_t win = (size_t)-1;
	for (size_t i = round_start; i < n; i++) {
		if (!final_state(h[i].state) || !h[i].passed || kept[h[i].variant] || dead[h[i].variant])
			continue;
		if (h[i].effect > best) {
			best = h[i].effect;
			win = h[i].variant;
		}
	}
	if (win != (size_t)-1) {
		p->variant = win;
		p->role = DB_ROLE_CONFIRM;
		snprintf(p->note, sizeof(p->note), "greedy round %d: confirm the round's best trial (%+.1f%%)",
			 round, best * 100);
		rc = 1;
	}
out:
	free(kept);
	free(dead);
	return rc;
}

const char *const agent_strategy_names[] = {
#define AGENT_X(e, name) name,
	AGENT_STRATEGIES(AGENT_X)
#undef AGENT_X
	NULL
};

/* The ops table, by enum value (AGENT_STRATEGIES gives the names). */
static const struct agent_ops ops[] = {
	[AGENT_STRAT_LIST] = { "the variants one by one, in order", AGENT_FROM_VARIANTS, next_list, NULL,
			       .confirms_rounds = true, .counts_total = true },
	[AGENT_STRAT_GREEDY] = { "rounds of every variant, the best confirmed and kept", AGENT_FROM_VARIANTS,
				 next_greedy, NULL },
	[AGENT_STRAT_COORDINATE] = { "one parameter of the space at a time", AGENT_FROM_SPACE, NULL,
				     agent_search_coordinate, .confirms_rounds = true },
	[AGENT_STRAT_HALVING] = { "successive halving over brackets of points", AGENT_FROM_SPACE, NULL,
				  agent_search_halving, .confirms_rounds = true },
	/* runner/campaign/llm.c asks the model */
	[AGENT_STRAT_LLM] = { "a chat model proposes each change", AGENT_FROM_CHAT, NULL, NULL, .confirms_rounds = true },
	[AGENT_STRAT_RANDOM] = { "seeded random points of the space", AGENT_FROM_SPACE, NULL, agent_search_random,
				 .confirms_rounds = true },
	[AGENT_STRAT_MODEL] = { "a model of the measured points picks the next", AGENT_FROM_SPACE, NULL,
				agent_search_model, .confirms_rounds = true },
	[AGENT_STRAT_AUTO] = { "a bandit over coordinate and model", AGENT_FROM_SPACE, NULL,
			       agent_search_auto, .confirms_rounds = true },
	[AGENT_STRAT_GENETIC] = { "a population bred by crossover and mutation", AGENT_FROM_SPACE, NULL,
				  agent_search_genetic, .confirms_rounds = true },
};
_Static_assert(RT_ARRAY_SIZE(ops) == AGENT_STRAT_N, "one ops row per strategy");

const char *agent_strategy_name(enum agent_strategy k)
{
	return (unsigned)k < AGENT_STRAT_N ? agent_strategy_names[k] : "unknown";
}

const char *agent_strategy_help(enum agent_strategy k)
{
	return (unsigned)k < AGENT_STRAT_N ? ops[k].help : "";
}

void agent_strategy_list(enum agent_strat_set set, struct rt_sb *out)
{
	size_t n = 0, k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < AGENT_STRAT_N; i++) {
			bool in = set == AGENT_SET_ALL || (set == AGENT_SET_SPACE && ops[i].search) ||
				  (set == AGENT_SET_PROPOSE && (ops[i].search || ops[i].variants));
			if (!in)
				continue;
			if (pass == 0)
				n++;
			else
				rt_sb_addf(out, "%s%s", k++ ? (k == n ? " or " : ", ") : "", agent_strategy_names[i]);
		}
}

const struct agent_ops *agent_ops_for(enum agent_strategy k)
{
	return (unsigned)k < RT_ARRAY_SIZE(ops) ? &ops[k] : NULL;
}

bool agent_searches_space(enum agent_strategy k)
{
	const struct agent_ops *o = agent_ops_for(k);
	return o && o->search;
}

enum agent_source agent_strategy_source(enum agent_strategy k)
{
	const struct agent_ops *o = agent_ops_for(k);
	return o ? o->source : AGENT_FROM_VARIANTS;
}

/* The space strategies: the first target whose search is not done. */
static int next_point(const struct agent_ctx *x, agent_search_fn fn, struct agent_proposal *p)
{
	struct rt_sb done = RT_SB_INIT;
	for (size_t t = 0; t < x->n_targets; t++) {
		size_t nv;
		uint64_t *valid = agent_space_valid(x->spaces[t], &nv);
		struct agent_search q = { .sp = x->spaces[t], .valid = valid, .n_valid = nv, .obs = x->obs[t],
					  .n_obs = x->n_obs[t], .seed = x->seed + t, .min_gain = x->min_gain,
					  .start = x->start ? x->start[t] : -1 };
		struct agent_pick pk;
		memset(&pk, 0, sizeof(pk));
		int r = fn(&q, &pk);
		free(valid);
		if (r == 1) {
			p->point = true;
			p->target = t;
			p->code = pk.code;
			p->fidelity = pk.fidelity;
			p->role = pk.fidelity < 1 ? DB_ROLE_TRIAL : DB_ROLE_CHANGE;
			snprintf(p->state, sizeof(p->state), "%s", pk.state[0] ? pk.state : "{}");
			if (x->n_targets > 1)
				snprintf(p->note, sizeof(p->note), "target %zu of %zu (%s), one at a time: %s", t + 1,
					 x->n_targets, x->labels[t], pk.reason);
			else
				snprintf(p->note, sizeof(p->note), "%s", pk.reason);
			rt_sb_release(&done);
			return 1;
		}
		rt_sb_addf(&done, "%s%s", done.len ? "; " : "", pk.reason);
	}
	snprintf(p->note, sizeof(p->note), "%s", done.buf);
	rt_sb_release(&done);
	return 0;
}

int agent_next(const struct agent_ctx *x, struct agent_proposal *p, struct rt_sb *err)
{
	const struct agent_ops *o = agent_ops_for(x->strategy);
	p->fidelity = 1;
	if (o && o->variants)
		return o->variants(x->n_variants, x->hist, x->n_hist, p);
	if (o && o->search)
		return next_point(x, o->search, p);
	if (o && o->source == AGENT_FROM_CHAT) /* the campaign asks the model (runner/campaign/llm.c) */
		return rt_errf(err, RT_ENOTSUP, "strategy '%s' is asked by the campaign (runner/campaign/llm.c), "
			       "not through agent_next", agent_strategy_name(x->strategy));
	struct rt_sb names = RT_SB_INIT;
	agent_strategy_list(AGENT_SET_PROPOSE, &names);
	int rc = rt_errf(err, RT_ENOTSUP, "strategy '%s' is not implemented yet (use %s)",
			 agent_strategy_name(x->strategy), names.buf);
	rt_sb_release(&names);
	return rc;
}
