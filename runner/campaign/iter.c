/*
 * One iteration (see campaign_int.h). The iteration state machine: the
 * campaign writes an iteration's state only along the (from, to) pairs of
 * `moves` below; anything else is refused with RT_ESTATE. The baseline
 * measures the unchanged configuration. A change goes through named steps:
 *
 *   plan     plan, describe and fingerprint the change; the row is created
 *   measure  best and candidate on the A/B schedule, the candidate's files
 *            moved in and out between arms, until the rule settles
 *   decide   the rule's verdict, the constraints, a greedy trial's role
 *   gate     a change to keep is put in place and gated
 *   end      unless kept, the files go back to the best configuration; the
 *            outcome is recorded (one transaction)
 *
 * A step ends the iteration early by setting its outcome (a failed apply is
 * `failed`, a wrong answer `gated`, ...) with a reason; the campaign goes
 * on. It stops the campaign by returning RT_EINTR (a signal: the iteration
 * is recorded interrupted), RT_EBUSY (recorded failed), or the error of a
 * write the journal depends on (camp_fatal: nothing more is written, the
 * iteration stays as the journal describes it, `--resume` recovers).
 *
 * Only the change may fail an iteration. A failure that says nothing about
 * it never becomes a decision: when the disk is full (a failed step's
 * output says "No space left on device", or the work folder or the
 * database's folder has no room left) or the best configuration could not
 * be put back, the iteration is recorded `interrupted` (or left running
 * when even that cannot be written), the campaign stops, and `--resume`
 * tries the change again.
 */
#include "runner/campaign/campaign_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "db/journal.h"

/* ---- moving an iteration (the moves allowed: state.c) ---- */

int camp_iter_enter(struct camp *c, struct db_iteration *it, enum db_iter_state to, const char *phase,
		    struct rt_sb *err)
{
	/* A refused move is a bug: nothing more is written, as for a failed write. */
	if (db_iter_state_final(to) || !camp_state_allowed(it->state, to))
		return camp_fatal(c, rt_errf(err, RT_ESTATE, "iteration %lld: cannot go from %s to %s",
					     (long long)it->id, db_iter_state_name(it->state),
					     db_iter_state_name(to)));
	if (it->state == to && it->phase && !strcmp(it->phase, phase))
		return 0;
	int rc = db_iteration_set_state(c->db, it->id, to, phase, err);
	if (rc)
		return camp_fatal(c, rc);
	it->state = to;
	free(it->phase);
	it->phase = xstrdup(phase);
	return 0;
}

/* ---- a full disk ---- */

/* Room below which a failed step counts as the disk's fault, not the change's. */
#define ROOM_MIN_BYTES (1u << 20)

/* Has the file system holding path (nearly) no room left? */
static bool fs_full(const char *path)
{
	struct statvfs sv;
	if (statvfs(path, &sv))
		return false;
	return (unsigned long long)sv.f_bavail * sv.f_frsize < ROOM_MIN_BYTES ||
	       (sv.f_files && !sv.f_favail);
}

/* Did a step fail for want of room? texts: what it printed and its error
 * (a child's only word for it is its errno's text); else the work folder
 * or the database's folder is full. *where says which, for the reason. */
static bool out_of_space(const struct camp *c, const char *const *texts, size_t n, char *where,
			 size_t wn)
{
	static const int codes[] = { ENOSPC, EDQUOT };
	for (size_t k = 0; k < RT_ARRAY_SIZE(codes); k++) {
		char msg[128];
		snprintf(msg, sizeof(msg), "%s", strerror(codes[k]));
		for (size_t i = 0; i < n; i++)
			if (texts[i] && strstr(texts[i], msg)) {
				snprintf(where, wn, "%s", msg);
				return true;
			}
	}
	const char *db = db_path(c->db);
	const char *slash = strrchr(db, '/');
	char *dbdir = slash ? xasprintf("%.*s", (int)(slash - db + (slash == db)), db) : xstrdup(".");
	const char *dirs[] = { c->s->workdir, dbdir };
	bool full = false;
	for (size_t i = 0; i < RT_ARRAY_SIZE(dirs) && !full; i++)
		if (dirs[i] && (full = fs_full(dirs[i])))
			snprintf(where, wn, "%s has less than 1 MiB free", dirs[i]);
	free(dbdir);
	return full;
}

