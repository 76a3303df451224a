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
#include <stdint.h>

#include <jansson.h>

#include "agents/space.h"
#include "db/db.h"
#include "runner/base/rt.h"
#include "variants/var_def.h"

/* The search strategies a spec may name (`strategy:`), in the order of
 * their values (stored in the database): X(ENUM, name). The enum, the
 * spec's words (agent_strategy_names) and every message that lists them
 * (agent_strategy_list) come from here; the ops table (strategy.c) gives
 * each row its functions and its help line. */
#define AGENT_STRATEGIES(X)                                   \
	X(LIST, "list") X(GREEDY, "greedy") X(COORDINATE, "coordinate") \
	X(HALVING, "halving") X(LLM, "llm") X(RANDOM, "random") X(MODEL, "model") X(AUTO, "auto") \
	X(GENETIC, "genetic")
enum agent_strategy {
#define AGENT_X(e, name) AGENT_STRAT_##e,
	AGENT_STRATEGIES(AGENT_X)
#undef AGENT_X
	AGENT_STRAT_N
};

/* How the request constrains the answer (llm.response_format): nothing
 * but the prompt, any JSON object, or the answer schema itself. */
enum agent_llm_format {
	AGENT_LLM_FMT_NONE,
	AGENT_LLM_FMT_JSON_OBJECT,
	AGENT_LLM_FMT_JSON_SCHEMA,
};
/* Names by value, NULL-terminated: "none", "json_object", "json_schema". */
extern const char *const agent_llm_format_names[];

/* strategy: llm's settings: the spec's llm: section (runner/spec/spec_llm.c). */
struct agent_llm_cfg {
	bool present;          /* the spec has an llm: section */
	char *endpoint;        /* base URL of an OpenAI-compatible server ("http://host:8000/v1") */
	char *model;           /* the model the server serves */
	char *api_key_env;     /* the environment variable holding the key; NULL: no key */
	int max_calls;         /* chat requests over the campaign (default 20) */
	uint64_t max_tokens;   /* prompt + completion tokens over the campaign (usage); 0: no cap */
	int answer_tokens;     /* max_tokens of each request (default 1024) */
	double temperature;    /* sampling temperature (default 0) */
	double timeout_s;      /* per request (default 120 s) */
	int response_format;   /* enum agent_llm_format (default none) */
	struct rt_strv kinds;  /* change kinds it may propose; empty: those the spec already uses */
	struct rt_strv files;  /* files (fnmatch globs) it may touch; empty: those the spec already uses */
	struct rt_strv flags;  /* options it may set; empty: those the spec's variants and space set */
	struct rt_strv env;    /* variables it may set; empty: those the spec's variants and space set */
};

/* Names by value, NULL-terminated: the spec's enum table uses it. */
extern const char *const agent_strategy_names[];
/* "list", "greedy", ...; "unknown" for a value out of range. */
const char *agent_strategy_name(enum agent_strategy k);
/* What the strategy does, in one line (its ops row). */
const char *agent_strategy_help(enum agent_strategy k);
/* Which strategies agent_strategy_list names. */
enum agent_strat_set {
	AGENT_SET_ALL,     /* every strategy */
	AGENT_SET_SPACE,   /* those that search a space: */
	AGENT_SET_PROPOSE, /* those agent_next proposes with (not llm, which the campaign asks) */
};
/* The names of a set into out, in table order: "coordinate, halving, random or model". */
void agent_strategy_list(enum agent_strat_set set, struct rt_sb *out);

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
	const int64_t *start;                 /* each target's point the configuration holds now (its
					       * flag, table entry or variable), -1 unknown; NULL: none */
	bool rounds;                          /* a device pool's rounds (batch.c): trials, then the
					       * round's winner confirmed; false: one change at a time */
};

/* Where a strategy's proposals come from: which row of the campaign's
 * proposer table (runner/campaign/propose.c) serves it. */
enum agent_source {
	AGENT_FROM_VARIANTS, /* the spec's variants, by index (list, greedy) */
	AGENT_FROM_SPACE,    /* points of the spec's space: (coordinate, ...) */
	AGENT_FROM_CHAT,     /* a chat model's answers (llm): the campaign asks */
};

