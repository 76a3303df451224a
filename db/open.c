/*
 * The connection: opening the store (WAL, foreign keys, busy_timeout),
 * creating the schema or migrating an older file (db/schema.sql and
 * db/migrations/, embedded by cmake/embed_sql.cmake, plus the one step SQL
 * cannot do: version 8 moves inline journal bytes into blobs), refusing a file written
 * by a newer ratchet, the cache of prepared statements, and transactions.
 * Read commands open it read-only and never create it (db_open_mode). Owns
 * no table; PRAGMA user_version is its only state in the file.
 */
#include "db/db_int.h"
#include "db/db_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct db_cached {
	const char *sql;     /* key: the literal's address */
	sqlite3_stmt *stmt;  /* prepared once, reset before each use */
};

struct db {
	sqlite3 *h;               /* the connection */
	char *path;               /* as given to db_open */
	struct db_cached *cache;  /* prepared statements, by SQL literal (grows) */
	size_t ncache;            /* entries used */
	size_t acache;            /* entries allocated */
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
	for (size_t i = 0; i < db->ncache; i++) {
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
	db->cache = db_grow(db->cache, db->ncache, &db->acache, sizeof(*db->cache));
	db->cache[db->ncache].sql = sql;
	db->cache[db->ncache].stmt = st;
	db->ncache++;
	return st;
}

int db_exec(struct db *db, const char *sql, struct rt_sb *err, const char *what)
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
	return db_exec(db, "BEGIN IMMEDIATE", err, "begin");
}

int db_commit(struct db *db, struct rt_sb *err)
{
	return db_exec(db, "COMMIT", err, "commit");
}