/* A failure that is the disk's: the iteration is interrupted, not failed,
 * and the run stops (RT_EIO unless rc says more) so that --resume tries it
 * again. texts: what the failed step printed. Returns rc, or 0 when the
 * failure is the change's own. */
static int disk_full(struct camp *c, struct db_iteration *it, enum db_iter_state *outcome,
		     const char *const *texts, size_t n, int rc)
{
	char where[4200]; /* a folder's path and a few words */
	if (*outcome != DB_ITER_FAILED || c->fatal || !out_of_space(c, texts, n, where, sizeof(where)))
		return 0;
	camp_reason(it, "%s; the disk is full (%s): interrupted, `ratchet run --resume %s` tries it "
		    "again once there is room", it->reason ? it->reason : "", where, c->s->path);
	*outcome = DB_ITER_INTERRUPTED;
	return rc ? rc : RT_EIO;
}

/* ---- the baseline ---- */

/* Objective median of the baseline, for the summary: it measured one
 * configuration, which is both arms' value. */
static void baseline_objective(struct camp *c, struct db_iteration *it, struct series *ser,
			       size_t nser)
{
	const struct spec_objective *ob = &c->s->objective;
	struct series *s = camp_series_find(ser, nser, ob->bench, ob->metric);
	if (s) {
		it->obj_best = it->obj_cand = run_stats_median(s->v[0], s->n[0]);
		it->n_best = (int)s->n[0];
	}
	free(it->objective);
	it->objective = xasprintf("%s.%s", ob->bench, ob->metric);
}

/* Can the repeats resolve min_gain, given the spread of the baseline's
 * objective? Its spread is recorded (fact objective.noise); a warning on
 * the run's output when the smallest change that repeats.max samples per
 * arm can tell from noise is above min_gain (a loaded host: -t 1 against
 * -t 2 measured +504%, +331% and -5.5% within 30 minutes). */
static void baseline_noise(struct camp *c, int64_t id, struct series *ser, size_t nser)
{
	const struct spec_objective *ob = &c->s->objective;
	struct series *s = camp_series_find(ser, nser, ob->bench, ob->metric);
	double g = s ? run_stats_resolvable_gain(s->v[0], s->n[0], c->s->repeats.max, c->s->repeats.confidence)
		     : NAN;
	if (isnan(g))
		return;
	char *v = xasprintf("%s.%s: %d repeats per arm resolve about %.2f%% at %.0f%% confidence (spread of %zu "
			    "baseline runs); min_gain %.2f%%",
			    ob->bench, ob->metric, c->s->repeats.max, g * 100, c->s->repeats.confidence * 100,
			    s->n[0], ob->min_gain * 100);
	struct rt_sb why = RT_SB_INIT;
	if (db_fact_add(c->db, c->cid, id, "objective.noise", v, &why))
		camp_warn(c, "objective.noise", &why);
	rt_sb_release(&why);
	if (g > ob->min_gain) {
		char *msg = xasprintf("warning: min_gain is below what the repeats can resolve on this host: %s; "
				      "raise min_gain or repeats.max, or quiet the host", v);
		if (c->o->quiet)
			fprintf(stderr, "ratchet: %s\n", msg);
		else
			rep_progress_msg(&c->prog, msg);
		free(msg);
	}
	free(v);
}

/* The baseline's gate run, the reference of every later one. */
static enum db_iter_state baseline_gate(struct camp *c, struct db_iteration *it, int *rc,
					struct rt_sb *why)
{
	rep_progress_phase(&c->prog, c->seq, "baseline", "gate");
	struct run_gate_result gr;
	memset(&gr, 0, sizeof(gr));
	enum db_iter_state st = DB_ITER_BASELINE;
	*rc = camp_gate(c, it->id, &c->cfg, &gr, why);
	if (*rc == RT_EDB) {
		camp_fatal(c, *rc); /* its records could not be stored */
	} else if (*rc == RT_EINTR) {
		camp_reason(it, "interrupted by a signal; `ratchet run --resume` measures it again");
		st = DB_ITER_INTERRUPTED;
	} else if (*rc) {
		camp_reason(it, "baseline gate failed to run: %s", why->buf);
		st = DB_ITER_FAILED;
	} else if (!gr.passed) {
		camp_reason(it, "baseline does not pass the gate: %s", gr.verdict);
		*rc = RT_ECHECK;
		st = DB_ITER_GATED;
	}
	c->baseline_gate = it->gate_run_id = gr.run_id;
	run_gate_result_release(&gr);
	return st;
}

