/*
 * The crash-safety journal's tables: originals (a file's pre-campaign bytes,
 * recorded on its first touch in a campaign) and intents (a file write about
 * to happen, with the bytes before and after, open until done or undone).
 * The recovery queries over them live in db/journal.c.
 */
#include "db/db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bind a file's bytes at i and their sha256 at i + 1 (both NULL when the
 * file does not exist). */
static void bind_bytes(sqlite3_stmt *st, int i, bool exists, const void *p, size_t len)
{
	db_bind_blob(st, i, p, len, exists);
	if (!exists) {
		sqlite3_bind_null(st, i + 1);
		return;
	}
	char sha[65];
	rt_sha256_hex(p ? p : "", p ? len : 0, sha);
	db_bind_text(st, i + 1, sha);
}

/* ---- originals ---- */

int db_original_record(struct db *db, int64_t campaign_id, const char *path, bool existed,
		       const void *content, size_t len, int mode, struct rt_sb *err)
{
	/* OR IGNORE: only the first touch of a path in a campaign is kept, so
	 * the row always holds the pre-campaign bytes. */
	sqlite3_stmt *st = db_prepare(db,
		"INSERT OR IGNORE INTO originals (campaign_id, path, existed, content, sha256, mode, "
		"created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	db_bind_text(st, 2, path);
	sqlite3_bind_int(st, 3, existed ? 1 : 0);
	bind_bytes(st, 4, existed, content, len);
	if (existed)
		sqlite3_bind_int(st, 6, mode);
	sqlite3_bind_int64(st, 7, rt_wall_ms());
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "insert into originals (%s)", path ? path : "(null)");
	int rc = db_step_done(db, st, err, what.buf);
	rt_sb_release(&what);
	return rc;
}

static void original_read(sqlite3_stmt *st, void *row)
{
	struct db_original *o = row;
	o->path = db_col_text(st, 0);
	o->existed = sqlite3_column_int(st, 1) != 0;
	if (o->existed)
		o->content = db_col_blob(st, 2, &o->len);
	db_col_sha(st, 3, o->sha256);
	o->mode = sqlite3_column_int(st, 4);
}

static void original_release(void *row)
{
	struct db_original *o = row;
	free(o->path);
	free(o->content);
}

static const struct db_row_type original_rows = {
	sizeof(struct db_original), original_read, original_release, "read originals",
};

void db_originals_free(struct db_original *v, size_t n)
{
	db_rows_free(&original_rows, v, n);
}

int db_originals_list(struct db *db, int64_t campaign_id, struct db_original **out, size_t *n,
		      struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT path, existed, content, sha256, mode FROM originals WHERE campaign_id = ?1 "
		"ORDER BY id", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &original_rows, &v, n, err);
	*out = v;
	return rc;
}

/* ---- intents ---- */

int db_intent_open(struct db *db, int64_t iteration_id, const char *action, const char *path,
		   bool before_exists, const void *before, size_t before_len, bool after_exists,
		   const void *after, size_t after_len, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO intents (iteration_id, action, path, before_exists, before, "
		"before_sha256, after_exists, after, after_sha256, created_at) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, action);
	db_bind_text(st, 3, path);
	sqlite3_bind_int(st, 4, before_exists ? 1 : 0);
	bind_bytes(st, 5, before_exists, before, before_len);
	sqlite3_bind_int(st, 7, after_exists ? 1 : 0);
	bind_bytes(st, 8, after_exists, after, after_len);
	sqlite3_bind_int64(st, 10, rt_wall_ms());
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "insert into intents (%s %s)", action ? action : "(null)",
		   path ? path : "(null)");
	int rc = db_step_insert(db, st, id, err, what.buf);
	rt_sb_release(&what);
	return rc;
}

int db_intent_close(struct db *db, int64_t id, const char *state, struct rt_sb *err)
{
	if (!state || (strcmp(state, "done") && strcmp(state, "undone")))
		return rt_errf(err, RT_EINVAL, "db: close intent %lld: state must be done or undone",
			       (long long)id);
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE intents SET state = ?2, closed_at = ?3 WHERE id = ?1 AND state = 'open'", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, state);
	sqlite3_bind_int64(st, 3, rt_wall_ms());
	int rc = db_step_done(db, st, err, "update intents (close)");
	if (rc || db_changes(db))
		return rc;
	/* Nothing changed: say whether it is missing or already closed. */
	st = db_prepare(db, "SELECT state FROM intents WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	rc = db_step_row(db, st, err, "read intents");
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no intent %lld", (long long)id);
	if (rc)
		return rc;
	rc = rt_errf(err, RT_ESTATE, "db: intent %lld is already %s", (long long)id,
		     (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return rc;
}

static void intent_read(sqlite3_stmt *st, void *row)
{
	struct db_intent *t = row;
	t->id = sqlite3_column_int64(st, 0);
	t->iteration_id = sqlite3_column_int64(st, 1);
	t->action = db_col_text(st, 2);
	t->path = db_col_text(st, 3);
	t->before_exists = sqlite3_column_int(st, 4) != 0;
	if (t->before_exists)
		t->before = db_col_blob(st, 5, &t->before_len);
	db_col_sha(st, 6, t->before_sha256);
	t->after_exists = sqlite3_column_int(st, 7) != 0;
	if (t->after_exists)
		t->after = db_col_blob(st, 8, &t->after_len);
	db_col_sha(st, 9, t->after_sha256);
}

static void intent_release(void *row)
{
	struct db_intent *t = row;
	free(t->action);
	free(t->path);
	free(t->before);
	free(t->after);
}

static const struct db_row_type intent_rows = {
	sizeof(struct db_intent), intent_read, intent_release, "read intents",
};

void db_intents_free(struct db_intent *v, size_t n)
{
	db_rows_free(&intent_rows, v, n);
}

int db_intents_open_list(struct db *db, int64_t campaign_id, struct db_intent **out, size_t *n,
			 struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT t.id, t.iteration_id, t.action, t.path, t.before_exists, t.before, "
		"t.before_sha256, t.after_exists, t.after, t.after_sha256 FROM intents t "
		"JOIN iterations i ON i.id = t.iteration_id "
		"WHERE i.campaign_id = ?1 AND t.state = 'open' ORDER BY t.id", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &intent_rows, &v, n, err);
	*out = v;
	return rc;
}
