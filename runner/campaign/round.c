/*
 * The local device pool (`devices:` or `ratchet run --devices`): rounds.
 *
 * The pool's runner of the one scheduling loop (loop.c, camp_runner_pool).
 * Concurrency design. The runner stays one process that proposes, journals
 * and decides serially; measurements run in worker processes, one per
 * device (workers.c):
 *   1. the proposer table (propose.c; agents/batch.c) proposes up to N trials
 *      against the same best (N devices; fewer when the iteration budget
 *      says so); a proposal that keeps (greedy's confirmation, the
 *      confirmation of a list or space round's winner) comes alone;
 *   2. each proposal gets the next seq and a device; the runner starts one
 *      worker per proposal, a fresh `ratchet run --pool-worker` process that
 *      pins its device, opens its own SQLite connection (WAL mode and a busy
 *      timeout make concurrent writers safe: db/open.c), and runs that one
 *      iteration from plan to record, both arms interleaved on its device,
 *      deciding with the noise of the iterations before the round as its
 *      prior (never a sibling's, which would make it depend on timing);
 *   3. the runner waits for every worker of the round, reports the round,
 *      and only then asks the strategy again: the next round's proposals see
 *      every decision of this one (the history is rebuilt from the store).
 * A trial is decided and reverted (passed recorded) by its worker; the
 * round's winner is confirmed by a later round of one, which keeps it. So a
 * serial run (one device) and a parallel run make the same decisions on a
 * deterministic benchmark: greedy's rounds never depend on N; a list or
 * space round does (the batch is the round; a space strategy's points are
 * trials, the round's best confirmed like list's), and a campaign resumed with
 * another number of devices keeps the rounds already recorded.
 *
 * Files. Trials of a round of more than one that touch files (table,
 * patch, file changes) each run in a working copy of the workdir,
 * <database>.pool/<worker>/, emptied and refilled from the workdir (which
 * holds the best configuration) before the round; the worker loads the
 * spec from its copy, so every relative path, {workdir} and the engine's
 * folder are the copy's. Journaled like any change, a copy is recovered by
 * --resume like the workdir. Where a copy cannot hold the change (the spec
 * lives outside its workdir, or the change touches a path outside it), the
 * run is refused with the variant and the path. Kept changes (rounds of
 * one) are made in the workdir itself.
 *
 * Crash safety. Workers die with the runner (PR_SET_PDEATHSIG); every
 * worker records its engine's process group (fact engine.pgid) before it
 * waits for it, so `--resume` stops every worker's engine; the iterations a
 * killed round left running become interrupted and are proposed again.
 */
#include "runner/campaign/campaign_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/base/cancel.h"

/* One worker of a round. */
struct worker {
	pid_t pid;               /* its process, 0 once reaped */
	int seq;                 /* the iteration it runs */
	bool started;            /* its process was started */
	const char *device;      /* its device's name (borrowed) */
	char *arg;               /* --pool-worker's value (owned) */
	char *spec;              /* the spec it loads: the workdir's or its copy's (owned) */
	const char *note;        /* the strategy's note (borrowed) */
	const char *state;       /* the strategy's state after the step, JSON (borrowed) */
	int status;              /* waitpid's status */
};

static char *spec_in_workdir(const struct spec *s);
static int copy_can_hold(struct camp *c, const struct var_def *v, const char *rel_spec, struct rt_sb *err);

/* What a pool can not do, said before anything is measured: the refusals
 * that remain (every strategy runs on a pool). */
static int pool_check(struct camp *c, struct rt_sb *err)
{
	const struct spec *s = c->s;
	if (s->exec.kind != SPEC_EXEC_LOCAL)
		return rt_errf(err, RT_EUSAGE, "devices: a local device pool runs with executor: local only "
			       "(with executor: slurm, Slurm gives each step its GPUs: docs/scale.md)");
	if (s->n_devices > 1 && s->engine.present && s->engine.port)
		return rt_errf(err, RT_EUSAGE, "devices: each worker's engine needs a port of its own: remove "
			       "engine.port (%d) so that each picks a free one, and write {port} in its command",
			       s->engine.port);
	/* Every change a round of several could hold (the spec's own variants;
	 * a generated one is checked when it is proposed). */
	char *rel = s->n_devices > 1 ? spec_in_workdir(s) : NULL;
	int rc = 0;
	for (size_t v = 0; !rc && s->n_devices > 1 && v < s->n_variants; v++)
		if (camp_touches_files(&s->variants[v]))
			rc = copy_can_hold((struct camp *)c, &s->variants[v], rel, err);
	free(rel);
	return rc;
}

