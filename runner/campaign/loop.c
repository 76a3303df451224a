/*
 * The campaign loop, `ratchet run` (see campaign.h): open a new campaign or
 * resume the interrupted one (recovery first: journal.c), rebuild the best
 * configuration from the store, measure the baseline if there is none,
 * then the one scheduling loop: the proposer table (propose.c) asked for
 * the next proposals, run in this process one at a time or by a device
 * pool's workers (round.c), until the strategy is done, the iteration cap
 * is reached, a signal arrives or a write the journal depends on fails. Unfinished iterations become `interrupted` on resume
 * and their variant is tried again, so a resumed campaign decides exactly
 * what an uninterrupted one would.
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"
#include "runner/campaign/lease.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "db/journal.h"
#include "runner/base/cancel.h"
#include "runner/bench/bench_cmd.h"


/*
 * SIGINT and SIGTERM. The first is acknowledged at once and stops the run
 * at the next safe point (after the sample in progress); the second also
 * cancels every wait (runner/base/cancel.h): the sample in progress is
 * abandoned, its benchmark's process group and the engine are stopped, and
 * the iteration is recorded interrupted. Both messages are written with
 * write(2), the only output a handler may make; a leading newline ends a
 * live progress line first.
 */
static bool sig_tty; /* stderr shows a live progress line */

static void sig_say(const char *msg, size_t len)
{
	if ((sig_tty && write(2, "\n", 1) < 0) || write(2, msg, len) < 0) {
		/* nothing else to say it with */
	}
}

static void on_signal(int sig)
{
	static const char first[] = "ratchet: stopping after this sample; Ctrl-C again to stop now\n";
	static const char second[] = "ratchet: stopping now: the sample in progress is abandoned\n";
	(void)sig;
	if (!camp_stop_requested) {
		camp_stop_requested = 1;
		sig_say(first, sizeof(first) - 1);
	} else if (!rt_cancelled()) {
		rt_cancel();
		sig_say(second, sizeof(second) - 1);
	}
}

/*
 * SIGBUS: a page of a memory-mapped file could not be read or written. The
 * only file ratchet maps is SQLite's wal-index, `<database>-shm` (WAL mode
 * maps it whatever mmap_size says), and the kernel raises SIGBUS when that
 * file is made immutable or read-only, truncated, or cannot get a block on
 * a full disk, under a running campaign. Nothing can be written then (the
 * store is what failed) and returning would fault again: the handler says
 * what happened and exits 3, which leaves the campaign as a kill -9 would,
 * and `ratchet run --resume` recovers it (docs/reliability.md).
 */
static char *bus_msg;  /* the message, made before the handler may need it */
static size_t bus_len; /* its length */

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_msg && write(2, bus_msg, bus_len) < 0) {
		/* nothing else to say it with */
	}
	_exit(RT_EXIT_RUNTIME);
}

static void sigbus_arm(const char *db, const char *spec)
{
	free(bus_msg);
	bus_msg = xasprintf("ratchet: run: SIGBUS: a memory-mapped file could not be read or written: "
			    "SQLite's shared-memory file %s-shm (made immutable or read-only, truncated, or "
			    "on a full disk?); the campaign stopped as after a crash: make that file "
			    "writable again, then `ratchet run --resume %s` recovers it\n", db, spec);
	bus_len = strlen(bus_msg);
}

/* ---- environment facts: they describe the run, a failure only warns ---- */

static void fact(struct camp *c, const char *key, const char *value)
{
	struct rt_sb why = RT_SB_INIT;
	if (db_fact_add(c->db, c->cid, 0, key, value, &why))
		camp_warn(c, key, &why);
	rt_sb_release(&why);
}

