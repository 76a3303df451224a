/*
 * The campaign's side of a space strategy (coordinate, random, halving,
 * model, auto, genetic): the observations rebuilt from the store (proposals joined with
 * their iterations' outcomes), the strategy asked for the next point, the
 * point turned into a variant through the spec's own variant parser, the
 * proposal recorded beside its iteration, and a kept point's flags and
 * environment put back on --resume: the space row of the proposer table
 * (propose.c). The `proposals` rows written here also hold strategy llm's
 * accepted answers (llm.c), target -1.
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/proposals.h"
#include "runner/spec/spec_space.h"

void camp_gen_free(struct camp_gen *g)
{
	if (!g)
		return;
	spec_variant_release(&g->def);
	json_decref(g->variant);
	json_decref(g->point);
	free(g);
}

/*
 * The strategy's values, one per iteration: relative to the baseline (1),
 * higher is better, chained through the A/B ratios: a candidate is worth
 * its parent's value (the best it was measured against) times the ratio of
 * the candidate's median to the best arm's median in the same comparison.
 * The paired ratio cancels what drifts between iterations (a shared host's
 * load, a warming GPU), which the absolute medians would carry into the
 * model. NAN when infeasible (failed, gated, invalid) or not comparable.
 */
static double *chain_values(const struct camp *c, const struct camp_rows *r)
{
	double *v = xcalloc(r->ni + 1, sizeof(*v));
	bool lower = c->s->objective.goal == SPEC_GOAL_MIN;
	for (size_t i = 0; i < r->ni; i++) {
		const struct db_iteration *it = &r->its[i];
		size_t k;
		/* the parent comes earlier in seq order: later ones have no value yet */
		double pv = camp_rows_find(r, it->parent_id, &k) && k < i ? v[k] : NAN;
		double ratio = lower ? it->obj_best / it->obj_cand : it->obj_cand / it->obj_best;
		if (!strcmp(it->kind, "baseline"))
			v[i] = 1;
		else if (it->state == DB_ITER_FAILED || it->state == DB_ITER_GATED || it->state == DB_ITER_INVALID)
			v[i] = NAN;
		else
			v[i] = isfinite(ratio) && ratio > 0 ? (isnan(pv) ? 1 : pv) * ratio : NAN;
	}
	return v;
}

/* Proposal i's iteration (*k, an index into r->its) and its point
 * (*code); false when either is missing or unreadable. */
static bool rows_point(const struct camp *c, const struct camp_rows *r, size_t i, size_t *k, uint64_t *code)
{
	const struct db_proposal *p = &r->ps[i];
	const struct spec_space *sp = c->s->space;
	if (p->target < 0 || (size_t)p->target >= sp->n_targets || !camp_rows_find(r, p->iteration_id, k))
		return false;
	json_t *pj = json_loads(p->point, 0, NULL);
	bool ok = pj && !agent_point_from_json(&sp->targets[p->target].space, pj, code);
	json_decref(pj);
	return ok;
}

/* The observations of every target, from the store. */
struct obs_set {
	struct agent_obs **obs; /* per target */
	size_t *n;              /* per target */
};

static void load_obs(const struct camp *c, const struct camp_rows *r, struct obs_set *o)
{
	const struct spec_space *sp = c->s->space;
	o->obs = xcalloc(sp->n_targets, sizeof(*o->obs));
	o->n = xcalloc(sp->n_targets, sizeof(*o->n));
	for (size_t t = 0; t < sp->n_targets; t++)
		o->obs[t] = xcalloc(r->np + 1, sizeof(**o->obs));
	double *val = chain_values(c, r);
	for (size_t i = 0; i < r->np; i++) {
		size_t k, t = (size_t)r->ps[i].target;
		uint64_t code;
		/* interrupted or unfinished: not an observation (proposed again) */
		if (rows_point(c, r, i, &k, &code) && db_iter_state_final(r->its[k].state) &&
		    r->its[k].state != DB_ITER_INTERRUPTED)
			o->obs[t][o->n[t]++] = (struct agent_obs){ code, val[k], r->ps[i].fidelity };
	}
	free(val);
}

