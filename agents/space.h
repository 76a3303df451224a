/*
 * Search spaces (the spec's `space:` section, filled by runner/spec/
 * spec_space.c) and the strategies that search them. A space is a list of
 * named parameters, each a finite ordered list of values (an integer range,
 * powers of two, an ordered set, a categorical set, a boolean), and the
 * restrictions between them, compiled expressions checked before anything
 * is applied. A point is one value index per parameter, encoded as one
 * mixed-radix number (its code); the valid points are those every
 * restriction accepts.
 *
 * A strategy sees the space, the campaign's seed and the observations so
 * far (rebuilt from the store on every call) and names the next point, so
 * a resumed search proposes exactly what an uninterrupted one would.
 */
#ifndef AGENT_SPACE_H
#define AGENT_SPACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/base/rt.h"

/* ---- restrictions: a small expression language ---- */

/*
 * Grammar (C and Python spellings both accepted):
 *   or   := and ( ('||' | 'or') and )*
 *   and  := not ( ('&&' | 'and') not )*
 *   not  := ('!' | 'not') not | cmp
 *   cmp  := sum ( ('<' | '<=' | '>' | '>=' | '==' | '!=') sum )?
 *   sum  := prod ( ('+' | '-') prod )*
 *   prod := unary ( ('*' | '/' | '//' | '%') unary )*
 *   unary:= '-' unary | atom
 *   atom := number | 'string' | "string" | true | false | NAME | '(' or ')'
 * Numbers are doubles (integers are exact up to 2^53); '/' divides, '//'
 * floors, '%' is the remainder (fmod). Strings compare with == and != only.
 * A value is true when non-zero.
 */
struct agent_expr;

/* Compile text; names are looked up in names[0..n) (a parameter's index).
 * Returns the expression, or NULL with one line in err:
 * "unknown parameter 'x' (parameters: a, b)" or "at column 7: expected ')'". */
struct agent_expr *agent_expr_compile(const char *text, const char *const *names, size_t n,
				      struct rt_sb *err);
void agent_expr_free(struct agent_expr *e);
/* Whether the expression names parameter i. */
bool agent_expr_uses(const struct agent_expr *e, size_t i);
/* Evaluate with parameter i's value vals[i] (numbers, strings, booleans);
 * returns true when the value is non-zero. A string where a number is
 * needed, or a division by zero, is false. */
bool agent_expr_true(const struct agent_expr *e, json_t *const *vals);

/* ---- parameters and spaces ---- */

enum agent_param_kind {
	AGENT_PARAM_RANGE,   /* integers lo..hi by step */
	AGENT_PARAM_POW2,    /* powers of two lo..hi */
	AGENT_PARAM_ORDERED, /* a list whose order means something (neighbours) */
	AGENT_PARAM_CHOICE,  /* a categorical list: every other value is a neighbour */
	AGENT_PARAM_BOOL,    /* false, true */
};

/* Names by value, NULL-terminated. */
extern const char *const agent_param_kind_names[];

struct agent_param {
	char *name;                 /* unique in the space */
	enum agent_param_kind kind; /* how the values were declared */
	json_t *values;             /* array of the values, in order (owned) */
};

struct agent_space {
	struct agent_param *params;  /* the parameters, in spec order */
	size_t n_params;             /* entries in params */
	struct agent_expr **restr;   /* compiled restrictions (owned) */
	char **restr_text;           /* each as written, for reasons */
	size_t n_restr;              /* entries in restr and restr_text */
};

/* The most points a space may have before restrictions; `ratchet check`
 * refuses a larger one (the strategies enumerate the valid points). */
#define AGENT_SPACE_MAX_POINTS 2000000ULL

void agent_space_release(struct agent_space *sp);
/* Points before restrictions, saturating at UINT64_MAX. */
uint64_t agent_space_size(const struct agent_space *sp);
/* Value index of parameter i in point code. */
size_t agent_point_index(const struct agent_space *sp, uint64_t code, size_t i);
/* The code with parameter i's index set to idx. */
uint64_t agent_point_with(const struct agent_space *sp, uint64_t code, size_t i, size_t idx);
/* Does every restriction accept the point? *failed: the first that does not. */
bool agent_point_valid(const struct agent_space *sp, uint64_t code, size_t *failed);
/* The valid points, ascending (caller frees); the space must be at most
 * AGENT_SPACE_MAX_POINTS. */
