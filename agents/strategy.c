/*
 * Strategies: `list` tries each variant once, in spec order, on the current
 * best. `greedy` runs rounds: every remaining variant is tried on the current
 * best; the best one that passed is then applied again as a confirmation
 * iteration and kept if it still passes; rounds repeat until none passes.
 * Both derive everything from the history, never from memory of the run.
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

const char *const agent_strategy_names[] = { "list", "greedy", "coordinate", "halving", "llm", NULL };

const char *agent_strategy_name(enum agent_strategy k)
{
	return (unsigned)k <= AGENT_STRAT_LLM ? agent_strategy_names[k] : "unknown";
}

int agent_next(enum agent_strategy strategy, size_t nv, const struct agent_attempt *hist, size_t n,
	       struct agent_proposal *p, struct rt_sb *err)
{
	switch (strategy) {
	case AGENT_STRAT_LIST:
		return next_list(nv, hist, n, p);
	case AGENT_STRAT_GREEDY:
		return next_greedy(nv, hist, n, p);
	default:
		return rt_errf(err, RT_ENOTSUP, "strategy '%s' is not implemented yet (use list or greedy)",
			       agent_strategy_name(strategy));
	}
}
