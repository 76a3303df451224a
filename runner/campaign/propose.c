/*
 * The proposer table: how every strategy plugs into the campaign. A
 * strategy's row in agents/ (agents/strategy.c) says where its proposals
 * come from (enum agent_source); here each source has one row of
 * functions, and nothing else in runner/ asks which strategy runs:
 *
 *   variants  list, greedy: the spec's variants by index (this file)
 *   space     coordinate, halving, random, model, auto, genetic: points of the
 *             spec's space, generated through the spec's variant parser
 *             and recorded in `proposals` (space.c)
 *   chat      llm: a chat model's answers, asked and judged by llm.c,
 *             recorded in `llm_exchanges` and `proposals` (llm.c)
 *
 * Each row gives the history the strategy sees, the next batch of up to N
 * distinct proposals (one change at a time, or a device pool's round of
 * trials), how a proposal becomes a change (a generated variant or none),
 * how it is recorded beside its iteration, how a kept one is put back on
 * --resume, and the variant a kept iteration applied (replay, recipes).
 * The scheduler (loop.c) calls camp_propose and the row's make; a pool's
 * worker (workers.c) calls make on the proposal it was handed; both rebuild
 * the best configuration from the store through the rows' rebuild
 * (camp_rebuild_best).
 */
#include "runner/campaign/campaign_int.h"

#include <stdlib.h>
#include <string.h>

#include "db/journal.h"
#include "db/proposals.h"

/* ---- the store, read once per proposal ---- */

static int by_id(const void *a, const void *b)
{
	int64_t x = ((const struct camp_row_id *)a)->id, y = ((const struct camp_row_id *)b)->id;
	return (x > y) - (x < y);
}

int camp_rows_load(struct camp *c, struct camp_rows *r, struct rt_sb *err)
{
	memset(r, 0, sizeof(*r));
	int rc = db_proposals_list(c->db, c->cid, &r->ps, &r->np, err);
	if (!rc)
		rc = db_iterations_list(c->db, c->cid, &r->its, &r->ni, err);
	r->by_id = xcalloc(r->ni + 1, sizeof(*r->by_id));
	for (size_t i = 0; i < r->ni; i++)
		r->by_id[i] = (struct camp_row_id){ r->its[i].id, i };
	qsort(r->by_id, r->ni, sizeof(*r->by_id), by_id);
	return rc;
}

void camp_rows_free(struct camp_rows *r)
{
	db_proposals_free(r->ps, r->np);
	db_iterations_free(r->its, r->ni);
	free(r->by_id);
	memset(r, 0, sizeof(*r));
}

