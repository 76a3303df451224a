/*
 * The Slurm executor (see exec.h and docs/scale.md). The runner stays where
 * it was started and uses the real Slurm commands, never a scheduler of its
 * own:
 *   - sbatch --parsable: a holding job (`--wrap "exec sleep infinity"`, the
 *     spec's partition, account, gres, time and extra options) is the
 *     allocation; its id and node go into slurm_jobs;
 *   - srun --jobid=J --overlap -n1 -N1 ... ratchet __step DIR -- ARGV: every
 *     benchmark and engine of a measurement is a job step (the launcher
 *     prefix of rt_spawn is armed for the measurement only, so git and
 *     build commands still run here); each step's launch record (cmd_step.c)
 *     goes into slurm_steps;
 *   - squeue: the job's state and its steps; after each sample a step still
 *     running is cancelled, so nothing outlives its measurement;
 *   - scancel: the job at the end, orphans on --resume;
 *   - sacct, else scontrol show step / show job (a cluster without
 *     accounting storage): why a step was killed.
 * Followed: Slurm 22.05 (Debian 12's slurm-wlm), sbatch(1), srun(1),
 * squeue(1), scancel(1), sacct(1), scontrol(1).
 */
#define _GNU_SOURCE
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/slurm.h"
#include "runner/base/proc.h"
#include "runner/bench/bench_cmd.h"

#define CMD_TIMEOUT_S 60.0 /* one Slurm command */

/* The executor's state. */
struct slurm {
	char *job;            /* the held job's id, or NULL */
	int64_t row;          /* its slurm_jobs row */
	char *node;           /* its node */
	char *dir;            /* where the steps write their launch records */
	struct rt_strv pre;   /* the launcher prefix (srun ... ratchet __step DIR --) */
	struct rt_sb stopping; /* steps running when the runner stopped the engine, one a line */
};

/* Run a Slurm command (argv, no shell); its stdout in out. RT_EPROC with
 * its stderr when it could not run or exited non-zero. */
static int slurm_run(char *const *argv, struct rt_sb *out, struct rt_sb *err)
{
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 1u << 20);
	int rc = run_bcmd_exec(argv, NULL, 0, NULL, CMD_TIMEOUT_S, &r, err);
	if (!rc && (r.timed_out || r.status)) {
		rt_sb_trim(&r.err);
		rc = rt_errf(err, RT_EPROC, "%s: %s", argv[0],
			     r.timed_out ? "timed out" : r.err.len ? "" : "failed without a message");
		rt_sb_add(err, r.err.buf, r.err.len);
	}
	if (!rc && out) {
		rt_sb_add(out, r.out.buf, r.out.len);
		rt_sb_trim(out);
	}
	run_bcmd_result_release(&r);
	return rc;
}

/* squeue's one field (fmt, e.g. "%T") for job; "" when squeue no longer
 * knows it. */
static void job_field(const char *job, const char *fmt, struct rt_sb *out)
{
	char *argv[] = { "squeue", "-h", "-j", (char *)job, "-o", (char *)fmt, NULL };
	struct rt_sb err = RT_SB_INIT;
	if (slurm_run(argv, out, &err))
		rt_sb_reset(out);
	rt_sb_release(&err);
}

static bool job_alive(const char *job)
{
	struct rt_sb st = RT_SB_INIT;
	job_field(job, "%T", &st);
	bool alive = !strcmp(st.buf ? st.buf : "", "RUNNING") || !strcmp(st.buf ? st.buf : "", "PENDING");
	rt_sb_release(&st);
	return alive;
}

static int scancel(const char *id, struct rt_sb *err)
{
	char *argv[] = { "scancel", (char *)id, NULL };
	return slurm_run(argv, NULL, err);
}

/* Cancel every step of job that still runs (J.0, J.1, ...; not the batch
 * script or extern step). Returns how many. */
