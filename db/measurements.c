/*
 * The measurement tables: measurements (one sample of one metric, arm and
 * repeat; a bad sample is marked invalid, never deleted), metric_stats (the
 * comparison of one metric in one iteration, struct db_metric_stat) and
 * regressions (a tracked metric that got worse). Their writes for the
 * campaign and their reads for the reports (query.h).
 */
#include "db/db_int.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

/* ---- measurements ---- */

int db_measure_add(struct db *db, int64_t iteration_id, const char *arm, const char *bench,
		   const char *metric, int rep, double value, const char *unit, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO measurements (iteration_id, arm, benchmark, metric, rep, value, unit, "
		"created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, arm);
	db_bind_text(st, 3, bench);
	db_bind_text(st, 4, metric);
	sqlite3_bind_int(st, 5, rep);
	db_bind_real(st, 6, value);
	db_bind_text(st, 7, unit);
	sqlite3_bind_int64(st, 8, rt_wall_ms());
	return db_step_done(db, st, err, "insert into measurements");
}

int db_measure_invalidate(struct db *db, int64_t iteration_id, const char *arm, int from_rep,
			  const char *reason, struct rt_sb *err)
{
	/* Rows already invalid keep their first reason. */
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE measurements SET valid = 0, invalid_reason = ?4 WHERE iteration_id = ?1 "
		"AND (?2 IS NULL OR arm = ?2) AND rep >= ?3 AND valid = 1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, arm);
	sqlite3_bind_int(st, 3, from_rep);
	db_bind_text(st, 4, reason);
	return db_step_done(db, st, err, "update measurements (invalidate)");
}

void db_q_series_free(struct db_q_series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].benchmark);
		free(v[i].metric);
		free(v[i].arm);
		free(v[i].unit);
		free(v[i].v);
	}
	free(v);
}

static const char SQL_SAMPLES[] =
	"SELECT benchmark, metric, arm, unit, value, valid FROM measurements"
	" WHERE iteration_id = ?1 ORDER BY benchmark, metric, arm, valid DESC, value";

/* Not a db_rows_list reader: rows fold into one series per metric and arm. */
int db_q_series_list(struct db *db, int64_t iteration_id, struct db_q_series **out, size_t *n,
		     struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_SAMPLES, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	struct db_q_series *v = NULL;
	size_t len = 0, cap = 0, vcap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *b = (const char *)sqlite3_column_text(st, 0);
		const char *m = (const char *)sqlite3_column_text(st, 1);
		const char *a = (const char *)sqlite3_column_text(st, 2);
		struct db_q_series *s = len ? &v[len - 1] : NULL;
		if (!s || strcmp(s->benchmark, b) || strcmp(s->metric, m) || strcmp(s->arm, a)) {
			v = db_grow(v, len, &cap, sizeof(*v));
			s = &v[len++];
			memset(s, 0, sizeof(*s));
			s->benchmark = xstrdup(b);
			s->metric = xstrdup(m);
			s->arm = xstrdup(a);
			s->unit = db_col_text(st, 3);
			vcap = 0;
		}
		if (!sqlite3_column_int(st, 5)) {
			s->n_invalid++;
			continue;
		}
		s->v = db_grow(s->v, s->n, &vcap, sizeof(double));
		s->v[s->n++] = sqlite3_column_double(st, 4);
	}
	if (rc != SQLITE_DONE) {
		rc = db_fail(db, err, "read measurements");
		sqlite3_reset(st);
		db_q_series_free(v, len);
		return rc;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
}

/* ---- metric_stats ---- */