bool camp_rows_find(const struct camp_rows *r, int64_t id, size_t *k)
{
	size_t lo = 0, hi = r->ni;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t v = r->by_id[mid].id;
		if (v == id) {
			*k = r->by_id[mid].at;
			return true;
		}
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* ---- variants: list, greedy ---- */

/* Every attempt at one of the spec's variants, in campaign order. */
static int variants_history(struct camp *c, const struct camp_rows *r, struct agent_attempt **out, size_t *n,
			    struct rt_sb *err)
{
	(void)err;
	struct agent_attempt *h = xcalloc(r->ni + 1, sizeof(*h));
	size_t k = 0;
	for (size_t i = 0; i < r->ni; i++) {
		const struct db_iteration *it = &r->its[i];
		for (size_t j = 0; j < c->s->n_variants; j++) {
			if (strcmp(it->kind, "baseline") && !strcmp(c->s->variants[j].name, it->variant)) {
				h[k++] = (struct agent_attempt){ .variant = j, .state = it->state, .role = it->role,
								 .effect = it->obj_delta, .passed = it->passed == 1,
								 .round = it->round > 0 ? it->round : 0 };
				break;
			}
		}
	}
	*out = h;
	*n = k;
	return 0;
}

static int variants_next(struct camp *c, const struct camp_rows *r, struct agent_ctx *x, size_t max,
			 struct agent_proposal *out, size_t *n, struct rt_sb *err)
{
	(void)c;
	(void)r;
	return agent_next_batch(x, max, out, n, err);
}

static int variants_make(struct camp *c, const struct agent_proposal *p, struct camp_gen **gen, struct rt_sb *err)
{
	*gen = NULL;
	if (p->point || p->variant >= c->s->n_variants)
		return rt_errf(err, RT_EUSAGE, "no variant %zu in %s", p->variant, c->s->path);
	return 0;
}

/* A kept variant: marked in c->kept; a flag or env change replayed onto c->cfg. */
static int variants_rebuild(struct camp *c, const struct db_iteration *it, struct rt_sb *err)
{
	for (size_t j = 0; j < c->s->n_variants; j++) {
		const struct var_def *v = &c->s->variants[j];
		if (strcmp(v->name, it->variant))
			continue;
		c->kept[j] = true;
		if (camp_touches_files(v))
			continue;
		struct var_ctx x;
		struct var_plan pl = { 0 };
		camp_var_ctx(c, &c->cfg, &x);
		int rc = var_ops_for(v->kind)->apply(v, &x, &pl, NULL, err);
		var_plan_release(&pl);
		if (rc)
			return rc;
	}
	return 0;
}

static json_t *variants_stored(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			       const struct db_iteration *it, struct rt_sb *err)
{
	(void)db;
	(void)s;
	json_t *vs = json_object_get(spec_json, "variants"), *v;
	size_t i;
	json_array_foreach(vs, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		if (name && !strcmp(name, it->variant))
			return json_deep_copy(v);
	}
	rt_errf(err, RT_ENOENT, "campaign %lld: kept change '%s' is not among its spec's variants", (long long)cid,
		it->variant);
	return NULL;
}

/* ---- the table ---- */

static const struct camp_proposer variants_row = { "the spec's variants", variants_history, variants_next,
						   variants_make, NULL, variants_rebuild, variants_stored };

/* One row per source, by agents' enum agent_source. */
static const struct camp_proposer *const rows[] = {
	[AGENT_FROM_VARIANTS] = &variants_row,
	[AGENT_FROM_SPACE] = &camp_proposer_space,
	[AGENT_FROM_CHAT] = &camp_proposer_chat,
};

const struct camp_proposer *camp_proposer_of(const struct spec *s)
{
	enum agent_source from = agent_strategy_source(s->strategy);
	return (unsigned)from < RT_ARRAY_SIZE(rows) ? rows[from] : rows[AGENT_FROM_VARIANTS];
}

bool camp_generates(const struct spec *s)
{
	return agent_strategy_source(s->strategy) != AGENT_FROM_VARIANTS;
}

int camp_propose(struct camp *c, size_t max, bool rounds, struct agent_proposal *out, size_t *n, int *last,
		 struct rt_sb *err)
{
	const struct spec *s = c->s;
	const struct camp_proposer *pr = camp_proposer_of(s);
	struct agent_attempt *hist = NULL;
	size_t nh = 0;
	struct camp_rows rows;
	*n = 0;
	memset(out, 0, sizeof(*out));
	int r = camp_rows_load(c, &rows, err);
	if (!r)
		r = pr->history(c, &rows, &hist, &nh, err);
	for (size_t i = 0; !r && i < nh; i++)
		*last = hist[i].round > *last ? hist[i].round : *last;
	struct agent_ctx x = { .strategy = s->strategy, .n_variants = s->n_variants, .hist = hist, .n_hist = nh,
			       .seed = s->seed, .min_gain = s->objective.min_gain, .rounds = rounds };
	if (!r)
		r = pr->next(c, &rows, &x, max, out, n, err);
	free(hist);
	camp_rows_free(&rows);
	return r;
}

/* The current best from the store; *have_baseline: a finished baseline. */
int camp_rebuild_best(struct camp *c, bool *have_baseline, struct rt_sb *err)
{
	struct db_iteration *its = NULL;
	size_t nits = 0;
	int rc = db_iterations_list(c->db, c->cid, &its, &nits, err);
	*have_baseline = false;
	for (size_t i = 0; i < nits && !rc; i++) {
		if (its[i].seq >= c->seq)
			c->seq = its[i].seq + 1;
		if (!strcmp(its[i].kind, "baseline") && its[i].state == DB_ITER_BASELINE) {
			*have_baseline = true;
			c->best_iter = its[i].id;
			c->baseline_gate = its[i].gate_run_id;
		}
		if (its[i].state == DB_ITER_KEPT && !its[i].invalidated) {
			rc = camp_proposer_of(c->s)->rebuild(c, &its[i], err);
			c->best_iter = its[i].id;
		}
	}
	db_iterations_free(its, nits);
	/* The device of the baseline's kernel benchmarks, if any: a resumed
	 * campaign must not compare measurements from another device. */
	char **dev = NULL;
	size_t nd = 0;
	if (!rc)
		rc = db_fact_values(c->db, c->cid, c->worker.device_fact ? c->worker.device_fact : "device", &dev, &nd, err);
	for (size_t i = 0; i < nd; i++) {
		if (!i)
			c->device_id = dev[i];
		else
			free(dev[i]);
	}
	free(dev);
	return rc;
}