static int cancel_steps(const char *job)
{
	char *argv[] = { "squeue", "-h", "-s", "-j", (char *)job, "-o", "%i", NULL };
	struct rt_sb out = RT_SB_INIT, err = RT_SB_INIT;
	int n = 0;
	if (!slurm_run(argv, &out, &err) && out.len) {
		char *save = NULL;
		for (char *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			const char *dot = strchr(l, '.');
			if (dot && dot[1] >= '0' && dot[1] <= '9' && !scancel(l, &err))
				n++;
		}
	}
	rt_sb_release(&out);
	rt_sb_release(&err);
	return n;
}

/* The value of KEY= in scontrol's output, up to white space; "" if none. */
static void scontrol_value(const char *text, const char *key, struct rt_sb *out)
{
	rt_sb_reset(out);
	size_t kn = strlen(key);
	for (const char *p = text; p && *p; p++) {
		if ((p == text || p[-1] == ' ' || p[-1] == '\n') && !strncmp(p, key, kn) && p[kn] == '=') {
			const char *v = p + kn + 1;
			rt_sb_add(out, v, strcspn(v, " \n"));
			return;
		}
	}
}

/* Why step (J.S) ended from outside, appended to why: sacct where the
 * cluster keeps accounting; else scontrol, which knows a step only while it
 * runs and a job for MinJobAge after it ends. *job_ended is set when the
 * whole job is gone (time limit, preemption, node failure, scancel). */
static void step_reason(const char *job, const char *step, struct rt_sb *why, bool *job_ended)
{
	struct rt_sb out = RT_SB_INIT, e1 = RT_SB_INIT, e2 = RT_SB_INIT, v = RT_SB_INIT, r = RT_SB_INIT;
	char *sacct[] = { "sacct", "-n", "-P", "-j", (char *)step, "-o", "State,ExitCode", NULL };
	char *sstep[] = { "scontrol", "show", "step", (char *)step, NULL };
	char *sjob[] = { "scontrol", "show", "job", (char *)job, NULL };
	*job_ended = false;
	/* A job ending is COMPLETING for a moment (its epilog): up to 10 s for
	 * its final state (CANCELLED, TIMEOUT, PREEMPTED, NODE_FAIL). */
	for (int i = 0; i < 50; i++) {
		rt_sb_reset(&out);
		rt_sb_reset(&v);
		if (slurm_run(sjob, &out, &e1))
			break;
		scontrol_value(out.buf, "JobState", &v);
		scontrol_value(out.buf, "Reason", &r);
		*job_ended = v.len && strcmp(v.buf, "RUNNING") && strcmp(v.buf, "PENDING");
		if (!*job_ended || strcmp(v.buf, "COMPLETING"))
			break;
		rt_sleep_ns(200000000);
	}
	if (*job_ended) {
		rt_sb_addf(why, "step %s ended with its job %s: JobState=%s Reason=%s (scontrol)", step, job,
			   v.buf, r.len ? r.buf : "None");
		goto out;
	}
	rt_sb_reset(&out);
	rt_sb_reset(&e1);
	if (!slurm_run(sacct, &out, &e1) && out.len) {
		rt_sb_addf(why, "step %s killed: %.*s (sacct State,ExitCode)", step, (int)strcspn(out.buf, "\n"),
			   out.buf);
		goto out;
	}
	rt_sb_reset(&out);
	if (!slurm_run(sstep, &out, &e2) && out.len) {
		scontrol_value(out.buf, "State", &v);
		rt_sb_addf(why, "step %s killed: State=%s (scontrol)", step, v.buf);
		goto out;
	}
	/* No accounting, and scontrol forgets a step once it ends: what is
	 * known is that its process never wrote its end record while the job
	 * kept running, so the step alone was cancelled. */
	rt_sb_addf(why, "step %s was killed from outside while job %s kept running (scancel of the step, "
		   "or its own time limit); no accounting to say more (%.*s)", step, job,
		   (int)strcspn(e1.len ? e1.buf : "sacct: no answer", "\n"), e1.len ? e1.buf : "sacct: no answer");
out:
	rt_sb_release(&out);
	rt_sb_release(&e1);
	rt_sb_release(&e2);
	rt_sb_release(&v);
	rt_sb_release(&r);
}

