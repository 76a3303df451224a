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

#include "agents/space.h"
#include "db/db.h"
#include "runner/base/rt.h"

/* The search strategies a spec may name (`strategy:`). */
enum agent_strategy {
	AGENT_STRAT_LIST,
	AGENT_STRAT_GREEDY,
	AGENT_STRAT_COORDINATE,
	AGENT_STRAT_HALVING,
	AGENT_STRAT_LLM,
	AGENT_STRAT_RANDOM,
	AGENT_STRAT_MODEL,
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
	int round;          /* the device pool's round, 0: none (batch.c) */
	bool point;         /* a space point (batch.c's confirmation): target and code below */
	size_t target;      /* the point's target */
	uint64_t code;      /* the point */
};

struct agent_proposal {
	size_t variant;     /* list, greedy: index into spec->variants */
	bool point;         /* a space strategy's point: target and code below */
	size_t target;      /* the point's target (index into the spec's space targets) */
	uint64_t code;      /* the point (agents/space.h) */
	double fidelity;    /* 1: full; less: a cheap measurement that is never kept */
	char note[320];     /* why, for people: "list: next in spec order (3 of 7)" */
	char state[200];    /* the strategy's state after this step (JSON), for the record */
	enum db_iter_role role; /* change; greedy: trial (decided, then reverted) or confirm */
};

/* What a strategy sees. */
struct agent_ctx {
	enum agent_strategy strategy;         /* which one */
	size_t n_variants;                    /* list, greedy: the spec's variants */
	const struct agent_attempt *hist;     /* list, greedy: every attempt so far */
	size_t n_hist;                        /* entries in hist */
	size_t n_targets;                     /* space strategies: the targets */
	const struct agent_space *const *spaces; /* each target's space */
	const char *const *labels;            /* each target's label, for reasons */
	const struct agent_obs *const *obs;   /* each target's observations so far */
	const size_t *n_obs;                  /* entries in each obs */
	uint64_t seed;                        /* the campaign's seed */
	double min_gain;                      /* the objective's min_gain */
};

/* One row of the strategies' ops table. */
struct agent_ops {
	const char *name;   /* as the spec names it */
	/* list, greedy: next variant from the history; 1, or 0 when done */
	int (*variants)(size_t nv, const struct agent_attempt *h, size_t n, struct agent_proposal *p);
	agent_search_fn search; /* space strategies: next point of one target */
};

/* The ops of a strategy; a row with neither function is not implemented. */
const struct agent_ops *agent_ops_for(enum agent_strategy k);
/* Does the strategy search a space (rather than try the variants)? */
bool agent_searches_space(enum agent_strategy k);

/* Propose the next change. Returns 1 with *p filled, 0 when the strategy is
 * done (p->note says why), RT_ENOTSUP for a strategy that is not
 * implemented. A space strategy takes the targets one at a time, in order:
 * the first whose search is not done, and says so in the note. */
int agent_next(const struct agent_ctx *x, struct agent_proposal *p, struct rt_sb *err);

/* Batch mode for a device pool's round (batch.c): up to max distinct
 * proposals against the same best into out[0..*n), trials measured at once;
 * a proposal that keeps (a change, a confirmation) comes alone. Returns 1
 * with *n >= 1, 0 when the strategy is done (out[0].note says why), or an
 * error. Deterministic from the history (hist's round fields) and the seed. */
int agent_next_batch(const struct agent_ctx *x, size_t max, struct agent_proposal *out, size_t *n,
		     struct rt_sb *err);
/* The last pool round's winner, to confirm (list and space strategies): 1
 * with *win (index into h) when that round's trials are all decided, none
 * was confirmed and one passed; else 0. */
int agent_round_winner(const struct agent_attempt *h, size_t n, size_t *win);

#endif
