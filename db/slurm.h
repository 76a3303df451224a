/*
 * The Slurm executor's journal (migration 10): the holding jobs a campaign
 * obtained with sbatch and the steps its measurements ran as, each from the
 * step's own launch record. runner/campaign/exec_slurm.c writes them;
 * `ratchet run --resume` reads the jobs back to re-attach or cancel.
 */
#ifndef RT_DB_SLURM_H
#define RT_DB_SLURM_H

#include <stdint.h>

#include "runner/base/rt.h"

struct db;

/* One row of slurm_jobs. */
struct db_slurm_job {
	int64_t id;      /* row id */
	char *job_id;    /* Slurm's job id */
	char *node;      /* node it holds, or NULL */
	char *state;     /* held | released | cancelled | gone */
};

/* One row of slurm_steps. */
struct db_slurm_step {
	int64_t job_row;            /* slurm_jobs.id */
	int64_t iteration_id;       /* the measurement's iteration, 0: none */
	const char *arm;            /* best | cand, or NULL */
	int rep;                    /* sample number */
	const char *step_id;        /* JOB.STEP */
	const char *program;        /* argv[0] of the step */
	const char *node;           /* where it ran */
	int64_t pid;                /* its pid there */
	int64_t start_ticks;        /* its start time there (clock ticks after boot) */
	int64_t started_at;         /* ms since the epoch */
	const char *outcome;        /* ok | failed | killed | stopped (by the runner) */
	const char *reason;         /* why it was killed, or NULL */
};

void db_slurm_job_release(struct db_slurm_job *j);

/* A new held job of campaign cid; *row its id. RT_EDB. */
int db_slurm_job_add(struct db *db, int64_t cid, const char *job_id, const char *node, int64_t *row,
		     struct rt_sb *err);
/* A job's end: state released, cancelled or gone, reason may be NULL. RT_EDB. */
int db_slurm_job_end(struct db *db, int64_t row, const char *state, const char *reason,
		     struct rt_sb *err);
/* Campaign cid's jobs still marked held, oldest first (the caller frees
 * them with db_slurm_jobs_free). RT_EDB. */
int db_slurm_jobs_held(struct db *db, int64_t cid, struct db_slurm_job **out, size_t *n,
		       struct rt_sb *err);
void db_slurm_jobs_free(struct db_slurm_job *v, size_t n);
/* Record one step. RT_EDB. */
int db_slurm_step_add(struct db *db, const struct db_slurm_step *s, struct rt_sb *err);

#endif