uint64_t *agent_space_valid(const struct agent_space *sp, size_t *n);
/* The point as a JSON object {name: value} in parameter order (new reference). */
json_t *agent_point_json(const struct agent_space *sp, uint64_t code);
/* The point code of a JSON object {name: value}; RT_ENOENT when a value is
 * not one of its parameter's. */
int agent_point_from_json(const struct agent_space *sp, json_t *o, uint64_t *code);
/* "MC=64 NC=128": the point for people (new string). */
char *agent_point_text(const struct agent_space *sp, uint64_t code);

/* ---- strategies over a space ---- */

/* What was measured at one point, in campaign order. */
struct agent_obs {
	uint64_t code;   /* the point */
	double value;    /* the objective, oriented so that higher is better; NAN: infeasible
			    (failed, gated, invalid) */
	double fidelity; /* 1: full; less: a cheap measurement (fewer repeats) */
};

/* One search step's inputs. */
struct agent_search {
	const struct agent_space *sp; /* the space */
	const uint64_t *valid;        /* its valid points, ascending */
	size_t n_valid;               /* entries in valid */
	const struct agent_obs *obs;  /* observations of this space so far */
	size_t n_obs;                 /* entries in obs */
	uint64_t seed;                /* the campaign's seed */
	double min_gain;              /* the objective's min_gain (fraction) */
	bool no_early_stop;           /* search on until the space is spent (offline replays) */
	int64_t start;                /* the point the configuration holds now, -1 unknown: the
				       * search starts there (proposing it costs nothing: the
				       * campaign records it as the best's observation) */
};

/* A strategy's answer. */
struct agent_pick {
	uint64_t code;     /* the point */
	double fidelity;   /* 1 full, else a cheap measurement that cannot be kept */
	char reason[200];  /* why, for people; when done: why the search stopped */
	char state[200];   /* the strategy's state after this step, JSON, for the record */
};

/* One search strategy: 1 with *pk filled, 0 when done (pk->reason says why). */
typedef int (*agent_search_fn)(const struct agent_search *q, struct agent_pick *pk);

int agent_search_coordinate(const struct agent_search *q, struct agent_pick *pk);
int agent_search_random(const struct agent_search *q, struct agent_pick *pk);
int agent_search_halving(const struct agent_search *q, struct agent_pick *pk);
int agent_search_model(const struct agent_search *q, struct agent_pick *pk);
/* genetic: a genetic algorithm (agents/genetic.c). */
int agent_search_genetic(const struct agent_search *q, struct agent_pick *pk);
/* auto: a bandit over coordinate and model (agents/auto.c). */
int agent_search_auto(const struct agent_search *q, struct agent_pick *pk);
/* After how many of q's observations coordinate's first local search had
 * converged (every neighbour of its best, and with ties of the points
 * within min_gain of it, measured, none better), or SIZE_MAX when it has
 * not yet (auto retires the arm then, ties false). */
size_t agent_coordinate_converged(const struct agent_search *q, bool ties);

/* The valid points in the order of a seeded shuffle (caller frees). */
uint64_t *agent_shuffled(const struct agent_search *q, uint64_t salt);
/* The first point of the seeded order (salt) not yet measured in full:
 * true with *code and *pos (its position in that order), false when none. */
bool agent_first_untried(const struct agent_search *q, uint64_t salt, uint64_t *code, size_t *pos);
/* The best full-fidelity feasible observation, or -1. */
long agent_best_obs(const struct agent_search *q);
/* Was the point measured at fidelity >= f (any outcome)? */
bool agent_measured(const struct agent_search *q, uint64_t code, double f);
/* Is the configuration's current value (q->start) known, valid and not yet
 * measured in full? Then a strategy proposes it first (docs/search.md,
 * "Where a search starts"). */
bool agent_start_due(const struct agent_search *q);
/* Does value v beat best by q's min_gain? Any feasible v beats a best of
 * -INFINITY (nothing yet); NAN (infeasible) never does. */
bool agent_gains(const struct agent_search *q, double best, double v);
/* Point codes in ascending order, for qsort and bsearch. */
int agent_code_cmp(const void *a, const void *b);
/* The points of obs[0 .. n) measured in full (any outcome), sorted for
 * agent_seen_has; the caller frees code. */
struct agent_seen {
	uint64_t *code; /* ascending */
	size_t n;       /* entries */
};
struct agent_seen agent_seen_of(const struct agent_obs *obs, size_t n);
bool agent_seen_has(const struct agent_seen *s, uint64_t code);

#endif