int db_metric_stat_add(struct db *db, int64_t iteration_id, const struct db_metric_stat *s,
		       struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO metric_stats (iteration_id, benchmark, metric, unit, better, best_median, "
		"cand_median, best_mad, cand_mad, ratio, ci_lo, ci_hi, p_value, n_best, n_cand) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, s->benchmark);
	db_bind_text(st, 3, s->metric);
	db_bind_text(st, 4, s->unit);
	db_bind_text(st, 5, s->better);
	db_bind_real(st, 6, s->best_median);
	db_bind_real(st, 7, s->cand_median);
	db_bind_real(st, 8, s->best_mad);
	db_bind_real(st, 9, s->cand_mad);
	db_bind_real(st, 10, s->ratio);
	db_bind_real(st, 11, s->ci_lo);
	db_bind_real(st, 12, s->ci_hi);
	db_bind_real(st, 13, s->p_value);
	sqlite3_bind_int(st, 14, s->n_best);
	sqlite3_bind_int(st, 15, s->n_cand);
	return db_step_done(db, st, err, "insert into metric_stats");
}

static void metric_stat_read(sqlite3_stmt *st, void *row)
{
	struct db_metric_stat *m = row;
	m->benchmark = db_col_text(st, 0);
	m->metric = db_col_text(st, 1);
	m->unit = db_col_text(st, 2);
	m->better = db_col_text(st, 3);
	m->best_median = db_col_real(st, 4);
	m->cand_median = db_col_real(st, 5);
	m->best_mad = db_col_real(st, 6);
	m->cand_mad = db_col_real(st, 7);
	m->ratio = db_col_real(st, 8);
	m->ci_lo = db_col_real(st, 9);
	m->ci_hi = db_col_real(st, 10);
	m->p_value = db_col_real(st, 11);
	m->n_best = sqlite3_column_int(st, 12);
	m->n_cand = sqlite3_column_int(st, 13);
}

static void metric_stat_release(void *row)
{
	struct db_metric_stat *m = row;
	free(m->benchmark);
	free(m->metric);
	free(m->unit);
	free(m->better);
}

static const struct db_row_type metric_stat_rows = {
	sizeof(struct db_metric_stat), metric_stat_read, metric_stat_release, "read metric_stats",
};

void db_metric_stats_free(struct db_metric_stat *v, size_t n)
{
	db_rows_free(&metric_stat_rows, v, n);
}

static const char SQL_MSTATS[] =
	"SELECT benchmark, metric, unit, better, best_median, cand_median, best_mad, cand_mad,"
	" ratio, ci_lo, ci_hi, p_value, n_best, n_cand FROM metric_stats"
	" WHERE iteration_id = ?1 ORDER BY benchmark, metric, id";

int db_q_mstats(struct db *db, int64_t iteration_id, struct db_metric_stat **out, size_t *n,
		struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_MSTATS, err);
	if (st)
		sqlite3_bind_int64(st, 1, iteration_id);
	void *v;
	int rc = db_rows_list(db, st, &metric_stat_rows, &v, n, err);
	*out = v;
	return rc;
}

/* ---- regressions ---- */

int db_regression_add(struct db *db, int64_t iteration_id, const char *bench, const char *metric,
		      const char *unit, double before, double after, double delta, double ci_lo,
		      double ci_hi, bool kept, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO regressions (iteration_id, benchmark, metric, unit, before, after, delta, "
		"ci_lo, ci_hi, kept, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
		err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, bench);
	db_bind_text(st, 3, metric);
	db_bind_text(st, 4, unit);
	db_bind_real(st, 5, before);
	db_bind_real(st, 6, after);
	db_bind_real(st, 7, delta);
	db_bind_real(st, 8, ci_lo);
	db_bind_real(st, 9, ci_hi);
	sqlite3_bind_int(st, 10, kept ? 1 : 0);
	sqlite3_bind_int64(st, 11, rt_wall_ms());
	return db_step_done(db, st, err, "insert into regressions");
}

static void regression_read(sqlite3_stmt *st, void *row)
{
	struct db_q_regr *r = row;
	r->id = sqlite3_column_int64(st, 0);
	r->iteration_id = sqlite3_column_int64(st, 1);
	r->seq = sqlite3_column_int(st, 2);
	r->variant = db_col_text(st, 3);
	r->state = db_col_state(st, 4);
	r->benchmark = db_col_text(st, 5);
	r->metric = db_col_text(st, 6);
	r->unit = db_col_text(st, 7);
	r->before = db_col_real(st, 8);
	r->after = db_col_real(st, 9);
	r->delta = db_col_real(st, 10);
	r->ci_lo = db_col_real(st, 11);
	r->ci_hi = db_col_real(st, 12);
	r->kept = sqlite3_column_int(st, 13) != 0;
}

static void regression_release(void *row)
{
	struct db_q_regr *r = row;
	free(r->variant);
	free(r->benchmark);
	free(r->metric);
	free(r->unit);
}

static const struct db_row_type regression_rows = {
	sizeof(struct db_q_regr), regression_read, regression_release, "read regressions",
};

void db_q_regrs_free(struct db_q_regr *v, size_t n)
{
	db_rows_free(&regression_rows, v, n);
}

static const char SQL_REGRS[] =
	"SELECT r.id, r.iteration_id, i.seq, i.variant, i.state, r.benchmark, r.metric, r.unit,"
	" r.before, r.after, r.delta, r.ci_lo, r.ci_hi, r.kept"
	" FROM regressions r JOIN iterations i ON i.id = r.iteration_id"
	" WHERE (?2 <> 0 AND r.iteration_id = ?2) OR (?2 = 0 AND i.campaign_id = ?1)"
	" ORDER BY i.seq, r.id";

int db_q_regrs(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_regr **out,
	       size_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_REGRS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		sqlite3_bind_int64(st, 2, iteration_id);
	}
	void *v;
	int rc = db_rows_list(db, st, &regression_rows, &v, n, err);
	*out = v;
	return rc;
}
