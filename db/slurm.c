/*
 * slurm_jobs and slurm_steps (see db/slurm.h): prepared statements only.
 */
#include "db/db_int.h"
#include "db/slurm.h"

#include <stdlib.h>
#include <string.h>

void db_slurm_job_release(struct db_slurm_job *j)
{
	if (!j)
		return;
	free(j->job_id);
	free(j->node);
	free(j->state);
	memset(j, 0, sizeof(*j));
}

int db_slurm_job_add(struct db *db, int64_t cid, const char *job_id, const char *node, int64_t *row,
		     struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO slurm_jobs (campaign_id, job_id, node, state, created_at) "
		"VALUES (?1, ?2, ?3, 'held', ?4)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, cid);
	db_bind_text(st, 2, job_id);
	db_bind_text(st, 3, node);
	sqlite3_bind_int64(st, 4, rt_wall_ms());
	return db_step_insert(db, st, row, err, "insert slurm_jobs");
}

int db_slurm_job_end(struct db *db, int64_t row, const char *state, const char *reason,
		     struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE slurm_jobs SET state = ?2, reason = ?3, ended_at = ?4 WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, row);
	db_bind_text(st, 2, state);
	db_bind_text(st, 3, reason);
	sqlite3_bind_int64(st, 4, rt_wall_ms());
	return db_step_done(db, st, err, "update slurm_jobs");
}

static void job_read(sqlite3_stmt *st, void *row)
{
	struct db_slurm_job *j = row;
	j->id = sqlite3_column_int64(st, 0);
	j->job_id = db_col_text(st, 1);
	j->node = db_col_text(st, 2);
	j->state = db_col_text(st, 3);
}

static void job_free(void *row)
{
	db_slurm_job_release(row);
}

static const struct db_row_type job_rows = {
	sizeof(struct db_slurm_job), job_read, job_free, "read slurm_jobs",
};

int db_slurm_jobs_held(struct db *db, int64_t cid, struct db_slurm_job **out, size_t *n,
		       struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, job_id, node, state FROM slurm_jobs WHERE campaign_id = ?1 "
		"AND state = 'held' ORDER BY id", err);
	if (st)
		sqlite3_bind_int64(st, 1, cid);
	return db_rows_list(db, st, &job_rows, (void **)out, n, err);
}

int db_slurm_step_add(struct db *db, const struct db_slurm_step *s, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO slurm_steps (job_row, iteration_id, arm, rep, step_id, program, node, pid, "
		"start_ticks, started_at, outcome, reason) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, s->job_row);
	db_bind_id(st, 2, s->iteration_id);
	db_bind_text(st, 3, s->arm);
	sqlite3_bind_int(st, 4, s->rep);
	db_bind_text(st, 5, s->step_id);
	db_bind_text(st, 6, s->program);
	db_bind_text(st, 7, s->node);
	sqlite3_bind_int64(st, 8, s->pid);
	sqlite3_bind_int64(st, 9, s->start_ticks);
	sqlite3_bind_int64(st, 10, s->started_at);
	db_bind_text(st, 11, s->outcome);
	db_bind_text(st, 12, s->reason);
	return db_step_done(db, st, err, "insert slurm_steps");
}

void db_slurm_jobs_free(struct db_slurm_job *v, size_t n)
{
	db_rows_free(&job_rows, v, n);
}
