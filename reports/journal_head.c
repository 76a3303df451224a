/*
 * What leads the journal (reports/journal.c writes the rest): the answer
 * first. The title; the objective with baseline -> final, the constraints
 * and the gate; the kept changes in order; the charts that have data (a
 * campaign without a gate has no gate chart); then every metric baseline ->
 * final folded under one line, the load generator's own metrics (send_lag:
 * the client's lateness, not an effect of the change) apart from the rest.
 * The objective's goal and the constraints come from the spec as it was run
 * (campaigns.spec_text).
 */
#include "reports/journal_int.h"
#include "runner/base/rt_yaml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the objective, from the spec as it was run ---- */

json_t *rep_j_spec(const struct journal *j)
{
	const char *text = j->c.spec_text;
	if (!text)
		return NULL;
	struct rt_sb err = RT_SB_INIT;
	json_t *out = rt_yaml_text_json("spec", text, strlen(text), &err);
	rt_sb_release(&err);
	return out;
}

/* A spec value as text: strings as they are, numbers as YAML writes them. */
static void value_text(struct rt_sb *sb, const json_t *v)
{
	char num[48];
	if (json_is_string(v)) {
		rt_sb_adds(sb, json_string_value(v));
	} else if (json_is_number(v)) {
		rt_yaml_real_text(json_number_value(v), num, sizeof(num));
		rt_sb_adds(sb, num);
	}
}

const char *rep_j_direction(const struct journal *j, const json_t *obj, const char *metric)
{
	const char *goal = json_string_value(json_object_get(obj, "goal"));
	if (goal)
		return !strcmp(goal, "min") ? "lower is better" : "higher is better";
	const char *dot = metric ? strchr(metric, '.') : NULL;
	for (size_t k = 0; dot && k < j->nfms; k++)
		if (!strncmp(j->fms[k].benchmark, metric, (size_t)(dot - metric)) &&
		    !j->fms[k].benchmark[dot - metric] && !strcmp(j->fms[k].metric, dot + 1))
			return !strcmp(j->fms[k].better, "lower") ? "lower is better" : "higher is better";
	return NULL;
}

static void objective_item(struct rep_writer *w, const struct journal *j, const json_t *obj)
{
	const struct rep_writer_ops *o = w->ops;
	const char *metric = j->base && j->base->objective ? j->base->objective
							   : json_string_value(json_object_get(obj, "metric"));
	rep_j_item(w, "Objective:");
	if (metric)
		o->code(w, metric);
	else
		o->text(w, "not recorded");
	const char *dir = rep_j_direction(j, obj, metric);
	if (dir)
		rep_w_textf(w, ", %s", dir);
	const json_t *gain = json_object_get(obj, "min_gain");
	double g = json_is_number(gain) ? json_number_value(gain) : NAN;
	if (json_is_string(gain)) { /* "2%" as the spec wrote it, or a fraction */
		char *end;
		g = strtod(json_string_value(gain), &end);
		g = end == json_string_value(gain) ? NAN : !strcmp(end, "%") ? g / 100 : !*end ? g : NAN;
	}
	if (isfinite(g)) {
		/* the rule's zone and lines (docs/statistics.md), not a threshold */
		rep_w_textf(w, "; min_gain %.3g%%: a true gain of 0 or less should be reverted, one of "
			    "%.3g%% (2.5 x min_gain) or more kept, either answer is right in between; each "
			    "decision names its keep line, which starts above the zone's middle (%.3g%%) and "
			    "comes nearer as samples add up", g * 100, 2.5 * g * 100, 1.25 * g * 100);
	} else if (gain) {
		struct rt_sb t = RT_SB_INIT;
		value_text(&t, gain);
		rep_w_textf(w, "; min_gain %s", t.buf);
		rt_sb_release(&t);
	}
	o->text(w, ".");
	o->item_end(w);
}

bool rep_j_answer(const struct journal *j, double *vb, double *vf, const char **unit)
{
	const char *obj = j->base ? j->base->objective : NULL;
	const char *dot = obj ? strchr(obj, '.') : NULL;
	*vb = *vf = NAN;
	*unit = NULL;
	if (!dot)
		return false;
	char *bench = xstrndup(obj, (size_t)(dot - obj));
	const struct db_q_series *b = rep_j_series(j->bser, j->nbser, bench, dot + 1, "cand");
	const struct db_q_series *f = rep_j_series(j->fser, j->nfser, bench, dot + 1, "cand");
	free(bench);
	*vb = rep_j_median(b);
	*vf = j->fin && j->fin != j->base ? rep_j_median(f) : *vb;
	*unit = b ? b->unit : NULL;
	return true;
}

