/* The findings table: results of the research side (see db/findings.h). */
#include "db/findings.h"
#include "db/db_int.h"

int db_finding_add(struct db *db, int64_t campaign_id, const char *kind, const char *subject,
		   const char *detail, double potential, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO findings (campaign_id, kind, subject, detail, potential, created_at) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_text(st, 2, kind);
	db_bind_text(st, 3, subject);
	db_bind_text(st, 4, detail);
	db_bind_real(st, 5, potential);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	return db_step_done(db, st, err, "insert into findings");
}