int camp_run_baseline(struct camp *c, struct rt_sb *err)
{
	struct db_iteration it;
	memset(&it, 0, sizeof(it));
	struct series *ser = NULL;
	size_t nser = 0;
	struct rt_sb why = RT_SB_INIT;
	int64_t id;
	/* seq 0, unless an earlier baseline attempt was interrupted */
	int rc = db_iteration_create(c->db, c->cid, c->seq, 0, "baseline", "baseline", "", NULL, NULL,
				     "baseline", DB_ROLE_CHANGE, &id, &why);
	if (!rc && c->worker.device)
		rc = db_iteration_set_pool(c->db, id, c->worker.round, c->worker.device, &why);
	if (!rc)
		rc = db_iteration_get(c->db, id, &it, &why);
	if (rc)
		rc = camp_fatal(c, rc);
	c->variant = "baseline";
	rep_progress_phase(&c->prog, c->seq, "baseline", "bench");
	if (!rc)
		rc = camp_iter_enter(c, &it, DB_ITER_MEASURING, "bench", &why);
	for (int r = 0; r < c->s->repeats.min && !rc; r++)
		rc = camp_stop_requested ? RT_EINTR : camp_measure(c, id, 0, r, &c->cfg, &ser, &nser, &why);
	enum db_iter_state st = DB_ITER_FAILED;
	if (rc == RT_EINTR && !c->fatal) {
		st = DB_ITER_INTERRUPTED;
		camp_reason(&it, "interrupted by a signal; `ratchet run --resume` measures it again");
	} else if (!rc) {
		baseline_objective(c, &it, ser, nser);
		baseline_noise(c, id, ser, nser);
		st = c->s->gate.present ? baseline_gate(c, &it, &rc, &why) : DB_ITER_BASELINE;
	} else if (!c->fatal) {
		camp_reason(&it, "%s: %s", rc == RT_EBUSY ? "refused to measure" : "baseline failed", why.buf);
	}
	if (st == DB_ITER_BASELINE)
		camp_reason(&it, "baseline: %s.%s median %.6g over %d runs", c->s->objective.bench,
			    c->s->objective.metric, it.obj_best, it.n_best);
	const char *texts[] = { why.buf };
	int drc = disk_full(c, &it, &st, texts, RT_ARRAY_SIZE(texts), rc);
	rc = drc ? drc : rc;
	if (!c->fatal) {
		rt_sb_reset(&why);
		camp_record(c, &it, st, NULL, 0, false, &why);
	}
	if (c->fatal)
		rc = rt_errf(err, c->fatal, "baseline: %s", why.buf);
	else if (rc)
		rt_errf(err, rc, "%s%s", it.reason, rc == RT_ECHECK ? "; fix the engine or the thresholds first" : "");
	else
		c->best_iter = id;
	rep_progress_done(&c->prog, c->seq, it.state, it.reason ? it.reason : why.buf);
	db_iteration_release(&it);
	camp_series_free(ser, nser);
	rt_sb_release(&why);
	return rc;
}

/* ---- one change ---- */

/* An iteration in flight. */
struct iter {
	struct camp *c;                 /* the campaign */
	const struct agent_proposal *p; /* what the strategy proposed */
	const struct var_def *v;        /* the variant of the change */
	struct var_plan plan;           /* the files it touches */
	struct var_config cand;         /* the candidate's engine configuration */
	struct db_iteration it;         /* the row; it.state is the stored state */
	struct series *ser;             /* samples of every metric */
	size_t nser;                    /* entries in ser */
	struct run_stats_decision d;    /* the objective's decision so far */
	struct rt_sb why;               /* error text of the step that failed */
	struct rt_sb log;               /* build output */
	enum db_iter_state outcome;     /* the final state once known, DB_ITER_PENDING until then */
	bool applied;                   /* the candidate's files may be in place */
	bool apply_failed;              /* the change could not be planned or applied */
};

