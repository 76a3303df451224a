/*
 * The campaigns table: one row per `ratchet run` of a spec. Creating a
 * campaign, its state and best iteration, and the one reader of the row
 * (struct db_campaign) behind db_campaign_get, db_campaign_latest and the
 * reports' db_q_campaign_get.
 */
#include "db/db_int.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

void db_campaign_release(struct db_campaign *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->spec_path);
	free(c->spec_text);
	free(c->spec_sha256);
	free(c->workdir);
	free(c->state);
	memset(c, 0, sizeof(*c));
}

int db_campaign_create(struct db *db, const char *name, const char *spec_path,
		       const char *spec_text, const char *spec_sha256, const char *workdir,
		       int64_t seed, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO campaigns (name, spec_path, spec_text, spec_sha256, workdir, seed, "
		"created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, name);
	db_bind_text(st, 2, spec_path);
	db_bind_text(st, 3, spec_text);
	db_bind_text(st, 4, spec_sha256);
	db_bind_text(st, 5, workdir);
	sqlite3_bind_int64(st, 6, seed);
	sqlite3_bind_int64(st, 7, rt_wall_ms());
	return db_step_insert(db, st, id, err, "insert into campaigns");
}

static void campaign_read(sqlite3_stmt *st, void *row)
{
	struct db_campaign *c = row;
	c->id = sqlite3_column_int64(st, 0);
	c->name = db_col_text(st, 1);
	c->spec_path = db_col_text(st, 2);
	c->spec_text = db_col_text(st, 3);
	c->spec_sha256 = db_col_text(st, 4);
	c->workdir = db_col_text(st, 5);
	c->seed = sqlite3_column_int64(st, 6);
	c->state = db_col_text(st, 7);
	c->best_iteration = sqlite3_column_int64(st, 8);
	c->created_at = sqlite3_column_int64(st, 9);
	c->finished_at = sqlite3_column_int64(st, 10);
	c->n_iterations = sqlite3_column_int64(st, 11);
	c->held = sqlite3_column_int(st, 12) != 0;
}

static void campaign_release(void *row)
{
	db_campaign_release(row);
}

static const struct db_row_type campaign_rows = {
	sizeof(struct db_campaign), campaign_read, campaign_release, "read campaigns",
};

/* Campaign id (0: any), of name (NULL: any), the newest that matches. The
 * iteration count walks the iterations_campaign index. */
static const char SQL_CAMPAIGN[] =
	"SELECT c.id, c.name, c.spec_path, c.spec_text, c.spec_sha256, c.workdir, c.seed,"
	" c.state, c.best_iteration, c.created_at, c.finished_at,"
	" (SELECT count(*) FROM iterations i WHERE i.campaign_id = c.id), c.owner_token IS NOT NULL"
	" FROM campaigns c WHERE (?1 = 0 OR c.id = ?1) AND (?2 IS NULL OR c.name = ?2)"
	" ORDER BY c.id DESC LIMIT 1";

/* RT_ENOENT with nothing in err when no campaign matches. */
static int campaign_find(struct db *db, int64_t id, const char *name, struct db_campaign *out,
			 struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_CAMPAIGN, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		db_bind_text(st, 2, name);
	}
	return db_row_get(db, st, &campaign_rows, out, err);
}

int db_campaign_latest(struct db *db, const char *name, struct db_campaign *out, struct rt_sb *err)
{
	int rc = campaign_find(db, 0, name, out, err);
	if (rc == RT_ENOENT && name)
		return rt_errf(err, RT_ENOENT, "db: no campaign named '%s'", name);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no campaign yet");
	return rc;
}

int db_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err)
{
	int rc = id > 0 ? campaign_find(db, id, NULL, out, err) : RT_ENOENT;
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no campaign %lld", (long long)id);
	return rc;
}

int db_q_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err)
{
	int rc = campaign_find(db, id, NULL, out, err);
	if (rc == RT_ENOENT && id)
		return rt_errf(err, RT_ENOENT, "campaign %lld: no such campaign", (long long)id);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "%s: no campaign recorded yet", db_path(db));
	return rc;
}

int db_campaign_set_state(struct db *db, int64_t id, const char *state, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE campaigns SET state = ?2, finished_at = "
		"CASE WHEN ?2 = 'running' THEN NULL ELSE ?3 END WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, state);
	sqlite3_bind_int64(st, 3, rt_wall_ms());
	int rc = db_step_done(db, st, err, "update campaigns (state)");
	if (!rc && db_changes(db) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: no campaign %lld", (long long)id);
	return rc;
}

int db_campaign_set_best(struct db *db, int64_t id, int64_t iteration_id, struct rt_sb *err)
{
	/* best_iteration must be an iteration of this campaign. */
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE campaigns SET best_iteration = ?2 WHERE id = ?1 AND EXISTS "
		"(SELECT 1 FROM iterations WHERE id = ?2 AND campaign_id = ?1)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, iteration_id);
	int rc = db_step_done(db, st, err, "update campaigns (best iteration)");
	if (!rc && db_changes(db) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: campaign %lld has no iteration %lld",
			     (long long)id, (long long)iteration_id);
	return rc;
}
