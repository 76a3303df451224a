/*
 * Executors: where a measurement's processes (the command benchmark's argv
 * and the engine's) run. An ops table with two implementations:
 *   - local (exec.c): today's behaviour, everything on this host;
 *   - slurm (exec_slurm.c): the runner stays where it was started, holds an
 *     allocation (a holding job from `sbatch --parsable`) and runs each
 *     process as a job step, `srun --jobid=J --overlap -n1 ... ratchet
 *     __step DIR -- ARGV`, through the launcher seam of rt_spawn
 *     (runner/base/proc.h). Jobs and steps are journaled (db/slurm.h).
 * camp_measure (exec.c) wraps one measurement (measure.c's
 * camp_measure_once) in the executor's begin and end, and re-measures a
 * sample once when the executor says a step of it was killed from outside
 * (scancel, time limit, preemption, node failure); see docs/scale.md.
 */
#ifndef RT_CAMP_EXEC_H
#define RT_CAMP_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "runner/base/rt.h"

struct camp;
struct camp_exec;

/* What the end of a sample found. */
enum camp_exec_verdict {
	CAMP_EXEC_OK,     /* nothing of the executor's: the measurement's rc stands */
	CAMP_EXEC_KILLED, /* a step was killed from outside: the sample may be retried */
};

struct camp_exec_ops {
	const char *name; /* the spec's executor kind */
	/* Obtain the allocation, or (c->o->resume) re-attach to the campaign's
	 * job still running and cancel the ones left behind. RT_EPROC when a
	 * Slurm command failed, RT_EDB, RT_EINTR when stopped while waiting. */
	int (*open)(struct camp *c, struct camp_exec *x, struct rt_sb *err);
	/* Before a measurement: arm the launcher (obtaining a new allocation
	 * first when the last one ended). RT_EPROC when there is none to run
	 * on: the sample fails; RT_EDB. */
	int (*sample_begin)(struct camp *c, struct camp_exec *x, struct rt_sb *err);
	/* After it (mrc: what the measurement returned; RT_ETIMEDOUT means the
	 * runner itself stopped a benchmark): disarm, journal its steps
	 * (iteration, arm, rep), and say whether one was killed from outside
	 * (reason appended to why). RT_EDB when the journal failed. */
	int (*sample_end)(struct camp *c, struct camp_exec *x, int64_t iter, int arm, int rep, int mrc,
			  enum camp_exec_verdict *v, struct rt_sb *why);
	/* The address an engine on the allocation is reached at (host: the
	 * spec's). The returned string lives as long as x. */
	const char *(*engine_host)(struct camp_exec *x, const char *host);
	/* Prove the engine's process where /proc cannot (run_engine_cfg's
	 * prove_owner; arg is the struct camp_exec *), or NULL: the local
	 * /proc check. 0 or RT_EIDENTITY. */
	int (*prove_engine)(void *arg, struct rt_sb *err);
	/* The runner is about to stop the engine: a step of it ending now is
	 * stopped, not killed from outside (srun ends a step it is told to
	 * stop with SIGKILL, so the step never writes its end record). NULL:
	 * nothing to note. */
	void (*engine_stopping)(struct camp_exec *x);
	/* Release the allocation (scancel) and free the state. Never fails;
	 * problems are warnings. */
	void (*close)(struct camp *c, struct camp_exec *x);
};

/* An executor: its ops and their state. */
struct camp_exec {
	const struct camp_exec_ops *ops; /* local or slurm */
	void *state;                     /* the implementation's, or NULL */
	struct camp *camp;               /* the campaign it serves */
	bool in_sample;                  /* inside camp_measure: processes started now are the executor's */
};

extern const struct camp_exec_ops camp_exec_local;
extern const struct camp_exec_ops camp_exec_slurm;

/* The executor the spec asks for, opened (c->exec set). */
int camp_exec_open(struct camp *c, struct rt_sb *err);
/* Close and free c->exec (NULL is fine). */
void camp_exec_free(struct camp *c);
/* The executor's engine proof for run_engine_cfg.prove_owner (NULL: local
 * /proc, and always outside a measurement: the gate's engine runs here). */
int (*camp_exec_prove_engine(struct camp *c))(void *arg, struct rt_sb *err);
/* Whether the executor's processes live no longer than one sample (Slurm
 * job steps): the engine pool then stops every engine after its sample. */
bool camp_exec_sample_scoped(const struct camp *c);
/* Note that the runner stops the engine now (exec ops engine_stopping). */
void camp_exec_engine_stopping(struct camp *c);
/* The engine's host under the executor (the spec's host when local or
 * outside a measurement). */
const char *camp_exec_engine_host(struct camp *c, const char *host);

#endif