static void record_host_facts(struct camp *c)
{
	struct utsname u;
	if (uname(&u) == 0) {
		fact(c, "host", u.nodename);
		char *k = xasprintf("%s %s %s", u.sysname, u.release, u.machine);
		fact(c, "kernel", k);
		free(k);
	}
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && v) {
			v += 2;
			v[strcspn(v, "\n")] = 0;
			fact(c, "cpu", v);
			break;
		}
	}
	if (f)
		fclose(f);
	char n[32];
	snprintf(n, sizeof(n), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	fact(c, "cpus", n);
	fact(c, "ratchet.version", RATCHET_VERSION);
	/* The git revision of the workdir, when it is a repository. */
	char *argv[] = { "git", "-C", c->s->workdir, "rev-parse", "HEAD", NULL };
	struct rt_sb out = RT_SB_INIT;
	int status = -1;
	if (run_bcmd_exec_simple(argv, NULL, 10, &out, &status, NULL) == 0 && status == 0) {
		rt_sb_trim(&out);
		fact(c, "git.workdir", out.buf);
	}
	rt_sb_release(&out);
}

/*
 * Engines a killed runner left behind: every launch records the engine's
 * process group. A group whose leader still runs the engine's program is
 * ours and is stopped, so the resumed campaign does not find its own old
 * engine squatting on the port (or wasting the GPU).
 */
static int reap_orphans(struct camp *c)
{
	const struct spec *s = c->s;
	if (!s->engine.present || !s->engine.command.n)
		return 0;
	char **pids = NULL;
	size_t n = 0;
	struct rt_sb why = RT_SB_INIT;
	if (db_fact_values(c->db, c->cid, "engine.pgid", &pids, &n, &why))
		camp_warn(c, "engine process groups of the interrupted run", &why);
	rt_sb_release(&why);
	const char *prog = strrchr(s->engine.command.v[0], '/');
	prog = prog ? prog + 1 : s->engine.command.v[0];
	int reaped = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t pid = (pid_t)atoi(pids[i]);
		free(pids[i]);
		if (pid <= 1 || getpgid(pid) != pid)
			continue;
		char path[64], cmd[4096];
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t len = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[len] = 0;
		const char *base = strrchr(cmd, '/');
		base = base ? base + 1 : cmd;
		if (len && !strcmp(base, prog)) {
			kill(-pid, SIGKILL);
			reaped++;
		}
	}
	free(pids);
	return reaped;
}

/* ---- open, resume, rebuild ---- */

/* What must hold before anything is measured (preflight.c): every problem
 * listed, nothing started or recorded. */
static int preflight(const struct spec *s, bool resume, bool replay, int *n, struct rt_sb *err)
{
	struct run_preflight_opts po = { .resume = resume, .no_plans = replay };
	*n = run_preflight(s, &po, err);
	if (!*n)
		return 0;
	rt_sb_trim(err);
	return rt_errf(err, RT_EUSAGE, "\n%s: %d problem%s found before anything was measured "
		       "(`ratchet check --preflight %s` lists them)", s->path, *n, *n == 1 ? "" : "s",
		       s->path);
}

/* --resume: the campaign's files back to its best configuration. */
static int resume(struct camp *c, const struct db_campaign *cp, struct rt_sb *err)
{
	const struct spec *s = c->s;
	if (strcmp(cp->spec_sha256, s->sha256))
		return rt_errf(err, RT_EUSAGE,
			       "--resume: %s changed since campaign %lld started (sha256 %.12s, now %.12s); "
			       "put the spec back as it was to resume, or end the campaign with `ratchet "
			       "restore --campaign %lld` and `ratchet run %s` starts a new one",
			       s->path, (long long)cp->id, cp->spec_sha256, s->sha256, (long long)cp->id,
			       s->path);
	c->cid = cp->id;
	int undone, interrupted;
	int rc = run_campaign_recover(c->db, c->cid, &undone, &interrupted, err);
	if (rc)
		return rc;
	int orphans = reap_orphans(c);
	if (orphans)
		rt_sleep_ns(200000000); /* let the kernel release their ports */
	if (!c->o->quiet)
		fprintf(c->o->out, "resuming campaign %lld '%s': %d half-applied change%s undone, "
			"%d iteration%s marked interrupted, %d orphaned engine%s stopped\n",
			(long long)c->cid, s->name, undone, undone == 1 ? "" : "s", interrupted,
			interrupted == 1 ? "" : "s", orphans, orphans == 1 ? "" : "s");
	return 0;
}