/* One row of the strategies' ops table. */
struct agent_ops {
	const char *help;   /* what it does, in one line */
	enum agent_source source; /* where its proposals come from */
	/* list, greedy: next variant from the history; 1, or 0 when done */
	int (*variants)(size_t nv, const struct agent_attempt *h, size_t n, struct agent_proposal *p);
	agent_search_fn search; /* space strategies: next point of one target */
	bool confirms_rounds; /* a pool round's trials are confirmed by a round of one (list, spaces,
			       * llm); false: the strategy confirms by itself (greedy) */
	bool counts_total;  /* the campaign's length is known: one iteration per variant (list) */
};

/* The ops of a strategy; a row with neither function is not implemented. */
const struct agent_ops *agent_ops_for(enum agent_strategy k);
/* Does the strategy search a space (rather than try the variants)? */
bool agent_searches_space(enum agent_strategy k);
/* Where the strategy's proposals come from (its row's source). */
enum agent_source agent_strategy_source(enum agent_strategy k);

/* Propose the next change. Returns 1 with *p filled, 0 when the strategy is
 * done (p->note says why), RT_ENOTSUP for a strategy that is not
 * implemented. A space strategy takes the targets one at a time, in order:
 * the first whose search is not done, and says so in the note. */
int agent_next(const struct agent_ctx *x, struct agent_proposal *p, struct rt_sb *err);

/* ---- strategy: llm (agents/llm.c) ----
 * The campaign (runner/campaign/llm.c) gathers what the model sees, asks,
 * reads the answer through the spec's variant parser and records every
 * exchange (the request itself: runner/campaign/llm_chat.c); here are the
 * parts that need neither the spec nor the store, nor the network. */

/* One iteration of the journal, as the model sees it. Borrowed strings. */
struct agent_llm_step {
	int seq;              /* iteration number (0: the baseline) */
	const char *variant;  /* its name */
	const char *kind;     /* baseline, table, flag, ..., observe */
	const char *state;    /* kept, reverted, gated, failed, ... */
	double effect;        /* objective change, + better; NAN when none */
	const char *reason;   /* why it ended so */
	const char *change;   /* what it changed (readable), or NULL */
};

/* Everything the prompt holds. Borrowed. */
struct agent_llm_view {
	const char *objective;               /* "serve.output_throughput, max, min gain 5%" */
	const struct agent_llm_step *journal; /* the iterations so far, in order */
	size_t n_journal;                    /* entries in journal */
	const char *const *findings;         /* the top findings, one line each, best first */
	size_t n_findings;                   /* entries in findings */
	const json_t *space;                 /* the spec's space: as JSON, or NULL */
	const json_t *examples;              /* the spec's variants as JSON (a list, maybe empty) */
	const struct rt_strv *kinds;         /* the kinds it may propose */
	const struct rt_strv *files;         /* the files (globs) it may touch */
	const struct rt_strv *flags;         /* the options it may set (NULL: none listed) */
	const struct rt_strv *env;           /* the variables it may set (NULL: none listed) */
};

/* The request's messages (system, user), built only from v so that the
 * same store asks the same question. Caller owns the reference. */
json_t *agent_llm_messages(const struct agent_llm_view *v);
/* The request's response_format for f, the schema's kinds from kinds:
 * NULL for none (the key is left out), {"type": "json_object"}, or
 * {"type": "json_schema", "json_schema": {"name", "schema"}} carrying the
 * answer schema the system message states. A new reference. */
json_t *agent_llm_response_format(enum agent_llm_format f, const struct rt_strv *kinds);
/* Append the refused answer and the follow-up that names its error. */
void agent_llm_reask(json_t *messages, const char *answer, const char *error);
/* Read an answer: one JSON object {"variant": {...}, "rationale": "..."}
 * (a ```json fence around it is allowed). *variant gets a new reference,
 * *rationale a new string. RT_EPARSE with what is wrong otherwise. */
int agent_llm_answer(const char *text, json_t **variant, char **rationale, struct rt_sb *err);
/* The files v names, as the spec resolved them (borrowed): a table's file,
 * a patch's diff and folder, a file swap's target and source. Returns how
 * many (<= 4). */
size_t agent_llm_files(const struct var_def *v, const char *out[4]);
/* path relative to workdir when it lies under it, else path (borrowed). */
const char *agent_llm_relpath(const char *path, const char *workdir);

