/*
 * The crash-safety journal's tables: originals (a file's pre-campaign bytes,
 * recorded on its first touch in a campaign), intents (a file write about
 * to happen, with the bytes before and after, open until done or undone)
 * and blobs, where those bytes live, each content once, keyed by its
 * sha256, and the files' permission bits (version 8 on; 0 reads as
 * unknown). Rows written before version 4 held their bytes inline: the
 * migration to version 8 moves them into blobs (db/open.c), and every reader
 * here still takes inline bytes when present, else the blob. The recovery
 * queries over them live in db/journal.c.
 */
#include "db/db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- blobs ---- */

int db_blob_put(struct db *db, bool exists, const void *p, size_t len, char sha[65],
		struct rt_sb *err, const char *what)
{
	sha[0] = 0;
	if (!exists)
		return 0;
	if (!p)
		len = 0;
	rt_sha256_hex(p ? p : "", len, sha);
	/* OR IGNORE: the same bytes are already there, under the same key. */
	sqlite3_stmt *st = db_prepare(db,
		"INSERT OR IGNORE INTO blobs (sha256, size, content, created_at) "
		"VALUES (?1, ?2, ?3, ?4)", err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, sha);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)len);
	db_bind_blob(st, 3, p, len, true);
	sqlite3_bind_int64(st, 4, rt_wall_ms());
	return db_step_done(db, st, err, what);
}

/* Bind a blob's key at i and i + 1 (the sha256 column and the reference to
 * blobs), both NULL when the file does not exist (sha is ""). */
static void bind_key(sqlite3_stmt *st, int i, const char *sha)
{
	db_bind_text(st, i, *sha ? sha : NULL);
	db_bind_text(st, i + 1, *sha ? sha : NULL);
}

/* ---- originals ---- */

int db_original_record(struct db *db, int64_t campaign_id, const char *path, bool existed,
		       const void *content, size_t len, int mode, struct rt_sb *err)
{
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "insert into originals (%s)", path ? path : "(null)");
	char sha[65];
	int rc = db_blob_put(db, existed, content, len, sha, err, what.buf);
	/* OR IGNORE: only the first touch of a path in a campaign is kept, so
	 * the row always holds the pre-campaign bytes. */
	sqlite3_stmt *st = rc ? NULL : db_prepare(db,
		"INSERT OR IGNORE INTO originals (campaign_id, path, existed, sha256, content_blob, "
		"mode, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
	if (!rc && !st)
		rc = RT_EDB;
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		db_bind_text(st, 2, path);
		sqlite3_bind_int(st, 3, existed ? 1 : 0);
		bind_key(st, 4, sha);
		if (existed && mode > 0)
			sqlite3_bind_int(st, 6, mode);
		sqlite3_bind_int64(st, 7, rt_wall_ms());
		rc = db_step_done(db, st, err, what.buf);
	}
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
		"SELECT o.path, o.existed, COALESCE(o.content, b.content), o.sha256, o.mode "
		"FROM originals o LEFT JOIN blobs b ON b.sha256 = o.content_blob "
		"WHERE o.campaign_id = ?1 ORDER BY o.id", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &original_rows, &v, n, err);
	*out = v;
	return rc;
}

/* ---- intents ---- */

int db_intent_open(struct db *db, int64_t iteration_id, const char *action, const char *path,
		   bool before_exists, const void *before, size_t before_len, int before_mode,
		   bool after_exists, const void *after, size_t after_len, int after_mode,
		   int64_t *id, struct rt_sb *err)
{
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "insert into intents (%s %s)", action ? action : "(null)",
		   path ? path : "(null)");
	char bsha[65], asha[65];
	int rc = db_blob_put(db, before_exists, before, before_len, bsha, err, what.buf);
	if (!rc)
		rc = db_blob_put(db, after_exists, after, after_len, asha, err, what.buf);
	sqlite3_stmt *st = rc ? NULL : db_prepare(db,
		"INSERT INTO intents (iteration_id, action, path, before_exists, before_sha256, "
		"before_blob, after_exists, after_sha256, after_blob, created_at, before_mode, "
		"after_mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!rc && !st)
		rc = RT_EDB;
	if (st) {
		sqlite3_bind_int64(st, 1, iteration_id);
		db_bind_text(st, 2, action);
		db_bind_text(st, 3, path);
		sqlite3_bind_int(st, 4, before_exists ? 1 : 0);
		bind_key(st, 5, bsha);
		sqlite3_bind_int(st, 7, after_exists ? 1 : 0);
		bind_key(st, 8, asha);
		sqlite3_bind_int64(st, 10, rt_wall_ms());
		if (before_exists && before_mode > 0)
			sqlite3_bind_int(st, 11, before_mode);
		if (after_exists && after_mode > 0)
			sqlite3_bind_int(st, 12, after_mode);
		rc = db_step_insert(db, st, id, err, what.buf);
	}
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

/* The columns intent_read reads, bytes inline or from blobs; a WHERE follows. */
#define INTENT_SELECT                                                                    \
	"SELECT t.id, t.iteration_id, t.action, t.path, t.before_exists, "                 \
	"COALESCE(t.before, b.content), t.before_sha256, t.after_exists, "                 \
	"COALESCE(t.after, a.content), t.after_sha256, t.before_mode, t.after_mode "       \
	"FROM intents t LEFT JOIN blobs b ON b.sha256 = t.before_blob "                    \
	"LEFT JOIN blobs a ON a.sha256 = t.after_blob "

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
	t->before_mode = sqlite3_column_int(st, 10);
	t->after_mode = sqlite3_column_int(st, 11);
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

void db_intent_release(struct db_intent *t)
{
	intent_release(t);
	memset(t, 0, sizeof(*t));
}

void db_intents_free(struct db_intent *v, size_t n)
{
	db_rows_free(&intent_rows, v, n);
}

int db_intent_get(struct db *db, int64_t id, struct db_intent *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, INTENT_SELECT "WHERE t.id = ?1", err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	return db_row_get(db, st, &intent_rows, out, err);
}

int db_intents_open_list(struct db *db, int64_t campaign_id, struct db_intent **out, size_t *n,
			 struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, INTENT_SELECT
		"JOIN iterations i ON i.id = t.iteration_id "
		"WHERE i.campaign_id = ?1 AND t.state = 'open' ORDER BY t.id", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	void *v;
	int rc = db_rows_list(db, st, &intent_rows, &v, n, err);
	*out = v;
	return rc;
}
