/*
 * `ratchet report`: the campaign journal, in Markdown or as one
 * self-contained HTML file (inline CSS and SVG, no script, no external
 * asset). One writer produces both: the same sections in the same order,
 * each piece of database text escaped for the format it lands in. The
 * answer comes first (journal_head.c), the history after it:
 *
 *   1. the title, the objective and constraints with baseline -> final;
 *   2. the kept changes, in order;
 *   3. the charts that have data (HTML);
 *   4. every metric baseline -> final, folded, client self-metrics apart;
 *   5. every iteration as an entry: change, effect with CI and test,
 *      decision and reason, gate, notes; invalidated results struck through,
 *      corrections beside the entry they correct (and on the correcting one);
 *   6. the map of levers: outcome by kind of change, then what worked and the
 *      dead ends grouped by how they died (reverted, gated, failed, other);
 *   7. the regressions.
 *
 * Iterations are named CAMPAIGN:SEQ, as `ratchet log` prints them and
 * `ratchet show` takes them.
 */
#include "reports/journal_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void rep_j_release(struct journal *j)
{
	db_campaign_release(&j->c);
	db_iterations_free(j->it, j->n);
	db_notes_free(j->notes, j->nnotes);
	db_q_regrs_free(j->regr, j->nregr);
	db_q_series_free(j->bser, j->nbser);
	db_q_series_free(j->fser, j->nfser);
	db_metric_stats_free(j->fms, j->nfms);
	free(j->gates);
	for (int i = 0; i < 4; i++)
		free(j->lat[i]);
}

static bool is(const struct db_iteration *it, enum db_iter_state state)
{
	return it->state == state;
}

int rep_j_load(struct db *db, int64_t campaign_id, struct journal *j, struct rt_sb *err)
{
	memset(j, 0, sizeof(*j));
	j->threshold = j->max_drop = NAN;
	int rc = db_q_campaign_get(db, campaign_id, &j->c, err);
	if (rc)
		return rc;
	struct db_q_iter_filter f = { .campaign_id = j->c.id, .with_text = true };
	if ((rc = db_q_iters(db, &f, &j->it, &j->n, err)) ||
	    (rc = db_q_notes(db, j->c.id, 0, &j->notes, &j->nnotes, err)) ||
	    (rc = db_q_regrs(db, j->c.id, 0, &j->regr, &j->nregr, err)))
		return rc;
	const struct db_iteration *last_kept = NULL;
	for (size_t i = 0; i < j->n; i++) {
		if (j->it[i].seq == 0 && !j->base)
			j->base = &j->it[i];
		if (j->c.best_iteration && j->it[i].id == j->c.best_iteration && !j->it[i].invalidated)
			j->fin = &j->it[i];
		if (is(&j->it[i], DB_ITER_KEPT) && !j->it[i].invalidated)
			last_kept = &j->it[i];
	}
	if (!j->fin)
		j->fin = last_kept ? last_kept : j->base;
	if (j->base && (rc = db_q_series_list(db, j->base->id, &j->bser, &j->nbser, err)))
		return rc;
	if (j->fin && (rc = db_q_series_list(db, j->fin->id, &j->fser, &j->nfser, err)))
		return rc;
	if (j->fin && (rc = db_q_mstats(db, j->fin->id, &j->fms, &j->nfms, err)))
		return rc;
	/* Gate points; Wilson intervals only while that stays a few queries. */
	size_t ng = 0;
	for (size_t i = 0; i < j->n; i++)
		ng += !isnan(j->it[i].gate_accuracy);
	j->gates = xcalloc(ng ? ng : 1, sizeof(*j->gates));
	for (size_t i = 0; i < j->n; i++) {
		const struct db_iteration *it = &j->it[i];
		if (isnan(it->gate_accuracy))
			continue;
		struct rep_gate_pt *g = &j->gates[j->ngates++];
		*g = (struct rep_gate_pt){ it->seq, it->gate_accuracy, NAN, NAN, it->gate_passed == 1 };
		if (ng <= 2000 || isnan(j->threshold)) {
			struct db_gate_run gr;
			if ((rc = db_gate_run_get(db, it->gate_run_id, &gr, err)))
				return rc;
			if (ng <= 2000)
				g->lo = gr.fig.wilson_lo, g->hi = gr.fig.wilson_hi;
			if (isnan(j->threshold))
				j->threshold = gr.min_accuracy;
			json_t *params = gr.params_json ? json_loads(gr.params_json, 0, NULL) : NULL;
			json_t *drop = json_object_get(params, "max_drop");
			if (isnan(j->max_drop) && json_is_number(drop))
				j->max_drop = json_number_value(drop);
			json_decref(params);
			db_gate_run_release(&gr);
		}
	}
	for (int k = 0; k < 4; k++) {
		const struct db_iteration *src = k % 2 ? j->fin : j->base;
		if (!src || (k % 2 && j->fin == j->base))
			continue;
		if ((rc = db_q_latencies(db, src->id, k % 2 ? "cand" : NULL, k / 2, &j->lat[k],
					 &j->nlat[k], err)))
			return rc;
	}
	return 0;
}

