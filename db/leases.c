/*
 * A campaign's lease: the owner columns of its campaigns row (migration 3).
 * The runner holding it is named by a token of its own, its pid and host;
 * it renews heartbeat_at while it runs. Taking, renewing and dropping are
 * each one conditional UPDATE on the token, so two runners can never both
 * believe they hold it. When a lease is live is the campaign's decision
 * (runner/campaign/lease.c), not the store's.
 */
#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

void db_lease_release(struct db_lease *l)
{
	if (!l)
		return;
	free(l->token);
	free(l->host);
	memset(l, 0, sizeof(*l));
}

static void lease_read(sqlite3_stmt *st, void *row)
{
	struct db_lease *l = row;
	l->token = db_col_text(st, 0);
	l->pid = sqlite3_column_int64(st, 1);
	l->host = db_col_text(st, 2);
	l->since = sqlite3_column_int64(st, 3);
	l->heartbeat_at = sqlite3_column_int64(st, 4);
}

static void lease_free(void *row)
{
	db_lease_release(row);
}

static const struct db_row_type lease_rows = {
	sizeof(struct db_lease), lease_read, lease_free, "read campaigns (owner)",
};

int db_lease_get(struct db *db, int64_t id, struct db_lease *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = db_prepare(db,
		"SELECT owner_token, owner_pid, owner_host, owner_since, heartbeat_at "
		"FROM campaigns WHERE id = ?1", err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	int rc = db_row_get(db, st, &lease_rows, out, err);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no campaign %lld", (long long)id);
	return rc;
}

int db_lease_take(struct db *db, int64_t id, const char *expect, const char *token, int64_t pid,
		  const char *host, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE campaigns SET owner_token = ?3, owner_pid = ?4, owner_host = ?5, "
		"owner_since = ?6, heartbeat_at = ?6 WHERE id = ?1 AND owner_token IS ?2", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, expect);
	db_bind_text(st, 3, token);
	sqlite3_bind_int64(st, 4, pid);
	db_bind_text(st, 5, host);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	int rc = db_step_done(db, st, err, "update campaigns (take the lease)");
	if (!rc && db_changes(db) == 0)
		rc = rt_errf(err, RT_EBUSY, "campaign %lld: another runner took its lease meanwhile",
			     (long long)id);
	return rc;
}

int db_lease_renew(struct db *db, int64_t id, const char *token, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE campaigns SET heartbeat_at = ?3 WHERE id = ?1 AND owner_token = ?2", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, token);
	sqlite3_bind_int64(st, 3, rt_wall_ms());
	int rc = db_step_done(db, st, err, "update campaigns (heartbeat)");
	return !rc && db_changes(db) == 0 ? RT_ENOENT : rc;
}

int db_lease_drop(struct db *db, int64_t id, const char *token, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE campaigns SET owner_token = NULL, owner_pid = NULL, owner_host = NULL, "
		"owner_since = NULL, heartbeat_at = NULL WHERE id = ?1 AND owner_token = ?2", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, token);
	return db_step_done(db, st, err, "update campaigns (drop the lease)");
}