/* The latest campaign of this spec's name (*found false when none). */
static int latest_campaign(struct camp *c, struct db_campaign *cp, bool *found, struct rt_sb *err)
{
	struct rt_sb lerr = RT_SB_INIT;
	int rc = db_campaign_latest(c->db, c->s->name, cp, &lerr);
	*found = rc == 0;
	if (rc == RT_ENOENT)
		rc = 0;
	else if (rc)
		rt_errf(err, rc, "%s", lerr.buf);
	rt_sb_release(&lerr);
	return rc;
}

/* Did the campaign's baseline fail, so that it measured nothing? Its last
 * baseline attempt failed or was gated, and none succeeded. */
static bool baseline_failed(struct camp *c, int64_t cid)
{
	struct db_iteration *its = NULL;
	size_t n = 0;
	bool measured = false, failed = false;
	if (db_iterations_list(c->db, cid, &its, &n, NULL))
		return false;
	for (size_t i = 0; i < n; i++) {
		measured |= its[i].state == DB_ITER_BASELINE;
		if (!strcmp(its[i].kind, "baseline")) /* the last attempt decides */
			failed = its[i].state == DB_ITER_FAILED || its[i].state == DB_ITER_GATED;
	}
	db_iterations_free(its, n);
	return failed && !measured;
}

/* A campaign whose baseline failed measured nothing: it is closed (aborted)
 * and a new one starts, so a fixed spec needs no --resume or restore. */
static int close_unmeasured(struct camp *c, const struct db_campaign *cp, struct rt_sb *err)
{
	int undone, interrupted;
	int rc = run_campaign_recover(c->db, cp->id, &undone, &interrupted, err);
	if (!rc)
		rc = db_campaign_set_state(c->db, cp->id, "aborted", err);
	if (!rc && !c->o->quiet)
		fprintf(c->o->out, "campaign %lld '%s' measured nothing (its baseline failed); it is "
			"closed and a new campaign starts\n", (long long)cp->id, cp->name);
	return rc;
}

/* A new campaign, or (--resume) the running one, its lease taken first: a
 * campaign another runner runs is refused, naming it. Finding the running
 * campaign and creating a new one is one step between runners. A campaign
 * whose baseline failed measured nothing: once no live runner holds it, it
 * is closed and a new one starts (unless --resume asks for it with the same
 * spec). */
static int open_campaign(struct camp *c, struct camp_lease *lease, struct rt_sb *err)
{
	const struct spec *s = c->s;
	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	bool found = false;
	int rc = camp_lease_creating(lease, true, err);
	if (rc)
		return rc;
	rc = latest_campaign(c, &cp, &found, err);
	bool running = !rc && found && !strcmp(cp.state, "running");
	bool closed = running && baseline_failed(c, cp.id) &&
		      (!c->o->resume || strcmp(cp.spec_sha256, s->sha256));
	if (!rc && closed && !(rc = camp_lease_check(lease, cp.id, s->name, err)))
		rc = close_unmeasured(c, &cp, err);
	if (rc) {
		; /* the store could not be read, a live runner holds it, or it could not be closed */
	} else if (closed || (!c->o->resume && !running)) {
		char *text = rt_redacted(s->text); /* the spec's own secrets stay out of the store */
		rc = db_campaign_create(c->db, s->name, s->path, text, s->sha256, s->workdir,
					(int64_t)s->seed, &c->cid, err);
		free(text);
		if (!rc)
			rc = camp_lease_take(lease, c->cid, s->name, err);
	} else if (!running) {
		rc = rt_errf(err, RT_EUSAGE, "--resume: no interrupted campaign named '%s' in %s", s->name,
			     db_path(c->db));
	} else if (c->o->resume) {
		if (!(rc = camp_lease_take(lease, cp.id, s->name, err)))
			rc = resume(c, &cp, err);
	} else if (!(rc = camp_lease_check(lease, cp.id, s->name, err))) {
		/* A live runner was named above; only a dead one's campaign is resumable. */
		rc = rt_errf(err, RT_EUSAGE,
			     "campaign %lld '%s' in %s did not finish; continue it with `ratchet run --resume %s`, "
			     "or end it with `ratchet restore` (its files back as they were) and `ratchet run %s` "
			     "starts a new one",
			     (long long)cp.id, s->name, db_path(c->db), s->path, s->path);
	}
	camp_lease_creating(lease, false, err);
	db_campaign_release(&cp);
	return rc;
}