static const struct db_iteration *by_id(const struct journal *j, int64_t id)
{
	for (size_t i = 0; i < j->n; i++) /* ids are increasing in seq order */
		if (j->it[i].id == id)
			return &j->it[i];
	return NULL;
}

const struct db_q_series *rep_j_series(const struct db_q_series *v, size_t n, const char *b,
				       const char *m, const char *arm)
{
	const struct db_q_series *any = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].benchmark, b) || strcmp(v[i].metric, m))
			continue;
		if (!strcmp(v[i].arm, arm))
			return &v[i];
		any = &v[i];
	}
	return any;
}

double rep_j_median(const struct db_q_series *s)
{
	struct rep_summary m;
	if (!s)
		return NAN;
	rep_summarise(s->v, s->n, &m);
	return m.median;
}

/* ---- pieces every section uses ---- */

void rep_j_strike(struct rep_writer *w, bool on, bool open)
{
	if (on)
		w->ops->strike(w, open);
}

/* A list item that opens with a bold label. */
void rep_j_item(struct rep_writer *w, const char *label)
{
	w->ops->item_begin(w, 0, NULL);
	w->ops->strong(w, label);
	w->ops->text(w, " ");
}

void rep_j_metric_code(struct rep_writer *w, const char *bench, const char *metric)
{
	char *name = xasprintf("%s.%s", bench, metric);
	w->ops->code(w, name);
	free(name);
}

void rep_j_iteration_ref(struct rep_writer *w, const struct db_iteration *it)
{
	rep_w_textf(w, "iteration %lld:%d, ", (long long)it->campaign_id, it->seq);
	w->ops->code(w, it->variant);
}

/* ---- 5. one entry per iteration ---- */

static void entry_change(struct rep_writer *w, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	rep_j_item(w, "Change");
	rep_w_textf(w, "(%s, id %lld):", it->kind, (long long)it->id);
	if (!it->change_text || !*it->change_text) {
		o->text(w, is(it, DB_ITER_BASELINE) ? " none, the configuration as found" : " (not recorded)");
	} else if (strchr(it->change_text, '\n')) {
		o->code_block(w, it->change_text);
	} else {
		o->text(w, " ");
		o->code(w, it->change_text);
	}
	o->item_end(w);
}

static void entry_effect(struct rep_writer *w, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	rep_j_item(w, "Effect:");
	rep_j_strike(w, it->invalidated, true);
	if (it->objective) {
		o->code(w, it->objective);
		o->text(w, " ");
	}
	if (is(it, DB_ITER_BASELINE)) {
		rep_w_num(w, it->obj_cand);
	} else {
		rep_w_num(w, it->obj_best);
		o->text(w, " → ");
		rep_w_num(w, it->obj_cand);
		o->text(w, ": ");
		rep_w_obj_change(w, it);
		if (!isnan(it->confidence))
			rep_w_textf(w, " (%.0f%% CI", it->confidence * 100);
		else
			o->text(w, " (");
		if (it->test)
			rep_w_textf(w, "; %s", it->test);
		if (!isnan(it->p_value))
			rep_w_textf(w, ", p = %.2g", it->p_value);
		rep_w_textf(w, ", n = %d + %d%s)", it->n_cand, it->n_best, it->paired ? ", paired" : "");
	}
	rep_j_strike(w, it->invalidated, false);
	o->item_end(w);
}

