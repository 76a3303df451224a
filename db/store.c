/*
 * Opening and migrating the store, statement cache, transactions, and the
 * write side the campaign loop uses: campaigns, iterations, the crash-safety
 * journal, measurements, statistics, regressions, facts and artifacts.
 */
#include "db/db.h"
#include "db/db_sql.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct db_cached {
	const char *sql;     /* key: the literal's address */
	sqlite3_stmt *stmt;  /* prepared once, reset before each use */
};

struct db {
	sqlite3 *h;               /* the connection */
	char *path;               /* as given to db_open */
	struct db_cached *cache;  /* prepared statements, by SQL literal (grows) */
	int ncache;               /* entries used */
	int acache;               /* entries allocated */
};

sqlite3 *db_sqlite(struct db *db)
{
	return db->h;
}

const char *db_path(struct db *db)
{
	return db->path;
}

int db_fail(struct db *db, struct rt_sb *err, const char *what)
{
	return rt_errf(err, RT_EDB, "db: %s: %s", what, sqlite3_errmsg(db->h));
}

sqlite3_stmt *db_prepare(struct db *db, const char *sql, struct rt_sb *err)
{
	for (int i = 0; i < db->ncache; i++) {
		if (db->cache[i].sql == sql) {
			sqlite3_reset(db->cache[i].stmt);
			sqlite3_clear_bindings(db->cache[i].stmt);
			return db->cache[i].stmt;
		}
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		db_fail(db, err, "prepare");
		return NULL;
	}
	/* The cache grows: every statement is finalized by db_close, so a
	 * statement never outlives its connection (sqlite3_close fails if one does). */
	if (db->ncache == db->acache) {
		db->acache = db->acache ? 2 * db->acache : 64;
		db->cache = xrealloc(db->cache, (size_t)db->acache * sizeof(*db->cache));
	}
	db->cache[db->ncache].sql = sql;
	db->cache[db->ncache].stmt = st;
	db->ncache++;
	return st;
}

static int exec(struct db *db, const char *sql, struct rt_sb *err, const char *what)
{
	char *msg = NULL;
	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rt_errf(err, RT_EDB, "db: %s: %s", what, msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return RT_EDB;
	}
	return 0;
}

int db_begin(struct db *db, struct rt_sb *err)
{
	return exec(db, "BEGIN IMMEDIATE", err, "begin");
}

int db_commit(struct db *db, struct rt_sb *err)
{
	return exec(db, "COMMIT", err, "commit");
}

void db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

static int user_version(struct db *db, int *v, struct rt_sb *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, err, "read user_version");
	*v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

static int set_user_version(struct db *db, int v, struct rt_sb *err)
{
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	return exec(db, sql, err, "set user_version");
}

static int migrate(struct db *db, struct rt_sb *err)
{
	int v;
	int rc = user_version(db, &v, err);
	if (rc)
		return rc;
	if (v > db_schema_version)
		return rt_errf(err, RT_ESCHEMA,
			       "%s: database schema version %d is newer than this ratchet's (%d); "
			       "use a newer ratchet, nothing was changed", db->path, v,
			       db_schema_version);
	if (v == db_schema_version)
		return 0;
	if ((rc = db_begin(db, err)))
		return rc;
	/* Re-read inside the write lock: another process may have migrated. */
	if ((rc = user_version(db, &v, err)))
		goto fail;
	if (v == 0) {
		if ((rc = exec(db, db_schema_sql, err, "create schema")))
			goto fail;
	} else {
		for (const struct db_migration *m = db_migrations; m->version; m++) {
			if (m->version <= v)
				continue;
			if ((rc = exec(db, m->sql, err, "migrate")))
				goto fail;
		}
	}
	if ((rc = set_user_version(db, db_schema_version, err)))
		goto fail;
	return db_commit(db, err);
fail:
	db_rollback(db);
	return rc;
}

int db_open(const char *path, struct db **out, struct rt_sb *err)
{
	struct db *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		rt_errf(err, RT_EDB, "%s: cannot open database: %s", path,
			db->h ? sqlite3_errmsg(db->h) : "out of memory");
		db_close(db);
		return RT_EDB;
	}
	sqlite3_busy_timeout(db->h, 10000);
	/* Check the version before anything that writes (journal_mode = WAL
	 * rewrites the header): a newer database is left byte for byte as it was. */
	int v = 0;
	int rc = user_version(db, &v, err);
	if (!rc && v > db_schema_version)
		rc = rt_errf(err, RT_ESCHEMA,
			     "%s: database schema version %d is newer than this ratchet's (%d); "
			     "use a newer ratchet, nothing was changed", db->path, v,
			     db_schema_version);
	if (!rc)
		rc = exec(db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; "
			      "PRAGMA synchronous = NORMAL;", err, path);
	if (!rc)
		rc = migrate(db, err);
	if (rc) {
		db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	for (int i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].stmt);
	free(db->cache);
	if (db->h)
		sqlite3_close(db->h);
	free(db->path);
	free(db);
}