/* Baseline -> final of the objective, and where the final configuration is. */
static void answer_item(struct rep_writer *w, const struct journal *j)
{
	const struct rep_writer_ops *o = w->ops;
	rep_j_item(w, "Result:");
	double vb, vf;
	const char *unit;
	if (!rep_j_answer(j, &vb, &vf, &unit)) {
		o->text(w, "no baseline was measured.");
		o->item_end(w);
		return;
	}
	size_t kept = 0, tried = 0;
	for (size_t i = 0; i < j->n; i++) {
		tried += j->it[i].seq > 0;
		kept += j->it[i].state == DB_ITER_KEPT && !j->it[i].invalidated;
	}
	if (j->fin && j->fin != j->base && vb != 0 && !isnan(vb) && !isnan(vf)) {
		/* Two kinds of number, each labelled: the gain is the kept changes'
		 * paired A/B ratios compounded (each measured beside the best of
		 * its time); the medians are absolute, measured at different times. */
		int kb;
		double c = rep_kept_compound(j->it, j->n, &kb), m = vf / vb - 1;
		o->text(w, "gain ");
		rep_w_change(w, c, NAN, NAN, kb);
		rep_w_textf(w, " (the kept changes' paired gains compounded: the figure of the waterfall), "
			    "with %zu kept change%s of %zu tried; final configuration: ", kept, kept == 1 ? "" : "s",
			    tried);
		rep_j_iteration_ref(w, j->fin);
		o->text(w, ". Absolute medians: baseline ");
		rep_w_num(w, vb);
		o->text(w, " → final ");
		rep_w_num(w, vf);
		if (unit)
			rep_w_textf(w, " %s", unit);
		/* Their ratio only when it disagrees (beyond 10%) with the gain: a
		 * kept gain is otherwise one number everywhere. */
		if (fabs(log1p(m) - log1p(c)) > log(1.1)) {
			o->text(w, " (");
			rep_w_change(w, m, NAN, NAN, kb);
			o->text(w, "); they disagree with the gain because they were measured at different "
				   "times (host load, warm-up, drift), while each paired gain compares a change "
				   "with the best measured beside it: trust the gain for the changes, and the "
				   "medians only as a rough check");
		}
	} else {
		o->text(w, "baseline ");
		rep_w_num(w, vb);
		if (unit)
			rep_w_textf(w, " %s", unit);
		rep_w_textf(w, "; no change was kept of %zu tried", tried);
	}
	o->text(w, ".");
	o->item_end(w);
}

static void constraints_item(struct rep_writer *w, const json_t *cons)
{
	const struct rep_writer_ops *o = w->ops;
	rep_j_item(w, "Constraints:");
	size_t n = json_array_size(cons);
	for (size_t i = 0; i < n; i++) {
		struct rt_sb t = RT_SB_INIT;
		value_text(&t, json_array_get(cons, i));
		if (i)
			o->text(w, ", ");
		o->code(w, t.buf);
		rt_sb_release(&t);
	}
	o->text(w, n ? "; every kept change respects them." : "none.");
	o->item_end(w);
}

static void gate_item(struct rep_writer *w, const struct journal *j)
{
	rep_j_item(w, "Gate:");
	if (!j->ngates) {
		w->ops->text(w, "none.");
	} else {
		w->ops->text(w, "GSM8K accuracy");
		if (!isnan(j->threshold))
			rep_w_textf(w, " at least %.1f%%", j->threshold * 100);
		if (!isnan(j->max_drop))
			rep_w_textf(w, ", a drop of at most %.1f points vs the baseline's run",
				    j->max_drop * 100);
		w->ops->text(w, "; a change that fails it is not kept.");
	}
	w->ops->item_end(w);
}