/* ---- what an answer may do (agents/llm_allow.c) ----
 * The containment model (docs/reliability.md, "What a model's answer may
 * do"): an answer is data. It never runs a command (no build); it sets
 * listed flags only, never one that carries a program in a measured
 * command; listed environment variables only, never a loader's, shell's or
 * interpreter's; files whose real paths lie inside the workdir and match an
 * allowed glob component by component, existing ones regular files under
 * AGENT_LLM_FILE_MAX; patches that touch only such files, with no "..", no
 * absolute path and no symbolic link. */

/* A file an answer names (a table, a source, a diff) is refused above this. */
#define AGENT_LLM_FILE_MAX (64u << 20)

/* What the model may touch; the spec fills it (spec_llm_allow). Owned. */
struct agent_llm_allow {
	struct rt_strv kinds;       /* change kinds */
	struct rt_strv files;       /* globs, relative to the workdir, '*' within one component */
	struct rt_strv flags;       /* option names ("--max-num-seqs") */
	struct rt_strv env;         /* variable names */
	struct rt_strv script_opts; /* options that carry a program in a measured command: never */
	char *workdir;              /* the workdir's real path */
};
void agent_llm_allow_release(struct agent_llm_allow *a);
/* Add to out the options that carry a program in the command line argv
 * (sh's -c, python's -c and -m, perl's -e, ... for each interpreter argv
 * runs, and --command, --eval, --exec, --execute, --script always). */
void agent_llm_script_opts(char *const *argv, struct rt_strv *out);
/* Does a loader, a shell or an interpreter read the variable name (LD_*,
 * PATH, PYTHON*, BASH_ENV, IFS, PERL5*, NODE_OPTIONS, ...)? */
bool agent_llm_env_forbidden(const char *name);
/* May an answer set the option name? 0, or RT_EINVAL saying why not. */
int agent_llm_flag_ok(const char *name, const struct agent_llm_allow *a, struct rt_sb *err);
/* The paths and modes the unified diff text names (v: the patch variant,
 * its dir the folder the paths are relative to): 0, or RT_EINVAL naming the
 * first path or line that breaks the model. */
int agent_llm_patch_ok(const struct var_def *v, const char *diff, const struct agent_llm_allow *a,
		       struct rt_sb *err);
/* May the model propose v (its paths as the spec resolved them)? 0, or
 * RT_EINVAL naming what is not allowed. */
int agent_llm_allowed(const struct var_def *v, const struct agent_llm_allow *a, struct rt_sb *err);
/* Every file the change's plan touches, as git apply itself reads the
 * patch (variants' plan: `git apply --numstat`, forwards and reversed), is
 * inside the workdir and allowed: the second check of an accepted answer,
 * made when it is planned, so that no difference between git's reading of
 * a diff and agent_llm_patch_ok's can let a file through. 0, or RT_EINVAL
 * naming the first file that is not allowed. */
struct var_plan;
int agent_llm_plan_ok(const struct var_def *v, const struct var_plan *pl, const struct agent_llm_allow *a,
		      struct rt_sb *err);

/* The next proposals (batch.c). One change at a time (x->rounds false):
 * agent_next's, *n 1. A device pool's round (x->rounds): up to max distinct
 * proposals against the same best into out[0..*n), trials measured at once;
 * a proposal that keeps (a change, a confirmation) comes alone. Returns 1
 * with *n >= 1, 0 when the strategy is done (out[0].note says why), or an
 * error. Deterministic from the history (hist's round fields) and the seed.
 * A chat model's strategy is asked by the campaign: only its confirmations
 * come from here (agent_round_confirm). */
int agent_next_batch(const struct agent_ctx *x, size_t max, struct agent_proposal *out, size_t *n,
		     struct rt_sb *err);
/* The last pool round's winner, to confirm (list and space strategies): 1
 * with *win (index into h) when that round's trials are all decided, none
 * was confirmed and one passed; else 0. */
int agent_round_winner(const struct agent_attempt *h, size_t n, size_t *win);
/* A pool round's winner to confirm, when the strategy confirms its rounds
 * (its row's confirms_rounds) and agent_round_winner finds one: 1 with *p
 * the confirmation (the winner's variant, or its point: target and code),
 * else 0. */
int agent_round_confirm(const struct agent_ctx *x, struct agent_proposal *p);

#endif
