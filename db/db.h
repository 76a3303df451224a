/*
 * The store: one SQLite file, and its public API (with db/query.h for the
 * reports' reads, db/gate.h, db/requests.h, db/journal.h, db/export.h,
 * db/devices.h, db/findings.h). db_open() creates or migrates it (WAL,
 * foreign keys, busy_timeout) and refuses a file written by a newer ratchet.
 * No public header mentions SQLite: the statement layer is db/db_int.h,
 * private to db/. All SQL lives in db/, one file per group of tables, each
 * holding that group's writes and its one reader per row shape:
 *   open.c          the connection, migrations, transactions (no table)
 *   campaigns.c     campaigns                    iterations.c  iterations
 *   leases.c        campaigns' owner columns (the lease)
 *   intents.c       originals, intents, blobs    journal.c     recovery queries over them
 *   measurements.c  measurements, metric_stats, regressions
 *   facts.c         env_facts, artifacts         notes.c       notes
 *   gate.c          gate_runs, gate_answers      requests.c    requests
 *   devices.c       device_peaks                 findings.c    findings
 *   export.c        every table, read-only
 * Every statement is prepared and binds its parameters. A failed write is
 * reported in err as "db: <operation> <table>...: <sqlite message>".
 */
#ifndef DB_DB_H
#define DB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/base/rt.h"

struct db;

/* Open (creating and migrating as needed). RT_ESCHEMA for a newer schema. */
int db_open(const char *path, struct db **out, struct rt_sb *err);

/* How db_open_mode treats the file. */
enum db_open_mode {
	DB_OPEN_CREATE,   /* db_open: create a missing file, migrate an older one */
	DB_OPEN_EXISTING, /* read-write; a missing file is RT_ENOENT, never created */
	DB_OPEN_READONLY, /* read-only; a missing file is RT_ENOENT; an older schema is
			     migrated first (read-write), since its tables would not read */
};
/* db_open with a mode: read commands pass DB_OPEN_READONLY, so a typo in
 * --db is an error instead of a new empty database. */
int db_open_mode(const char *path, enum db_open_mode mode, struct db **out, struct rt_sb *err);
void db_close(struct db *db);
const char *db_path(struct db *db);
/* From now on, in this process, every text column read from any store
 * passes through rt_redact_secrets, and so does every blob whose bytes are
 * text (a stored output or log). For the commands that only print or
 * export what is stored (CMD_SHOWS_DB): a store written before redaction
 * existed, or edited by hand, still prints no secret. Never for a command
 * that acts on what it reads (run, restore, recipe, replay). */
void db_redact_reads(void);

/* Transactions (BEGIN IMMEDIATE, so writers queue on busy_timeout). */
int db_begin(struct db *db, struct rt_sb *err);
int db_commit(struct db *db, struct rt_sb *err);
/* Roll back the open transaction, if any (for error paths: reports nothing). */
void db_rollback(struct db *db);

/* ---- campaigns (db/campaigns.c) ---- */
/* One row of `campaigns`, as both the campaign and the reports read it;
 * strings are owned by the row (db_campaign_release). */
struct db_campaign {
	int64_t id;             /* campaigns.id */
	char *name;             /* the spec's name */
	char *spec_path;        /* where the spec was read from */
	char *spec_text;        /* the spec as it was run */
	char *spec_sha256;      /* sha256 of spec_text */
	char *workdir;          /* the campaign's working folder */
	int64_t seed;           /* seed of its random choices */
	char *state;            /* running | finished | aborted */
	int64_t best_iteration; /* 0 when none yet */
	int64_t created_at;     /* Unix ms */
	int64_t finished_at;    /* Unix ms, 0 while running */
	int64_t n_iterations;   /* iterations recorded, the baseline included (readers fill it) */
	bool held;              /* a runner holds its lease now (running, not stopped) */
};
void db_campaign_release(struct db_campaign *c);

int db_campaign_create(struct db *db, const char *name, const char *spec_path,
		       const char *spec_text, const char *spec_sha256, const char *workdir,
		       int64_t seed, int64_t *id, struct rt_sb *err);