void rep_j_objective(struct rep_writer *w, const struct journal *j)
{
	const struct rep_writer_ops *o = w->ops;
	char t0[32], t1[32];
	char *t = xasprintf("%s: tuning journal", j->c.name ? j->c.name : "campaign");
	o->heading(w, 1, "top", t);
	free(t);
	o->para_begin(w, "meta");
	rt_iso8601(j->c.created_at, t0);
	rep_w_textf(w, "Campaign #%lld, %s", (long long)j->c.id, rep_campaign_state(&j->c));
	/* A run stopped by a signal or a crash leaves the campaign running with
	 * its last iteration interrupted: say how it goes on. */
	if (j->n && j->it[j->n - 1].state == DB_ITER_INTERRUPTED && !j->c.finished_at)
		o->text(w, ": its last iteration was interrupted; ratchet run --resume continues");
	rep_w_textf(w, ". Started %s", t0);
	if (j->c.finished_at) {
		rt_iso8601(j->c.finished_at, t1);
		rep_w_textf(w, ", finished %s", t1);
	}
	rep_w_textf(w, ". %zu iterations (baseline + %zu). Spec ", j->n, j->n ? j->n - 1 : 0);
	o->code(w, j->c.spec_path ? j->c.spec_path : "?");
	o->text(w, ".");
	o->para_end(w);
	json_t *spec = rep_j_spec(j);
	o->heading(w, 2, "objective", "Objective and constraints");
	o->list_begin(w, false, "answer");
	objective_item(w, j, json_object_get(spec, "objective"));
	answer_item(w, j);
	constraints_item(w, json_object_get(spec, "constraints"));
	gate_item(w, j);
	o->list_end(w, false);
	json_decref(spec);
}

/* ---- the kept changes ---- */

/* Kept changes listed before the rest is folded (a large campaign's list
 * would otherwise be most of the page's layout). */
#define KEPT_SHOWN 100
#define KEPT_SLACK 50

void rep_j_kept(struct rep_writer *w, const struct journal *j)
{
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "kept", "Kept changes");
	size_t total = 0;
	for (size_t i = 0; i < j->n; i++)
		total += j->it[i].state == DB_ITER_KEPT;
	bool fold = total > KEPT_SHOWN + KEPT_SLACK;
	o->list_begin(w, true, "kept");
	size_t nk = 0;
	for (size_t i = 0; i < j->n; i++) {
		const struct db_iteration *it = &j->it[i];
		if (it->state != DB_ITER_KEPT)
			continue;
		if (fold && nk == KEPT_SHOWN) {
			o->list_end(w, true);
			char *sum = xasprintf("The other %zu kept changes", total - KEPT_SHOWN);
			o->details_begin(w, "kept-rest", sum);
			free(sum);
			o->list_begin(w, false, "kept");
		}
		o->item_begin(w, fold && nk >= KEPT_SHOWN ? 0 : nk + 1, NULL);
		nk++;
		rep_j_strike(w, it->invalidated, true);
		rep_j_iteration_ref(w, it);
		o->text(w, ": ");
		rep_w_obj_change(w, it);
		rep_j_strike(w, it->invalidated, false);
		if (it->invalidated)
			o->text(w, " (invalidated)");
		o->item_end(w);
	}
	if (!nk) {
		o->item_begin(w, 0, NULL);
		o->text(w, "none: the final configuration is the baseline");
		o->item_end(w);
	}
	o->list_end(w, !fold);
	if (fold)
		o->details_end(w);
}

/* ---- the charts (the Markdown writer leaves them out) ---- */

/* What the charts draw, gathered from the journal. */
struct chart_data {
	struct rep_obj_pt *p;          /* objective per iteration */
	size_t np;                     /* how many */
	const char *objective;         /* "bench.metric", or NULL */
	const char *unit;              /* its unit, or NULL */
	const struct journal *j;       /* gate points and threshold */
	struct rep_gain *g;            /* kept gains */
	size_t ng;                     /* how many */
	struct rep_dist lat[4];        /* ttft baseline, final; e2el baseline, final */
	struct rep_dist samples[2];    /* the objective's measurements, baseline and final */
	char *axis;                    /* samples' x label; NULL: draw the latencies */
};

static void draw_objective(struct rt_sb *sb, const void *arg)
{
	const struct chart_data *d = arg;
	rep_svg_objective(sb, d->p, d->np, d->objective, d->unit);
}

static void draw_gate(struct rt_sb *sb, const void *arg)
{
	const struct chart_data *d = arg;
	rep_svg_gate(sb, d->j->gates, d->j->ngates, d->j->threshold);
}

static void draw_waterfall(struct rt_sb *sb, const void *arg)
{
	const struct chart_data *d = arg;
	rep_svg_waterfall(sb, d->g, d->ng);
}

static void draw_dist(struct rt_sb *sb, const void *arg)
{
	const struct chart_data *d = arg;
	if (d->axis)
		rep_svg_samples(sb, d->axis, d->samples, 2);
	else
		rep_svg_latency(sb, d->lat, 2, d->lat + 2, 2);
}

static char mark(const struct db_iteration *it)
{
	if (it->invalidated)
		return 'i';
	switch (it->state) {
	case DB_ITER_INVALID: return 'i';
	case DB_ITER_BASELINE: return 'b';
	case DB_ITER_KEPT: return 'k';
	case DB_ITER_REVERTED: return 'r';
	case DB_ITER_GATED: return 'g';
	default: return 'o';
	}
}