/* text (lines) holds line exactly. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; n && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* ---- the allocation ---- */

static char *hms(double s)
{
	long t = (long)(s + 0.999);
	return xasprintf("--time=%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* Wait while job is PENDING (a queue may take hours; a signal stops the
 * wait): 0 once it runs; else it is cancelled and RT_EINTR or RT_EPROC. */
static int wait_running(const char *job, struct rt_sb *err)
{
	struct rt_sb state = RT_SB_INIT;
	int rc = 0;
	for (int i = 0;; i++) {
		rt_sb_reset(&state);
		job_field(job, "%T", &state);
		if (state.len && !strcmp(state.buf, "RUNNING"))
			break;
		if (camp_stop_requested || !state.len || strcmp(state.buf, "PENDING")) {
			rc = rt_errf(err, camp_stop_requested ? RT_EINTR : RT_EPROC, "slurm job %s %s before it ran",
				     job, camp_stop_requested ? "stopped by a signal" : "ended");
			scancel(job, err);
			break;
		}
		rt_sleep_ns(i < 50 ? 200000000 : 2000000000); /* then spare slurmctld */
	}
	rt_sb_release(&state);
	return rc;
}

/* The comment every holding job of this campaign carries: the campaign's id
 * and creation time, so that --resume re-attaches to (or cancels) only a
 * job that is the campaign's own (issue 22, item 13: after a cluster state
 * reset the stored job id named another user's job, and --resume ran 7
 * steps in it and cancelled it). Owned. */
static char *job_comment(struct camp *c)
{
	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	struct rt_sb why = RT_SB_INIT;
	int64_t at = db_campaign_get(c->db, c->cid, &cp, &why) ? 0 : cp.created_at;
	db_campaign_release(&cp);
	rt_sb_release(&why);
	return xasprintf("ratchet-campaign-%lld-%lld", (long long)c->cid, (long long)at);
}

/* Is job this campaign's own: this user's, with its comment? *whose gets
 * what squeue says ("user|comment") when it is not. */
static bool job_ours(struct camp *c, const char *job, struct rt_sb *whose)
{
	struct rt_sb f = RT_SB_INIT;
	job_field(job, "%u|%k", &f);
	struct passwd *pw = getpwuid(getuid());
	char *comment = job_comment(c);
	char *want = xasprintf("%s|%s", pw ? pw->pw_name : "?", comment);
	bool ours = f.buf && !strcmp(f.buf, want);
	if (!ours)
		rt_sb_addf(whose, "%s", f.len ? f.buf : "unknown to squeue");
	free(want);
	free(comment);
	rt_sb_release(&f);
	return ours;
}

/* sbatch a holding job and wait until it runs; st->job and st->node set. */
static int submit(struct camp *c, struct slurm *st, struct rt_sb *err)
{
	const struct spec_slurm *sl = &c->s->exec.slurm;
	struct rt_strv a = { xcalloc(16 + sl->sbatch.n, sizeof(char *)), 0 };
	a.v[a.n++] = xstrdup("sbatch");
	a.v[a.n++] = xstrdup("--parsable");
	a.v[a.n++] = xasprintf("--job-name=ratchet-%s", c->s->name);
	char *comment = job_comment(c);
	a.v[a.n++] = xasprintf("--comment=%s", comment);
	free(comment);
	a.v[a.n++] = xstrdup("--output=/dev/null");
	if (sl->partition)
		a.v[a.n++] = xasprintf("--partition=%s", sl->partition);
	if (sl->account)
		a.v[a.n++] = xasprintf("--account=%s", sl->account);
	if (sl->gres)
		a.v[a.n++] = xasprintf("--gres=%s", sl->gres);
	if (sl->time_s > 0)
		a.v[a.n++] = hms(sl->time_s);
	for (size_t i = 0; i < sl->sbatch.n; i++)
		a.v[a.n++] = xstrdup(sl->sbatch.v[i]);
	a.v[a.n++] = xstrdup("--wrap=exec sleep infinity");
	struct rt_sb out = RT_SB_INIT;
	int rc = slurm_run(a.v, &out, err);
	rt_strv_release(&a);
	if (rc) {
		rt_sb_release(&out);
		return rt_errf(err, rc, " (executor: slurm could not obtain an allocation)");
	}
	st->job = xstrndup(out.buf, strcspn(out.buf, ";\n")); /* "ID" or "ID;CLUSTER" */
	rt_sb_release(&out);
	if ((rc = wait_running(st->job, err))) {
		free(st->job);
		st->job = NULL;
		return rc;
	}
	struct rt_sb node = RT_SB_INIT;
	job_field(st->job, "%N", &node);
	st->node = xstrdup(node.len ? node.buf : "");
	rt_sb_release(&node);
	if ((rc = db_slurm_job_add(c->db, c->cid, st->job, st->node, &st->row, err)))
		scancel(st->job, err);
	return rc;
}

/* --resume: the newest held job still alive is taken back (its steps from
 * the killed runner cancelled); every other held job is cancelled. A job
 * that is not the campaign's own (job_ours) is neither: it is left alone,
 * and its row ends "gone". */
static int reattach(struct camp *c, struct slurm *st, struct rt_sb *err)
{
	struct db_slurm_job *jobs = NULL;
	size_t n = 0;
	int rc = db_slurm_jobs_held(c->db, c->cid, &jobs, &n, err);
	for (size_t i = n; i-- > 0 && !rc;) {
		struct rt_sb why = RT_SB_INIT, whose = RT_SB_INIT;
		bool alive = job_alive(jobs[i].job_id);
		if (alive && !job_ours(c, jobs[i].job_id, &whose)) {
			rt_sb_addf(&why, "slurm job %s is not this campaign's (squeue: %s): left alone, not "
				   "re-attached", jobs[i].job_id, whose.buf);
			rep_progress_msg(&c->prog, why.buf);
			rc = db_slurm_job_end(c->db, jobs[i].id, "gone", why.buf, err);
		} else if (!st->job && alive) {
			st->job = xstrdup(jobs[i].job_id);
			st->node = xstrdup(jobs[i].node ? jobs[i].node : "");
			st->row = jobs[i].id;
			rc = wait_running(st->job, err); /* still PENDING: until it runs */
			if (!rc) {
				rt_sb_addf(&why, "re-attached to slurm job %s; %d orphaned step(s) cancelled",
					   st->job, cancel_steps(st->job));
				rep_progress_msg(&c->prog, why.buf);
			} else if (db_slurm_job_end(c->db, st->row, "cancelled", err->buf, &why) == 0) {
				free(st->job);
				free(st->node);
				st->job = st->node = NULL;
			}
		} else if (alive) {
			scancel(jobs[i].job_id, &why);
			rc = db_slurm_job_end(c->db, jobs[i].id, "cancelled", "orphan, cancelled on --resume", err);
		} else {
			rc = db_slurm_job_end(c->db, jobs[i].id, "gone", "ended while the runner was away", err);
		}
		rt_sb_release(&why);
		rt_sb_release(&whose);
	}
	db_slurm_jobs_free(jobs, n);
	return rc;
}

static void build_launcher(struct camp *c, struct slurm *st)
{
	const struct spec_slurm *sl = &c->s->exec.slurm;
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[k > 0 ? k : 0] = 0;
	rt_strv_release(&st->pre);
	st->pre.v = xcalloc(12 + sl->srun.n, sizeof(char *));
	char **v = st->pre.v;
	size_t n = 0;
	v[n++] = xstrdup("srun");
	v[n++] = xasprintf("--jobid=%s", st->job);
	v[n++] = xstrdup("--overlap");
	v[n++] = xstrdup("--ntasks=1");
	v[n++] = xstrdup("--nodes=1");
	v[n++] = xstrdup("--job-name=ratchet-step");
	for (size_t i = 0; i < sl->srun.n; i++)
		v[n++] = xstrdup(sl->srun.v[i]);
	v[n++] = xstrdup(k > 0 ? exe : "ratchet");
	v[n++] = xstrdup("__step");
	v[n++] = xstrdup(st->dir);
	v[n++] = xstrdup("--");
	st->pre.n = n;
}

/* The records' folder: beside the database, which a cluster's runner keeps
 * on a file system its nodes share. */
static char *records_dir(struct camp *c)
{
	char *db = realpath(db_path(c->db), NULL);
	char *copy = xstrdup(db ? db : db_path(c->db));
	char *d = xasprintf("%s/ratchet-steps/c%lld", dirname(copy), (long long)c->cid);
	free(copy);
	free(db);
	return d;
}

static int journal_records(struct camp *c, struct slurm *st, int64_t iter, int arm, int rep,
			   bool timed_out, enum camp_exec_verdict *v, struct rt_sb *why);

static int slurm_open(struct camp *c, struct camp_exec *x, struct rt_sb *err)
{
	struct slurm *st = xcalloc(1, sizeof(*st));
	x->state = st;
	st->dir = records_dir(c);
	int rc = rt_mkdirs(st->dir, err);
	if (!rc && c->o->resume)
		rc = reattach(c, st, err);
	if (!rc && !st->job)
		rc = submit(c, st, err);
	if (!rc) {
		enum camp_exec_verdict v;
		struct rt_sb why = RT_SB_INIT;
		rc = journal_records(c, st, 0, -1, 0, false, &v, &why); /* the killed runner's */
		rt_sb_release(&why);
		build_launcher(c, st);
	}
	return rc;
}

/* ---- the steps ---- */

static int slurm_begin(struct camp *c, struct camp_exec *x, struct rt_sb *err)
{
	struct slurm *st = x->state;
	int rc = 0;
	if (!st->job && !(rc = submit(c, st, err)))
		build_launcher(c, st);
	if (!rc)
		rt_spawn_set_launcher(st->pre.v);
	return rc;
}

/* One launch record (cmd_step.c): "key value" lines. */
struct record {
	char step[256];         /* JOB.STEP */
	char node[256];         /* where */
	char program[256];      /* argv[0] */
	long long pid, start, at; /* process, start ticks, ms since the epoch */
	bool ended;             /* its .end exists */
	int status;             /* the wait status in .end */
	int signalled;          /* the signal Slurm sent the step (job cancelled, time limit), 0: none */
};

static void record_parse(const char *text, struct record *r)
{
	char key[32], val[256];
	for (const char *p = text; p && *p;) {
		if (sscanf(p, "%31s %255[^\n]", key, val) == 2) {
			if (!strcmp(key, "step"))
				snprintf(r->step, sizeof(r->step), "%s", val);
			else if (!strcmp(key, "node"))
				snprintf(r->node, sizeof(r->node), "%s", val);
			else if (!strcmp(key, "program"))
				snprintf(r->program, sizeof(r->program), "%s", val);
			else if (!strcmp(key, "pid"))
				r->pid = atoll(val);
			else if (!strcmp(key, "start"))
				r->start = atoll(val);
			else if (!strcmp(key, "at"))
				r->at = atoll(val);
			else if (!strcmp(key, "status"))
				r->status = atoi(val);
			else if (!strcmp(key, "signalled"))
				r->signalled = atoi(val);
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
}

/* Read and remove one record (PATH.rec and PATH.end). */
static int record_take(const char *dir, const char *name, struct record *r, struct rt_sb *err)
{
	memset(r, 0, sizeof(*r));
	char *rec = xasprintf("%s/%s", dir, name);
	char *end = xasprintf("%.*s.end", (int)(strlen(rec) - 4), rec);
	char *text = NULL;
	size_t len;
	int rc = rt_read_file(rec, &text, &len, err);
	if (!rc) {
		record_parse(text, r);
		free(text);
		text = NULL;
		r->ended = rt_read_file(end, &text, &len, NULL) == 0;
		if (r->ended)
			record_parse(text, r);
		free(text);
		unlink(rec);
		unlink(end);
	}
	free(rec);
	free(end);
	return rc;
}

static int journal_records(struct camp *c, struct slurm *st, int64_t iter, int arm, int rep,
			   bool timed_out, enum camp_exec_verdict *v, struct rt_sb *why)
{
	*v = CAMP_EXEC_OK;
	DIR *d = opendir(st->dir);
	if (!d)
		return 0;
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".rec"))
			continue;
		struct record r;
		struct rt_sb rerr = RT_SB_INIT, reason = RT_SB_INIT;
		if (record_take(st->dir, e->d_name, &r, &rerr)) {
			rt_sb_release(&rerr);
			continue; /* being written, or gone: nothing to prove */
		}
		rt_sb_release(&rerr);
		const char *outcome = "ok";
		bool outside = !r.ended || r.signalled; /* Slurm ended it, or the runner did */
		if (outside && (has_line(st->stopping.buf, r.step) || timed_out)) {
			outcome = "stopped";
			rt_sb_adds(&reason, timed_out ? "stopped by the runner: the benchmark timed out"
						  : "stopped by the runner (srun ends a step it is told to stop with SIGKILL)");
		} else if (outside && arm < 0) {
			outcome = "killed";
			rt_sb_adds(&reason, "the runner was killed; the step was cancelled on --resume");
		} else if (outside) {
			bool job_ended;
			outcome = "killed";
			step_reason(st->job, r.step, &reason, &job_ended);
			*v = CAMP_EXEC_KILLED;
			rt_sb_addf(why, "%s%s", why->len ? "; " : "", reason.buf);
		} else if (r.status) {
			outcome = "failed"; /* its own failure */
		}
		struct db_slurm_step s = {
			.job_row = st->row, .iteration_id = iter, .arm = arm < 0 ? NULL : arm ? "cand" : "best",
			.rep = rep, .step_id = r.step, .program = r.program, .node = r.node, .pid = r.pid,
			.start_ticks = r.start, .started_at = r.at, .outcome = outcome,
			.reason = reason.len ? reason.buf : NULL,
		};
		rc = db_slurm_step_add(c->db, &s, why);
		rt_sb_release(&reason);
	}
	closedir(d);
	return rc;
}

