/* The launches table: engine launches and their provenance (see db/launches.h). */
#include "db/launches.h"
#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

int db_launch_add(struct db *db, const struct db_launch *l, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO launches (campaign_id, iteration_id, arm, pgid, port, ready_s, version,"
		" exe_path, exe_sha256, image_ref, image_digest, repos, extra, note, differs, created_at, libs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, l->campaign_id);
	db_bind_id(st, 2, l->iteration_id);
	db_bind_text(st, 3, l->arm);
	sqlite3_bind_int64(st, 4, l->pgid);
	sqlite3_bind_int(st, 5, l->port);
	db_bind_real(st, 6, l->ready_s);
	db_bind_text(st, 7, l->version);
	db_bind_text(st, 8, l->exe_path);
	db_bind_text(st, 9, l->exe_sha256);
	db_bind_text(st, 10, l->image_ref);
	db_bind_text(st, 11, l->image_digest);
	db_bind_text(st, 12, l->repos);
	db_bind_text(st, 13, l->extra);
	db_bind_text(st, 14, l->note);
	db_bind_text(st, 15, l->differs);
	sqlite3_bind_int64(st, 16, rt_wall_ms());
	db_bind_text(st, 17, l->libs);
	int64_t rid;
	int rc = db_step_insert(db, st, &rid, err, "insert into launches");
	if (!rc && id)
		*id = rid;
	return rc;
}

#define LAUNCH_COLS                                                                               \
	"id, campaign_id, iteration_id, arm, pgid, port, ready_s, version, exe_path, exe_sha256," \
	" image_ref, image_digest, repos, extra, note, differs, libs"

static void launch_read(sqlite3_stmt *st, void *row)
{
	struct db_launch *l = row;
	l->id = sqlite3_column_int64(st, 0);
	l->campaign_id = sqlite3_column_int64(st, 1);
	l->iteration_id = sqlite3_column_int64(st, 2);
	l->arm = db_col_text(st, 3);
	l->pgid = sqlite3_column_int64(st, 4);
	l->port = sqlite3_column_int(st, 5);
	l->ready_s = db_col_real(st, 6);
	l->version = db_col_text(st, 7);
	l->exe_path = db_col_text(st, 8);
	l->exe_sha256 = db_col_text(st, 9);
	l->image_ref = db_col_text(st, 10);
	l->image_digest = db_col_text(st, 11);
	l->repos = db_col_text(st, 12);
	l->extra = db_col_text(st, 13);
	l->note = db_col_text(st, 14);
	l->differs = db_col_text(st, 15);
	l->libs = db_col_text(st, 16);
}

void db_launch_release(struct db_launch *l)
{
	free(l->arm);
	free(l->version);
	free(l->exe_path);
	free(l->exe_sha256);
	free(l->image_ref);
	free(l->image_digest);
	free(l->repos);
	free(l->extra);
	free(l->note);
	free(l->differs);
	free(l->libs);
	memset(l, 0, sizeof(*l));
}

static void launch_release(void *row)
{
	db_launch_release(row);
}

static const struct db_row_type launch_rows = {
	sizeof(struct db_launch), launch_read, launch_release, "read launches",
};

int db_launch_first(struct db *db, int64_t campaign_id, struct db_launch *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT " LAUNCH_COLS " FROM launches WHERE campaign_id = ?1"
					  " ORDER BY id LIMIT 1", err);
	if (st)
		sqlite3_bind_int64(st, 1, campaign_id);
	return db_row_get(db, st, &launch_rows, out, err);
}

int db_launches_of(struct db *db, int64_t iteration_id, struct db_launch **out, size_t *n,
		   struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT " LAUNCH_COLS " FROM launches WHERE iteration_id = ?1"
					  " ORDER BY id", err);
	if (st)
		sqlite3_bind_int64(st, 1, iteration_id);
	void *v;
	int rc = db_rows_list(db, st, &launch_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_launches_free(struct db_launch *v, size_t n)
{
	db_rows_free(&launch_rows, v, n);
}