static void entry_verdicts(struct rep_writer *w, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	rep_j_item(w, "Decision:");
	rep_j_strike(w, it->invalidated, true);
	o->text(w, it->decision ? it->decision : is(it, DB_ITER_BASELINE) ? "baseline" : "none");
	if (it->reason) {
		o->text(w, ": ");
		o->text(w, it->reason);
	}
	rep_j_strike(w, it->invalidated, false);
	o->item_end(w);
	rep_j_item(w, "Gate:");
	if (isnan(it->gate_accuracy))
		o->text(w, "—");
	else
		rep_w_textf(w, "gsm8k %.1f%% (%s)", it->gate_accuracy * 100,
			    it->gate_passed == 1 ? "pass" : it->gate_passed == 0 ? "FAIL" : "unfinished");
	o->item_end(w);
}

/* Notes on the iteration, and the corrections on either end of it, set apart. */
static void entry_notes(struct rep_writer *w, const struct journal *j, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	for (size_t i = 0; i < j->nnotes; i++) {
		const struct db_note *n = &j->notes[i];
		bool on_me = n->iteration_id == it->id, by_me = n->by_iteration_id == it->id;
		bool correction = !strcmp(n->kind, "correction");
		char lab[96];
		const struct db_iteration *other = NULL;
		if (!strcmp(n->kind, "invalidation") && on_me) {
			snprintf(lab, sizeof(lab), "Invalidated:");
		} else if (correction && on_me) {
			other = by_id(j, n->by_iteration_id);
			snprintf(lab, sizeof(lab), "Corrected by iteration %lld:%d:", (long long)j->c.id,
				 other ? other->seq : n->by_seq);
		} else if (correction && by_me) {
			other = by_id(j, n->iteration_id);
			snprintf(lab, sizeof(lab), "Corrects iteration %lld:%d:", (long long)j->c.id, n->seq);
		} else if (on_me) {
			snprintf(lab, sizeof(lab), "Note:");
		} else {
			continue;
		}
		o->item_begin(w, 0, strcmp(n->kind, "note") ? n->kind : NULL);
		o->strong(w, lab);
		o->text(w, " ");
		if (other) {
			o->code(w, other->variant);
			o->text(w, " — ");
		}
		o->text(w, n->text);
		if (n->author) {
			o->text(w, " (");
			o->text(w, n->author);
			o->text(w, ")");
		}
		o->item_end(w);
	}
}

static void entry(struct rep_writer *w, const struct journal *j, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	const char *state = db_iter_state_name(it->state);
	char *cls = xasprintf("it %s%s", state, it->invalidated ? " invalidated" : "");
	char *head = xasprintf("%lld:%d %s %s %s", (long long)it->campaign_id, it->seq, it->variant,
			       rep_glyph(it->state, it->invalidated), it->invalidated ? "invalid" : state);
	char *was = it->invalidated ? xasprintf("%s (was %s)", head, state) : NULL;
	char id[32];
	snprintf(id, sizeof(id), "it-%d", it->seq);
	o->section_begin(w, cls);
	o->heading(w, 3, id, was ? was : head);
	o->list_begin(w, false, NULL);
	entry_change(w, it);
	if (!isnan(it->obj_cand) || !isnan(it->obj_delta))
		entry_effect(w, it);
	entry_verdicts(w, it);
	entry_notes(w, j, it);
	o->list_end(w, false);
	o->section_end(w);
	free(cls);
	free(head);
	free(was);
}

/* ---- 5b. a large campaign: the first and last entries, the rest counted ---- */

/* Iterations at each end written in full when a campaign has more than
 * 2 * REP_J_EDGE + REP_J_SLACK of them; lever groups list REP_J_GROUP items. */