static void obs_release(const struct camp *c, struct obs_set *o)
{
	for (size_t t = 0; o->obs && t < c->s->space->n_targets; t++)
		free(o->obs[t]);
	free(o->obs);
	free(o->n);
}

/* The fingerprint of a point of target t: its label and the point's JSON. */
static void fingerprint(const struct spec_target *g, json_t *point, char out[65])
{
	char *pj = json_dumps(point, JSON_COMPACT | JSON_SORT_KEYS);
	char *text = xasprintf("%s\n%s", g->label, pj);
	rt_sha256_hex(text, strlen(text), out);
	free(text);
	free(pj);
}

/* The generated variant of a proposal. */
static int make_gen(struct camp *c, const struct agent_proposal *p, struct camp_gen **out, struct rt_sb *err)
{
	const struct spec_target *g = &c->s->space->targets[p->target];
	struct camp_gen *gen = xcalloc(1, sizeof(*gen));
	gen->point = agent_point_json(&g->space, p->code);
	gen->target = (int)p->target;
	fingerprint(g, gen->point, gen->fp);
	int rc = spec_space_variant(c->s, p->target, p->code, &gen->variant, err);
	if (!rc)
		rc = spec_variant_from_json(c->s, gen->variant, &gen->def, err);
	if (rc) {
		camp_gen_free(gen);
		return rc;
	}
	*out = gen;
	return 0;
}

/* Does a parameter's value v (JSON) spell the text a flag or variable holds? */
static bool value_is_text(json_t *v, const char *text)
{
	char *end;
	if (json_is_string(v))
		return !strcmp(json_string_value(v), text);
	if (json_is_number(v)) {
		double d = strtod(text, &end);
		return end != text && !*end && d == json_number_value(v);
	}
	if (json_is_boolean(v))
		return !strcmp(text, json_is_true(v) ? "true" : "false");
	return false;
}

/* Equal as table values: numbers by value (64 == 64.0), else JSON equality. */
static bool value_is_json(json_t *v, json_t *now)
{
	if (json_is_number(v) && json_is_number(now))
		return json_number_value(v) == json_number_value(now);
	return json_equal(v, now);
}

/* What parameter i of target g holds now in the best configuration: a
 * table entry's field (*js, borrowed from entry), else a flag's or an
 * environment variable's text (*txt, borrowed from argv or env). */
struct now_values {
	json_t *entry;      /* table: the entry now (owned) */
	char **argv;        /* flag: the effective argv (owned) */
	size_t argc;        /* entries in argv */
	struct rt_envv env; /* env: the engine's overrides (owned) */
};

static void now_release(struct now_values *nv)
{
	json_decref(nv->entry);
	rt_argv_free(nv->argv);
	rt_envv_release(&nv->env);
}

/* Read the target's binding as the best configuration has it now; false
 * when there is nothing to read (a template, a table that cannot be read). */
static bool now_read(struct camp *c, const struct spec_target *g, struct now_values *nv)
{
	memset(nv, 0, sizeof(*nv));
	struct var_ctx x;
	camp_var_ctx(c, &c->cfg, &x);
	if (g->kind == SPEC_BIND_FLAG || g->kind == SPEC_BIND_ENV) {
		struct camp_cmdline cl;
		camp_cmdline(c, &c->cfg, &cl);
		nv->argv = cl.argv;
		nv->env = cl.env;
		while (nv->argv[nv->argc])
			nv->argc++;
		return true;
	}
	if (g->kind != SPEC_BIND_TABLE || !g->space.n_params)
		return false;
	/* the entry's binding, as any point's variant spells it */
	json_t *vj = NULL;
	struct var_def def;
	memset(&def, 0, sizeof(def));
	struct rt_sb err = RT_SB_INIT;
	bool ok = !spec_space_variant(c->s, (size_t)(g - c->s->space->targets), 0, &vj, &err) &&
		  !spec_variant_from_json(c->s, vj, &def, &err) && def.kind == VAR_KIND_TABLE &&
		  !var_table_entry(&def, &x, &nv->entry, &err) && json_is_object(nv->entry);
	spec_variant_release(&def);
	json_decref(vj);
	rt_sb_release(&err);
	return ok;
}