static bool decided(const struct iter *t)
{
	return t->outcome != DB_ITER_PENDING;
}

/* End the iteration early with state and a reason. */
static int end_with(struct iter *t, enum db_iter_state state, const char *what)
{
	camp_reason(&t->it, "%s: %s", what, t->why.buf);
	t->outcome = state;
	return 0;
}

static int enter(struct iter *t, enum db_iter_state to, const char *phase)
{
	return camp_iter_enter(t->c, &t->it, to, phase, &t->why);
}

/* The change leaves the best configuration as it is (its fingerprint is
 * the best's): an A/A test would only measure noise, and a no-op could be
 * kept or reverted by chance. It is not measured: it is recorded as the
 * best's observation (not kept, the best's objective on both sides, a
 * change of 0), which is what a search learns from it. */
static int end_unchanged(struct iter *t, const char *config_sha)
{
	struct camp *c = t->c;
	struct db_iteration best;
	memset(&best, 0, sizeof(best));
	rt_sb_reset(&t->why);
	if (db_iteration_get(c->db, c->best_iter, &best, &t->why))
		return camp_fatal(c, RT_EDB);
	t->it.obj_best = t->it.obj_cand = best.obj_cand;
	t->it.obj_delta = 0;
	camp_reason(&t->it, "unchanged: the configuration it gives is the best's (config sha256 %.12s, "
		    "iteration %d): not measured, recorded as the best's observation", config_sha, best.seq);
	db_iteration_release(&best);
	t->outcome = DB_ITER_REVERTED;
	return 0;
}

/* Plan, describe and fingerprint the change, touching nothing; create its row. */
static int step_plan(struct iter *t)
{
	struct camp *c = t->c;
	const struct var_def *v = t->v;
	char change_sha[65] = "", config_sha[65] = "";
	struct rt_sb desc = RT_SB_INIT, perr = RT_SB_INIT;
	bool unchanged = false;
	int prc = camp_plan(c, v, &t->cand, &t->plan, &desc, change_sha, config_sha, &unchanged, &t->log,
			    &perr);
	if (!prc && c->gen && camp_proposer_of(c->s)->contain)
		prc = camp_proposer_of(c->s)->contain(c, &t->plan, &perr);
	int64_t id;
	int rc = db_iteration_create(c->db, c->cid, c->seq, c->best_iter, v->name, var_kind_name(v->kind),
				     desc.buf, change_sha[0] ? change_sha : NULL,
				     config_sha[0] ? config_sha : NULL, t->p->note, t->p->role, &id, &t->why);
	if (!rc && c->worker.device) /* a pool's worker: its round and device */
		rc = db_iteration_set_pool(c->db, id, c->worker.round, c->worker.device, &t->why);
	if (!rc)
		rc = db_iteration_get(c->db, id, &t->it, &t->why);
	if (!rc && c->gen && camp_proposer_of(c->s)->record)
		rc = camp_proposer_of(c->s)->record(c, id, t->p, c->gen, &t->why);
	if (!rc) {
		free(t->it.objective);
		t->it.objective = xasprintf("%s.%s", c->s->objective.bench, c->s->objective.metric);
		rep_progress_phase(&c->prog, c->seq, v->name, "apply");
		rt_sb_reset(&t->why);
		rt_sb_adds(&t->why, perr.buf);
	}
	rt_sb_release(&desc);
	rt_sb_release(&perr);
	if (rc)
		return camp_fatal(c, rc);
	if (prc) {
		t->apply_failed = true;
		return end_with(t, DB_ITER_FAILED, "cannot apply");
	}
	return unchanged && t->p->fidelity >= 1 && c->best_iter ? end_unchanged(t, config_sha) : 0;
}

/* The candidate in place: applying, then applied. A failed apply may have
 * moved some files: `applied` is set first, so the end takes it back. */