#define REP_J_EDGE 100
#define REP_J_SLACK 50
#define REP_J_GROUP 100

/* The iterations not written in full, by kind and state, with counts. */
static void entries_omitted(struct rep_writer *w, const struct journal *j, size_t from, size_t to)
{
	static const struct rep_col cols[] = {
		{ "kind", false }, { "state", false }, { "iterations", true }, { "seq range", false },
	};
	const struct rep_writer_ops *o = w->ops;
	o->para_begin(w, "omitted");
	rep_w_textf(w, "Showing the first %zu and the last %zu of %zu iterations; the %zu between "
		    "them are counted below by kind and state. To see one: ",
		    from, j->n - to, j->n, to - from);
	char *cmd = xasprintf("ratchet show %lld:SEQ", (long long)j->c.id);
	o->code(w, cmd);
	free(cmd);
	o->text(w, ".");
	o->para_end(w);
	o->table_begin(w, cols, RT_ARRAY_SIZE(cols));
	bool *done = xcalloc(to - from, sizeof(*done));
	for (size_t a = from; a < to; a++) {
		if (done[a - from])
			continue;
		const struct db_iteration *x = &j->it[a];
		size_t cnt = 0;
		int lo = x->seq, hi = x->seq;
		for (size_t b = a; b < to; b++) {
			const struct db_iteration *y = &j->it[b];
			if (done[b - from] || y->state != x->state || y->invalidated != x->invalidated ||
			    strcmp(y->kind, x->kind))
				continue;
			done[b - from] = true;
			cnt++;
			hi = y->seq > hi ? y->seq : hi;
			lo = y->seq < lo ? y->seq : lo;
		}
		o->cell(w);
		o->text(w, x->kind);
		o->cell(w);
		rep_w_textf(w, "%s%s", db_iter_state_name(x->state), x->invalidated ? " (invalidated)" : "");
		o->cell(w);
		rep_w_textf(w, "%zu", cnt);
		o->cell(w);
		rep_w_textf(w, "%d–%d", lo, hi);
		o->row_end(w);
	}
	free(done);
	o->table_end(w);
}

static void entries(struct rep_writer *w, const struct journal *j)
{
	w->ops->heading(w, 2, "iterations", "Iterations");
	bool paged = j->n > 2 * REP_J_EDGE + REP_J_SLACK;
	size_t from = paged ? REP_J_EDGE : j->n, to = paged ? j->n - REP_J_EDGE : j->n;
	for (size_t i = 0; i < from; i++)
		entry(w, j, &j->it[i]);
	if (paged)
		entries_omitted(w, j, from, to);
	for (size_t i = to; i < j->n; i++)
		entry(w, j, &j->it[i]);
}

/* ---- 6. the map of levers ---- */

static void levers_table(struct rep_writer *w, const struct journal *j)
{
	static const struct rep_col cols[] = {
		{ "kind", false },    { "tried", true }, { "kept", true },  { "reverted", true },
		{ "gated", true },    { "failed", true }, { "other", true }, { "best kept gain", true },
	};
	static const char *const kinds[] = { "flag", "env", "table", "patch", "file" };
	static const enum db_iter_state outcomes[] = { DB_ITER_KEPT, DB_ITER_REVERTED, DB_ITER_GATED,
							DB_ITER_FAILED };
	const struct rep_writer_ops *o = w->ops;
	o->table_begin(w, cols, RT_ARRAY_SIZE(cols));
	for (size_t k = 0; k < RT_ARRAY_SIZE(kinds); k++) {
		/* tried, then one count per outcome, then the rest */
		size_t cnt[2 + RT_ARRAY_SIZE(outcomes)] = { 0 };
		const struct db_iteration *best = NULL;
		for (size_t i = 0; i < j->n; i++) {
			const struct db_iteration *it = &j->it[i];
			if (strcmp(it->kind, kinds[k]))
				continue;
			cnt[0]++;
			size_t hit = RT_ARRAY_SIZE(outcomes);
			for (size_t q = 0; q < RT_ARRAY_SIZE(outcomes) && !it->invalidated; q++)
				if (is(it, outcomes[q]))
					hit = q;
			cnt[1 + hit]++;
			if (is(it, DB_ITER_KEPT) && !it->invalidated && !isnan(it->obj_delta) &&
			    (!best || it->obj_delta > best->obj_delta))
				best = it;
		}
		if (!cnt[0])
			continue;
		o->cell(w);
		o->text(w, kinds[k]);
		for (size_t c = 0; c < RT_ARRAY_SIZE(cnt); c++) {
			o->cell(w);
			rep_w_textf(w, "%zu", cnt[c]);
		}
		o->cell(w);
		if (best) {
			double c, lo, hi;
			int better;
			rep_obj_change(best, &c, &lo, &hi, &better);
			rep_w_change(w, c, NAN, NAN, better);
		} else {
			o->text(w, "—");
		}
		o->row_end(w);
	}
	o->table_end(w);
}