/* The spec's path relative to the workdir (owned), or NULL when it lives elsewhere. */
static char *spec_in_workdir(const struct spec *s)
{
	char *abs = realpath(s->path, NULL);
	size_t n = strlen(s->workdir);
	char *rel = abs && !strncmp(abs, s->workdir, n) && abs[n] == '/' ? xstrdup(abs + n + 1) : NULL;
	free(abs);
	return rel;
}

/* Can a working copy hold variant v? Its planned files must be in the workdir. */
static int copy_can_hold(struct camp *c, const struct var_def *v, const char *rel_spec, struct rt_sb *err)
{
	if (!rel_spec)
		return rt_errf(err, RT_EUSAGE, "devices: variant '%s' changes files, and a worker's working copy "
			       "of the workdir %s cannot hold the spec %s (outside it): put the spec in its workdir, "
			       "or run without devices:", v->name, c->s->workdir, c->s->path);
	struct var_ctx x;
	struct var_plan pl = { 0 };
	camp_var_ctx(c, &c->cfg, &x);
	int rc = var_ops_for(v->kind)->plan(v, &x, &pl, err);
	size_t n = strlen(c->s->workdir);
	char *wd = realpath(c->s->workdir, NULL);
	for (size_t i = 0; !rc && i < pl.n; i++) {
		/* The path as written, and the file it reaches through links. */
		char *real = realpath(pl.files[i].path, NULL);
		size_t nw = wd ? strlen(wd) : 0;
		bool out = strncmp(pl.files[i].path, c->s->workdir, n) || pl.files[i].path[n] != '/' ||
			   (real && wd && (strncmp(real, wd, nw) || real[nw] != '/'));
		bool link = real && strcmp(real, pl.files[i].path);
		if (out)
			rc = rt_errf(err, RT_EUSAGE, "devices: variant '%s' changes %s%s%s%s, outside the workdir %s: "
				     "a worker's working copy cannot hold it, and workers sharing one file would "
				     "measure each other's changes; run it without devices:", v->name,
				     pl.files[i].path, link ? " (a link to " : "", link ? real : "", link ? ")" : "",
				     c->s->workdir);
		free(real);
	}
	free(wd);
	var_plan_release(&pl);
	return rc;
}

static void worker_exec(const struct camp *c, const struct worker *w, pid_t runner)
{
	/* A worker never outlives the runner: kill -9 of the runner stops it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != runner)
		_exit(127);
	setenv("RATCHET_POOL_NOTE", w->note ? w->note : "", 1);
	setenv("RATCHET_POOL_STATE", w->state ? w->state : "", 1);
	const char *argv[12];
	size_t k = 0;
	argv[k++] = "ratchet";
	argv[k++] = "--db";
	argv[k++] = db_path(c->db);
	argv[k++] = "run";
	argv[k++] = "--quiet";
	if (c->o->api_key_env) {
		argv[k++] = "--api-key-env";
		argv[k++] = c->o->api_key_env;
	}
	argv[k++] = "--pool-worker";
	argv[k++] = w->arg;
	argv[k++] = w->spec;
	argv[k] = NULL;
	execv("/proc/self/exe", (char *const *)argv);
	_exit(127);
}

/* Wait for every worker; a second signal (rt_cancelled) is passed on once. */
static void wait_all(struct worker *w, size_t n)
{
	bool passed = false;
	for (size_t left = n; left;) {
		if (rt_cancelled() && !passed) {
			for (size_t i = 0; i < n; i++)
				if (w[i].pid)
					kill(w[i].pid, SIGTERM);
			passed = true;
		}
		int st;
		pid_t p = waitpid(-1, &st, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (w[i].pid == p) {
				w[i].status = st;
				w[i].pid = 0;
				left--;
			}
	}
}

/* One line per iteration of the round, from the store. */
static void report(struct camp *c, int round, const struct worker *w, size_t n)
{
	if (c->o->quiet)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!w[i].started)
			continue;
		struct db_iteration it;
		memset(&it, 0, sizeof(it));
		if (db_iteration_get_seq(c->db, c->cid, w[i].seq, &it, NULL))
			continue;
		char *msg = xasprintf("round %d, %s: #%d %s (%s) %s%s%s", round, w[i].device, it.seq, it.variant,
				      db_iter_role_name(it.role), db_iter_state_name(it.state),
				      it.reason ? ": " : "", it.reason ? it.reason : "");
		rep_progress_msg(&c->prog, msg);
		free(msg);
		db_iteration_release(&it);
	}
}