static int slurm_end(struct camp *c, struct camp_exec *x, int64_t iter, int arm, int rep, int mrc,
		     enum camp_exec_verdict *v, struct rt_sb *why)
{
	struct slurm *st = x->state;
	rt_spawn_set_launcher(NULL);
	*v = CAMP_EXEC_OK;
	if (!st->job)
		return 0;
	cancel_steps(st->job); /* nothing of this sample outlives it */
	int rc = journal_records(c, st, iter, arm, rep, mrc == RT_ETIMEDOUT, v, why);
	rt_sb_reset(&st->stopping);
	if (rc || job_alive(st->job))
		return rc;
	/* The allocation itself ended (time limit, preemption, node failure):
	 * journal it and obtain a new one for the samples to come. */
	struct rt_sb out = RT_SB_INIT;
	char *sjob[] = { "scontrol", "show", "job", st->job, NULL };
	struct rt_sb r = RT_SB_INIT, err = RT_SB_INIT;
	if (!slurm_run(sjob, &out, &err))
		scontrol_value(out.buf, "JobState", &r);
	rt_sb_release(&out);
	rt_sb_release(&err);
	rc = db_slurm_job_end(c->db, st->row, "gone", r.len ? r.buf : "no longer in squeue", why);
	rt_sb_release(&r);
	free(st->job);
	free(st->node);
	st->job = st->node = NULL;
	return rc; /* the next sample's begin obtains a new allocation */
}