static int apply_cand(struct iter *t)
{
	rep_progress_phase(&t->c->prog, t->c->seq, t->v->name, t->v->build.n ? "build" : "apply");
	int rc = enter(t, DB_ITER_APPLYING, "apply");
	if (rc)
		return rc;
	t->applied = true;
	rt_sb_reset(&t->why);
	if (camp_to_cand(t->c, t->it.id, t->v, &t->plan, &t->cand, &t->log, &t->why)) {
		t->apply_failed = !t->c->fatal;
		return t->c->fatal ? t->c->fatal : end_with(t, DB_ITER_FAILED, "apply failed");
	}
	return enter(t, DB_ITER_APPLIED, "apply");
}

/* The fact naming a variant whose revert failed (its value: the variant). */
#define REVERT_FAILED_FACT "revert-failed"

/* Did a revert after variant name fail in an earlier attempt? */
static bool revert_failed_before(struct camp *c, const char *name)
{
	char **v = NULL;
	size_t n = 0;
	bool seen = false;
	struct rt_sb why = RT_SB_INIT;
	if (!db_fact_values(c->db, c->cid, REVERT_FAILED_FACT, &v, &n, &why))
		for (size_t i = 0; i < n; i++) {
			seen |= !strcmp(v[i], name);
			free(v[i]);
		}
	free(v);
	rt_sb_release(&why);
	return seen;
}

/* The best configuration could not be put back (its build failed, why):
 * that says nothing about the change. The iteration is interrupted and the
 * run stops (returns rc); --resume puts the files back and tries the change
 * again. When the revert after the same change failed in an earlier attempt
 * too (fact revert-failed), the change is recorded failed instead: a build
 * that fails on the reverted tree every time once stopped every --resume
 * at the same change, forever (issue 22, item 19). An iteration already
 * interrupted (a signal, a full disk) keeps the reason that says what next. */
static int revert_failed(struct iter *t, const char *why, int rc)
{
	struct camp *c = t->c;
	struct rt_sb next = RT_SB_INIT;
	char where[4200]; /* a folder's path and a few words */
	const char *texts[] = { why, t->log.buf };
	bool again = t->outcome != DB_ITER_INTERRUPTED;
	bool full = again && out_of_space(c, texts, RT_ARRAY_SIZE(texts), where, sizeof(where));
	bool before = again && !full && revert_failed_before(c, t->v->name);
	if (full)
		rt_sb_addf(&next, " (the disk is full: %s)", where);
	if (before)
		rt_sb_addf(&next, ", as in an earlier attempt: the change is recorded failed, and "
			   "`ratchet run --resume %s` goes on without it", c->s->path);
	else if (again)
		rt_sb_addf(&next, ": interrupted, `ratchet run --resume %s` tries it again", c->s->path);
	camp_reason(&t->it, "%s%sthe revert to the best configuration failed: %s%s",
		    t->it.reason ? t->it.reason : "", t->it.reason ? "; and " : "", why, next.buf);
	rt_sb_release(&next);
	if (again && !full) {
		struct rt_sb ferr = RT_SB_INIT;
		if (db_fact_add(c->db, c->cid, t->it.id, REVERT_FAILED_FACT, t->v->name, &ferr))
			camp_warn(c, REVERT_FAILED_FACT, &ferr);
		rt_sb_release(&ferr);
	}
	t->outcome = before ? DB_ITER_FAILED : DB_ITER_INTERRUPTED;
	return rc;
}

/* The best configuration back between arms. */
static int revert_cand(struct iter *t)
{
	rep_progress_phase(&t->c->prog, t->c->seq, t->v->name, "revert");
	rt_sb_reset(&t->why);
	int rc = camp_to_best(t->c, t->it.id, t->v, &t->plan, &t->log, &t->why);
	if (rc)
		return t->c->fatal ? t->c->fatal : revert_failed(t, t->why.buf, rc);
	t->applied = false;
	return 0;
}

/* What one sample's failure means for the iteration. *again: measure the
 * same slot again (an endpoint that could not be proven, once). */