/* Does value v of parameter i of target g equal what it holds now? */
static bool now_is(const struct spec_target *g, const struct now_values *nv, size_t i, json_t *v)
{
	if (g->kind == SPEC_BIND_TABLE) {
		json_t *now = json_object_get(nv->entry, g->fields[i]);
		return now && value_is_json(v, now);
	}
	const char *text = NULL;
	if (g->kind == SPEC_BIND_FLAG) {
		text = var_argv_value(nv->argv, nv->argc, g->name, true);
	} else {
		bool set = false;
		for (size_t k = 0; k < nv->env.n && !set; k++)
			if (!strcmp(nv->env.v[k].name, g->name))
				set = true, text = nv->env.v[k].value;
		if (!set)
			text = getenv(g->name);
	}
	return text && value_is_text(v, text);
}

/* The point of target g that the best configuration holds now (the
 * command's flag, the table's entry, the environment), or -1 when a
 * parameter's value is unknown or not among its values, or the point is
 * not valid. A search starts there. */
static int64_t now_point(struct camp *c, const struct spec_target *g)
{
	struct now_values nv;
	const struct agent_space *sp = &g->space;
	int64_t code = -1;
	if (now_read(c, g, &nv)) {
		uint64_t at = 0;
		bool all = true;
		for (size_t i = 0; i < sp->n_params && all; i++) {
			size_t nvals = json_array_size(sp->params[i].values), j = 0;
			while (j < nvals && !now_is(g, &nv, i, json_array_get(sp->params[i].values, j)))
				j++;
			all = j < nvals;
			if (all)
				at = agent_point_with(sp, at, i, j);
		}
		if (all && agent_point_valid(sp, at, NULL))
			code = (int64_t)at;
	}
	now_release(&nv);
	return code;
}

/* The strategy's view of a space: each target's space, label, observations
 * and the point it holds now. */
struct space_view {
	struct obs_set o;
	const struct agent_space **spaces;
	const char **labels;
	int64_t *start;
};

static void view_open(struct camp *c, const struct camp_rows *r, struct space_view *v, struct agent_ctx *x)
{
	const struct spec_space *sp = c->s->space;
	memset(v, 0, sizeof(*v));
	load_obs(c, r, &v->o);
	v->spaces = xcalloc(sp->n_targets, sizeof(*v->spaces));
	v->labels = xcalloc(sp->n_targets, sizeof(*v->labels));
	v->start = xcalloc(sp->n_targets, sizeof(*v->start));
	for (size_t t = 0; t < sp->n_targets; t++) {
		v->spaces[t] = &sp->targets[t].space;
		v->labels[t] = sp->targets[t].label;
		v->start[t] = now_point(c, &sp->targets[t]);
	}
	*x = (struct agent_ctx){ .strategy = c->s->strategy, .n_targets = sp->n_targets, .spaces = v->spaces,
				 .labels = v->labels, .obs = (const struct agent_obs *const *)v->o.obs,
				 .n_obs = v->o.n, .seed = c->s->seed, .min_gain = c->s->objective.min_gain,
				 .start = v->start };
}

static void view_close(const struct camp *c, struct space_view *v)
{
	free(v->spaces);
	free(v->labels);
	free(v->start);
	obs_release(c, &v->o);
}

static int space_next(struct camp *c, const struct camp_rows *r, struct agent_ctx *x, size_t max,
		      struct agent_proposal *out, size_t *n, struct rt_sb *err)
{
	struct space_view v;
	struct agent_ctx y;
	*n = 0;
	view_open(c, r, &v, &y);
	y.hist = x->hist;
	y.n_hist = x->n_hist;
	y.rounds = x->rounds;
	int rc = agent_next_batch(&y, max, out, n, err);
	view_close(c, &v);
	return rc;
}

static int space_make(struct camp *c, const struct agent_proposal *p, struct camp_gen **gen, struct rt_sb *err)
{
	*gen = NULL;
	if (p->target >= c->s->space->n_targets)
		return rt_errf(err, RT_EUSAGE, "no target %zu in the space", p->target);
	return make_gen(c, p, gen, err);
}