/* Objective points and kept gains, one pass over the iterations. */
static void chart_points(struct chart_data *d, const struct journal *j)
{
	d->p = xcalloc(j->n ? j->n : 1, sizeof(*d->p));
	d->g = xcalloc(j->n ? j->n : 1, sizeof(*d->g));
	for (size_t i = 0; i < j->n; i++) {
		const struct db_iteration *it = &j->it[i];
		if (isnan(it->obj_cand))
			continue;
		struct rep_obj_pt *q = &d->p[d->np++];
		q->seq = it->seq;
		q->value = it->obj_cand;
		double c, lo, hi;
		int better;
		bool known = rep_obj_change(it, &c, &lo, &hi, &better);
		q->lo = known && !isnan(lo) ? it->obj_best * (1 + lo) : NAN;
		q->hi = known && !isnan(hi) ? it->obj_best * (1 + hi) : NAN;
		q->mark = mark(it);
		q->best = q->mark == 'b' ? it->obj_cand : it->obj_best;
		if (q->mark == 'k' && known) /* the same numbers as rep_kept_compound */
			d->g[d->ng++] = (struct rep_gain){ it->variant, it->seq, c, better };
	}
}

/* The objective's unit, and without per-request records (a kernel or command
 * campaign) its own measurements for the distribution chart. */
static void chart_objective(struct chart_data *d, const struct journal *j)
{
	const char *obj = j->base ? j->base->objective : NULL;
	const char *dot = obj ? strchr(obj, '.') : NULL;
	d->objective = obj;
	if (!dot)
		return;
	char *bench = xstrndup(obj, (size_t)(dot - obj));
	const struct db_q_series *ob = rep_j_series(j->bser, j->nbser, bench, dot + 1, "best");
	d->unit = ob ? ob->unit : NULL;
	bool no_lat = !j->nlat[0] && !j->nlat[1] && !j->nlat[2] && !j->nlat[3];
	if (no_lat && ob) {
		const struct db_q_series *of = NULL;
		if (j->fin && j->fin != j->base)
			of = rep_j_series(j->fser, j->nfser, bench, dot + 1, "cand");
		d->samples[0] = (struct rep_dist){ "baseline", ob->v, ob->n };
		d->samples[1] = (struct rep_dist){ "final", of ? of->v : NULL, of ? of->n : 0 };
		d->axis = ob->unit ? xasprintf("%s (%s)", obj, ob->unit) : xstrdup(obj);
	}
	free(bench);
}

void rep_j_charts(struct rep_writer *w, const struct journal *j)
{
	struct chart_data d = { .j = j };
	static const char *const lat_label[4] = { "baseline", "final", "baseline", "final" };
	for (int k = 0; k < 4; k++)
		d.lat[k] = (struct rep_dist){ lat_label[k], j->lat[k], j->nlat[k] };
	chart_points(&d, j);
	chart_objective(&d, j);
	bool dist = d.axis ? d.samples[0].n + d.samples[1].n > 0
			   : j->nlat[0] + j->nlat[1] + j->nlat[2] + j->nlat[3] > 0;
	/* Only the charts that have something to draw. */
	struct rep_chart c[4];
	size_t n = 0;
	if (d.np)
		c[n++] = (struct rep_chart){ draw_objective, &d,
			"Candidate median per iteration with its confidence interval. Filled: kept (green) "
			"or baseline (blue); hollow circle: reverted; hollow square: invalid or invalidated; "
			"red: gated. The dashed step line is the best configuration so far, as measured "
			"beside each candidate in the same iteration: a candidate below it lost, a reverted "
			"one above it gained too little to keep." };
	if (j->ngates)
		c[n++] = (struct rep_chart){ draw_gate, &d,
			"GSM8K accuracy of every gate run, with its Wilson interval; the dashed line is the "
			"minimum the gate requires." };
	if (d.ng)
		c[n++] = (struct rep_chart){ draw_waterfall, &d,
			"How the kept changes add up: each bar starts where the previous one ended (gains "
			"compound)." };
	if (dist)
		c[n++] = (struct rep_chart){ draw_dist, &d,
			d.axis ? "Every measurement of the objective, baseline vs final configuration (no "
				 "per-request records in this campaign)."
			       : "Share of requests answered within a given time: further left is faster." };
	w->ops->charts(w, c, n);
	free(d.p);
	free(d.g);
	free(d.axis);
}

/* ---- every metric, folded ---- */

/* The load generator's own lateness: how late the client sent, not what the
 * change did (the campaign keeps it out of the regressions for that reason). */
