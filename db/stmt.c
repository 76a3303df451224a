/*
 * The statement layer (see db/db_int.h): binding, reading columns, stepping
 * with errors that name the table and operation, and the generic row reader
 * every list and look-up in db/ goes through. Owns no table.
 */
#include "db/db_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- binding ---- */

void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void db_bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void db_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

void db_bind_count(sqlite3_stmt *st, int i, int v)
{
	if (v >= 0)
		sqlite3_bind_int(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void db_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len, bool present)
{
	if (!present)
		sqlite3_bind_null(st, i);
	else if (!len || !p)
		sqlite3_bind_zeroblob(st, i, 0);
	else
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
}

/* ---- columns ---- */

static bool redact_reads; /* db_redact_reads was called */

void db_redact_reads(void)
{
	redact_reads = true;
}

char *db_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	if (!s)
		return NULL;
	return redact_reads ? rt_redacted((const char *)s) : xstrdup((const char *)s);
}

double db_col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int db_col_count(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i);
}

int db_col_tri(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i) != 0;
}

void *db_col_blob(sqlite3_stmt *st, int i, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	char *out = xmalloc(n + 1);
	if (n)
		memcpy(out, p, n);
	out[n] = 0;
	*len = n;
	if (redact_reads && !memchr(out, 0, n)) { /* text: an output or a log, not a file's bytes */
		struct rt_sb sb = RT_SB_INIT;
		rt_sb_add(&sb, out, n);
		if (rt_redact_secrets(&sb)) {
			free(out);
			return rt_sb_detach(&sb, len);
		}
		rt_sb_release(&sb);
	}
	return out;
}

void db_col_sha(sqlite3_stmt *st, int i, char out[65])
{
	const unsigned char *s = sqlite3_column_text(st, i);
	snprintf(out, 65, "%s", s ? (const char *)s : "");
}

/* ---- stepping ---- */

int db_step_done(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what)
{
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, err, what);
	sqlite3_reset(st);
	return ret;
}

int db_step_insert(struct db *db, sqlite3_stmt *st, int64_t *id, struct rt_sb *err,
		   const char *what)
{
	int rc = db_step_done(db, st, err, what);
	if (!rc && id)
		*id = sqlite3_last_insert_rowid(db_sqlite(db));
	return rc;
}

int db_changes(struct db *db)
{
	return sqlite3_changes(db_sqlite(db));
}

int db_step_row(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 0;
	int ret = rc == SQLITE_DONE ? RT_ENOENT : db_fail(db, err, what);
	sqlite3_reset(st);
	return ret;
}

/* ---- rows ---- */

void *db_grow(void *v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 16;
	return xrealloc(v, *cap * sz);
}

int db_row_get(struct db *db, sqlite3_stmt *st, const struct db_row_type *t, void *row,
	       struct rt_sb *err)
{
	memset(row, 0, t->size);
	if (!st)
		return RT_EDB;
	int rc = db_step_row(db, st, err, t->what);
	if (rc)
		return rc;
	t->read(st, row);
	sqlite3_reset(st);
	return 0;
}

int db_rows_by_ids(struct db *db, const char *sql, const struct db_row_type *t, const int64_t *ids,
		   size_t nids, void **out, size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return RT_EDB;
	if ((size_t)sqlite3_bind_parameter_count(st) != nids)
		return rt_errf(err, RT_EDB, "db: %s: the statement has %d parameters, %zu given", t->what,
			       sqlite3_bind_parameter_count(st), nids);
	for (size_t i = 0; i < nids; i++)
		db_bind_id(st, (int)i + 1, ids[i]);
	return db_rows_list(db, st, t, out, n, err);
}

int db_rows_list(struct db *db, sqlite3_stmt *st, const struct db_row_type *t, void **out,
		 size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	if (!st)
		return RT_EDB;
	char *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, t->size);
		void *row = v + len++ * t->size;
		memset(row, 0, t->size);
		t->read(st, row);
	}
	if (rc != SQLITE_DONE) {
		rc = db_fail(db, err, t->what);
		sqlite3_reset(st);
		db_rows_free(t, v, len);
		return rc;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
}

void db_rows_free(const struct db_row_type *t, void *v, size_t n)
{
	for (size_t i = 0; t->release && i < n; i++)
		t->release((char *)v + i * t->size);
	free(v);
}