static int space_history(struct camp *c, const struct camp_rows *r, struct agent_attempt **out, size_t *n,
			 struct rt_sb *err)
{
	(void)err;
	struct agent_attempt *h = xcalloc(r->np + 1, sizeof(*h));
	size_t m = 0;
	for (size_t i = 0; i < r->np; i++) {
		size_t k;
		uint64_t code;
		if (!rows_point(c, r, i, &k, &code))
			continue;
		const struct db_iteration *it = &r->its[k];
		h[m++] = (struct agent_attempt){ .state = it->state, .role = it->role, .effect = it->obj_delta,
						 .passed = it->passed == 1, .round = it->round > 0 ? it->round : 0,
						 .point = true, .target = (size_t)r->ps[i].target, .code = code };
	}
	*out = h;
	*n = m;
	return 0;
}

int camp_space_record(struct camp *c, int64_t iter, const struct agent_proposal *p, const struct camp_gen *g,
		      struct rt_sb *err)
{
	char *point = json_dumps(g->point, JSON_COMPACT);
	char *variant = json_dumps(g->variant, JSON_COMPACT);
	struct db_proposal row = { .iteration_id = iter, .strategy = (char *)agent_strategy_name(c->s->strategy),
				   .target = g->target, .point = point, .fingerprint = (char *)g->fp,
				   .fidelity = p->fidelity, .reason = (char *)p->note, .variant = variant,
				   .state = (char *)p->state };
	int rc = db_proposal_add(c->db, c->cid, &row, err);
	free(point);
	free(variant);
	return rc;
}

int camp_gen_replay(struct camp *c, int64_t iter, const char *variant, struct rt_sb *err)
{
	json_t *vj = variant ? json_loads(variant, 0, NULL) : NULL;
	struct var_def def;
	memset(&def, 0, sizeof(def));
	int rc = vj ? spec_variant_from_json(c->s, vj, &def, err)
		    : rt_errf(err, RT_EPARSE, "iteration %lld: its stored variant is not JSON", (long long)iter);
	if (!rc && !camp_touches_files(&def)) {
		struct var_ctx x;
		struct var_plan pl = { 0 };
		camp_var_ctx(c, &c->cfg, &x);
		rc = var_ops_for(def.kind)->apply(&def, &x, &pl, NULL, err);
		var_plan_release(&pl);
	}
	spec_variant_release(&def);
	json_decref(vj);
	return rc;
}

char *camp_proposal_variant(struct db *db, int64_t cid, int64_t iter, struct rt_sb *err)
{
	struct db_proposal *ps = NULL;
	size_t np = 0;
	char *text = NULL;
	int rc = db_proposal_of_iteration(db, cid, iter, &ps, &np, err);
	for (size_t i = 0; i < np && !rc && !text; i++)
		if (ps[i].variant)
			text = xstrdup(ps[i].variant);
	db_proposals_free(ps, np);
	return text;
}

int camp_gen_rebuild(struct camp *c, const struct db_iteration *it, camp_text_fn text_of, struct rt_sb *err)
{
	struct rt_sb lerr = RT_SB_INIT;
	char *text = text_of(c->db, c->cid, it->id, &lerr);
	int rc = lerr.len ? rt_errf(err, RT_EDB, "%s", lerr.buf) : text ? camp_gen_replay(c, it->id, text, err) : 0;
	free(text);
	rt_sb_release(&lerr);
	return rc;
}

static int space_rebuild(struct camp *c, const struct db_iteration *it, struct rt_sb *err)
{
	return camp_gen_rebuild(c, it, camp_proposal_variant, err);
}

json_t *camp_stored_named(char *text, int64_t cid, const struct db_iteration *it, struct rt_sb *err)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (v)
		json_object_set_new(v, "name", json_string(it->variant));
	else if (!err->len)
		rt_errf(err, RT_ENOENT, "campaign %lld iteration %d (%s): its generated change is not stored",
			(long long)cid, it->seq, it->variant);
	return v;
}

static json_t *space_stored(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			    const struct db_iteration *it, struct rt_sb *err)
{
	(void)s;
	(void)spec_json;
	return camp_stored_named(camp_proposal_variant(db, cid, it->id, err), cid, it, err);
}

/* The space row of the proposer table (propose.c). */
const struct camp_proposer camp_proposer_space = { "points of the spec's space", space_history, space_next,
						   space_make, camp_space_record, space_rebuild, space_stored };
