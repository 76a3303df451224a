/*
 * The read side of the store, for the reports (`ratchet log`, `show`,
 * `regressions`, `report`). Rows are the tables' one row models (db.h,
 * gate.h) where a table has one, and the shapes below for joins and
 * groupings; each function lives with its table's writer (db/campaigns.c,
 * iterations.c, measurements.c, facts.c, notes.c, gate.c, requests.c).
 * Every function runs prepared statements that walk
 * the indexes of db/schema.sql (iterations_campaign, notes_iteration,
 * measurements_iteration, metric_stats_iteration, requests_iteration), so a
 * page of `ratchet log` costs the same on 10 or 100,000 iterations. Rows come
 * back as arrays the caller frees with the matching *_free(); strings in them
 * are owned by the row (NULL when the column is NULL), doubles are NAN when
 * the column is NULL.
 */
#ifndef DB_QUERY_H
#define DB_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "db/gate.h"
#include "runner/base/rt.h"

/* Campaign `id`, or the latest one when id is 0. RT_ENOENT when there is none. */
int db_q_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err);

struct db_q_iter_filter {
	int64_t campaign_id;   /* required */
	const char *state;     /* only this state (invalid also matches invalidation notes), or NULL */
	int64_t since_ms;      /* only iterations started at or after, 0 for all */
	size_t limit;          /* the newest `limit` rows (still returned oldest first), 0 for all */
	bool with_text;        /* also fill change_text */
};
/* Iterations of a campaign in seq order (rows as in db/db.h). */
int db_q_iters(struct db *db, const struct db_q_iter_filter *f, struct db_iteration **out,
	       size_t *n, struct rt_sb *err);

/* The valid samples of one metric and arm of one iteration, sorted ascending. */
struct db_q_series {
	char *benchmark;       /* benchmark name, 'log' for log-event counts */
	char *metric;          /* metric name */
	char *arm;             /* cand | best */
	char *unit;            /* unit of the first sample, or NULL */
	double *v;             /* valid values, ascending */
	size_t n;              /* number of valid values */
	size_t n_invalid;      /* samples marked invalid (not in v) */
};
void db_q_series_free(struct db_q_series *v, size_t n);
/* Every metric and arm of an iteration, ordered by benchmark, metric, arm. */
int db_q_series_list(struct db *db, int64_t iteration_id, struct db_q_series **out, size_t *n,
		     struct rt_sb *err);

/* metric_stats rows of an iteration (struct db_metric_stat in db.h, released
 * with db_metric_stats_free), ordered by benchmark and metric. */
int db_q_mstats(struct db *db, int64_t iteration_id, struct db_metric_stat **out, size_t *n,
		struct rt_sb *err);

/* A gate run is read with db_gate_run_get (db/gate.h). */

/* A question whose correctness differs between a run and its baseline run. */
struct db_q_flip {
	int idx;                 /* question index */
	bool now_correct;        /* true: wrong -> right, false: right -> wrong */
	char *target;            /* expected answer */
	char *before;            /* extracted answer in the baseline run */
	char *after;             /* extracted answer in this run */
};
void db_q_flips_free(struct db_q_flip *v, size_t n);
int db_q_flips(struct db *db, int64_t run_id, int64_t baseline_run_id, struct db_q_flip **out,
	       size_t *n, struct rt_sb *err);

struct db_q_regr {
	int64_t id;              /* regressions.id */
	int64_t iteration_id;    /* the iteration that caused it */
	int seq;                 /* its seq */
	char *variant;           /* its variant */
	enum db_iter_state state; /* its state */
	char *benchmark;         /* benchmark name */
	char *metric;            /* metric name */
	char *unit;              /* unit or NULL */
	double before;           /* value before */
	double after;            /* value after */
	double delta;            /* relative, - is worse */
	double ci_lo;            /* CI of delta */
	double ci_hi;
	bool kept;               /* the change was kept anyway */
};
void db_q_regrs_free(struct db_q_regr *v, size_t n);
/* By campaign (iteration_id 0) or by one iteration (campaign_id ignored). */
int db_q_regrs(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_regr **out,
	       size_t *n, struct rt_sb *err);

struct db_q_kv {
	int64_t id;              /* artifacts only: the row's id */
	char *key;               /* fact key, or artifact name (unique in its iteration) */
	char *stored;            /* artifacts only: the name as stored when several
	                          * share it (key then numbers them), else NULL */
	char *value;             /* fact value, or artifact kind */
	char *sha256;            /* artifacts only */
	int64_t size;            /* artifacts only: bytes */
	bool truncated;          /* artifacts only */
	bool campaign_wide;      /* the fact was recorded for the whole campaign */
};
void db_q_kvs_free(struct db_q_kv *v, size_t n);
/* Facts of the iteration, then the campaign-wide ones not overridden. */
int db_q_facts(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_kv **out,
	       size_t *n, struct rt_sb *err);
/* The iteration's artifacts in the order they were stored, each named
 * uniquely: n artifacts stored under one name (one engine log per launch)
 * read as STEM-1.EXT .. STEM-n.EXT, in order; a name stored once is kept. */
int db_q_artifacts(struct db *db, int64_t iteration_id, struct db_q_kv **out, size_t *n,
		   struct rt_sb *err);
/* The stored bytes of the iteration's artifact called name (its unique name
 * from db_q_artifacts), NUL-terminated for convenience; the caller frees
 * *content. RT_ENOENT when there is none; RT_EINVAL, with the candidates'
 * names in err, when name is one that several artifacts were stored under. */
int db_q_artifact_content(struct db *db, int64_t iteration_id, const char *name, void **content,
			  size_t *len, struct rt_sb *err);

/* Notes on an iteration and the corrections it authored (by_iteration_id),
 * or with iteration_id 0 every note of the campaign; oldest first (struct
 * db_note in db.h, released with db_notes_free). */
int db_q_notes(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_note **out,
	       size_t *n, struct rt_sb *err);

/* Per-request latencies (seconds, ok requests only, ascending) of an
 * iteration, arm NULL for both; which: 0 ttft, 1 e2el. */
int db_q_latencies(struct db *db, int64_t iteration_id, const char *arm, int which, double **out,
		   size_t *n, struct rt_sb *err);

#endif