/* ---- binding and reading helpers ---- */

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

char *db_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

double db_col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

void *db_grow(void *v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 16;
	return xrealloc(v, *cap * sz);
}

/* A blob of len bytes; a zero-length blob is stored as an empty blob, not NULL. */
static void bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len, bool present)
{
	if (!present)
		sqlite3_bind_null(st, i);
	else if (!len || !p)
		sqlite3_bind_zeroblob(st, i, 0);
	else
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
}

/* A copy of a blob column, NUL-terminated for callers that treat it as text. */
static void *col_blob(sqlite3_stmt *st, int i, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	char *out = xmalloc(n + 1);
	if (n)
		memcpy(out, p, n);
	out[n] = 0;
	*len = n;
	return out;
}

static void col_sha(sqlite3_stmt *st, int i, char out[65])
{
	const unsigned char *s = sqlite3_column_text(st, i);
	snprintf(out, 65, "%s", s ? (const char *)s : "");
}

/* Step a write statement to completion and reset it; "db: <what>: <msg>" on failure. */
static int step_done(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, what);
	sqlite3_reset(st);
	return ret;
}

/* The id of the row the last INSERT on this connection made. */
static void out_id(struct db *db, int64_t *id)
{
	if (id)
		*id = sqlite3_last_insert_rowid(db->h);
}

/* ---- campaigns ---- */

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
	int rc = step_done(db, st, err, "create campaign");
	if (!rc)
		out_id(db, id);
	return rc;
}

#define CAMPAIGN_COLS \
	"id, name, spec_path, spec_text, spec_sha256, workdir, seed, state, " \
	"best_iteration, created_at, finished_at"

static void read_campaign(sqlite3_stmt *st, struct db_campaign *c)
{
	memset(c, 0, sizeof(*c));
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
}

/* Step a one-row read: 0 with the row read, RT_ENOENT, or RT_EDB. */
static int step_row(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return RT_ENOENT;
	}
	int ret = db_fail(db, err, what);
	sqlite3_reset(st);
	return ret;
}

int db_campaign_latest(struct db *db, const char *name, struct db_campaign *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT " CAMPAIGN_COLS " FROM campaigns WHERE ?1 IS NULL OR name = ?1 "
		"ORDER BY id DESC LIMIT 1", err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, name);
	int rc = step_row(db, st, err, "read campaign");
	if (rc == RT_ENOENT)
		return name ? rt_errf(err, RT_ENOENT, "db: no campaign named '%s'", name)
			    : rt_errf(err, RT_ENOENT, "db: no campaign yet");
	if (rc)
		return rc;
	read_campaign(st, out);
	sqlite3_reset(st);
	return 0;
}

int db_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT " CAMPAIGN_COLS " FROM campaigns WHERE id = ?1",
				      err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	int rc = step_row(db, st, err, "read campaign");
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no campaign %lld", (long long)id);
	if (rc)
		return rc;
	read_campaign(st, out);
	sqlite3_reset(st);
	return 0;
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
	int rc = step_done(db, st, err, "set campaign state");
	if (!rc && sqlite3_changes(db->h) == 0)
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
	int rc = step_done(db, st, err, "set best iteration");
	if (!rc && sqlite3_changes(db->h) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: campaign %lld has no iteration %lld",
			     (long long)id, (long long)iteration_id);
	return rc;
}

/* ---- iterations ---- */

void db_iteration_release(struct db_iteration *it)
{
	if (!it)
		return;
	free(it->variant);
	free(it->kind);
	free(it->change_text);
	free(it->change_sha256);
	free(it->config_sha256);
	free(it->phase);
	free(it->decision);
	free(it->reason);
	free(it->objective);
	free(it->test);
	free(it->strategy_note);
	memset(it, 0, sizeof(*it));
}

void db_iterations_free(struct db_iteration *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		db_iteration_release(&v[i]);
	free(v);
}