/* Latest campaign (by id); with name != NULL, the latest of that name. RT_ENOENT if none.
 * These and db_q_campaign_get (query.h) share one reader. */
int db_campaign_latest(struct db *db, const char *name, struct db_campaign *out, struct rt_sb *err);
int db_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err);
int db_campaign_set_state(struct db *db, int64_t id, const char *state, struct rt_sb *err);
int db_campaign_set_best(struct db *db, int64_t id, int64_t iteration_id, struct rt_sb *err);

/* ---- a campaign's lease (db/leases.c) ---- */
/* Who runs a campaign: the owner columns of its row. Strings are owned by
 * the struct (db_lease_release). */
struct db_lease {
	char *token;          /* the holder's token; NULL when nobody holds the lease */
	int64_t pid;          /* the holder's process id */
	char *host;           /* the holder's host name */
	int64_t since;        /* Unix ms it took the lease */
	int64_t heartbeat_at; /* Unix ms of its last heartbeat */
};
void db_lease_release(struct db_lease *l);
/* The lease of campaign id; RT_ENOENT when there is no such campaign. */
int db_lease_get(struct db *db, int64_t id, struct db_lease *out, struct rt_sb *err);
/* Take the lease only if its token is still expect (NULL: nobody held it):
 * the caller decided from what it read, and nothing changed since. Then
 * token, pid and host hold it, since and heartbeat now. RT_EBUSY when the
 * token changed meanwhile. */
int db_lease_take(struct db *db, int64_t id, const char *expect, const char *token, int64_t pid,
		  const char *host, struct rt_sb *err);
/* Renew the heartbeat if token still holds the lease; RT_ENOENT (nothing in
 * err) when it does not any more. */
int db_lease_renew(struct db *db, int64_t id, const char *token, struct rt_sb *err);
/* Give the lease back (every owner column NULL) if token holds it. */
int db_lease_drop(struct db *db, int64_t id, const char *token, struct rt_sb *err);

/* ---- iterations (db/iterations.c) ---- */
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
	XX(INTERRUPTED, "interrupted") /* final: a crash or signal cut it short */ \
	XX(OBSERVED, "observed")       /* final: no change; a profile and findings recorded */

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
	int round;              /* the device pool's round, -1: not run in a pool */
	char *device;           /* the pool worker's device ("cuda:1"), NULL: not run in a pool */
};
void db_iteration_release(struct db_iteration *it);
/* The device pool's round and the worker's device of an iteration (migration 12). */
int db_iteration_set_pool(struct db *db, int64_t id, int round, const char *device, struct rt_sb *err);

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

/* What a user typed to name an iteration: "42" (iterations.id, as `ratchet
 * log` shows it) or "3:5" (campaign 3, seq 5). RT_EUSAGE when malformed,
 * RT_ENOENT when there is no such iteration. */
int db_iteration_ref(struct db *db, const char *ref, int64_t *id, struct rt_sb *err);

/* ---- crash-safety journal: originals and intents (db/intents.c) ---- */
/* Record a file's pre-campaign bytes if this campaign has not yet. */
int db_original_record(struct db *db, int64_t campaign_id, const char *path, bool existed,
		       const void *content, size_t len, int mode, struct rt_sb *err);
/* One row of `originals`. */
struct db_original {
	char *path;              /* the file, as the campaign named it */
	bool existed;            /* it existed before the campaign */
	void *content;           /* its bytes, NUL-terminated; NULL when !existed */
	size_t len;              /* bytes of content (without the NUL) */
	char sha256[65];         /* of content, "" when !existed */
	int mode;                /* permission bits, 0 when unknown (rows before version 8) */
};
int db_originals_list(struct db *db, int64_t campaign_id, struct db_original **out, size_t *n,
		      struct rt_sb *err);
void db_originals_free(struct db_original *v, size_t n);

