/*
 * The tuning side of agents/: strategies that propose the next change. A
 * strategy sees the spec and the campaign's history (rebuilt from the store
 * on every call, so a resumed campaign proposes exactly what an
 * uninterrupted one would) and names the next variant, or says it is done.
 */
#ifndef AGENT_AGENT_H
#define AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "runner/base/rt.h"

/* The search strategies a spec may name (`strategy:`). */
enum agent_strategy {
	AGENT_STRAT_LIST,
	AGENT_STRAT_GREEDY,
	AGENT_STRAT_COORDINATE,
	AGENT_STRAT_HALVING,
	AGENT_STRAT_LLM,
};

/* Names by value, NULL-terminated: the spec's enum table uses it. */
extern const char *const agent_strategy_names[];
/* "list", "greedy", ...; "unknown" for a value out of range. */
const char *agent_strategy_name(enum agent_strategy k);

/* What happened to one attempt at a variant, in campaign order. */
struct agent_attempt {
	size_t variant;     /* index into spec->variants */
	enum db_iter_state state; /* where it stands (kept, reverted, ...) */
	enum db_iter_role role;   /* the role it was proposed in */
	double effect;      /* objective gain, + is better; NAN when not measured */
	bool passed;        /* passed its decision (and gate): kept, or a greedy trial that passed */
};

struct agent_proposal {
	size_t variant;     /* index into spec->variants */
	char note[160];     /* why, for people: "list: next in spec order (3 of 7)" */
	enum db_iter_role role; /* change; greedy: trial (decided, then reverted) or confirm */
};

/* Propose the next change. Returns 1 with *p filled, 0 when the strategy is
 * done, RT_ENOTSUP for a strategy that is not implemented. */
int agent_next(enum agent_strategy strategy, size_t n_variants, const struct agent_attempt *hist, size_t n,
	       struct agent_proposal *p, struct rt_sb *err);

#endif
