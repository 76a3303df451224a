/*
 * The store: one SQLite file. db_open() creates or migrates it (WAL, foreign
 * keys, busy_timeout) and refuses a file written by a newer ratchet. All SQL
 * lives in db/: each file in db/ owns the statements of one area (store.c:
 * campaigns, iterations, journal, measurements; notes.c: notes, corrections,
 * invalidations; export.c; gate.c; requests.c; query.c: the read side for
 * reports). Every statement is prepared and binds its parameters.
 */
#ifndef DB_DB_H
#define DB_DB_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "runner/base/rt.h"

struct db;

/* Open (creating and migrating as needed). RT_ESCHEMA for a newer schema. */
int db_open(const char *path, struct db **out, struct rt_sb *err);
void db_close(struct db *db);
/* The raw handle, for the files in db/ only. */
sqlite3 *db_sqlite(struct db *db);
const char *db_path(struct db *db);

/* Transactions (BEGIN IMMEDIATE, so writers queue on busy_timeout). */
int db_begin(struct db *db, struct rt_sb *err);
int db_commit(struct db *db, struct rt_sb *err);
void db_rollback(struct db *db);

/* Report an SQLite error in err as "db: <what>: <sqlite message>"; returns RT_EDB. */
int db_fail(struct db *db, struct rt_sb *err, const char *what);
/* Binding and reading helpers shared by the db/ files. NULL text, a
 * non-finite real and an id <= 0 are bound as SQL NULL; a NULL column reads
 * back as NULL text or NAN. Text is copied (the caller frees). */
void db_bind_text(sqlite3_stmt *st, int i, const char *s);
void db_bind_real(sqlite3_stmt *st, int i, double v);
void db_bind_id(sqlite3_stmt *st, int i, int64_t id);
char *db_col_text(sqlite3_stmt *st, int i);
/* Grow array v (n used, *cap allocated, elements of sz bytes) so that index n
 * fits; returns the (possibly moved) array. For the list readers. */
void *db_grow(void *v, size_t n, size_t *cap, size_t sz);
double db_col_real(sqlite3_stmt *st, int i);

/* Prepare (cached per db handle); NULL with err filled on failure. */
sqlite3_stmt *db_prepare(struct db *db, const char *sql, struct rt_sb *err);

/* ---- campaigns ---- */
struct db_campaign {
	int64_t id;
	char *name;
	char *spec_path;
	char *spec_text;
	char *spec_sha256;
	char *workdir;
	int64_t seed;
	char *state;            /* running | finished | aborted */
	int64_t best_iteration; /* 0 when none yet */
	int64_t created_at;
	int64_t finished_at;
	int64_t n_iterations;   /* iterations recorded, the baseline included (db_q_campaign_get fills it) */
};
void db_campaign_release(struct db_campaign *c);

int db_campaign_create(struct db *db, const char *name, const char *spec_path,
		       const char *spec_text, const char *spec_sha256, const char *workdir,
		       int64_t seed, int64_t *id, struct rt_sb *err);
/* Latest campaign (by id); with name != NULL, the latest of that name. RT_ENOENT if none. */
int db_campaign_latest(struct db *db, const char *name, struct db_campaign *out, struct rt_sb *err);
int db_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err);
int db_campaign_set_state(struct db *db, int64_t id, const char *state, struct rt_sb *err);
int db_campaign_set_best(struct db *db, int64_t id, int64_t iteration_id, struct rt_sb *err);

/* ---- iterations ---- */
/* Where an iteration stands: one name per state, in the order of the
 * iterations.state CHECK list in schema.sql. The campaign's state machine
 * moves an iteration pending -> applying -> applied -> measuring -> one final
 * state; baseline is the seq-0 row's final state. */
#define DB_ITER_STATE_MAP(XX)                                                  \
	XX(PENDING, "pending")         /* created, nothing applied yet */       \
	XX(APPLYING, "applying")       /* the change is being applied */        \
	XX(APPLIED, "applied")         /* applied, not yet measured */          \
	XX(MEASURING, "measuring")     /* benchmarks or the gate are running */ \
	XX(BASELINE, "baseline")       /* final: the campaign's baseline */     \
	XX(KEPT, "kept")               /* final: the change became the best */  \
	XX(REVERTED, "reverted")       /* final: measured, not kept */          \
	XX(GATED, "gated")             /* final: the accuracy gate said no */   \
	XX(FAILED, "failed")           /* final: apply, build or engine failed */ \
	XX(INVALID, "invalid")         /* final: its measurements are invalid */ \
	XX(INTERRUPTED, "interrupted") /* final: a crash or signal cut it short */