int db_iteration_create(struct db *db, int64_t campaign_id, int seq, int64_t parent_id,
			const char *variant, const char *kind, const char *change_text,
			const char *change_sha256, const char *config_sha256,
			const char *strategy_note, enum db_iter_role role, int64_t *id,
			struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO iterations (campaign_id, seq, parent_id, variant, kind, change_text, "
		"change_sha256, config_sha256, strategy_note, started_at, role) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_int(st, 2, seq);
	db_bind_id(st, 3, parent_id);
	db_bind_text(st, 4, variant);
	db_bind_text(st, 5, kind);
	db_bind_text(st, 6, change_text ? change_text : "");
	db_bind_text(st, 7, change_sha256);
	db_bind_text(st, 8, config_sha256);
	db_bind_text(st, 9, strategy_note);
	sqlite3_bind_int64(st, 10, rt_wall_ms());
	db_bind_text(st, 11, db_iter_role_name(role));
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "create iteration %lld:%d", (long long)campaign_id, seq);
	int rc = step_done(db, st, err, what.buf);
	rt_sb_release(&what);
	if (!rc)
		out_id(db, id);
	return rc;
}

int db_iteration_set_state(struct db *db, int64_t id, enum db_iter_state state, const char *phase,
			   struct rt_sb *err)
{
	/* A NULL phase keeps the phase reached so far. */
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = ?2, phase = COALESCE(?3, phase) WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, db_iter_state_name(state));
	db_bind_text(st, 3, phase);
	int rc = step_done(db, st, err, "set iteration state");
	if (!rc && sqlite3_changes(db->h) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: no iteration %lld", (long long)id);
	return rc;
}

int db_iteration_finish(struct db *db, const struct db_iteration *it, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = ?2, phase = COALESCE(?3, phase), decision = ?4, "
		"reason = ?5, objective = ?6, obj_best = ?7, obj_cand = ?8, obj_delta = ?9, "
		"obj_ci_lo = ?10, obj_ci_hi = ?11, confidence = ?12, test = ?13, p_value = ?14, "
		"n_cand = ?15, n_best = ?16, paired = ?17, gate_run_id = ?18, finished_at = ?19, "
		"passed = ?20 WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, it->id);
	db_bind_text(st, 2, db_iter_state_name(it->state));
	db_bind_text(st, 3, it->phase);
	db_bind_text(st, 4, it->decision);
	db_bind_text(st, 5, it->reason);
	db_bind_text(st, 6, it->objective);
	db_bind_real(st, 7, it->obj_best);
	db_bind_real(st, 8, it->obj_cand);
	db_bind_real(st, 9, it->obj_delta);
	db_bind_real(st, 10, it->obj_ci_lo);
	db_bind_real(st, 11, it->obj_ci_hi);
	db_bind_real(st, 12, it->confidence);
	db_bind_text(st, 13, it->test);
	db_bind_real(st, 14, it->p_value);
	sqlite3_bind_int(st, 15, it->n_cand);
	sqlite3_bind_int(st, 16, it->n_best);
	sqlite3_bind_int(st, 17, it->paired ? 1 : 0);
	db_bind_id(st, 18, it->gate_run_id);
	sqlite3_bind_int64(st, 19, rt_wall_ms());
	if (it->passed >= 0)
		sqlite3_bind_int(st, 20, it->passed);
	else
		sqlite3_bind_null(st, 20);
	int rc = step_done(db, st, err, "finish iteration");
	if (!rc && sqlite3_changes(db->h) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: no iteration %lld", (long long)it->id);
	return rc;
}

/* ---- crash-safety journal ---- */

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
	char sha[65];
	sqlite3_bind_int64(st, 1, campaign_id);
	db_bind_text(st, 2, path);
	sqlite3_bind_int(st, 3, existed ? 1 : 0);
	bind_blob(st, 4, content, len, existed);
	if (existed) {
		rt_sha256_hex(content ? content : "", content ? len : 0, sha);
		db_bind_text(st, 5, sha);
		sqlite3_bind_int(st, 6, mode);
	} else {
		sqlite3_bind_null(st, 5);
		sqlite3_bind_null(st, 6);
	}
	sqlite3_bind_int64(st, 7, rt_wall_ms());
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "record original of %s", path ? path : "(null)");
	int rc = step_done(db, st, err, what.buf);
	rt_sb_release(&what);
	return rc;
}

void db_originals_free(struct db_original *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].content);
	}
	free(v);
}

