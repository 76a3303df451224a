/*
 * Imported profiles and the research side's ranked findings (version 7):
 * `profiles` with their per-op (`profile_ops`) and per-kernel, per-shape
 * (`profile_kernels`) sums, findings with their evidence and Amdahl bound,
 * and the log-event counts a recompile storm is read from. Writers take no
 * transaction of their own: `ratchet observe` wraps an iteration, its profile
 * and its findings in one.
 */
#ifndef DB_PROFILES_H
#define DB_PROFILES_H

#include "db/db.h"

/* One row of `profiles`. Strings owned by the row when read. */
struct db_profile {
	int64_t id;              /* profiles.id */
	int64_t campaign_id;     /* 0: none */
	int64_t iteration_id;    /* the observe iteration, 0: none */
	char *path;              /* the file as given */
	char *format;            /* chrome | nsys | rocprof | unitrace | ncu */
	char *sha256;            /* of the file, NULL unknown */
	double total_us;         /* kernel time in all */
	long launches;           /* kernel launches */
	long steps;              /* steps, -1 unknown */
	char *steps_from;        /* trace | option, NULL unknown */
	long ungraphed_steps;    /* steps annotated graphed: false */
	double ungraphed_us;     /* their duration */
	long ungraphed_batch;    /* the largest batch among them, -1 none */
	long graph_max_batch;    /* the largest graphed batch, -1 none */
	int64_t created_at;      /* Unix ms */
	double wall_us;          /* the steps' wall time, else the kernels' span; NAN unknown */
	char *wall_from;         /* steps | span, NULL unknown */
	long short_kernels;      /* kernels under 10 us, -1 unknown */
	long host_launches;      /* kernels the host launched one at a time, -1 unknown */
	long graph_launches;     /* graph launches, -1 unknown */
};
void db_profile_release(struct db_profile *p);

/* One op's sums. */
struct db_profile_op {
	char *op;              /* attention, gemm, ... */
	double us;             /* time */
	double share;          /* of the profile's time */
	long calls;            /* launches */
	double calls_per_step; /* NAN when steps are unknown */
	double wall_share;     /* us over the profile's wall time, NAN unknown */
};
void db_profile_ops_free(struct db_profile_op *v, size_t n);

/* One kernel (name and shape) summed. */
struct db_profile_kernel {
	char *name;     /* as the profiler wrote it */
	char *op;       /* its op */
	char *shape;    /* NULL: none known */
	bool fallback;  /* a default (untuned) kernel */
	double us;      /* time */
	double share;   /* of the profile's time */
	long calls;     /* launches */
};
void db_profile_kernels_free(struct db_profile_kernel *v, size_t n);

/* Store a profile and its sums; *id gets profiles.id. */
int db_profile_add(struct db *db, const struct db_profile *p, const struct db_profile_op *ops,
		   size_t nops, const struct db_profile_kernel *k, size_t nk, int64_t *id,
		   struct rt_sb *err);
/* The latest profile of campaign_id (0: of any campaign, or none); RT_ENOENT
 * (nothing in err) when there is none. */
int db_profile_latest(struct db *db, int64_t campaign_id, int64_t *id, struct rt_sb *err);
/* The first profile of campaign_id (0: of no campaign) whose files have
 * fingerprint sha256: 0 and *id, or RT_ENOENT (nothing in err) when none. */
int db_profile_find_sha(struct db *db, int64_t campaign_id, const char *sha256, int64_t *id,
			struct rt_sb *err);
int db_profile_get(struct db *db, int64_t id, struct db_profile *out, struct rt_sb *err);
/* Its ops, largest first; its kernels, largest first. */
int db_profile_ops_list(struct db *db, int64_t id, struct db_profile_op **out, size_t *n,
			struct rt_sb *err);
int db_profile_kernels_list(struct db *db, int64_t id, struct db_profile_kernel **out, size_t *n,
			    struct rt_sb *err);

/* One finding. Strings owned by the row when read. */
struct db_finding {
	int64_t id;            /* findings.id */
	int64_t campaign_id;   /* 0: none */
	int64_t profile_id;    /* 0: none */
	int64_t iteration_id;  /* 0: none */
	char *kind;            /* hole | hot_op | fallback | recompile_storm | ungraphed | upstream */
	char *subject;         /* what it is about: an op, a shape, a ref */
	char *detail;          /* one line for people */
	char *evidence;        /* what it rests on */
	char *variant;         /* a variant acting on it (JSON), or NULL */
	double share;          /* of the profile's time, NAN unknown */
	double speedup;        /* plausible speedup assumed, NAN unknown */
	double potential;      /* the Amdahl bound: share * (1 - 1/speedup) */
	int64_t created_at;    /* Unix ms */
};
void db_findings_free(struct db_finding *v, size_t n);
int db_finding_put(struct db *db, const struct db_finding *f, int64_t *id, struct rt_sb *err);
/* Findings of campaign_id (0: every one), the largest bound first. */
int db_findings_list(struct db *db, int64_t campaign_id, struct db_finding **out, size_t *n,
		     struct rt_sb *err);

/* One log event's counts over a campaign's samples (benchmark 'log'). */
struct db_log_count {
	char *event;        /* the spec's log_events name */
	int samples;        /* samples counted */
	int late_samples;   /* samples after each arm's first (rep > 0) */
	int late_firing;    /* of those, samples where it fired */
	double events;      /* total count */
	double late_events; /* count in the late samples */
};
void db_log_counts_free(struct db_log_count *v, size_t n);
int db_log_counts(struct db *db, int64_t campaign_id, struct db_log_count **out, size_t *n,
		  struct rt_sb *err);

/*
 * Another tool's SQLite file, read row by row (Nsight Systems exports): the
 * statement layer stays in db/. db_foreign_each opens path read-only, runs
 * the first of the n queries that prepares (a schema differs between tool
 * versions), and calls row for each result row with its text columns (NULL
 * for SQL NULL) and its integer columns in ints (ncols of each). RT_ENOENT
 * when no query prepares (nothing in err unless what is set: then err says
 * "path: what: <sqlite message>"), RT_EIO when the file does not open.
 * A row whose row() fails stops the read: its code, with "path: row N: "
 * and row()'s reason (why) in err. The file is untrusted: a query that runs
 * past limit_ms (a recursive view, a huge join) is interrupted, RT_ETIMEDOUT.
 */
typedef int (*db_foreign_row_fn)(void *arg, const char *const *text, const int64_t *ints,
				 struct rt_sb *why);
int db_foreign_each(const char *path, const char *const *queries, size_t n, int ncols,
		    db_foreign_row_fn row, void *arg, const char *what, int64_t limit_ms,
		    struct rt_sb *err);

#endif