/* One row of `intents` (the open ones, as recovery reads them). */
struct db_intent {
	int64_t id;              /* intents.id */
	int64_t iteration_id;    /* the iteration that writes */
	char *action;            /* apply | revert */
	char *path;              /* the file written */
	bool before_exists;      /* the file existed before the write */
	void *before;            /* its bytes before, NUL-terminated; NULL when !before_exists */
	size_t before_len;       /* bytes of before */
	char before_sha256[65];  /* of before, "" when !before_exists */
	bool after_exists;       /* the file exists after the write */
	void *after;             /* its bytes after, NUL-terminated; NULL when !after_exists */
	size_t after_len;        /* bytes of after */
	char after_sha256[65];   /* of after, "" when !after_exists */
	int before_mode;         /* permission bits before, 0 when unknown (rows before version 8) */
	int after_mode;          /* permission bits after, 0 when unknown */
};
/* Modes are permission bits; 0: unknown (not recorded). */
int db_intent_open(struct db *db, int64_t iteration_id, const char *action, const char *path,
		   bool before_exists, const void *before, size_t before_len, int before_mode,
		   bool after_exists, const void *after, size_t after_len, int after_mode,
		   int64_t *id, struct rt_sb *err);
int db_intent_close(struct db *db, int64_t id, const char *state, struct rt_sb *err);
/* One intent by id into *out (release with db_intent_release); RT_ENOENT
 * (*out zeroed) when none. */
int db_intent_get(struct db *db, int64_t id, struct db_intent *out, struct rt_sb *err);
void db_intent_release(struct db_intent *t);
/* Open intents of a campaign, oldest first. */
int db_intents_open_list(struct db *db, int64_t campaign_id, struct db_intent **out, size_t *n,
			 struct rt_sb *err);
void db_intents_free(struct db_intent *v, size_t n);

/* ---- measurements, stats, regressions (db/measurements.c); facts, artifacts (db/facts.c) ---- */
int db_measure_add(struct db *db, int64_t iteration_id, const char *arm, const char *bench,
		   const char *metric, int rep, double value, const char *unit, struct rt_sb *err);
/* Mark every measurement of an iteration (and arm, or NULL for both) with rep >= from_rep invalid. */
int db_measure_invalidate(struct db *db, int64_t iteration_id, const char *arm, int from_rep,
			  const char *reason, struct rt_sb *err);

/* One row of `metric_stats`: one metric compared in one iteration. The
 * campaign writes it (db_metric_stat_add), the reports read it (db_q_mstats
 * in query.h); rows read are released with db_metric_stats_free. */
struct db_metric_stat {
	char *benchmark;       /* benchmark name */
	char *metric;          /* metric name */
	char *unit;            /* unit or NULL */
	char *better;          /* higher | lower */
	double best_median;    /* median of the best arm */
	double cand_median;    /* median of the candidate arm */
	double best_mad;       /* MAD of the best arm */
	double cand_mad;       /* MAD of the candidate arm */
	double ratio;          /* cand / best medians */
	double ci_lo;          /* bootstrap CI of the ratio, low */
	double ci_hi;          /* bootstrap CI of the ratio, high */
	double p_value;        /* Mann-Whitney U, two-sided */
	int n_best;            /* samples of the best arm */
	int n_cand;            /* samples of the candidate arm */
};
void db_metric_stats_free(struct db_metric_stat *v, size_t n);
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
/* One row of `notes`, as the reports read it (db_q_notes in query.h);
 * strings are owned by the row (db_notes_free). */
struct db_note {
	int64_t id;              /* notes.id */
	int64_t iteration_id;    /* the iteration the note is about */
	int seq;                 /* its seq (readers fill it) */
	int64_t by_iteration_id; /* correction: the iteration whose findings correct it; else 0 */
	int by_seq;              /* seq of by_iteration_id, -1 when none (readers fill it) */
	char *kind;              /* note | correction | invalidation */
	char *text;              /* the note, correction or reason */
	char *author;            /* $USER at the time, or NULL */
	int64_t created_at;      /* Unix ms */
};
void db_notes_free(struct db_note *v, size_t n);
/* Add a note, correction or invalidation about an iteration (named by its
 * id; ids are unique across campaigns), by author (NULL for none); the new
 * note's id goes to *id (may be NULL). RT_ENOENT for an unknown iteration,
 * RT_EINVAL for a bad kind, empty text or a bad correction, RT_ESTATE for a
 * second invalidation. */
int db_note_add_as(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		   const char *text, const char *author, int64_t *id, struct rt_sb *err);

#endif
