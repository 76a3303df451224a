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
	k->id = sqlite3_column_int64(st, 6);
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
	free(k->stored);
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
	"SELECT key, value, NULL, 0, 0, iteration_id IS NULL, id FROM env_facts f"
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
	"SELECT name, kind, sha256, size, truncated, 0, id FROM artifacts WHERE iteration_id = ?1"
	" ORDER BY id";

/* NAME numbered k: STEM-k.EXT (engine-cand.log -> engine-cand-2.log), or
 * NAME-k when it has no extension. */
static char *numbered(const char *name, size_t k)
{
	const char *dot = strrchr(name, '.');
	if (!dot || dot == name)
		return xasprintf("%s-%zu", name, k);
	return xasprintf("%.*s-%zu%s", (int)(dot - name), name, k, dot);
}

/* Several artifacts stored under one name (an engine log per launch) get
 * numbered names, in the order they were stored. */
static void unique_names(struct db_q_kv *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].stored)
			continue;
		size_t same = 0;
		for (size_t j = i; j < n; j++)
			same += !a[j].stored && !strcmp(a[j].key, a[i].key);
		if (same < 2)
			continue;
		char *name = xstrdup(a[i].key);
		for (size_t j = i, k = 1; j < n; j++) {
			if (a[j].stored || strcmp(a[j].key, name))
				continue;
			a[j].stored = a[j].key;
			a[j].key = numbered(name, k++);
		}
		free(name);
	}
}

int db_q_artifacts(struct db *db, int64_t iteration_id, struct db_q_kv **out, size_t *n,
		   struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_ARTIFACTS, err);
	if (st)
		sqlite3_bind_int64(st, 1, iteration_id);
	void *v;
	int rc = db_rows_list(db, st, &artifact_rows, &v, n, err);
	*out = v;
	if (!rc)
		unique_names(*out, *n);
	return rc;
}

/* The id of the artifact called name, or the error that says why none. */
static int artifact_pick(const struct db_q_kv *a, size_t n, const char *name, int64_t *id,
			 struct rt_sb *err)
{
	struct rt_sb also = RT_SB_INIT;
	size_t same = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(a[i].key, name)) {
			*id = a[i].id;
			rt_sb_release(&also);
			return 0;
		}
		if (a[i].stored && !strcmp(a[i].stored, name))
			rt_sb_addf(&also, "%s%s", same++ ? ", " : "", a[i].key);
	}
	int rc = same ? rt_errf(err, RT_EINVAL, "'%s' names %zu artifacts: %s (pick one)", name,
				same, also.buf)
		      : rt_errf(err, RT_ENOENT, "db: no artifact '%s'", name);
	rt_sb_release(&also);
	return rc;
}

int db_q_artifact_content(struct db *db, int64_t iteration_id, const char *name, void **content,
			  size_t *len, struct rt_sb *err)
{
	struct db_q_kv *a;
	size_t n;
	int64_t id = 0;
	int rc = db_q_artifacts(db, iteration_id, &a, &n, err);
	if (!rc)
		rc = artifact_pick(a, n, name, &id, err);
	db_q_kvs_free(a, n);
	if (rc)
		return rc;
	sqlite3_stmt *st = db_prepare(db, "SELECT content FROM artifacts WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	rc = db_step_row(db, st, err, "read artifacts");
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