static int sample_failed(struct iter *t, int rc, int arm, int *invalid, bool *again)
{
	struct camp *c = t->c;
	*again = false;
	if (c->fatal)
		return c->fatal;
	if (rc == RT_EINTR) /* the second signal: recorded interrupted by step_end */
		return rc;
	if (rc == RT_EIDENTITY) {
		/* Not the engine we started: the samples do not count. */
		struct rt_sb ferr = RT_SB_INIT;
		if (db_fact_add(c->db, c->cid, t->it.id, "invalid-measurement", t->why.buf, &ferr))
			camp_warn(c, "invalid-measurement", &ferr);
		rt_sb_release(&ferr);
		*again = ++*invalid < 2;
		return *again ? 0 : end_with(t, DB_ITER_INVALID, "measurement invalid");
	}
	if (rc == RT_EBUSY) {
		end_with(t, DB_ITER_FAILED, "refused to measure");
		return rc;
	}
	if (rc == RT_ECHECK && arm == 1) /* the candidate's output is wrong */
		return end_with(t, DB_ITER_GATED, "correctness check failed");
	return end_with(t, DB_ITER_FAILED, arm ? "candidate measurement failed" : "best measurement failed");
}

/* A cheap measurement (a search's low fidelity) takes this many runs per
 * arm: repeats.min scaled by the fidelity, at least one. */
static int cheap_runs(const struct iter *t)
{
	long n = lround(t->c->s->repeats.min * t->p->fidelity);
	return n < 1 ? 1 : (int)n;
}

/* Both arms on the A/B schedule until the rule settles or repeats.max; a
 * cheap measurement takes cheap_runs() per arm and is not decided. */
static int step_measure(struct iter *t)
{
	struct camp *c = t->c;
	const struct spec_repeats *rp = &c->s->repeats;
	bool cheap = t->p->fidelity < 1;
	int min = cheap ? cheap_runs(t) : rp->min, max = cheap ? min : rp->max;
	int invalid = 0, rc = 0;
	t->d.verdict = RUN_STATS_CONTINUE;
	for (int j = 0; j < 2 * max && t->d.verdict == RUN_STATS_CONTINUE && !rc && !decided(t); j++) {
		int arm, rep;
		bool decide_now, again;
		camp_slot(j, min, rp->interleave, &arm, &rep, &decide_now);
		decide_now &= !cheap;
		if (camp_stop_requested)
			return RT_EINTR;
		if (arm == 1 && !t->applied)
			rc = apply_cand(t);
		else if (arm == 0 && t->applied)
			rc = revert_cand(t);
		if (rc || decided(t) || (rc = enter(t, DB_ITER_MEASURING, "bench")))
			break;
		rt_sb_reset(&t->why);
		int mrc = camp_measure(c, t->it.id, arm, rep, arm ? &t->cand : &c->cfg, &t->ser, &t->nser, &t->why);
		if (mrc) {
			rc = sample_failed(t, mrc, arm, &invalid, &again);
			j -= again; /* the same slot again */
			continue;
		}
		rep_progress_phase(&c->prog, c->seq, t->v->name, decide_now ? "decide" : "bench");
		rt_sb_reset(&t->why);
		if (decide_now && camp_decide_objective(c, t->v->name, t->ser, t->nser, &t->d, &t->why)) {
			camp_reason(&t->it, "%s", t->why.buf);
			t->outcome = DB_ITER_FAILED;
		}
	}
	return rc;
}

/* A cheap measurement's end: the medians recorded for the strategy to
 * rank, never kept (only full fidelity decides keeps). */
static int step_cheap(struct iter *t)
{
	const struct spec_objective *ob = &t->c->s->objective;
	struct series *s = camp_series_find(t->ser, t->nser, ob->bench, ob->metric);
	if (!s || !s->n[0] || !s->n[1]) {
		rt_sb_reset(&t->why);
		rt_sb_addf(&t->why, "%s.%s was not measured", ob->bench, ob->metric);
		return end_with(t, DB_ITER_FAILED, "cheap measurement");
	}
	t->it.obj_best = run_stats_median(s->v[0], s->n[0]);
	t->it.obj_cand = run_stats_median(s->v[1], s->n[1]);
	t->it.obj_delta = (t->it.obj_cand - t->it.obj_best) / t->it.obj_best * (ob->goal == SPEC_GOAL_MIN ? -1 : 1);
	t->it.n_best = (int)s->n[0];
	t->it.n_cand = (int)s->n[1];
	camp_reason(&t->it, "cheap measurement at fidelity %.3g (%d run%s per arm): candidate %.6g, best %.6g "
		    "(%+.1f%%); ranked by the search, never kept", t->p->fidelity, cheap_runs(t),
		    cheap_runs(t) == 1 ? "" : "s", t->it.obj_cand, t->it.obj_best, t->it.obj_delta * 100);
	t->outcome = DB_ITER_REVERTED;
	return 0;
}

