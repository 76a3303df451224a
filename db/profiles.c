/*
 * Profiles, findings and log-event counts (see db/profiles.h): one writer and
 * one reader per row shape.
 */
#include "db/profiles.h"
#include "db/db_int.h"

#include <math.h>
#include <stdlib.h>

static int64_t col_id(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, i);
}

static long col_long(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : (long)sqlite3_column_int64(st, i);
}

static void bind_long(sqlite3_stmt *st, int i, long v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* ---- profiles ---- */

static int add_ops(struct db *db, int64_t id, const struct db_profile_op *ops, size_t n,
		   struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		sqlite3_stmt *st = db_prepare(db,
			"INSERT INTO profile_ops (profile_id, op, time_us, share, calls, calls_per_step, "
			"wall_share) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
		if (!st)
			return RT_EDB;
		sqlite3_bind_int64(st, 1, id);
		db_bind_text(st, 2, ops[i].op);
		sqlite3_bind_double(st, 3, ops[i].us);
		sqlite3_bind_double(st, 4, ops[i].share);
		sqlite3_bind_int64(st, 5, ops[i].calls);
		db_bind_real(st, 6, ops[i].calls_per_step);
		db_bind_real(st, 7, ops[i].wall_share);
		rc = db_step_done(db, st, err, "insert into profile_ops");
	}
	return rc;
}

static int add_kernels(struct db *db, int64_t id, const struct db_profile_kernel *k, size_t n,
		       struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		sqlite3_stmt *st = db_prepare(db,
			"INSERT INTO profile_kernels (profile_id, name, op, shape, fallback, time_us, share, "
			"calls) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", err);
		if (!st)
			return RT_EDB;
		sqlite3_bind_int64(st, 1, id);
		db_bind_text(st, 2, k[i].name);
		db_bind_text(st, 3, k[i].op);
		db_bind_text(st, 4, k[i].shape);
		sqlite3_bind_int(st, 5, k[i].fallback);
		sqlite3_bind_double(st, 6, k[i].us);
		sqlite3_bind_double(st, 7, k[i].share);
		sqlite3_bind_int64(st, 8, k[i].calls);
		rc = db_step_done(db, st, err, "insert into profile_kernels");
	}
	return rc;
}

