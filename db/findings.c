/* The findings table (see findings.h). */
#include "db/findings.h"

int db_finding_add(struct db *db, int64_t campaign_id, const char *kind, const char *subject,
		   const char *detail, double potential, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO findings (campaign_id, kind, subject, detail, potential, created_at) "
		"VALUES (?, ?, ?, ?, ?, ?)", err);
	if (!st)
		return RT_EDB;
	if (campaign_id)
		sqlite3_bind_int64(st, 1, campaign_id);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, subject, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, detail, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 5, potential);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, err, "add finding");
	sqlite3_reset(st);
	return rc;
}
