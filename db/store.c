/*
 * Opening and migrating the store, statement cache, transactions, and the
 * write side the campaign loop uses: campaigns, iterations, the crash-safety
 * journal, measurements, statistics, regressions, facts and artifacts.
 */
#include "db/db.h"
#include "db/db_sql.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DB_STMT_CACHE 64

struct db {
	sqlite3 *h;         /* the connection */
	char *path;         /* as given to db_open */
	struct {
		const char *sql;    /* key: the literal's address */
		sqlite3_stmt *stmt;
	} cache[DB_STMT_CACHE]; /* prepared statements, by SQL literal */
	int ncache;
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
	if (db->ncache < DB_STMT_CACHE) {
		db->cache[db->ncache].sql = sql;
		db->cache[db->ncache].stmt = st;
		db->ncache++;
	}
	/* A statement that did not fit in the cache leaks until close; the cache
	 * is sized above the number of statements in the code. */
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
	int rc = exec(db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; "
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
	if (db->h)
		sqlite3_close(db->h);
	free(db->path);
	free(db);
}