/* Is it in group state (an enum db_iter_state), or for -1 in "no conclusion"? */
static bool in_group(const struct db_iteration *it, int state)
{
	if (state >= 0)
		return is(it, (enum db_iter_state)state) && !it->invalidated;
	return it->invalidated || is(it, DB_ITER_INTERRUPTED) || is(it, DB_ITER_INVALID);
}

static void lever_item(struct rep_writer *w, const struct journal *j, const struct db_iteration *it)
{
	const struct rep_writer_ops *o = w->ops;
	o->item_begin(w, 0, NULL);
	rep_j_iteration_ref(w, it);
	rep_w_textf(w, " (%s): ", it->kind);
	bool measured = !isnan(it->obj_delta) && !it->invalidated;
	if (measured)
		rep_w_obj_change(w, it);
	if (it->invalidated) {
		o->text(w, "invalidated (see its entry)");
	} else if (!is(it, DB_ITER_KEPT) && !is(it, DB_ITER_REVERTED) && it->reason) {
		o->text(w, measured ? "; " : "");
		o->text(w, it->reason);
	}
	if (it->corrected_by) {
		const struct db_iteration *c = by_id(j, it->corrected_by);
		if (c)
			rep_w_textf(w, " — corrected by iteration %lld:%d", (long long)c->campaign_id, c->seq);
		else
			rep_w_textf(w, " — corrected by iteration id %lld", (long long)it->corrected_by);
	}
	o->item_end(w);
}

static void levers(struct rep_writer *w, const struct journal *j)
{
	static const struct {
		int state; /* enum db_iter_state, or -1 for the rest */
		const char *title, *id;
	} groups[] = {
		{ DB_ITER_KEPT, "Worked (kept)", "worked" },
		{ DB_ITER_REVERTED, "Dead ends: reverted (no gain that clears the noise)", "dead-reverted" },
		{ DB_ITER_GATED, "Dead ends: gated (accuracy dropped)", "dead-gated" },
		{ DB_ITER_FAILED, "Dead ends: failed (did not apply, build or start)", "dead-failed" },
		{ -1, "Invalidated or interrupted (no conclusion)", "no-conclusion" },
	};
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "levers", "Levers: what worked and what did not");
	levers_table(w, j);
	for (size_t g = 0; g < RT_ARRAY_SIZE(groups); g++) {
		size_t cnt = 0;
		for (size_t i = 0; i < j->n; i++) {
			if (!in_group(&j->it[i], groups[g].state))
				continue;
			if (!cnt++) {
				o->heading(w, 3, groups[g].id, groups[g].title);
				o->list_begin(w, false, NULL);
			}
			if (cnt <= REP_J_GROUP)
				lever_item(w, j, &j->it[i]);
		}
		if (cnt)
			o->list_end(w, false);
		if (cnt > REP_J_GROUP) {
			o->para_begin(w, "omitted");
			rep_w_textf(w, "… and %zu more (the first %d are listed); to see one: ",
				    cnt - REP_J_GROUP, REP_J_GROUP);
			char *cmd = xasprintf("ratchet show %lld:SEQ", (long long)j->c.id);
			o->code(w, cmd);
			free(cmd);
			o->text(w, ".");
			o->para_end(w);
		}
	}
}