enum db_iter_state {
#define XX(code, name) DB_ITER_##code,
	DB_ITER_STATE_MAP(XX)
#undef XX
	DB_ITER_N_STATES
};
/* "kept", ...; "unknown" for a value out of range. */
const char *db_iter_state_name(enum db_iter_state s);
/* The state called name; RT_EINVAL (and *out unchanged) when there is none. */
int db_iter_state_parse(const char *name, enum db_iter_state *out);
/* kept, reverted, ...: the iteration is over (everything but pending,
 * applying, applied, measuring). */
bool db_iter_state_final(enum db_iter_state s);

/* Why the strategy proposed an iteration: a plain change (list), or one of
 * greedy's two roles. A column (iterations.role), never words in a note. */
#define DB_ITER_ROLE_MAP(XX)                                                    \
	XX(CHANGE, "change")   /* decided and kept when it passes */             \
	XX(TRIAL, "trial")     /* decided, then reverted even when it passes */  \
	XX(CONFIRM, "confirm") /* a round's best trial, applied again and decided */

enum db_iter_role {
#define XX(code, name) DB_ROLE_##code,
	DB_ITER_ROLE_MAP(XX)
#undef XX
	DB_N_ROLES
};
const char *db_iter_role_name(enum db_iter_role r);
int db_iter_role_parse(const char *name, enum db_iter_role *out);

/* One row of `iterations`, as both the campaign and the reports read it.
 * Strings are owned by the row (NULL when the column is NULL); doubles are
 * NAN when the column is NULL. */
struct db_iteration {
	int64_t id;             /* iterations.id: what `ratchet show` takes */
	int64_t campaign_id;    /* campaigns.id */
	int seq;                /* 0 = baseline */
	int64_t parent_id;      /* best config it was applied on, 0 for the baseline */
	char *variant;          /* variant name */
	char *kind;             /* baseline | table | flag | env | patch | file */
	char *change_text;      /* readable diff of the change (NULL in pages of `log`) */
	char *change_sha256;    /* fingerprint of the change itself */
	char *config_sha256;    /* fingerprint of the resulting configuration */
	enum db_iter_state state; /* where it stands */
	enum db_iter_role role; /* why it was proposed */
	int passed;             /* passed its decision (and gate): 1, did not: 0, none reached: -1 */
	char *phase;            /* last phase reached */
	char *decision;         /* keep | revert | NULL */
	char *reason;           /* one human line */
	char *objective;        /* bench.metric */
	double obj_best;        /* median of the best arm */
	double obj_cand;        /* median of the candidate arm */
	double obj_delta;       /* relative change, + is better */
	double obj_ci_lo;       /* CI of obj_delta, low end */
	double obj_ci_hi;       /* CI of obj_delta, high end */
	double confidence;      /* confidence level of the CI, e.g. 0.95 */
	char *test;             /* statistical test used */
	double p_value;         /* p of that test */
	int n_cand;             /* candidate samples */
	int n_best;             /* best-arm samples */
	bool paired;            /* A/B interleaved */
	int64_t gate_run_id;    /* gate_runs.id, 0 when none */
	double gate_accuracy;   /* gate_runs.accuracy, NAN when none (readers fill it) */
	int gate_passed;        /* 1 pass, 0 fail, -1 none or unfinished (readers fill it) */
	char *strategy_note;    /* why the strategy proposed it, for people */
	int64_t started_at;     /* Unix ms */
	int64_t finished_at;    /* Unix ms, 0 while running */
	bool invalidated;       /* an invalidation note points at it (readers fill it) */
	int64_t corrected_by;   /* first iteration whose correction note amends it, or 0 */
};
void db_iteration_release(struct db_iteration *it);

int db_iteration_create(struct db *db, int64_t campaign_id, int seq, int64_t parent_id,
			const char *variant, const char *kind, const char *change_text,
			const char *change_sha256, const char *config_sha256,
			const char *strategy_note, enum db_iter_role role, int64_t *id,
			struct rt_sb *err);
/* One iteration by id (change_text filled). RT_ENOENT when there is none. */
int db_iteration_get(struct db *db, int64_t id, struct db_iteration *out, struct rt_sb *err);
/* By campaign and seq. */
int db_iteration_get_seq(struct db *db, int64_t campaign_id, int seq, struct db_iteration *out,
			 struct rt_sb *err);
/* All iterations of a campaign in seq order; *out is an array the caller
 * releases with db_iterations_free. */
int db_iterations_list(struct db *db, int64_t campaign_id, struct db_iteration **out, size_t *n,
		       struct rt_sb *err);
void db_iterations_free(struct db_iteration *v, size_t n);
int db_iteration_set_state(struct db *db, int64_t id, enum db_iter_state state, const char *phase,
			   struct rt_sb *err);
/* Final decision (state, passed, decision, objective, statistics, gate run);
 * also sets finished_at. */
int db_iteration_finish(struct db *db, const struct db_iteration *it, struct rt_sb *err);