int db_originals_list(struct db *db, int64_t campaign_id, struct db_original **out, size_t *n,
		      struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT path, existed, content, sha256, mode FROM originals WHERE campaign_id = ?1 "
		"ORDER BY id", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	struct db_original *v = NULL;
	size_t cnt = 0, alloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, cnt, &alloc, sizeof(*v));
		struct db_original *o = &v[cnt++];
		memset(o, 0, sizeof(*o));
		o->path = db_col_text(st, 0);
		o->existed = sqlite3_column_int(st, 1) != 0;
		if (o->existed)
			o->content = col_blob(st, 2, &o->len);
		col_sha(st, 3, o->sha256);
		o->mode = sqlite3_column_int(st, 4);
	}
	if (rc != SQLITE_DONE) {
		int ret = db_fail(db, err, "list originals");
		sqlite3_reset(st);
		db_originals_free(v, cnt);
		return ret;
	}
	sqlite3_reset(st);
	*out = v;
	*n = cnt;
	return 0;
}

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
	char bsha[65], asha[65];
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, action);
	db_bind_text(st, 3, path);
	sqlite3_bind_int(st, 4, before_exists ? 1 : 0);
	bind_blob(st, 5, before, before_len, before_exists);
	if (before_exists) {
		rt_sha256_hex(before ? before : "", before ? before_len : 0, bsha);
		db_bind_text(st, 6, bsha);
	}
	sqlite3_bind_int(st, 7, after_exists ? 1 : 0);
	bind_blob(st, 8, after, after_len, after_exists);
	if (after_exists) {
		rt_sha256_hex(after ? after : "", after ? after_len : 0, asha);
		db_bind_text(st, 9, asha);
	}
	sqlite3_bind_int64(st, 10, rt_wall_ms());
	struct rt_sb what = RT_SB_INIT;
	rt_sb_addf(&what, "open %s intent on %s", action ? action : "(null)",
		   path ? path : "(null)");
	int rc = step_done(db, st, err, what.buf);
	rt_sb_release(&what);
	if (!rc)
		out_id(db, id);
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
	int rc = step_done(db, st, err, "close intent");
	if (rc || sqlite3_changes(db->h))
		return rc;
	/* Nothing changed: say whether it is missing or already closed. */
	st = db_prepare(db, "SELECT state FROM intents WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	rc = step_row(db, st, err, "read intent");
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no intent %lld", (long long)id);
	if (rc)
		return rc;
	rc = rt_errf(err, RT_ESTATE, "db: intent %lld is already %s", (long long)id,
		     (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return rc;
}

void db_intents_free(struct db_intent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].action);
		free(v[i].path);
		free(v[i].before);
		free(v[i].after);
	}
	free(v);
}

int db_intents_open_list(struct db *db, int64_t campaign_id, struct db_intent **out, size_t *n,
			 struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT t.id, t.iteration_id, t.action, t.path, t.before_exists, t.before, "
		"t.before_sha256, t.after_exists, t.after, t.after_sha256 FROM intents t "
		"JOIN iterations i ON i.id = t.iteration_id "
		"WHERE i.campaign_id = ?1 AND t.state = 'open' ORDER BY t.id", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	struct db_intent *v = NULL;
	size_t cnt = 0, alloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, cnt, &alloc, sizeof(*v));
		struct db_intent *t = &v[cnt++];
		memset(t, 0, sizeof(*t));
		t->id = sqlite3_column_int64(st, 0);
		t->iteration_id = sqlite3_column_int64(st, 1);
		t->action = db_col_text(st, 2);
		t->path = db_col_text(st, 3);
		t->before_exists = sqlite3_column_int(st, 4) != 0;
		if (t->before_exists)
			t->before = col_blob(st, 5, &t->before_len);
		col_sha(st, 6, t->before_sha256);
		t->after_exists = sqlite3_column_int(st, 7) != 0;
		if (t->after_exists)
			t->after = col_blob(st, 8, &t->after_len);
		col_sha(st, 9, t->after_sha256);
	}
	if (rc != SQLITE_DONE) {
		int ret = db_fail(db, err, "list open intents");
		sqlite3_reset(st);
		db_intents_free(v, cnt);
		return ret;
	}
	sqlite3_reset(st);
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- measurements, stats, regressions, facts, artifacts ---- */

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
	return step_done(db, st, err, "add measurement");
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
	return step_done(db, st, err, "invalidate measurements");
}

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
	return step_done(db, st, err, "add metric stat");
}

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
	return step_done(db, st, err, "add regression");
}

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
	return step_done(db, st, err, "add fact");
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
	bind_blob(st, 7, content, len, true);
	sqlite3_bind_int(st, 8, truncated ? 1 : 0);
	sqlite3_bind_int64(st, 9, rt_wall_ms());
	return step_done(db, st, err, "add artifact");
}