/* ---- 7. regressions ---- */

static void regression_item(struct rep_writer *w, const struct journal *j, const struct db_q_regr *r)
{
	const struct rep_writer_ops *o = w->ops;
	double c, lo, hi;
	int better;
	rep_regr_change(r, &c, &lo, &hi, &better);
	o->item_begin(w, 0, NULL);
	rep_j_metric_code(w, r->benchmark, r->metric);
	o->text(w, ": ");
	rep_w_num(w, r->before);
	o->text(w, " → ");
	rep_w_num(w, r->after);
	if (r->unit) {
		o->text(w, " ");
		o->text(w, r->unit);
	}
	o->text(w, ", ");
	rep_w_change(w, c, lo, hi, better);
	rep_w_textf(w, ", by iteration %lld:%d ", (long long)j->c.id, r->seq);
	o->code(w, r->variant);
	rep_w_textf(w, " (id %lld)", (long long)r->iteration_id);
	if (!r->kept)
		rep_w_textf(w, ", %s", db_iter_state_name(r->state));
	o->item_end(w);
}

/* The group of regression r: 0 of a kept change, 1 of a client self-metric,
 * 2 of a change not kept. */
static int regression_group(const struct db_q_regr *r)
{
	return rep_self_metric(r->metric) ? 1 : r->kept ? 0 : 2;
}

/* Regressions by what they mean: of kept changes (shipped), of the
 * client's self-metrics (not the engine's), of changes not kept. Only the
 * first group is open: the other two are folded (HTML <details>), as the
 * metric tables are, since none of them is in the final configuration's
 * engine. */
static void regressions(struct rep_writer *w, const struct journal *j)
{
	static const char *const intro[3] = {
		"Of kept changes (these shipped, unless invalidated):",
		("of the client's self-metrics (send lag, a kernel's rsd and samples: they measure the "
		 "client, not the engine)"),
		"of changes not kept (not in the final configuration)",
	};
	static const char *const id[3] = { NULL, "regressions-client", "regressions-not-kept" };
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "regressions", "Regressions");
	if (!j->nregr) {
		o->para_begin(w, NULL);
		o->text(w, "None recorded.");
		o->para_end(w);
		return;
	}
	for (int g = 0; g < 3; g++) {
		size_t cnt = 0;
		for (size_t i = 0; i < j->nregr; i++)
			cnt += regression_group(&j->regr[i]) == g;
		if (!cnt)
			continue;
		char *sum = NULL;
		if (g == 0) {
			o->para_begin(w, NULL);
			o->text(w, intro[g]);
			o->para_end(w);
		} else {
			sum = xasprintf("%zu regression%s %s", cnt, cnt == 1 ? "" : "s", intro[g]);
			o->details_begin(w, id[g], sum);
		}
		o->list_begin(w, false, NULL);
		for (size_t i = 0; i < j->nregr; i++)
			if (regression_group(&j->regr[i]) == g)
				regression_item(w, j, &j->regr[i]);
		o->list_end(w, false);
		if (g)
			o->details_end(w);
		free(sum);
	}
}

int rep_report(struct db *db, int64_t campaign_id, enum rep_format fmt, struct rt_sb *out,
	       struct rt_sb *err)
{
	struct journal j;
	int rc = rep_j_load(db, campaign_id, &j, err);
	if (rc) {
		rep_j_release(&j);
		return rc;
	}
	struct rep_writer w;
	rep_writer_init(&w, out, fmt);
	char *doc_title = xasprintf("%s: ratchet journal", j.c.name ? j.c.name : "");
	w.ops->doc_begin(&w, doc_title);
	free(doc_title);
	rep_j_objective(&w, &j);
	rep_j_kept(&w, &j);
	rc = rep_replay_section(&w, db, j.c.id, 2, err);
	rep_j_charts(&w, &j);
	rep_j_metrics(&w, &j);
	entries(&w, &j);
	levers(&w, &j);
	regressions(&w, &j);
	w.ops->doc_end(&w);
	rep_j_release(&j);
	return rc;
}
