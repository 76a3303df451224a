/*
 * The decision (see campaign_int.h): the sequential rule on the objective
 * (runner/stats), the constraints on the candidate's medians, a greedy
 * trial's role, the GSM8K gate, and the record of an iteration's end:
 * statistics and regressions of every tracked metric, the final state and
 * the campaign's best, written in one transaction.
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Said, in its reason, of a greedy trial that passed. Words for people only:
 * the strategy reads iterations.passed. */
#define RUN_TRIAL_PASSED "trial passed: the round's best is confirmed by a round of its own"

void camp_reason(struct db_iteration *it, const char *fmt, ...)
{
	struct rt_sb sb = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(it->reason);
	it->reason = rt_sb_detach(&sb, NULL);
}

/* The rule's options for this campaign, with its noise so far. */
static struct run_stats_decide_opts decide_opts(const struct camp *c)
{
	const struct spec_objective *ob = &c->s->objective;
	return (struct run_stats_decide_opts){
		.minimize = ob->goal == SPEC_GOAL_MIN,
		.min_gain = ob->min_gain,
		.confidence = c->s->repeats.confidence,
		.min_repeats = c->s->repeats.min,
		.max_repeats = c->s->repeats.max,
		.prior = c->prior.noise,
	};
}

/* One stored comparison's noise added to c->prior.noise, as camp_verdict added
 * it when it was decided: the rule again on its valid objective samples
 * (the rule's noise depends on the samples, not on their order). */
static int replay_noise(struct camp *c, const struct db_iteration *it, struct rt_sb *why)
{
	const struct spec_objective *ob = &c->s->objective;
	struct db_q_series *v = NULL;
	size_t n = 0;
	int rc = db_q_series_list(c->db, it->id, &v, &n, why);
	const struct db_q_series *arm[2] = { NULL, NULL };
	for (size_t i = 0; i < n && !rc; i++)
		if (!strcmp(v[i].benchmark, ob->bench) && !strcmp(v[i].metric, ob->metric))
			arm[!strcmp(v[i].arm, "cand")] = &v[i];
	struct run_stats_decide_opts o = decide_opts(c);
	struct run_stats_decision d;
	if (!rc && arm[0] && arm[1] && !run_stats_decide(arm[0]->v, arm[0]->n, arm[1]->v, arm[1]->n, &o, &d))
		run_stats_noise_add(&c->prior.noise, &d.noise);
	db_q_series_free(v, n);
	return rc;
}

/* The campaign's noise from the store, once per process: after --resume,
 * every comparison decided before (in seq order) gives the next decisions
 * the prior an uninterrupted run would have given them. Interrupted
 * iterations are measured again, so they do not count. A pool worker
 * counts only the iterations before its round (c->prior.before): its
 * siblings record theirs while it runs, and a prior that read whichever
 * had finished made the pool's decisions depend on the workers' timing
 * (issue 22, item 10). */
static int load_noise(struct camp *c, struct rt_sb *why)
{
	c->prior.loaded = true;
	struct db_q_iter_filter f = { .campaign_id = c->cid };
	struct db_iteration *v = NULL;
	size_t n = 0;
	int rc = db_q_iters(c->db, &f, &v, &n, why);
	for (size_t i = 0; i < n && !rc; i++)
		if (v[i].seq > 0 && v[i].test && db_iter_state_final(v[i].state) &&
		    v[i].state != DB_ITER_INTERRUPTED && (!c->prior.before || v[i].seq < c->prior.before))
			rc = replay_noise(c, &v[i], why);
	db_iterations_free(v, n);
	return rc;
}

int camp_decide_objective(struct camp *c, const char *variant, struct series *ser, size_t nser,
			  struct run_stats_decision *d, struct rt_sb *why)
{
	const struct spec_objective *ob = &c->s->objective;
	struct series *obj = camp_series_find(ser, nser, ob->bench, ob->metric);
	if (!obj || !obj->n[0] || !obj->n[1])
		return rt_errf(why, RT_EINVAL, "objective %s.%s was not measured", ob->bench, ob->metric);
	if (!c->prior.loaded && load_noise(c, why))
		return RT_EINVAL;
	struct run_stats_decide_opts dopt = decide_opts(c);
	if (run_stats_decide(obj->v[0], obj->n[0], obj->v[1], obj->n[1], &dopt, d))
		return rt_errf(why, RT_EINVAL,
			       "cannot compare %s: a sample of %s.%s is not a positive number", variant,
			       ob->bench, ob->metric);
	return 0;
}

static bool constraint_holds(const struct spec_constraint *k, double v)
{
	switch (k->op) {
	case SPEC_OP_LE: return v <= k->value;
	case SPEC_OP_LT: return v < k->value;
	case SPEC_OP_GE: return v >= k->value;
	case SPEC_OP_GT: return v > k->value;
	}
	return false;
}

/* Median of the candidate arm, NAN when it was not measured. */
static double cand_median(struct series *ser, size_t nser, const char *bench, const char *metric)
{
	struct series *s = camp_series_find(ser, nser, bench, metric);
	return s && s->n[1] ? run_stats_median(s->v[1], s->n[1]) : NAN;
}

