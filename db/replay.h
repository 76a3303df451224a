/*
 * The replay tables (migration 13): which campaign a replay replays, in
 * what order and onto what revision (replays), and each lever's lineage,
 * gain then, gain now and verdict (replay_levers). Written by
 * runner/campaign/replay.c, read by it and by the reports.
 */
#ifndef DB_REPLAY_H
#define DB_REPLAY_H

#include "db/db.h"

/* A lever's verdict: one name per verdict, in the order of the CHECK list
 * of replay_levers.verdict; NONE until the replay decided it. */
#define DB_VERDICT_MAP(XX)                                                        \
	XX(NONE, "pending")               /* not decided yet (stored as NULL) */   \
	XX(HELD, "held")                  /* kept again on the new base */         \
	XX(LOST, "lost")                  /* no gain now */                        \
	XX(REVERSED, "reversed")          /* worse now, or the gate said no */     \
	XX(NOT_APPLICABLE, "not_applicable") /* does not apply, key missing, flag refused */ \
	XX(SUPERSEDED, "superseded")      /* --onto: the new revision alone is as good */
enum db_verdict {
#define XX(code, name) DB_VERDICT_##code,
	DB_VERDICT_MAP(XX)
#undef XX
	DB_N_VERDICTS
};
/* "held", ...; "unknown" out of range. */
const char *db_verdict_name(enum db_verdict v);
/* The verdict called name (NULL: NONE); RT_EINVAL when there is none. */
int db_verdict_parse(const char *name, enum db_verdict *out);

/* One row of replays. */
struct db_replay {
	int64_t campaign_id;   /* the replay */
	int64_t from_campaign; /* the campaign it replays */
	char *ord;             /* "original" | "best-first" (owned) */
	char *onto;            /* --onto REV as given, NULL when none (owned) */
};
void db_replay_release(struct db_replay *r);

/* One row of replay_levers; strings owned (db_levers_free), doubles NAN when NULL. */
struct db_lever {
	int ord;                /* 1-based place in the replay's order */
	char *variant;          /* its variant name in the replay */
	char *kind;             /* table | flag | env | patch | file */
	int64_t from_campaign;  /* lineage: the campaign it was kept in */
	int64_t from_iteration; /* lineage: that iteration's id (0: unknown) */
	int from_seq;           /* lineage: that iteration's seq (-1: unknown) */
	char *objective;        /* bench.metric then */
	double then_delta;      /* gain then, + is better */
	double then_lo, then_hi; /* its interval */
	double then_cand;       /* the objective's median with the lever then */
	enum db_verdict verdict; /* NONE until decided */
	char *reason;           /* why, for people */
	int64_t iteration_id;   /* the replay's iteration that decided it, 0: none */
	double now_delta;       /* gain now */
	double now_lo, now_hi;  /* its interval */
};

/* Record that campaign r->campaign_id replays r->from_campaign (once: an
 * existing row is left as it is, so --resume keeps the first run's order). */
int db_replay_put(struct db *db, const struct db_replay *r, struct rt_sb *err);
/* The replay row of campaign id; RT_ENOENT when it is not a replay. */
int db_replay_get(struct db *db, int64_t id, struct db_replay *out, struct rt_sb *err);
/* Add a lever's lineage and gain then (its verdict columns untouched when
 * the row exists already: a resumed replay records the same levers). */
int db_lever_put(struct db *db, int64_t campaign_id, const struct db_lever *l, struct rt_sb *err);
/* Store a lever's verdict, reason, deciding iteration and gain now. */
int db_lever_decide(struct db *db, int64_t campaign_id, const struct db_lever *l, struct rt_sb *err);
/* The levers of a replay in its order; free with db_levers_free. */
int db_levers_list(struct db *db, int64_t campaign_id, struct db_lever **out, size_t *n,
		   struct rt_sb *err);
void db_levers_free(struct db_lever *v, size_t n);

#endif
