/*
 * Test helper for the report tests: create a fresh store (db_open runs the
 * schema) and load tests/fixtures/report_campaign.sql into it with
 * sqlite3_exec, without the db write API. Header-only so every report test
 * and the fixture tool share it.
 */
#ifndef REP_FIXTURE_H
#define REP_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/db_int.h" /* db_sqlite: the fixture loads SQL directly */

/* Open path (must not exist) and load the fixture from $RATCHET_SRC (or the
 * source root compiled in); NULL with a message on stderr on failure. */
static inline struct db *rep_fixture_open(const char *path)
{
	const char *src = getenv("RATCHET_SRC");
	char sqlpath[4096];
	snprintf(sqlpath, sizeof(sqlpath), "%s/tests/fixtures/report_campaign.sql",
		 src && *src ? src : REP_SRC_DIR);
	struct rt_sb err = RT_SB_INIT;
	struct db *db = NULL;
	char *sql = NULL;
	size_t len;
	if (db_open(path, &db, &err) || rt_read_file(sqlpath, &sql, &len, &err)) {
		fprintf(stderr, "fixture: %s\n", err.buf);
		rt_sb_release(&err);
		db_close(db);
		return NULL;
	}
	char *msg = NULL;
	if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "fixture: %s: %s\n", sqlpath, msg ? msg : "?");
		sqlite3_free(msg);
		free(sql);
		db_close(db);
		return NULL;
	}
	free(sql);
	return db;
}

#endif
