/*
 * db_tool: what the db shell tests need from SQLite without the sqlite3 CLI
 * (CI may not have it).
 *   db_tool load DB FILE.sql          create/migrate DB, run FILE in one transaction
 *   db_tool set-version DB N          PRAGMA user_version = N (raw API, no migration)
 *   db_tool query DB SQL              print each row, columns joined by '|'
 *   db_tool hammer DB CAMPAIGN SEQ0 N M PAUSE_MS
 *                                     N iterations from seq SEQ0, M measurements each,
 *                                     one BEGIN IMMEDIATE transaction per iteration,
 *                                     PAUSE_MS between transactions
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/db_int.h"

static int die(const char *what, struct rt_sb *err)
{
	fprintf(stderr, "db_tool: %s: %s\n", what, err ? err->buf : "");
	return 3;
}

static int load(const char *path, const char *file)
{
	struct rt_sb err = RT_SB_INIT;
	struct db *db;
	char *sql;
	size_t len;
	if (db_open(path, &db, &err))
		return die("open", &err);
	if (rt_read_file(file, &sql, &len, &err))
		return die("read", &err);
	char *msg = NULL;
	int rc = 0;
	if (db_begin(db, &err) ||
	    sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "db_tool: load %s: %s\n", file, msg ? msg : err.buf);
		db_rollback(db);
		rc = 3;
	} else if (db_commit(db, &err)) {
		rc = die("commit", &err);
	}
	sqlite3_free(msg);
	free(sql);
	db_close(db);
	rt_sb_release(&err);
	return rc;
}

static int set_version(const char *path, int v)
{
	sqlite3 *h;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return die("open", NULL);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	int rc = sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : 3;
	sqlite3_close(h);
	return rc;
}

static int query(const char *path, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return die("open", NULL);
	sqlite3_busy_timeout(h, 10000);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "db_tool: query: %s\n", sqlite3_errmsg(h));
		sqlite3_close(h);
		return 3;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *s = sqlite3_column_text(st, i);
			printf("%s%s", i ? "|" : "", s ? (const char *)s : "");
		}
		putchar('\n');
	}
	int ret = rc == SQLITE_DONE ? 0 : 3;
	if (ret)
		fprintf(stderr, "db_tool: query: %s\n", sqlite3_errmsg(h));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return ret;
}

static int hammer(const char *path, long camp, int seq0, int n, int m, int pause_ms)
{
	struct rt_sb err = RT_SB_INIT;
	struct db *db;
	if (db_open(path, &db, &err))
		return die("open", &err);
	for (int i = 0; i < n; i++) {
		int64_t id;
		if (db_begin(db, &err))
			return die("begin", &err);
		if (db_iteration_create(db, camp, seq0 + i, 0, "hammer", "env", "+ X=1", NULL, NULL,
					NULL, DB_ROLE_CHANGE, &id, &err))
			return die("iteration", &err);
		for (int k = 0; k < m; k++)
			if (db_measure_add(db, id, k % 2 ? "best" : "cand", "decode", "tok_s", k / 2,
					   800.0 + k, "tok/s", &err))
				return die("measurement", &err);
		if (db_commit(db, &err))
			return die("commit", &err);
		rt_sleep_ns((int64_t)pause_ms * 1000000);
	}
	db_close(db);
	printf("hammer: %d iterations, %d measurements\n", n, n * m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "load"))
		return load(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "set-version"))
		return set_version(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "query"))
		return query(argv[2], argv[3]);
	if (argc == 8 && !strcmp(argv[1], "hammer"))
		return hammer(argv[2], atol(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]),
			      atoi(argv[7]));
	fprintf(stderr, "usage: db_tool load DB FILE | set-version DB N | query DB SQL | "
			"hammer DB CAMPAIGN SEQ0 N M PAUSE_MS\n");
	return 2;
}