int db_profile_add(struct db *db, const struct db_profile *p, const struct db_profile_op *ops,
		   size_t nops, const struct db_profile_kernel *k, size_t nk, int64_t *id,
		   struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO profiles (campaign_id, iteration_id, path, format, sha256, total_us, "
		"launches, steps, steps_from, ungraphed_steps, ungraphed_us, ungraphed_batch, "
		"graph_max_batch, created_at, wall_us, wall_from, short_kernels, host_launches, "
		"graph_launches) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
		"?19)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, p->campaign_id);
	db_bind_id(st, 2, p->iteration_id);
	db_bind_text(st, 3, p->path);
	db_bind_text(st, 4, p->format);
	db_bind_text(st, 5, p->sha256);
	sqlite3_bind_double(st, 6, p->total_us);
	sqlite3_bind_int64(st, 7, p->launches);
	bind_long(st, 8, p->steps);
	db_bind_text(st, 9, p->steps_from);
	sqlite3_bind_int64(st, 10, p->ungraphed_steps);
	sqlite3_bind_double(st, 11, p->ungraphed_us);
	bind_long(st, 12, p->ungraphed_batch);
	bind_long(st, 13, p->graph_max_batch);
	sqlite3_bind_int64(st, 14, rt_wall_ms());
	db_bind_real(st, 15, p->wall_us);
	db_bind_text(st, 16, p->wall_from);
	bind_long(st, 17, p->short_kernels);
	bind_long(st, 18, p->host_launches);
	bind_long(st, 19, p->graph_launches);
	int rc = db_step_insert(db, st, id, err, "insert into profiles");
	if (!rc)
		rc = add_ops(db, *id, ops, nops, err);
	if (!rc)
		rc = add_kernels(db, *id, k, nk, err);
	return rc;
}

int db_profile_find_sha(struct db *db, int64_t campaign_id, const char *sha256, int64_t *id,
			struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id FROM profiles WHERE campaign_id IS ?1 AND sha256 = ?2 ORDER BY id LIMIT 1", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_text(st, 2, sha256);
	int rc = db_step_row(db, st, err, "read profiles");
	if (!rc) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	return rc;
}

int db_profile_latest(struct db *db, int64_t campaign_id, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id FROM profiles WHERE ?1 = 0 OR campaign_id = ?1 ORDER BY id DESC LIMIT 1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	int rc = db_step_row(db, st, err, "read profiles");
	if (!rc) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	return rc;
}

static void profile_read(sqlite3_stmt *st, void *row)
{
	struct db_profile *p = row;
	p->id = sqlite3_column_int64(st, 0);
	p->campaign_id = col_id(st, 1);
	p->iteration_id = col_id(st, 2);
	p->path = db_col_text(st, 3);
	p->format = db_col_text(st, 4);
	p->sha256 = db_col_text(st, 5);
	p->total_us = sqlite3_column_double(st, 6);
	p->launches = col_long(st, 7);
	p->steps = col_long(st, 8);
	p->steps_from = db_col_text(st, 9);
	p->ungraphed_steps = col_long(st, 10);
	p->ungraphed_us = sqlite3_column_double(st, 11);
	p->ungraphed_batch = col_long(st, 12);
	p->graph_max_batch = col_long(st, 13);
	p->created_at = sqlite3_column_int64(st, 14);
	p->wall_us = db_col_real(st, 15);
	p->wall_from = db_col_text(st, 16);
	p->short_kernels = col_long(st, 17);
	p->host_launches = col_long(st, 18);
	p->graph_launches = col_long(st, 19);
}

void db_profile_release(struct db_profile *p)
{
	free(p->path);
	free(p->format);
	free(p->sha256);
	free(p->steps_from);
	free(p->wall_from);
}

static void profile_release_row(void *row)
{
	db_profile_release(row);
}

static const struct db_row_type profile_rows = {
	sizeof(struct db_profile), profile_read, profile_release_row, "read profiles",
};

int db_profile_get(struct db *db, int64_t id, struct db_profile *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, campaign_id, iteration_id, path, format, sha256, total_us, launches, steps, "
		"steps_from, ungraphed_steps, ungraphed_us, ungraphed_batch, graph_max_batch, created_at, "
		"wall_us, wall_from, short_kernels, host_launches, graph_launches "
		"FROM profiles WHERE id = ?1", err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	return db_row_get(db, st, &profile_rows, out, err);
}

static void op_read(sqlite3_stmt *st, void *row)
{
	struct db_profile_op *o = row;
	o->op = db_col_text(st, 0);
	o->us = sqlite3_column_double(st, 1);
	o->share = sqlite3_column_double(st, 2);
	o->calls = col_long(st, 3);
	o->calls_per_step = db_col_real(st, 4);
	o->wall_share = db_col_real(st, 5);
}

static void op_release(void *row)
{
	free(((struct db_profile_op *)row)->op);
}

static const struct db_row_type op_rows = {
	sizeof(struct db_profile_op), op_read, op_release, "read profile_ops",
};

int db_profile_ops_list(struct db *db, int64_t id, struct db_profile_op **out, size_t *n,
			struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT op, time_us, share, calls, calls_per_step, wall_share FROM profile_ops "
		"WHERE profile_id = ?1 "
		"ORDER BY time_us DESC, op", err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	void *v;
	int rc = db_rows_list(db, st, &op_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_profile_ops_free(struct db_profile_op *v, size_t n)
{
	db_rows_free(&op_rows, v, n);
}

static void kernel_read(sqlite3_stmt *st, void *row)
{
	struct db_profile_kernel *k = row;
	k->name = db_col_text(st, 0);
	k->op = db_col_text(st, 1);
	k->shape = db_col_text(st, 2);
	k->fallback = sqlite3_column_int(st, 3) != 0;
	k->us = sqlite3_column_double(st, 4);
	k->share = sqlite3_column_double(st, 5);
	k->calls = col_long(st, 6);
}

static void kernel_release(void *row)
{
	struct db_profile_kernel *k = row;
	free(k->name);
	free(k->op);
	free(k->shape);
}

static const struct db_row_type kernel_rows = {
	sizeof(struct db_profile_kernel), kernel_read, kernel_release, "read profile_kernels",
};

int db_profile_kernels_list(struct db *db, int64_t id, struct db_profile_kernel **out, size_t *n,
			    struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT name, op, shape, fallback, time_us, share, calls FROM profile_kernels "
		"WHERE profile_id = ?1 ORDER BY time_us DESC, id", err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	void *v;
	int rc = db_rows_list(db, st, &kernel_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_profile_kernels_free(struct db_profile_kernel *v, size_t n)
{
	db_rows_free(&kernel_rows, v, n);
}

/* ---- findings ---- */

int db_finding_put(struct db *db, const struct db_finding *f, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO findings (campaign_id, kind, subject, detail, potential, created_at, "
		"profile_id, iteration_id, share, speedup, evidence, variant) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, f->campaign_id);
	db_bind_text(st, 2, f->kind);
	db_bind_text(st, 3, f->subject);
	db_bind_text(st, 4, f->detail);
	db_bind_real(st, 5, f->potential);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	db_bind_id(st, 7, f->profile_id);
	db_bind_id(st, 8, f->iteration_id);
	db_bind_real(st, 9, f->share);
	db_bind_real(st, 10, f->speedup);
	db_bind_text(st, 11, f->evidence);
	db_bind_text(st, 12, f->variant);
	return db_step_insert(db, st, id, err, "insert into findings");
}

static void finding_read(sqlite3_stmt *st, void *row)
{
	struct db_finding *f = row;
	f->id = sqlite3_column_int64(st, 0);
	f->campaign_id = col_id(st, 1);
	f->kind = db_col_text(st, 2);
	f->subject = db_col_text(st, 3);
	f->detail = db_col_text(st, 4);
	f->potential = db_col_real(st, 5);
	f->created_at = sqlite3_column_int64(st, 6);
	f->profile_id = col_id(st, 7);
	f->iteration_id = col_id(st, 8);
	f->share = db_col_real(st, 9);
	f->speedup = db_col_real(st, 10);
	f->evidence = db_col_text(st, 11);
	f->variant = db_col_text(st, 12);
}

static void finding_release(void *row)
{
	struct db_finding *f = row;
	free(f->kind);
	free(f->subject);
	free(f->detail);
	free(f->evidence);
	free(f->variant);
}

static const struct db_row_type finding_rows = {
	sizeof(struct db_finding), finding_read, finding_release, "read findings",
};

int db_findings_list(struct db *db, int64_t campaign_id, struct db_finding **out, size_t *n,
		     struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, campaign_id, kind, subject, detail, potential, created_at, profile_id, "
		"iteration_id, share, speedup, evidence, variant FROM findings "
		"WHERE ?1 = 0 OR campaign_id = ?1 ORDER BY potential IS NULL, potential DESC, id", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &finding_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_findings_free(struct db_finding *v, size_t n)
{
	db_rows_free(&finding_rows, v, n);
}

/* ---- log events over a campaign ---- */

static void count_read(sqlite3_stmt *st, void *row)
{
	struct db_log_count *c = row;
	c->event = db_col_text(st, 0);
	c->samples = sqlite3_column_int(st, 1);
	c->late_samples = sqlite3_column_int(st, 2);
	c->late_firing = sqlite3_column_int(st, 3);
	c->events = sqlite3_column_double(st, 4);
	c->late_events = sqlite3_column_double(st, 5);
}

static void count_release(void *row)
{
	free(((struct db_log_count *)row)->event);
}

static const struct db_row_type count_rows = {
	sizeof(struct db_log_count), count_read, count_release, "read measurements (log events)",
};

int db_log_counts(struct db *db, int64_t campaign_id, struct db_log_count **out, size_t *n,
		  struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT m.metric, count(*), sum(m.rep > 0), sum(m.rep > 0 AND m.value > 0), "
		"total(m.value), total(CASE WHEN m.rep > 0 THEN m.value END) "
		"FROM measurements m JOIN iterations i ON i.id = m.iteration_id "
		"WHERE i.campaign_id = ?1 AND m.benchmark = 'log' AND m.valid "
		"GROUP BY m.metric ORDER BY m.metric", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &count_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_log_counts_free(struct db_log_count *v, size_t n)
{
	db_rows_free(&count_rows, v, n);
}

/* ---- another tool's SQLite file ---- */

#define FOREIGN_MAX_COLS 8

/* The progress handler's deadline: a non-zero return interrupts the query. */
static int past_deadline(void *arg)
{
	return rt_now_ns() / 1000000 > *(const int64_t *)arg;
}

int db_foreign_each(const char *path, const char *const *queries, size_t n, int ncols,
		    db_foreign_row_fn row, void *arg, const char *what, int64_t limit_ms,
		    struct rt_sb *err)
{
	if (ncols > FOREIGN_MAX_COLS)
		return rt_errf(err, RT_EINVAL, "db: %d columns is over %d", ncols, FOREIGN_MAX_COLS);
	sqlite3 *h = NULL;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		int rc = rt_errf(err, RT_EIO, "%s: %s", path, h ? sqlite3_errmsg(h) : "cannot open");
		sqlite3_close(h);
		return rc;
	}
	int64_t deadline = rt_now_ns() / 1000000 + limit_ms;
	sqlite3_progress_handler(h, 10000, past_deadline, &deadline);
	sqlite3_stmt *st = NULL;
	for (size_t i = 0; i < n && !st; i++)
		if (sqlite3_prepare_v2(h, queries[i], -1, &st, NULL) != SQLITE_OK)
			st = NULL;
	int rc = 0;
	if (!st) {
		rc = RT_ENOENT;
		if (what)
			rt_errf(err, RT_ENOENT, "%s: %s: %s", path, what, sqlite3_errmsg(h));
		sqlite3_close(h);
		return rc;
	}
	const char *text[FOREIGN_MAX_COLS];
	int64_t ints[FOREIGN_MAX_COLS];
	int r;
	long long rows = 0;
	struct rt_sb why = RT_SB_INIT;
	while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
		rows++;
		for (int c = 0; c < ncols; c++) {
			text[c] = (const char *)sqlite3_column_text(st, c);
			ints[c] = sqlite3_column_int64(st, c);
		}
		if ((rc = row(arg, text, ints, &why)))
			rt_errf(err, rc, "%s: row %lld: %s", path, rows, why.buf);
	}
	if (!rc && r == SQLITE_INTERRUPT)
		rc = rt_errf(err, RT_ETIMEDOUT, "%s: its query ran past %lld s, after %lld rows, and was "
			     "stopped (a recursive view, or a file too large to read)", path,
			     (long long)(limit_ms / 1000), rows);
	else if (!rc && r != SQLITE_DONE)
		rc = rt_errf(err, RT_EPARSE, "%s: %s", path, sqlite3_errmsg(h));
	rt_sb_release(&why);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return rc;
}