/* Run one round: p[i] (NULL: the baseline) on device i, concurrently. */
static int run_round(struct camp *c, int round, const struct agent_proposal *p, size_t n, struct rt_sb *err)
{
	const struct spec *s = c->s;
	char *rel = spec_in_workdir(s);
	char *db = realpath(db_path(c->db), NULL);
	struct worker *w = xcalloc(n, sizeof(*w));
	char *names = xcalloc(n, 32);
	int rc = db ? 0 : rt_errf(err, RT_EIO, "%s: %s", db_path(c->db), strerror(errno));
	for (size_t i = 0; i < n && !rc; i++) {
		char *dev = names + 32 * i;
		spec_device_name(&s->devices[i], dev, 32);
		w[i].seq = c->seq + (int)i;
		w[i].device = dev;
		w[i].note = p ? p[i].note : "baseline";
		w[i].state = p ? p[i].state : NULL;
		/* A space point travels as its target and code: the worker
		 * generates the same variant from its own spec (space.c). */
		if (p && p[i].point)
			w[i].arg = xasprintf("%lld/%d/%d/%d/%s/p:%zu:%llu,%s,%.17g", (long long)c->cid, w[i].seq,
					     c->seq, round, dev, p[i].target, (unsigned long long)p[i].code,
					     db_iter_role_name(p[i].role), p[i].fidelity);
		else if (p)
			w[i].arg = xasprintf("%lld/%d/%d/%d/%s/%zu,%s,%.17g", (long long)c->cid, w[i].seq, c->seq,
					     round, dev, p[i].variant, db_iter_role_name(p[i].role), p[i].fidelity);
		else
			w[i].arg = xasprintf("%lld/%d/%d/%d/%s/baseline", (long long)c->cid, w[i].seq, c->seq, round,
					     dev);
		struct camp_gen *gen = NULL;
		if (p)
			rc = camp_proposer_of(s)->make(c, &p[i], &gen, err);
		const struct var_def *v = !p || rc ? NULL : gen ? &gen->def : &s->variants[p[i].variant];
		if (n > 1 && v && camp_touches_files(v) && !(rc = copy_can_hold(c, v, rel, err))) {
			char *dir = xasprintf("%s.pool/%zu", db, i);
			rc = camp_copy_sync(c, dir, err);
			w[i].spec = xasprintf("%s/%s", dir, rel);
			free(dir);
		} else {
			w[i].spec = xstrdup(s->path);
		}
		camp_gen_free(gen);
	}
	pid_t runner = getpid();
	fflush(NULL);
	for (size_t i = 0; i < n && !rc; i++) {
		pid_t pid = fork();
		if (pid == 0)
			worker_exec(c, &w[i], runner);
		if (pid < 0)
			rc = rt_errf(err, RT_EIO, "start the worker for %s: %s", w[i].device, strerror(errno));
		w[i].pid = pid > 0 ? pid : 0;
		w[i].started = pid > 0;
	}
	wait_all(w, n);
	report(c, round, w, n);
	for (size_t i = 0; i < n; i++) {
		int st = w[i].status;
		bool ok = !w[i].started || (WIFEXITED(st) && WEXITSTATUS(st) == 0);
		if (!ok && !rc && !camp_stop_requested)
			rc = rt_errf(err, RT_EIO, "the worker on %s (iteration %d) %s %d: its iteration is as the "
				     "journal describes", w[i].device, w[i].seq,
				     WIFEXITED(st) ? "exited with" : "was killed by signal",
				     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		free(w[i].arg);
		free(w[i].spec);
	}
	if (!rc && camp_stop_requested)
		rc = RT_EINTR;
	free(names);
	free(w);
	free(db);
	free(rel);
	return rc;
}

/* How many iterations the budget lets this round hold (at least 1 when it allows one). */
static size_t round_room(const struct camp *c, int done)
{
	long room = (long)c->s->n_devices;
	if (c->o->max_iterations && c->o->max_iterations - done < room)
		room = c->o->max_iterations - done;
	if (c->s->max_iterations && c->s->max_iterations - c->seq < room)
		room = c->s->max_iterations - c->seq;
	return room < 1 ? 1 : (size_t)room;
}

/* The baseline is measured by a worker too: the runner never opens a device. */
static int pool_baseline(struct camp *c, struct rt_sb *err)
{
	int rc = run_round(c, 0, NULL, 1, err);
	struct db_iteration it;
	memset(&it, 0, sizeof(it));
	if (!rc && !(rc = db_iteration_get_seq(c->db, c->cid, c->seq, &it, err)) && it.state != DB_ITER_BASELINE)
		rc = rt_errf(err, RT_EPROC, "the baseline on %s was %s: %s", it.device ? it.device : "?",
			     db_iter_state_name(it.state), it.reason ? it.reason : "");
	db_iteration_release(&it);
	return rc;
}

const struct camp_runner camp_runner_pool = { "pool", true, false, pool_check, pool_baseline, round_room, run_round };