/* The job's running steps (squeue -s), one id per line, into out; 0 or
 * RT_EPROC. squeue runs here, not through the launcher: slurm_run's
 * commands are not measured processes (rt_spawn_opts.measured). */
static int running_steps(const struct slurm *st, struct rt_sb *out)
{
	char *argv[] = { "squeue", "-h", "-s", "-j", st->job, "-o", "%i", NULL };
	struct rt_sb err = RT_SB_INIT;
	int rc = slurm_run(argv, out, &err);
	rt_sb_release(&err);
	return rc;
}

/* The engine runs as a step: Slurm lists the step as running, and that
 * step's launch record names the engine's program, the allocation's node
 * and the process there (pid, start time). With the launch nonce the engine
 * echoes over HTTP (checked by the engine module), that ties the address to
 * this launch without /proc of the node. */
static int slurm_prove(void *arg, struct rt_sb *err)
{
	struct camp_exec *x = arg;
	struct slurm *st = x->state;
	struct camp *c = x->camp;
	const char *want = c->s->engine.command.n ? c->s->engine.command.v[0] : "";
	const char *wb = strrchr(want, '/') ? strrchr(want, '/') + 1 : want;
	struct rt_sb running = RT_SB_INIT;
	int qrc = running_steps(st, &running);
	DIR *d = qrc ? NULL : opendir(st->dir);
	bool found = false;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".rec"))
			continue;
		char *path = xasprintf("%s/%s", st->dir, e->d_name);
		char *end = xasprintf("%.*s.end", (int)(strlen(path) - 4), path);
		char *text = NULL;
		size_t len;
		struct record r = { 0 };
		if (access(end, F_OK) && !rt_read_file(path, &text, &len, NULL)) {
			record_parse(text, &r);
			const char *pb = strrchr(r.program, '/') ? strrchr(r.program, '/') + 1 : r.program;
			found = !strcmp(pb, wb) && !strcmp(r.node, st->node) && r.pid > 0 &&
				has_line(running.buf, r.step);
		}
		free(text);
		free(path);
		free(end);
	}
	if (d)
		closedir(d);
	rt_sb_release(&running);
	if (found)
		return 0;
	return rt_errf(err, RT_EIDENTITY,
		       "identity: no running step of slurm job %s has a launch record of %s on node %s (%s)",
		       st->job, wb, st->node, st->dir);
}