/* ---- crash-safety journal ---- */
/* Record a file's pre-campaign bytes if this campaign has not yet. */
int db_original_record(struct db *db, int64_t campaign_id, const char *path, bool existed,
		       const void *content, size_t len, int mode, struct rt_sb *err);
struct db_original {
	char *path;
	bool existed;
	void *content;
	size_t len;
	char sha256[65];
	int mode;
};
int db_originals_list(struct db *db, int64_t campaign_id, struct db_original **out, size_t *n,
		      struct rt_sb *err);
void db_originals_free(struct db_original *v, size_t n);

struct db_intent {
	int64_t id;
	int64_t iteration_id;
	char *action;            /* apply | revert */
	char *path;
	bool before_exists;
	void *before;
	size_t before_len;
	char before_sha256[65];
	bool after_exists;
	void *after;
	size_t after_len;
	char after_sha256[65];
};
int db_intent_open(struct db *db, int64_t iteration_id, const char *action, const char *path,
		   bool before_exists, const void *before, size_t before_len, bool after_exists,
		   const void *after, size_t after_len, int64_t *id, struct rt_sb *err);
int db_intent_close(struct db *db, int64_t id, const char *state, struct rt_sb *err);
/* Open intents of a campaign, oldest first. */
int db_intents_open_list(struct db *db, int64_t campaign_id, struct db_intent **out, size_t *n,
			 struct rt_sb *err);
void db_intents_free(struct db_intent *v, size_t n);

/* ---- measurements, stats, regressions, facts, artifacts ---- */
int db_measure_add(struct db *db, int64_t iteration_id, const char *arm, const char *bench,
		   const char *metric, int rep, double value, const char *unit, struct rt_sb *err);
/* Mark every measurement of an iteration (and arm, or NULL for both) with rep >= from_rep invalid. */
int db_measure_invalidate(struct db *db, int64_t iteration_id, const char *arm, int from_rep,
			  const char *reason, struct rt_sb *err);

struct db_metric_stat {
	const char *benchmark, *metric, *unit, *better;
	double best_median, cand_median, best_mad, cand_mad, ratio, ci_lo, ci_hi, p_value;
	int n_best, n_cand;
};
int db_metric_stat_add(struct db *db, int64_t iteration_id, const struct db_metric_stat *s,
		       struct rt_sb *err);
int db_regression_add(struct db *db, int64_t iteration_id, const char *bench, const char *metric,
		      const char *unit, double before, double after, double delta, double ci_lo,
		      double ci_hi, bool kept, struct rt_sb *err);
int db_fact_add(struct db *db, int64_t campaign_id, int64_t iteration_id, const char *key,
		const char *value, struct rt_sb *err);
/* Store an artifact (content copied into the database, capped by the caller). */
int db_artifact_add(struct db *db, int64_t campaign_id, int64_t iteration_id, const char *kind,
		    const char *name, const void *content, size_t len, bool truncated,
		    struct rt_sb *err);

/* ---- notes, corrections, invalidations (db/notes.c) ---- */
/* The iteration is named by its id (ids are unique across campaigns). */
int db_note_add(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		const char *text, struct rt_sb *err);
bool db_iteration_is_invalid(struct db *db, int64_t iteration_id);

/* ---- added by the db helper (db/notes.c) ---- */
/* One row of `notes`; strings are owned by the struct (db_notes_free). */
struct db_note {
	int64_t id;              /* notes.id */
	int64_t iteration_id;    /* the iteration the note is about */
	char *kind;              /* note | correction | invalidation */
	int64_t by_iteration_id; /* correction: the iteration whose findings correct it; else 0 */
	char *text;              /* the note, correction or reason */
	char *author;            /* $USER at the time, or NULL */
	int64_t created_at;      /* Unix ms */
};
/* db_note_add with an author (NULL for none); the new note's id goes to *id
 * (may be NULL). RT_ENOENT for an unknown iteration, RT_EINVAL for a bad
 * kind, empty text or a bad correction, RT_ESTATE for a second invalidation. */
int db_note_add_as(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		   const char *text, const char *author, int64_t *id, struct rt_sb *err);
/* Notes about an iteration and corrections it made to others
 * (iteration_id = id or by_iteration_id = id), oldest first. */
int db_notes_list(struct db *db, int64_t iteration_id, struct db_note **out, size_t *n,
		  struct rt_sb *err);
void db_notes_free(struct db_note *v, size_t n);
/* What a user typed to name an iteration: "42" (iterations.id, as `ratchet
 * log` shows it) or "3:5" (campaign 3, seq 5). RT_EUSAGE when malformed,
 * RT_ENOENT when there is no such iteration. */
int db_iteration_ref(struct db *db, const char *ref, int64_t *id, struct rt_sb *err);

#endif