/* The rule's verdict, the constraints, and a greedy trial's role. */
static int step_decide(struct iter *t)
{
	t->outcome = camp_verdict(t->c, t->p->role, &t->d, t->ser, t->nser, t->c->s->repeats.interleave,
				  &t->it);
	return 0;
}

/* A change to keep must be in place, and pass the gate there. */
static int step_gate(struct iter *t)
{
	struct camp *c = t->c;
	int rc = 0;
	if (!t->applied && ((rc = apply_cand(t)) || t->outcome != DB_ITER_KEPT))
		return rc; /* apply_cand failed the iteration, or the campaign */
	if (!c->s->gate.present)
		return 0;
	rep_progress_phase(&c->prog, c->seq, t->v->name, "gate");
	if ((rc = enter(t, DB_ITER_MEASURING, "gate")))
		return rc;
	struct run_gate_result gr;
	memset(&gr, 0, sizeof(gr));
	rt_sb_reset(&t->why);
	char *rule = xstrdup(t->it.reason);
	rc = camp_gate(c, t->it.id, &t->cand, &gr, &t->why);
	if (gr.run_id)
		t->it.gate_run_id = gr.run_id;
	if (rc == RT_EINTR) { /* the second signal: recorded interrupted by step_end */
		free(rule);
		run_gate_result_release(&gr);
		return rc;
	}
	if (rc == RT_EDB)
		camp_fatal(c, rc);
	else if (rc)
		camp_reason(&t->it, "%s; gate could not run: %s", rule, t->why.buf);
	else
		camp_reason(&t->it, "%s; gate: %s", rule, gr.verdict ? gr.verdict : "");
	t->outcome = rc ? DB_ITER_FAILED : gr.passed ? DB_ITER_KEPT : DB_ITER_GATED;
	run_gate_result_release(&gr);
	free(rule);
	return c->fatal;
}

/* Unless kept, the best configuration back (a failed apply included); a
 * revert that fails is revert_failed's. */
static int take_back(struct iter *t, int rc)
{
	struct camp *c = t->c;
	rep_progress_phase(&c->prog, c->seq, t->v->name, "revert");
	struct rt_sb rerr = RT_SB_INIT;
	int rrc = camp_to_best(c, t->it.id, t->v, &t->plan, &t->log, &rerr);
	if (c->fatal) {
		rt_sb_reset(&t->why);
		rt_sb_adds(&t->why, rerr.buf);
	} else if (rrc) {
		rrc = revert_failed(t, rerr.buf, rrc);
		rc = rc ? rc : rrc;
	} else {
		t->applied = false;
	}
	rt_sb_release(&rerr);
	return rc;
}

/* The change kept: it is the best configuration now. */
static void adopt(struct iter *t)
{
	struct camp *c = t->c;
	c->best_iter = t->it.id;
	c->kept[t->p->variant] |= !t->p->point;
	var_config_release(&c->cfg);
	var_config_copy(&c->cfg, &t->cand);
}

/* Count the changes in a row that failed to apply for the same reason
 * (a misspelled table file fails every point alike): camp_apply_streak()
 * stops the run on it. Anything else starts the count again. */
static void apply_streak(struct iter *t)
{
	struct camp *c = t->c;
	bool failed = t->apply_failed && t->outcome == DB_ITER_FAILED && t->it.reason;
	/* The reason with the variant's name taken out: "a: build: ..." and
	 * "b: build: ..." are the same reason. */
	char *why = NULL;
	if (failed) {
		struct rt_sb sb = RT_SB_INIT;
		size_t nl = strlen(t->v->name);
		const char *r0 = t->it.reason;
		for (const char *r = r0; *r;) {
			bool word = nl && !strncmp(r, t->v->name, nl) && (r == r0 || r[-1] == ' ') &&
				    (!r[nl] || r[nl] == ':' || r[nl] == ' ' || r[nl] == ',');
			if (word)
				rt_sb_adds(&sb, "<variant>"), r += nl;
			else
				rt_sb_addc(&sb, *r++);
		}
		why = rt_sb_detach(&sb, NULL);
	}
	if (why && c->streak.reason && !strcmp(c->streak.reason, why)) {
		c->streak.n++;
		free(why);
		return;
	}
	free(c->streak.reason);
	c->streak.reason = why;
	c->streak.n = why ? 1 : 0;
}

