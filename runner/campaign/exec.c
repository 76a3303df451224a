/*
 * The executor seam of the campaign (see exec.h): the local executor, which
 * is today's behaviour and does nothing, and camp_measure, one measurement
 * wrapped in the executor's begin and end with one retry of a sample whose
 * step was killed from outside.
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <stdlib.h>

static int local_open(struct camp *c, struct camp_exec *x, struct rt_sb *err)
{
	(void)c, (void)x, (void)err;
	return 0;
}

static int local_begin(struct camp *c, struct camp_exec *x, struct rt_sb *err)
{
	(void)c, (void)x, (void)err;
	return 0;
}

static int local_end(struct camp *c, struct camp_exec *x, int64_t iter, int arm, int rep, int mrc,
		     enum camp_exec_verdict *v, struct rt_sb *why)
{
	(void)c, (void)x, (void)iter, (void)arm, (void)rep, (void)mrc, (void)why;
	*v = CAMP_EXEC_OK;
	return 0;
}

static const char *local_host(struct camp_exec *x, const char *host)
{
	(void)x;
	return host;
}

static void local_close(struct camp *c, struct camp_exec *x)
{
	(void)c, (void)x;
}

const struct camp_exec_ops camp_exec_local = {
	"local", local_open, local_begin, local_end, local_host, NULL, NULL, local_close,
};

/* By the spec's executor kind (enum spec_exec_kind). */
static const struct camp_exec_ops *const exec_kinds[] = {
	[SPEC_EXEC_LOCAL] = &camp_exec_local,
	[SPEC_EXEC_SLURM] = &camp_exec_slurm,
};

int camp_exec_open(struct camp *c, struct rt_sb *err)
{
	c->exec = xcalloc(1, sizeof(*c->exec));
	c->exec->ops = exec_kinds[c->s->exec.kind];
	c->exec->camp = c;
	return c->exec->ops->open(c, c->exec, err);
}

void camp_exec_free(struct camp *c)
{
	if (!c->exec)
		return;
	c->exec->ops->close(c, c->exec);
	free(c->exec);
	c->exec = NULL;
}

const char *camp_exec_engine_host(struct camp *c, const char *host)
{
	return c->exec && c->exec->in_sample ? c->exec->ops->engine_host(c->exec, host) : host;
}

int (*camp_exec_prove_engine(struct camp *c))(void *arg, struct rt_sb *err)
{
	return c->exec && c->exec->in_sample ? c->exec->ops->prove_engine : NULL;
}

bool camp_exec_sample_scoped(const struct camp *c)
{
	return c->exec && c->exec->ops != &camp_exec_local;
}

void camp_exec_engine_stopping(struct camp *c)
{
	if (c->exec && c->exec->in_sample && c->exec->ops->engine_stopping)
		c->exec->ops->engine_stopping(c->exec);
}

/* A sample whose step was killed from outside is measured again, once: the
 * kill says nothing about the change (a time limit, a preemption, a failed
 * node, an operator's scancel). A second kill fails the measurement, and
 * with it the iteration, with Slurm's reason; the campaign goes on. */
#define KILLED_RETRIES 1

int camp_measure(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		 struct series **ser, size_t *nser, struct rt_sb *err)
{
	struct camp_exec *x = c->exec;
	for (int attempt = 0;; attempt++) {
		if (!x)
			return camp_measure_once(c, iter, arm, rep, cfg, ser, nser, err);
		size_t mark = err->len;
		int rc = x->ops->sample_begin(c, x, err);
		if (rc)
			return rc == RT_EDB ? camp_fatal(c, rc) : rc;
		x->in_sample = true;
		rc = camp_measure_once(c, iter, arm, rep, cfg, ser, nser, err);
		x->in_sample = false;
		enum camp_exec_verdict v = CAMP_EXEC_OK;
		struct rt_sb why = RT_SB_INIT;
		int erc = x->ops->sample_end(c, x, iter, arm, rep, rc, &v, &why);
		if (erc) {
			rt_errf(err, 0, "%s%s", err->len ? "; " : "", why.buf);
			rt_sb_release(&why);
			return camp_fatal(c, erc);
		}
		if (!rc || v != CAMP_EXEC_KILLED) {
			rt_sb_release(&why);
			return rc;
		}
		if (attempt >= KILLED_RETRIES || camp_stop_requested || c->fatal) {
			rt_errf(err, 0, "; %s", why.buf);
			rt_sb_release(&why);
			return rc;
		}
		char *msg = xasprintf("slurm: %s; the sample is measured again", why.buf);
		rep_progress_msg(&c->prog, msg);
		free(msg);
		rt_sb_release(&why);
		err->len = mark; /* the retry's words replace the killed sample's */
		if (err->buf)
			err->buf[mark] = 0;
	}
}
