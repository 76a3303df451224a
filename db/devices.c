/*
 * The device_peaks table: the measured ceilings of each device (see
 * db/devices.h). Rows are appended; readers take the newest.
 */
#include "db/devices.h"
#include "db/db_int.h"

int db_device_peak_add(struct db *db, const char *backend, const char *device_id,
		       const char *device_name, const char *kind, double value, struct rt_sb *err)
{
	static const char sql[] =
		"INSERT INTO device_peaks (backend, device_id, device_name, kind, value, measured_at) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, backend);
	db_bind_text(st, 2, device_id);
	db_bind_text(st, 3, device_name);
	db_bind_text(st, 4, kind);
	db_bind_real(st, 5, value);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	return db_step_done(db, st, err, "insert into device_peaks");
}

int db_device_peak_get(struct db *db, const char *backend, const char *device_id,
		       const char *kind, double *value, struct rt_sb *err)
{
	static const char sql[] =
		"SELECT value FROM device_peaks WHERE backend = ?1 AND device_id = ?2 AND kind = ?3 "
		"ORDER BY measured_at DESC, id DESC LIMIT 1";
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, backend);
	db_bind_text(st, 2, device_id);
	db_bind_text(st, 3, kind);
	int rc = db_step_row(db, st, err, "read device_peaks");
	if (!rc) {
		*value = sqlite3_column_double(st, 0);
		sqlite3_reset(st);
	}
	return rc;
}
