/* Journal queries for crash recovery (see journal.h). Bytes are read as
 * db/intents.c reads them: inline when a row before version 4 holds them,
 * else from blobs. */
#include "db/journal.h"
#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

int db_intent_set_after(struct db *db, int64_t intent_id, bool exists, const void *bytes,
			size_t len, struct rt_sb *err)
{
	char sha[65];
	int rc = db_blob_put(db, exists, bytes, len, sha, err, "record bytes after change");
	if (rc)
		return rc;
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE intents SET after_exists = ?1, after = NULL, after_sha256 = ?2, "
		"after_blob = ?2 WHERE id = ?3", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int(st, 1, exists);
	db_bind_text(st, 2, exists ? sha : NULL);
	sqlite3_bind_int64(st, 3, intent_id);
	return db_step_done(db, st, err, "record bytes after change");
}

static int take_blob(sqlite3_stmt *st, int col_exists, int col_blob, bool *exists, void **bytes,
		     size_t *len)
{
	*exists = sqlite3_column_int(st, col_exists) != 0;
	const void *b = sqlite3_column_blob(st, col_blob);
	*len = (size_t)sqlite3_column_bytes(st, col_blob);
	*bytes = xmalloc(*len + 1);
	if (*len)
		memcpy(*bytes, b, *len);
	((char *)*bytes)[*len] = 0;
	return 0;
}

int db_best_bytes(struct db *db, int64_t campaign_id, const char *path, bool *exists,
		  void **bytes, size_t *len, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT i.after_exists, COALESCE(i.after, b.content) FROM intents i "
		"JOIN iterations it ON it.id = i.iteration_id "
		"LEFT JOIN blobs b ON b.sha256 = i.after_blob "
		"WHERE it.campaign_id = ? AND it.state = 'kept' AND i.path = ? "
		"AND i.action = 'apply' AND i.state = 'done' "
		"ORDER BY it.seq DESC, i.id DESC LIMIT 1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_TRANSIENT);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		take_blob(st, 0, 1, exists, bytes, len);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	if (r != SQLITE_DONE)
		return db_fail(db, err, "best bytes");
	st = db_prepare(db,
		"SELECT o.existed, COALESCE(o.content, b.content) FROM originals o "
		"LEFT JOIN blobs b ON b.sha256 = o.content_blob "
		"WHERE o.campaign_id = ? AND o.path = ?", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_TRANSIENT);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		take_blob(st, 0, 1, exists, bytes, len);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? RT_ENOENT : db_fail(db, err, "original bytes");
}

int db_iterations_interrupt(struct db *db, int64_t campaign_id, const char *reason,
			    struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = 'interrupted', reason = ?, finished_at = ? "
		"WHERE campaign_id = ? AND state IN ('pending', 'applying', 'applied', 'measuring')", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_text(st, 1, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, rt_wall_ms());
	sqlite3_bind_int64(st, 3, campaign_id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		return db_fail(db, err, "mark interrupted");
	}
	sqlite3_reset(st);
	return sqlite3_changes(db_sqlite(db));
}

int db_fact_values(struct db *db, int64_t campaign_id, const char *key, char ***out, size_t *n,
		   struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT value FROM env_facts WHERE campaign_id = ? AND key = ? ORDER BY id", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(char *));
		(*out)[(*n)++] = xstrdup((const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? 0 : db_fail(db, err, "read facts");
}