static enum db_iter_state verdict(struct camp *c, enum db_iter_role role,
				  const struct run_stats_decision *d, struct series *ser, size_t nser,
				  bool paired, struct db_iteration *it)
{
	/* The objective's noise, for the comparisons still to come. */
	run_stats_noise_add(&c->prior.noise, &d->noise);
	it->obj_best = d->centre_best;
	it->obj_cand = d->centre_cand;
	it->obj_delta = d->effect;
	it->obj_ci_lo = d->lo;
	it->obj_ci_hi = d->hi;
	it->confidence = c->s->repeats.confidence;
	free(it->test);
	it->test = xstrdup(d->test ? d->test : "");
	it->p_value = d->p_value;
	it->n_best = (int)d->n_best;
	it->n_cand = (int)d->n_cand;
	it->paired = paired;
	camp_reason(it, "%s", d->reason);
	if (d->verdict != RUN_STATS_KEEP)
		return DB_ITER_REVERTED;
	for (size_t k = 0; k < c->s->n_constraints; k++) {
		const struct spec_constraint *ct = &c->s->constraints[k];
		double m = cand_median(ser, nser, ct->bench, ct->metric);
		if (isnan(m) || !constraint_holds(ct, m)) {
			camp_reason(it, "%s; constraint %s violated (candidate median %.6g)", d->reason,
				    ct->text, m);
			return DB_ITER_REVERTED;
		}
	}
	/* A greedy trial is decided but never kept: the round's best is applied
	 * again (and gated) at the end of the round. */
	if (role == DB_ROLE_TRIAL) {
		it->passed = 1;
		camp_reason(it, "%s; %s", d->reason, RUN_TRIAL_PASSED);
		return DB_ITER_REVERTED;
	}
	return DB_ITER_KEPT;
}

/* Whether the decision used samples the device throttled by power or heat
 * (telemetry.throttled, where the device tells its reasons). */
static void throttle_note(struct series *ser, size_t nser, struct db_iteration *it)
{
	struct series *s = camp_series_find(ser, nser, "telemetry", "throttled");
	if (!s)
		return;
	size_t t[2] = { 0, 0 };
	for (int arm = 0; arm < 2; arm++)
		for (size_t i = 0; i < s->n[arm]; i++)
			t[arm] += s->v[arm][i] > 0;
	char *r = it->reason;
	it->reason = NULL;
	if (t[0] + t[1])
		camp_reason(it, "%s; used %zu throttled samples (best %zu of %zu, candidate %zu of %zu)", r,
			    t[0] + t[1], t[0], s->n[0], t[1], s->n[1]);
	else
		camp_reason(it, "%s; no sample was throttled", r);
	free(r);
}

enum db_iter_state camp_verdict(struct camp *c, enum db_iter_role role,
				const struct run_stats_decision *d, struct series *ser, size_t nser,
				bool paired, struct db_iteration *it)
{
	enum db_iter_state st = verdict(c, role, d, ser, nser, paired, it);
	throttle_note(ser, nser, it);
	return st;
}

int camp_gate(struct camp *c, int64_t iter, const struct var_config *cfg,
	      struct run_gate_result *gr, struct rt_sb *err)
{
	struct camp_launch *l = NULL;
	int rc = 0;
	const char *url = c->s->gate.endpoint;
	const char *model = c->s->gate.model;
	if (c->s->engine.present && !url) {
		/* the baseline's configuration (no best yet), else the candidate's */
		rc = camp_engine_get(c, iter, c->best_iter ? 1 : 0, cfg, &l, err);
		if (!rc && (rc = run_engine_verify(l->eng, err)))
			camp_engine_put(c, l, true, "engine-gate.log");
		if (!rc) {
			url = run_engine_url(l->eng);
			model = model ? model : run_engine_model(l->eng);
		} else {
			l = NULL;
		}
	}
	if (!rc && !url)
		rc = rt_errf(err, RT_EINVAL, "gate: no endpoint (the spec has no engine and no gate.gsm8k.endpoint)");
	if (!rc) {
		rc = run_gate_run(c->db, &c->s->gate, url, model, c->o->api_key, iter, c->baseline_gate, gr,
				  err);
		if (rc > 0)
			rc = 0; /* the run id: a pass or a fail, gr->passed says which */
		if (!rc && l && (rc = run_engine_verify(l->eng, err)))
			rt_errf(err, 0, " (after the gate)");
	}
	if (l)
		camp_engine_put(c, l, rc != 0, rc ? "engine-gate.log" : NULL);
	return rc;
}

static bool better_higher(const struct camp *c, const char *bench, const char *metric)
{
	return spec_metric_better(c->s, bench, metric) != SPEC_BETTER_LOWER;
}

/* Floor of a regression: a metric that moved less than this is not one. */
#define REGRESSION_FLOOR 0.01

/* The objective's regression row, from the decision's own numbers (the
 * gain, its interval and the centres it compared), so that a change has
 * one number for its objective wherever it is shown. */
