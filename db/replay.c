/* The replay tables (db/replay.h). */
#include "db/replay.h"
#include "db/db_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {
#define XX(code, name) name,
	DB_VERDICT_MAP(XX)
#undef XX
};

const char *db_verdict_name(enum db_verdict v)
{
	return (unsigned)v < DB_N_VERDICTS ? verdict_names[v] : "unknown";
}

int db_verdict_parse(const char *name, enum db_verdict *out)
{
	if (!name) {
		*out = DB_VERDICT_NONE;
		return 0;
	}
	for (int i = 1; i < DB_N_VERDICTS; i++)
		if (!strcmp(verdict_names[i], name)) {
			*out = (enum db_verdict)i;
			return 0;
		}
	return RT_EINVAL;
}

void db_replay_release(struct db_replay *r)
{
	free(r->ord);
	free(r->onto);
	memset(r, 0, sizeof(*r));
}

int db_replay_put(struct db *db, const struct db_replay *r, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT OR IGNORE INTO replays (campaign_id, from_campaign, ord, onto) VALUES (?1, ?2, ?3, ?4)",
		err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, r->campaign_id);
	db_bind_id(st, 2, r->from_campaign);
	db_bind_text(st, 3, r->ord);
	db_bind_text(st, 4, r->onto);
	return db_step_done(db, st, err, "insert into replays");
}

static void replay_read(sqlite3_stmt *st, void *row)
{
	struct db_replay *r = row;
	r->campaign_id = sqlite3_column_int64(st, 0);
	r->from_campaign = sqlite3_column_int64(st, 1);
	r->ord = db_col_text(st, 2);
	r->onto = db_col_text(st, 3);
}

static void replay_free(void *row)
{
	db_replay_release(row);
}

static const struct db_row_type replay_rows = {
	sizeof(struct db_replay), replay_read, replay_free, "read replays",
};

int db_replay_get(struct db *db, int64_t id, struct db_replay *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = db_prepare(db,
		"SELECT campaign_id, from_campaign, ord, onto FROM replays WHERE campaign_id = ?1", err);
	if (st)
		db_bind_id(st, 1, id);
	return db_row_get(db, st, &replay_rows, out, err);
}

int db_lever_put(struct db *db, int64_t campaign_id, const struct db_lever *l, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT OR IGNORE INTO replay_levers (campaign_id, ord, variant, kind, from_campaign, "
		"from_iteration, from_seq, objective, then_delta, then_lo, then_hi, then_cand) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_count(st, 2, l->ord);
	db_bind_text(st, 3, l->variant);
	db_bind_text(st, 4, l->kind);
	db_bind_id(st, 5, l->from_campaign);
	db_bind_id(st, 6, l->from_iteration);
	db_bind_count(st, 7, l->from_seq);
	db_bind_text(st, 8, l->objective);
	db_bind_real(st, 9, l->then_delta);
	db_bind_real(st, 10, l->then_lo);
	db_bind_real(st, 11, l->then_hi);
	db_bind_real(st, 12, l->then_cand);
	return db_step_done(db, st, err, "insert into replay_levers");
}

int db_lever_decide(struct db *db, int64_t campaign_id, const struct db_lever *l, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE replay_levers SET verdict = ?3, reason = ?4, iteration_id = ?5, now_delta = ?6, "
		"now_lo = ?7, now_hi = ?8 WHERE campaign_id = ?1 AND variant = ?2", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_text(st, 2, l->variant);
	db_bind_text(st, 3, l->verdict == DB_VERDICT_NONE ? NULL : db_verdict_name(l->verdict));
	db_bind_text(st, 4, l->reason);
	db_bind_id(st, 5, l->iteration_id);
	db_bind_real(st, 6, l->now_delta);
	db_bind_real(st, 7, l->now_lo);
	db_bind_real(st, 8, l->now_hi);
	return db_step_done(db, st, err, "update replay_levers");
}

static void lever_read(sqlite3_stmt *st, void *row)
{
	struct db_lever *l = row;
	l->ord = db_col_count(st, 0);
	l->variant = db_col_text(st, 1);
	l->kind = db_col_text(st, 2);
	l->from_campaign = sqlite3_column_int64(st, 3);
	l->from_iteration = sqlite3_column_int64(st, 4);
	l->from_seq = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : db_col_count(st, 5);
	l->objective = db_col_text(st, 6);
	l->then_delta = db_col_real(st, 7);
	l->then_lo = db_col_real(st, 8);
	l->then_hi = db_col_real(st, 9);
	l->then_cand = db_col_real(st, 10);
	const char *v = (const char *)sqlite3_column_text(st, 11);
	if (db_verdict_parse(v, &l->verdict))
		l->verdict = DB_VERDICT_NONE;
	l->reason = db_col_text(st, 12);
	l->iteration_id = sqlite3_column_int64(st, 13);
	l->now_delta = db_col_real(st, 14);
	l->now_lo = db_col_real(st, 15);
	l->now_hi = db_col_real(st, 16);
}

static void lever_free(void *row)
{
	struct db_lever *l = row;
	free(l->variant);
	free(l->kind);
	free(l->objective);
	free(l->reason);
}

static const struct db_row_type lever_rows = {
	sizeof(struct db_lever), lever_read, lever_free, "read replay_levers",
};

int db_levers_list(struct db *db, int64_t campaign_id, struct db_lever **out, size_t *n,
		   struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT ord, variant, kind, from_campaign, from_iteration, from_seq, objective, then_delta, "
		"then_lo, then_hi, then_cand, verdict, reason, iteration_id, now_delta, now_lo, now_hi "
		"FROM replay_levers WHERE campaign_id = ?1 ORDER BY ord", err);
	if (st)
		db_bind_id(st, 1, campaign_id);
	void *v = NULL;
	int rc = db_rows_list(db, st, &lever_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_levers_free(struct db_lever *v, size_t n)
{
	db_rows_free(&lever_rows, v, n);
}
