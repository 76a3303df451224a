/*
 * The environment and evidence tables: env_facts (where a measurement was
 * taken: host, kernel, device, driver, engine version, git state) and
 * artifacts (logs, profiles and build output, stored with their sha256).
 * Their writes, and the reads behind `ratchet show` (query.h, struct
 * db_q_kv). The campaign's own look-ups of facts live in db/journal.c.
 */
#include "db/db_int.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

int db_fact_add(struct db *db, int64_t campaign_id, int64_t iteration_id, const char *key,
		const char *value, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO env_facts (campaign_id, iteration_id, key, value, created_at) "
		"VALUES (?1, ?2, ?3, ?4, ?5)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_id(st, 2, iteration_id);
	db_bind_text(st, 3, key);
	db_bind_text(st, 4, value);
	sqlite3_bind_int64(st, 5, rt_wall_ms());
	return db_step_done(db, st, err, "insert into env_facts");
}

int db_artifact_add(struct db *db, int64_t campaign_id, int64_t iteration_id, const char *kind,
		    const char *name, const void *content, size_t len, bool truncated,
		    struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO artifacts (campaign_id, iteration_id, kind, name, sha256, size, content, "
		"truncated, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", err);
	if (!st)
		return RT_EDB;
	char sha[65];
	rt_sha256_hex(content ? content : "", content ? len : 0, sha);
	db_bind_id(st, 1, campaign_id);
	db_bind_id(st, 2, iteration_id);
	db_bind_text(st, 3, kind);
	db_bind_text(st, 4, name);
	db_bind_text(st, 5, sha);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)len);
	db_bind_blob(st, 7, content, len, true);
	sqlite3_bind_int(st, 8, truncated ? 1 : 0);
	sqlite3_bind_int64(st, 9, rt_wall_ms());
	return db_step_done(db, st, err, "insert into artifacts");
}

/* Facts and artifacts share one row shape: key, value, then the artifact's
 * sha256, size and truncated flag (NULL for facts), then campaign_wide. */
static void kv_read(sqlite3_stmt *st, void *row)
{
	struct db_q_kv *k = row;
	k->key = db_col_text(st, 0);
	k->value = db_col_text(st, 1);
	k->sha256 = db_col_text(st, 2);
	k->size = sqlite3_column_int64(st, 3);
	k->truncated = sqlite3_column_int(st, 4) != 0;
	k->campaign_wide = sqlite3_column_int(st, 5) != 0;
}

static void kv_release(void *row)
{
	struct db_q_kv *k = row;
	free(k->key);
	free(k->value);
	free(k->sha256);
}

static const struct db_row_type fact_rows = {
	sizeof(struct db_q_kv), kv_read, kv_release, "read env_facts",
};
static const struct db_row_type artifact_rows = {
	sizeof(struct db_q_kv), kv_read, kv_release, "read artifacts",
};

void db_q_kvs_free(struct db_q_kv *v, size_t n)
{
	db_rows_free(&fact_rows, v, n);
}

/* The iteration's own facts, then campaign-wide facts whose key it did not
 * record; the latest value of each key wins. */
static const char SQL_FACTS[] =
	"SELECT key, value, NULL, 0, 0, iteration_id IS NULL FROM env_facts f"
	" WHERE (f.iteration_id = ?2 OR (f.iteration_id IS NULL AND f.campaign_id = ?1"
	"   AND NOT EXISTS (SELECT 1 FROM env_facts g WHERE g.iteration_id = ?2 AND g.key = f.key)))"
	" AND f.id = (SELECT max(h.id) FROM env_facts h WHERE h.key = f.key"
	"   AND h.iteration_id IS f.iteration_id AND h.campaign_id IS f.campaign_id)"
	" ORDER BY iteration_id IS NULL, key";

int db_q_facts(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_kv **out,
	       size_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_FACTS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		sqlite3_bind_int64(st, 2, iteration_id);
	}
	void *v;
	int rc = db_rows_list(db, st, &fact_rows, &v, n, err);
	*out = v;
	return rc;
}

static const char SQL_ARTIFACTS[] =
	"SELECT name, kind, sha256, size, truncated, 0 FROM artifacts WHERE iteration_id = ?1"
	" ORDER BY id";

int db_q_artifacts(struct db *db, int64_t iteration_id, struct db_q_kv **out, size_t *n,
		   struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_ARTIFACTS, err);
	if (st)
		sqlite3_bind_int64(st, 1, iteration_id);
	void *v;
	int rc = db_rows_list(db, st, &artifact_rows, &v, n, err);
	*out = v;
	return rc;
}

int db_q_artifact_content(struct db *db, int64_t iteration_id, const char *name, void **content,
			  size_t *len, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT content FROM artifacts WHERE iteration_id = ?1 AND name = ?2 ORDER BY id DESC",
		err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, name);
	int rc = db_step_row(db, st, err, "read artifacts");
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no artifact '%s'", name);
	if (rc)
		return rc;
	const void *p = sqlite3_column_blob(st, 0);
	*len = (size_t)sqlite3_column_bytes(st, 0);
	*content = xmalloc(*len + 1);
	if (*len)
		memcpy(*content, p, *len);
	((char *)*content)[*len] = 0;
	sqlite3_reset(st);
	return 0;
}