static bool client_metric(const struct db_q_series *s)
{
	return rep_self_metric(s->metric);
}

/* Is bench.metric the campaign's objective? */
static bool is_objective(const struct journal *j, const char *bench, const char *metric)
{
	const char *obj = j->base ? j->base->objective : NULL;
	size_t nb = strlen(bench);
	return obj && !strncmp(obj, bench, nb) && obj[nb] == '.' && !strcmp(obj + nb + 1, metric);
}

/* One row of a metric table: a metric's baseline and final medians, and its
 * change in the metric's own sign with "(better)" or "(worse)". */
static bool metric_row(struct rep_writer *w, const struct journal *j, const struct db_q_series *b,
		       bool write)
{
	const struct rep_writer_ops *o = w->ops;
	b = rep_j_series(j->bser, j->nbser, b->benchmark, b->metric, "cand");
	const struct db_q_series *f = rep_j_series(j->fser, j->nfser, b->benchmark, b->metric, "cand");
	double vb = rep_j_median(b), vf = rep_j_median(f);
	bool changed = vb != 0 && !isnan(vb) && !isnan(vf) && vf != vb;
	if (!write)
		return changed;
	int better = 0;
	for (size_t k = 0; k < j->nfms; k++)
		if (!strcmp(j->fms[k].benchmark, b->benchmark) && !strcmp(j->fms[k].metric, b->metric))
			better = !j->fms[k].better ? 0 : !strcmp(j->fms[k].better, "higher") ? 1 : -1;
	o->cell(w);
	rep_j_metric_code(w, b->benchmark, b->metric);
	if (b->unit)
		rep_w_textf(w, " (%s)", b->unit);
	o->cell(w);
	rep_w_num(w, vb);
	o->cell(w);
	rep_w_num(w, vf);
	o->cell(w);
	if (is_objective(j, b->benchmark, b->metric) && j->fin && j->fin != j->base) {
		/* One number per gain: the kept changes compounded, as in the kept
		 * list and the waterfall, not final / baseline (measured hours
		 * apart, they differ by the drift between) */
		int kb;
		double c = rep_kept_compound(j->it, j->n, &kb);
		rep_w_change(w, c, NAN, NAN, kb ? kb : better);
		o->text(w, ", the kept changes compounded");
	} else if (changed) {
		rep_w_change(w, vf / vb - 1, NAN, NAN, better);
	} else {
		o->text(w, !isnan(vb) && vf == vb ? "unchanged" : "—");
	}
	o->row_end(w);
	return changed;
}

/* Rows (first series of each metric) of the client's metrics or the rest:
 * how many, and how many changed; with write, the table itself. */
static size_t metric_rows(struct rep_writer *w, const struct journal *j, bool client, bool write,
			  size_t *changed)
{
	static const struct rep_col cols[] = {
		{ "metric", false }, { "baseline", true }, { "final", true }, { "change", false },
	};
	size_t n = 0;
	*changed = 0;
	if (write)
		w->ops->table_begin(w, cols, RT_ARRAY_SIZE(cols));
	for (size_t i = 0; i < j->nbser; i++) {
		const struct db_q_series *b = &j->bser[i];
		if (client_metric(b) != client || (i && !strcmp(b->benchmark, j->bser[i - 1].benchmark) &&
						    !strcmp(b->metric, j->bser[i - 1].metric)))
			continue; /* one row per metric */
		n++;
		*changed += metric_row(w, j, b, write);
	}
	if (write)
		w->ops->table_end(w);
	return n;
}

/* One folded table: its summary line counts the rows and the changed ones. */
static void metric_table(struct rep_writer *w, const struct journal *j, bool client)
{
	size_t changed;
	size_t n = metric_rows(w, j, client, false, &changed);
	if (!n)
		return;
	char *sum = client ? xasprintf("Client self-metrics: %zu (the harness's own figures: send lag, "
				       "spread, sample counts; not effects of the changes)", n)
			   : xasprintf("All %zu metric%s (%zu changed)", n,
				       n == 1 ? "" : "s", changed);
	w->ops->details_begin(w, client ? "client-metrics" : "all-metrics", sum);
	metric_rows(w, j, client, true, &changed);
	w->ops->details_end(w);
	free(sum);
}

void rep_j_metrics(struct rep_writer *w, const struct journal *j)
{
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "metrics", "Metrics: baseline to final");
	if (!j->base) {
		o->para_begin(w, NULL);
		o->text(w, "No baseline was measured.");
		o->para_end(w);
		return;
	}
	metric_table(w, j, false);
	metric_table(w, j, true);
}