/* ---- the scheduler ---- */

/* A search that stopped by itself says why, on the screen and in the store. */
static void search_done(struct camp *c, const char *why)
{
	char *msg = xasprintf("search done: %s", why);
	if (!c->o->quiet)
		rep_progress_msg(&c->prog, msg);
	fact(c, "search.done", why);
	free(msg);
}

/* The runner itself: one change at a time, in this process. */
static int here_baseline(struct camp *c, struct rt_sb *err)
{
	return camp_run_baseline(c, err);
}

static size_t here_room(const struct camp *c, int done)
{
	(void)c;
	(void)done;
	return 1;
}

static int here_run(struct camp *c, int round, const struct agent_proposal *p, size_t n, struct rt_sb *err)
{
	(void)round;
	(void)n; /* a room of one */
	int rc = camp_proposer_of(c->s)->make(c, p, &c->gen, err);
	if (!rc)
		rc = camp_run_one(c, p, err);
	camp_gen_free(c->gen);
	c->gen = NULL;
	return rc;
}

static const struct camp_runner runner_here = { "here", false, true, NULL, here_baseline, here_room, here_run };

/*
 * The one scheduling loop: the baseline when there is none, then rounds
 * until the strategy is done, the budget or the iteration cap is reached, a
 * signal arrives or a write the journal depends on fails. Each round asks
 * the proposer table for as many proposals as the runner has room for (one
 * here, one per device in a pool) and runs them; the next round's history
 * is read from the store, so it sees every decision of this one.
 */
static int schedule(struct camp *c, const struct camp_runner *x, bool have_baseline,
		    struct run_campaign_result *res, struct rt_sb *err)
{
	int rc = x->check ? x->check(c, err) : 0;
	if (!rc && !have_baseline) {
		/* An interrupted baseline is simply measured again, under the next seq. */
		rc = x->baseline(c, err);
		res->iterations++;
		c->seq++;
	}
	size_t cap = x->room(c, 0);
	struct agent_proposal *p = xcalloc(cap + 1, sizeof(*p));
	while (!rc) {
		if (camp_stop_requested) {
			rc = RT_EINTR;
			break;
		}
		if (x->profiles && (rc = camp_profile_step(c, err)))
			break;
		bool go;
		if ((rc = camp_budget_allows(c, res->iterations, &go, &res->stopped, err)) || !go)
			break;
		size_t n = 0, room = x->room(c, res->iterations);
		int last = 0, seq0 = c->seq;
		int r = camp_propose(c, room < cap ? room : cap, x->rounds, p, &n, &last, err);
		res->iterations += c->seq - seq0; /* recorded while proposing (llm's failed proposals) */
		if (r == 2)
			continue; /* nothing to run; the budget is checked again */
		if (r <= 0) {
			res->finished = r == 0;
			if (r == 0 && p[0].note[0])
				search_done(c, p[0].note);
			rc = r;
			break;
		}
		/* A round's confirmation belongs to that round; anything else starts one. */
		bool confirm = n == 1 && p[0].role == DB_ROLE_CONFIRM && agent_ops_for(c->s->strategy)->confirms_rounds;
		rc = x->run(c, confirm ? last : last + 1, p, n, err);
		res->iterations += (int)n;
		c->seq += (int)n;
		if (!rc)
			rc = camp_apply_streak(c, err);
	}
	free(p);
	return rc;
}