/* The steps running now (squeue), for the journal: they end by the runner's stop. */
static void slurm_stopping(struct camp_exec *x)
{
	struct slurm *st = x->state;
	if (!st->job)
		return;
	struct rt_sb out = RT_SB_INIT;
	if (!running_steps(st, &out) && out.len)
		rt_sb_addf(&st->stopping, "%s\n", out.buf);
	rt_sb_release(&out);
}

static const char *slurm_host(struct camp_exec *x, const char *host)
{
	struct slurm *st = x->state;
	char me[256] = "";
	gethostname(me, sizeof(me) - 1);
	/* An engine on another node is reached over that node's address. */
	if (st && st->node && *st->node && strcmp(st->node, me) &&
	    (!host || !strcmp(host, "127.0.0.1") || !strcmp(host, "localhost")))
		return st->node;
	return host;
}

static void slurm_close(struct camp *c, struct camp_exec *x)
{
	struct slurm *st = x->state;
	if (!st)
		return;
	rt_spawn_set_launcher(NULL);
	if (st->job) {
		struct rt_sb err = RT_SB_INIT;
		if (scancel(st->job, &err))
			camp_warn(c, "scancel of the holding job", &err);
		else if (db_slurm_job_end(c->db, st->row, "released", NULL, &err))
			camp_warn(c, "slurm job release", &err);
		rt_sb_release(&err);
	}
	free(st->job);
	free(st->node);
	free(st->dir);
	rt_strv_release(&st->pre);
	rt_sb_release(&st->stopping);
	free(st);
	x->state = NULL;
}

const struct camp_exec_ops camp_exec_slurm = {
	"slurm", slurm_open, slurm_begin, slurm_end, slurm_host, slurm_prove, slurm_stopping, slurm_close,
};
