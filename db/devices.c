/*
 * The statements of the device_peaks table (see db/devices.h).
 */
#include "db/devices.h"

int db_device_peak_add(struct db *db, const char *backend, const char *device_id,
		       const char *device_name, const char *kind, double value, struct rt_sb *err)
{
	static const char sql[] =
		"INSERT INTO device_peaks (backend, device_id, device_name, kind, value, measured_at) "
		"VALUES (?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_text(st, 1, backend, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, device_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, device_name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 5, value);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_fail(db, err, "device_peaks insert");
	sqlite3_reset(st);
	return rc;
}

int db_device_peak_get(struct db *db, const char *backend, const char *device_id,
		       const char *kind, double *value, struct rt_sb *err)
{
	static const char sql[] =
		"SELECT value FROM device_peaks WHERE backend = ? AND device_id = ? AND kind = ? "
		"ORDER BY measured_at DESC, id DESC LIMIT 1";
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_text(st, 1, backend, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, device_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
	int s = sqlite3_step(st);
	int rc = 0;
	if (s == SQLITE_ROW)
		*value = sqlite3_column_double(st, 0);
	else if (s == SQLITE_DONE)
		rc = RT_ENOENT;
	else
		rc = db_fail(db, err, "device_peaks select");
	sqlite3_reset(st);
	return rc;
}