/* Summary figures. Best-effort: they only decorate the output. */
static void summarize(struct camp *c, struct run_campaign_result *res)
{
	struct db_iteration *its = NULL;
	size_t nits = 0;
	if (db_iterations_list(c->db, c->cid, &its, &nits, NULL))
		return;
	bool base = false;
	for (size_t i = 0; i < nits; i++) {
		base |= !strcmp(its[i].kind, "baseline") && its[i].state == DB_ITER_BASELINE;
		res->kept += its[i].state == DB_ITER_KEPT && !its[i].invalidated;
	}
	/* The one number of the report and the waterfall: the kept changes'
	 * objective changes compounded, in the metric's own sign. */
	if (base)
		res->gain = rep_kept_compound(its, nits, &res->gain_better);
	db_iterations_free(its, nits);
}

/* Open, rebuild, baseline, loop, finish. */
static int campaign(struct camp *c, struct camp_lease *lease, struct run_campaign_result *res,
		    struct rt_sb *err)
{
	bool have_baseline;
	int rc = open_campaign(c, lease, err);
	if (rc)
		return rc;
	res->campaign_id = c->cid;
	if (c->o->on_open && (rc = c->o->on_open(c->o->on_open_arg, c->db, c->cid, err)))
		return rc;
	record_host_facts(c);
	if ((rc = camp_rebuild_best(c, &have_baseline, err)))
		return rc;
	/* planned iterations, when the strategy knows them (list: one per variant) */
	int total = agent_ops_for(c->s->strategy)->counts_total ? (int)c->s->n_variants + 1 : 0;
	rep_progress_init(&c->prog, c->o->out, c->o->tty, c->o->quiet, total);
	c->prog.campaign_id = c->cid;
	if ((rc = camp_exec_open(c, err)))
		return rc;
	/* a device pool: rounds of workers (round.c); else the runner itself */
	rc = schedule(c, c->s->n_devices ? &camp_runner_pool : &runner_here, have_baseline, res, err);
	if (rc == RT_EINTR && camp_lease_lost(lease, err))
		rc = RT_EBUSY;
	else if (rc == RT_EINTR)
		rt_errf(err, RT_EINTR, "%sstopped by a signal; `ratchet run --resume %s` continues",
			err->len ? "; " : "", c->s->path);
	else if (c->fatal)
		rt_errf(err, c->fatal, "; the files are as the journal describes: `ratchet run --resume %s` "
			"recovers them and goes on", c->s->path);
	if (!rc && res->finished) {
		rc = db_campaign_set_state(c->db, c->cid, "finished", err);
		rep_progress_finish(&c->prog);
	}
	summarize(c, res);
	return rc;
}

int run_campaign(struct db *db, const struct spec *s, const struct run_campaign_opts *o,
		 struct run_campaign_result *res, struct rt_sb *err)
{
	struct camp c;
	memset(&c, 0, sizeof(c));
	c.db = db;
	c.s = s;
	c.o = o;
	c.kept = xcalloc(s->n_variants + 1, sizeof(bool));
	var_config_init(&c.cfg);
	memset(res, 0, sizeof(*res));
	res->gain = NAN;
	struct sigaction sa, bus, old_int, old_term, old_bus;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigbus_arm(db_path(db), s->path);
	memset(&bus, 0, sizeof(bus));
	bus.sa_handler = on_sigbus;
	sigaction(SIGBUS, &bus, &old_bus);
	camp_stop_requested = 0;
	rt_cancel_reset();
	sig_tty = o->tty && !o->quiet;
	camp_jsys_fault_at(o->fault_journal);
	struct camp_lease lease;
	camp_lease_init(&lease, db, &camp_stop_requested);
	c.worker.round = -1;
	int rc = 0;
	if (o->worker) /* a pool's worker: the runner holds the lease and checked the machine */
		rc = camp_worker_run(&c, res, err);
	else if (!(rc = preflight(s, o->resume, o->replay, &res->preflight, err)))
		rc = campaign(&c, &lease, res, err);
	camp_engines_stop(&c); /* those kept up between samples */
	camp_exec_free(&c);
	camp_lease_release(&lease);
	camp_jsys_fault_at(0);
	rep_progress_release(&c.prog);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	free(bus_msg);
	bus_msg = NULL;
	var_config_release(&c.cfg);
	free(c.kept);
	free(c.baseline_model);
	free(c.streak.reason);
	free(c.device_id);
	free(c.worker.device_fact);
	return rc;
}