int camp_apply_streak(const struct camp *c, struct rt_sb *err)
{
	if (c->streak.n < CAMP_APPLY_STREAK_MAX)
		return 0;
	return rt_errf(err, RT_EINVAL, "%d changes in a row failed to apply for the same reason (%s): stopped, "
		       "as every later one would too; fix it, then `ratchet run --resume %s` goes on",
		       c->streak.n, c->streak.reason, c->s->path);
}

/* Files back to the best unless kept; the outcome recorded with its
 * statistics. A broken journal records nothing (camp_fatal). */
static int step_end(struct iter *t, int rc, struct rt_sb *err)
{
	struct camp *c = t->c;
	if (rc == RT_EINTR && !c->fatal) {
		camp_reason(&t->it, "interrupted by a signal; `ratchet run --resume` tries it again");
		t->outcome = DB_ITER_INTERRUPTED;
	}
	const char *texts[] = { t->why.buf, t->log.buf, t->it.reason };
	int drc = disk_full(c, &t->it, &t->outcome, texts, RT_ARRAY_SIZE(texts), rc);
	rc = drc ? drc : rc;
	if (t->applied && t->outcome != DB_ITER_KEPT && !c->fatal)
		rc = take_back(t, rc);
	if (t->outcome == DB_ITER_FAILED && t->log.len && !c->fatal)
		camp_store_artifact(c, t->it.id, "build-log", "build.log", t->log.buf, t->log.len,
				    t->log.len >= t->log.cap);
	bool stats = t->outcome != DB_ITER_INVALID && t->outcome != DB_ITER_INTERRUPTED && rc != RT_EBUSY &&
		     t->p->fidelity >= 1;
	if (!c->fatal && !camp_record(c, &t->it, t->outcome, t->ser, t->nser, stats, &t->why) &&
	    t->outcome == DB_ITER_KEPT)
		adopt(t);
	if (c->fatal)
		rc = rt_errf(err, c->fatal, "iteration %d (%s): %s", c->seq, t->v->name, t->why.buf);
	else if (rc && rc != RT_EINTR)
		rt_errf(err, rc, "%s", t->it.reason);
	if (t->it.id)
		rep_progress_done(&c->prog, c->seq, t->it.state, c->fatal ? t->why.buf : t->it.reason);
	apply_streak(t);
	return rc;
}

static void iter_init(struct iter *t, struct camp *c, const struct agent_proposal *p)
{
	memset(t, 0, sizeof(*t));
	t->c = c;
	t->p = p;
	t->v = c->gen ? &c->gen->def : &c->s->variants[p->variant];
	t->outcome = DB_ITER_PENDING;
	rt_sb_init(&t->log, 4u << 20);
	var_config_copy(&t->cand, &c->cfg);
	c->variant = t->v->name;
}

static void iter_release(struct iter *t)
{
	db_iteration_release(&t->it);
	var_config_release(&t->cand);
	var_plan_release(&t->plan);
	camp_series_free(t->ser, t->nser);
	rt_sb_release(&t->why);
	rt_sb_release(&t->log);
}

int camp_run_one(struct camp *c, const struct agent_proposal *p, struct rt_sb *err)
{
	struct iter t;
	iter_init(&t, c, p);
	int rc = step_plan(&t);          /* plan, describe, fingerprint; the row is created */
	if (!rc && !decided(&t))
		rc = step_measure(&t);   /* both arms on the A/B schedule until the rule settles */
	if (!rc && !decided(&t))         /* the rule's verdict, constraints, a trial's role; */
		rc = p->fidelity < 1 ? step_cheap(&t) : step_decide(&t); /* a cheap one is never kept */
	if (!rc && t.outcome == DB_ITER_KEPT)
		rc = step_gate(&t);      /* the candidate in place, gated */
	rc = step_end(&t, rc, err);      /* files back to the best unless kept; the outcome recorded */
	iter_release(&t);
	return rc;
}
