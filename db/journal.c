/* Journal queries for crash recovery (see journal.h). Bytes are read as
 * db/intents.c reads them: inline when a row before version 4 holds them,
 * else from blobs. */
#include "db/journal.h"
#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

int db_intent_set_after(struct db *db, int64_t intent_id, bool exists, const void *bytes,
			size_t len, int mode, struct rt_sb *err)
{
	char sha[65];
	int rc = db_blob_put(db, exists, bytes, len, sha, err, "record bytes after change");
	if (rc)
		return rc;
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE intents SET after_exists = ?1, after = NULL, after_sha256 = ?2, "
		"after_blob = ?2, after_mode = ?4 WHERE id = ?3", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int(st, 1, exists);
	db_bind_text(st, 2, exists ? sha : NULL);
	sqlite3_bind_int64(st, 3, intent_id);
	if (exists && mode > 0)
		sqlite3_bind_int(st, 4, mode);
	return db_step_done(db, st, err, "record bytes after change");
}

/* Columns: exists, bytes, sha256, mode (NULL: unknown). */
static void best_read(sqlite3_stmt *st, void *row)
{
	struct db_best *b = row;
	b->exists = sqlite3_column_int(st, 0) != 0;
	if (b->exists)
		b->bytes = db_col_blob(st, 1, &b->len);
	db_col_sha(st, 2, b->sha256);
	b->mode = sqlite3_column_int(st, 3);
}

static void best_free(void *row)
{
	free(((struct db_best *)row)->bytes);
}

static const struct db_row_type best_rows = {
	sizeof(struct db_best), best_read, best_free, "best bytes",
};

void db_best_release(struct db_best *b)
{
	best_free(b);
	memset(b, 0, sizeof(*b));
}

int db_best_bytes(struct db *db, int64_t campaign_id, const char *path, struct db_best *out,
		  struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT i.after_exists, COALESCE(i.after, b.content), i.after_sha256, i.after_mode "
		"FROM intents i JOIN iterations it ON it.id = i.iteration_id "
		"LEFT JOIN blobs b ON b.sha256 = i.after_blob "
		"WHERE it.campaign_id = ?1 AND it.state = 'kept' AND i.path = ?2 "
		"AND i.action = 'apply' AND i.state = 'done' "
		"ORDER BY it.seq DESC, i.id DESC LIMIT 1", err);
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		db_bind_text(st, 2, path);
	}
	int rc = db_row_get(db, st, &best_rows, out, err);
	if (rc != RT_ENOENT)
		return rc;
	st = db_prepare(db,
		"SELECT o.existed, COALESCE(o.content, b.content), o.sha256, o.mode FROM originals o "
		"LEFT JOIN blobs b ON b.sha256 = o.content_blob "
		"WHERE o.campaign_id = ?1 AND o.path = ?2", err);
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		db_bind_text(st, 2, path);
	}
	return db_row_get(db, st, &best_rows, out, err);
}

int db_iterations_interrupt(struct db *db, int64_t campaign_id, const char *reason,
			    struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = 'interrupted', reason = ?, finished_at = ? "
		"WHERE campaign_id = ? AND state IN ('pending', 'applying', 'applied', 'measuring')", err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, reason);
	sqlite3_bind_int64(st, 2, rt_wall_ms());
	sqlite3_bind_int64(st, 3, campaign_id);
	int rc = db_step_done(db, st, err, "mark interrupted");
	return rc ? rc : db_changes(db);
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
	db_bind_text(st, 2, key);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(char *));
		(*out)[(*n)++] = db_col_text(st, 0);
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? 0 : db_fail(db, err, "read facts");
}