void db_rollback(struct db *db)
{
	/* Nothing to report: it runs on error paths, and SQLite rolls back a
	 * transaction it could not finish by itself. */
	if (!sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

/* PRAGMA user_version; a file newer than this ratchet is RT_ESCHEMA. */
static int user_version(struct db *db, int *v, struct rt_sb *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, err, "read user_version");
	bool row = sqlite3_step(st) == SQLITE_ROW;
	*v = row ? sqlite3_column_int(st, 0) : 0;
	int rc = row ? 0 : db_fail(db, err, "read user_version");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	if (*v > db_schema_version)
		return rt_errf(err, RT_ESCHEMA,
			       "%s: database schema version %d is newer than this ratchet's (%d); "
			       "use a newer ratchet, nothing was changed", db->path, *v,
			       db_schema_version);
	return 0;
}

/* The journal's bytes that rows written before version 4 hold inline, one
 * column at a time: the next row's id and bytes after id ?1, and the
 * statement that points the row at its blob (?2) instead. */
static const struct inline_col {
	const char *next;   /* SELECT id, bytes of the next row holding inline bytes */
	const char *point;  /* UPDATE that row: the blob's key in, the inline bytes out */
} inline_cols[] = {
	{ "SELECT id, content FROM originals WHERE id > ?1 AND content IS NOT NULL ORDER BY id LIMIT 1",
	  "UPDATE originals SET content_blob = ?2, content = NULL WHERE id = ?1" },
	{ "SELECT id, before FROM intents WHERE id > ?1 AND before IS NOT NULL ORDER BY id LIMIT 1",
	  "UPDATE intents SET before_blob = ?2, before = NULL WHERE id = ?1" },
	{ "SELECT id, after FROM intents WHERE id > ?1 AND after IS NOT NULL ORDER BY id LIMIT 1",
	  "UPDATE intents SET after_blob = ?2, after = NULL WHERE id = ?1" },
};

/* Part of the migration to version 8: every inline copy moves into blobs,
 * keyed by the sha256 of the bytes themselves (the row's own sha256 column
 * is kept as it was, so a damaged row is still refused on restore). One
 * row at a time, in id order: memory holds one file's bytes. */
static int migrate_inline_bytes(struct db *db, struct rt_sb *err)
{
	const char *what = "migrate to version 8 (inline bytes to blobs)";
	for (size_t c = 0; c < sizeof(inline_cols) / sizeof(inline_cols[0]); c++) {
		for (int64_t last = 0;;) {
			sqlite3_stmt *st = db_prepare(db, inline_cols[c].next, err);
			if (!st)
				return RT_EDB;
			sqlite3_bind_int64(st, 1, last);
			int rc = db_step_row(db, st, err, what);
			if (rc == RT_ENOENT)
				break;
			if (rc)
				return rc;
			size_t len;
			last = sqlite3_column_int64(st, 0);
			void *bytes = db_col_blob(st, 1, &len);
			sqlite3_reset(st);
			char sha[65];
			rc = db_blob_put(db, true, bytes, len, sha, err, what);
			free(bytes);
			if (!rc && !(st = db_prepare(db, inline_cols[c].point, err)))
				rc = RT_EDB;
			if (rc)
				return rc;
			sqlite3_bind_int64(st, 1, last);
			db_bind_text(st, 2, sha);
			if ((rc = db_step_done(db, st, err, what)))
				return rc;
		}
	}
	return 0;
}

/* The schema for a new file, else each migration above version v (with the
 * step of version 8 that SQL alone cannot do). */
static int migrate_from(struct db *db, int v, struct rt_sb *err)
{
	if (v == 0)
		return db_exec(db, db_schema_sql, err, "create schema");
	for (const struct db_migration *m = db_migrations; m->version; m++) {
		if (m->version <= v)
			continue;
		char what[32];
		snprintf(what, sizeof(what), "migrate to version %d", m->version);
		int rc = db_exec(db, m->sql, err, what);
		if (!rc && m->version == 8)
			rc = migrate_inline_bytes(db, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int migrate(struct db *db, struct rt_sb *err)
{
	int v;
	int rc = user_version(db, &v, err);
	if (rc || v == db_schema_version)
		return rc;
	if ((rc = db_begin(db, err)))
		return rc;
	/* Re-read inside the write lock: another process may have migrated. */
	if (!(rc = user_version(db, &v, err)) && v != db_schema_version)
		rc = migrate_from(db, v, err);
	if (!rc) {
		/* PRAGMA takes no parameters; the version is this build's constant. */
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", db_schema_version);
		rc = db_exec(db, sql, err, "set user_version");
	}
	if (!rc)
		rc = db_commit(db, err);
	if (rc)
		db_rollback(db);
	return rc;
}

/* The connection with SQLite's flags for mode; RT_ENOENT when the file must exist and does not. */
static int connect_file(struct db *db, enum db_open_mode mode, struct rt_sb *err)
{
	static const int flags[] = {
		[DB_OPEN_CREATE] = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
		[DB_OPEN_EXISTING] = SQLITE_OPEN_READWRITE,
		[DB_OPEN_READONLY] = SQLITE_OPEN_READONLY,
	};
	if (mode != DB_OPEN_CREATE && access(db->path, F_OK))
		return rt_errf(err, RT_ENOENT, "%s: no such database (`ratchet run SPEC` creates one; "
			       "--db FILE or $RATCHET_DB names another)", db->path);
	if (sqlite3_open_v2(db->path, &db->h, flags[mode], NULL) == SQLITE_OK)
		return 0;
	return rt_errf(err, RT_EDB, "%s: cannot open database: %s", db->path,
		       db->h ? sqlite3_errmsg(db->h) : "out of memory");
}

/* A connection in mode and the file's user_version; nothing written yet. */
static int connect_version(const char *path, enum db_open_mode mode, struct db **out, int *v,
			   struct rt_sb *err)
{
	struct db *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	int rc = connect_file(db, mode, err);
	if (!rc) {
		sqlite3_busy_timeout(db->h, 10000);
		/* Check the version before anything that writes (journal_mode = WAL
		 * rewrites the header): a newer database is left byte for byte as it was. */
		rc = user_version(db, v, err);
	}
	if (rc) {
		db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int db_open_mode(const char *path, enum db_open_mode mode, struct db **out, struct rt_sb *err)
{
	struct db *db;
	int v = 0;
	int rc = connect_version(path, mode, &db, &v, err);
	if (rc)
		return rc;
	if (mode == DB_OPEN_READONLY) {
		if (v == db_schema_version) {
			*out = db;
			return 0;
		}
		/* An older file: migrate it once, then read it read-only. */
		db_close(db);
		if ((rc = db_open_mode(path, DB_OPEN_EXISTING, &db, err)))
			return rc;
		db_close(db);
		return connect_version(path, mode, out, &v, err);
	}
	rc = db_exec(db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; "
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

int db_open(const char *path, struct db **out, struct rt_sb *err)
{
	return db_open_mode(path, DB_OPEN_CREATE, out, err);
}

void db_close(struct db *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].stmt);
	free(db->cache);
	if (db->h)
		sqlite3_close(db->h);
	free(db->path);
	free(db);
}