static int objective_regression(struct camp *c, const struct db_iteration *it, const struct series *s,
				bool kept, struct rt_sb *err)
{
	if (isnan(it->obj_delta) || !(it->obj_ci_hi < 0) || !(it->obj_delta < -REGRESSION_FLOOR))
		return 0;
	return db_regression_add(c->db, it->id, s->bench, s->metric, s->unit, it->obj_best, it->obj_cand,
				 it->obj_delta, it->obj_ci_lo, it->obj_ci_hi, kept, err);
}

/* metric_stats of one metric, and its regression row when it got worse. */
static int record_series(struct camp *c, const struct db_iteration *it, const struct series *s,
			 bool kept, struct rt_sb *err)
{
	int64_t iter = it->id;
	bool hib = better_higher(c, s->bench, s->metric);
	struct run_stats_summary sb, sc;
	run_stats_summarize(s->v[0], s->n[0], &sb);
	run_stats_summarize(s->v[1], s->n[1], &sc);
	double ratio = NAN, lo = NAN, hi = NAN;
	uint64_t seed = camp_hash_seed(c->s->seed, s->metric);
	if (sb.median > 0)
		run_stats_boot_ratio(s->v[0], s->n[0], s->v[1], s->n[1], c->s->repeats.confidence, 0, seed,
				     &ratio, &lo, &hi);
	double p = run_stats_mann_whitney(s->v[0], s->n[0], s->v[1], s->n[1], NULL);
	struct db_metric_stat ms = {
		.benchmark = s->bench, .metric = s->metric, .unit = s->unit,
		.better = hib ? "higher" : "lower", .best_median = sb.median,
		.cand_median = sc.median, .best_mad = sb.mad, .cand_mad = sc.mad,
		.ratio = ratio, .ci_lo = lo, .ci_hi = hi, .p_value = p,
		.n_best = (int)s->n[0], .n_cand = (int)s->n[1],
	};
	int rc = db_metric_stat_add(c->db, iter, &ms, err);
	/* Every metric, the client's own figures (send lag, a kernel's rsd and
	 * sample count) too: the reports list those apart from the engine's. */
	if (rc || !(sb.median > 0))
		return rc;
	const struct spec_objective *ob = &c->s->objective;
	if (!strcmp(s->bench, ob->bench) && !strcmp(s->metric, ob->metric) && !isnan(it->obj_delta))
		return objective_regression(c, it, s, kept, err);
	struct run_stats_regression r;
	if (run_stats_regression(s->v[0], s->n[0], s->v[1], s->n[1], hib, c->s->repeats.confidence,
				 REGRESSION_FLOOR, seed, &r) || !r.regressed)
		return 0;
	/* Stored signed so that negative is worse, the interval with it. */
	double d = hib ? r.delta : -r.delta;
	double dlo = hib ? r.lo : -r.hi, dhi = hib ? r.hi : -r.lo;
	return db_regression_add(c->db, iter, s->bench, s->metric, s->unit, sb.median, sc.median, d, dlo,
				 dhi, kept, err);
}

/* The row's final fields: passed follows from the state unless the caller
 * set it (a greedy trial that passed is reverted with passed = 1). */
static void finish_fields(struct db_iteration *it, enum db_iter_state state)
{
	it->state = state;
	if (state == DB_ITER_KEPT)
		it->passed = 1;
	else if ((state == DB_ITER_REVERTED || state == DB_ITER_GATED) && it->passed < 0)
		it->passed = 0;
	free(it->decision);
	it->decision = xstrdup(state == DB_ITER_KEPT || state == DB_ITER_BASELINE ? "keep" : "revert");
	free(it->phase);
	it->phase = xstrdup("decide");
	if (it->reason) {
		/* A reason may quote a benchmark's or engine's output. */
		struct rt_sb sb = RT_SB_INIT;
		rt_sb_adds(&sb, it->reason);
		if (rt_redact_secrets(&sb)) {
			free(it->reason);
			it->reason = rt_sb_detach(&sb, NULL);
		}
		rt_sb_release(&sb);
	}
}

int camp_record(struct camp *c, struct db_iteration *it, enum db_iter_state state,
		struct series *ser, size_t nser, bool stats, struct rt_sb *err)
{
	if (!camp_state_allowed(it->state, state))
		return camp_fatal(c, rt_errf(err, RT_ESTATE, "iteration %lld: cannot go from %s to %s",
					     (long long)it->id, db_iter_state_name(it->state),
					     db_iter_state_name(state)));
	enum db_iter_state from = it->state;
	finish_fields(it, state);
	bool best = state == DB_ITER_KEPT || state == DB_ITER_BASELINE;
	int rc = db_begin(c->db, err);
	for (size_t i = 0; i < nser && stats && !rc; i++)
		if (ser[i].n[0] && ser[i].n[1])
			rc = record_series(c, it, &ser[i], state == DB_ITER_KEPT, err);
	if (!rc)
		rc = db_iteration_finish(c->db, it, err);
	if (!rc && best)
		rc = db_campaign_set_best(c->db, c->cid, it->id, err);
	if (rc)
		db_rollback(c->db);
	else
		rc = db_commit(c->db, err);
	if (rc) {
		it->state = from; /* as the store still says */
		return camp_fatal(c, rc);
	}
	return 0;
}
