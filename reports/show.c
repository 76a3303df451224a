/*
 * `ratchet show N`: everything recorded about one iteration. The change and
 * its diff, every measurement summarised per metric and arm (n, median, MAD,
 * min, max), the statistics used for the decision, the gate run with its
 * flips against the baseline run, regressions, environment facts, log-event
 * counts, the engine launches with their provenance (flagged when one
 * differs from the campaign's first; identical launches are one block),
 * artifacts by unique names, notes, and the corrections and invalidations
 * linked both ways ("corrected by M" on N, "corrects N" on M). Under
 * strategy llm, the round of chat exchanges that proposed the iteration
 * (show_llm.c). Text, a summary unless full, or one JSON document.
 */
#include "reports/rep_int.h"

#include <math.h>
#include <string.h>

#include "db/launches.h"
#include "db/llm.h"

/* Everything show prints, loaded up front. */
struct show {
	struct db_iteration it;        /* the iteration */
	struct db_campaign c;     /* its campaign */
	struct db_q_series *ser;    /* measurements by benchmark, metric, arm */
	size_t nser;
	struct db_metric_stat *ms;      /* metric_stats rows */
	size_t nms;
	struct db_gate_run gate;      /* gate run, id 0 when none */
	struct db_q_flip *flips;    /* flips vs the gate's baseline run */
	size_t nflips;
	struct db_q_regr *regr;     /* regressions it caused */
	size_t nregr;
	struct db_q_kv *facts;      /* env facts */
	size_t nfacts;
	struct db_q_kv *arts;       /* artifacts */
	size_t narts;
	struct db_note *notes;    /* notes on it and corrections it authored */
	size_t nnotes;
	int64_t *note_cid;        /* per note: the campaign of its other iteration */
	int parent_seq;           /* seq of the iteration it was applied on, -1: none */
	struct db_launch *launches; /* engines it started, with their provenance */
	size_t nlaunches;
	struct db_llm_exchange *llm; /* strategy llm: the chat round that proposed it */
	size_t nllm;
};

static void show_release(struct show *s)
{
	db_iteration_release(&s->it);
	db_campaign_release(&s->c);
	db_q_series_free(s->ser, s->nser);
	db_metric_stats_free(s->ms, s->nms);
	db_gate_run_release(&s->gate);
	db_q_flips_free(s->flips, s->nflips);
	db_q_regrs_free(s->regr, s->nregr);
	db_q_kvs_free(s->facts, s->nfacts);
	db_launches_free(s->launches, s->nlaunches);
	db_q_kvs_free(s->arts, s->narts);
	db_notes_free(s->notes, s->nnotes);
	free(s->note_cid);
	db_llm_free(s->llm, s->nllm);
}

/* The campaign of an iteration named by id (a correction may cross campaigns). */
static int campaign_of(struct db *db, int64_t id, int64_t *cid, int *seq, struct rt_sb *err)
{
	struct db_iteration it;
	memset(&it, 0, sizeof(it));
	int rc = db_iteration_get(db, id, &it, err);
	if (!rc) {
		*cid = it.campaign_id;
		*seq = it.seq;
	}
	db_iteration_release(&it);
	return rc;
}

/* What the CAMPAIGN:SEQ names of the parent and of the notes' other ends need. */
static int load_refs(struct db *db, struct show *s, struct rt_sb *err)
{
	int64_t cid;
	int rc = 0;
	s->parent_seq = -1;
	if (s->it.parent_id && (rc = campaign_of(db, s->it.parent_id, &cid, &s->parent_seq, err)))
		return rc;
	s->note_cid = xcalloc(s->nnotes + 1, sizeof(*s->note_cid));
	for (size_t i = 0; i < s->nnotes && !rc; i++) {
		const struct db_note *n = &s->notes[i];
		int64_t other = n->iteration_id != s->it.id ? n->iteration_id : n->by_iteration_id;
		int seq;
		s->note_cid[i] = s->it.campaign_id;
		if (other && other != s->it.id)
			rc = campaign_of(db, other, &s->note_cid[i], &seq, err);
	}
	return rc;
}

static int show_load(struct db *db, int64_t id, struct show *s, struct rt_sb *err)
{
	memset(s, 0, sizeof(*s));
	int rc = db_iteration_get(db, id, &s->it, err);
	if (rc)
		return rc;
	int64_t cid = s->it.campaign_id;
	if ((rc = db_q_campaign_get(db, cid, &s->c, err)) ||
	    (rc = db_q_series_list(db, id, &s->ser, &s->nser, err)) ||
	    (rc = db_q_mstats(db, id, &s->ms, &s->nms, err)) ||
	    (rc = db_q_regrs(db, cid, id, &s->regr, &s->nregr, err)) ||
	    (rc = db_q_facts(db, cid, id, &s->facts, &s->nfacts, err)) ||
	    (rc = db_q_artifacts(db, id, &s->arts, &s->narts, err)) ||
	    (rc = db_launches_of(db, id, &s->launches, &s->nlaunches, err)) ||
	    (rc = db_q_notes(db, cid, id, &s->notes, &s->nnotes, err)) ||
	    (rc = db_llm_of_iteration(db, id, &s->llm, &s->nllm, err)) ||
	    (rc = load_refs(db, s, err)))
		return rc;
	if (s->it.gate_run_id) {
		if ((rc = db_gate_run_get(db, s->it.gate_run_id, &s->gate, err)))
			return rc;
		if (s->gate.fig.baseline_run_id &&
		    (rc = db_q_flips(db, s->gate.id, s->gate.fig.baseline_run_id, &s->flips, &s->nflips, err)))
			return rc;
	}
	return 0;
}

/* ---- JSON ---- */

/* Log events are counts per run: their total is worth showing. */
static double series_sum(const struct db_q_series *s)
{
	double sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	return sum;
}

static json_t *series_json(const struct db_q_series *s)
{
	struct rep_summary m;
	rep_summarise(s->v, s->n, &m);
	json_t *o = json_object();
	json_object_set_new(o, "benchmark", rep_jstr(s->benchmark));
	json_object_set_new(o, "metric", rep_jstr(s->metric));
	json_object_set_new(o, "arm", rep_jstr(s->arm));
	json_object_set_new(o, "unit", rep_jstr(s->unit));
	json_object_set_new(o, "n", json_integer((json_int_t)m.n));
	json_object_set_new(o, "n_invalid", json_integer((json_int_t)s->n_invalid));
	json_object_set_new(o, "median", rep_jnum(m.median));
	json_object_set_new(o, "mad", rep_jnum(m.mad));
	json_object_set_new(o, "min", rep_jnum(m.min));
	json_object_set_new(o, "max", rep_jnum(m.max));
	if (!strcmp(s->benchmark, "log"))
		json_object_set_new(o, "sum", json_real(series_sum(s)));
	return o;
}

static json_t *note_json(const struct db_note *n)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(n->id));
	json_object_set_new(o, "kind", rep_jstr(n->kind));
	json_object_set_new(o, "iteration_id", json_integer(n->iteration_id));
	json_object_set_new(o, "by_iteration_id",
			    n->by_iteration_id ? json_integer(n->by_iteration_id) : json_null());
	json_object_set_new(o, "text", rep_jstr(n->text));
	json_object_set_new(o, "author", rep_jstr(n->author));
	json_object_set_new(o, "created_at", json_integer(n->created_at));
	return o;
}

static json_t *mstat_json(const struct db_metric_stat *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "benchmark", rep_jstr(m->benchmark));
	json_object_set_new(o, "metric", rep_jstr(m->metric));
	json_object_set_new(o, "unit", rep_jstr(m->unit));
	json_object_set_new(o, "better", rep_jstr(m->better));
	json_object_set_new(o, "best_median", rep_jnum(m->best_median));
	json_object_set_new(o, "cand_median", rep_jnum(m->cand_median));
	json_object_set_new(o, "best_mad", rep_jnum(m->best_mad));
	json_object_set_new(o, "cand_mad", rep_jnum(m->cand_mad));
	json_object_set_new(o, "ratio", rep_jnum(m->ratio));
	json_object_set_new(o, "ci_lo", rep_jnum(m->ci_lo));
	json_object_set_new(o, "ci_hi", rep_jnum(m->ci_hi));
	json_object_set_new(o, "p_value", rep_jnum(m->p_value));
	json_object_set_new(o, "n_best", json_integer(m->n_best));
	json_object_set_new(o, "n_cand", json_integer(m->n_cand));
	return o;
}

static json_t *flip_json(const struct db_q_flip *f)
{
	return json_pack("{s:i,s:s,s:s?,s:s?,s:s?}", "idx", f->idx, "direction",
			 f->now_correct ? "wrong->right" : "right->wrong", "target", f->target,
			 "before", f->before, "after", f->after);
}

/* The gate run with its flips, or null. */
static json_t *gate_json(const struct show *s)
{
	const struct db_gate_run *g = &s->gate;
	if (!g->id)
		return json_null();
	json_t *o = json_object(), *fl = json_array();
	json_object_set_new(o, "run_id", json_integer(g->id));
	json_object_set_new(o, "accuracy", rep_jnum(g->fig.accuracy));
	json_object_set_new(o, "wilson_lo", rep_jnum(g->fig.wilson_lo));
	json_object_set_new(o, "wilson_hi", rep_jnum(g->fig.wilson_hi));
	json_object_set_new(o, "n_done", json_integer(g->fig.n_done));
	json_object_set_new(o, "n_correct", json_integer(g->fig.n_correct));
	json_object_set_new(o, "passed", g->passed < 0 ? json_null() : json_boolean(g->passed));
	json_object_set_new(o, "verdict", rep_jstr(g->verdict));
	json_object_set_new(o, "min_accuracy", rep_jnum(g->min_accuracy));
	json_object_set_new(o, "baseline_run_id",
			    g->fig.baseline_run_id ? json_integer(g->fig.baseline_run_id) : json_null());
	json_object_set_new(o, "diff", rep_jnum(g->fig.diff));
	json_object_set_new(o, "mcnemar_p", rep_jnum(g->fig.mcnemar_p));
	json_object_set_new(o, "identical_rate", rep_jnum(g->fig.identical_rate));
	json_object_set_new(o, "identical_response_rate", rep_jnum(g->fig.identical_response_rate));
	for (size_t i = 0; i < s->nflips; i++)
		json_array_append_new(fl, flip_json(&s->flips[i]));
	json_object_set_new(o, "flips", fl);
	return o;
}


/* Notes split four ways: notes, corrections of it, corrections it makes,
 * invalidations. */
static void notes_json(const struct show *s, json_t *doc)
{
	json_t *notes = json_array(), *corrected_by = json_array(), *corrects = json_array();
	json_t *inval = json_array();
	for (size_t i = 0; i < s->nnotes; i++) {
		const struct db_note *n = &s->notes[i];
		bool mine = n->iteration_id == s->it.id;
		json_t *to = notes;
		if (!strcmp(n->kind, "correction"))
			to = mine ? corrected_by : corrects;
		else if (!strcmp(n->kind, "invalidation"))
			to = inval;
		json_array_append_new(to, note_json(n));
	}
	json_object_set_new(doc, "notes", notes);
	json_object_set_new(doc, "corrected_by_notes", corrected_by);
	json_object_set_new(doc, "corrects", corrects);
	json_object_set_new(doc, "invalidations", inval);
}

static json_t *show_json(const struct show *s)
{
	json_t *doc = rep_iter_json(&s->it);
	json_object_set_new(doc, "campaign", json_pack("{s:I,s:s?}", "id", (json_int_t)s->c.id,
						       "name", s->c.name));
	json_object_set_new(doc, "strategy_note", rep_jstr(s->it.strategy_note));
	json_t *meas = json_array(), *logs = json_array(), *st = json_array(), *rg = json_array();
	for (size_t i = 0; i < s->nser; i++)
		json_array_append_new(strcmp(s->ser[i].benchmark, "log") ? meas : logs,
				      series_json(&s->ser[i]));
	json_object_set_new(doc, "measurements", meas);
	json_object_set_new(doc, "log_events", logs);
	for (size_t i = 0; i < s->nms; i++)
		json_array_append_new(st, mstat_json(&s->ms[i]));
	json_object_set_new(doc, "stats", st);
	json_object_set_new(doc, "gate", gate_json(s));
	for (size_t i = 0; i < s->nregr; i++)
		json_array_append_new(rg, rep_regr_json(&s->regr[i], false));
	json_object_set_new(doc, "regressions", rg);
	json_t *env = json_object(), *ar = json_array();
	for (size_t i = 0; i < s->nfacts; i++)
		json_object_set_new(env, s->facts[i].key, rep_jstr(s->facts[i].value));
	json_object_set_new(doc, "env", env);
	for (size_t i = 0; i < s->narts; i++)
		json_array_append_new(ar, json_pack("{s:s?,s:s?,s:I,s:s?,s:b}", "name", s->arts[i].key,
						    "kind", s->arts[i].value, "size",
						    (json_int_t)s->arts[i].size, "sha256",
						    s->arts[i].sha256, "truncated", s->arts[i].truncated));
	json_object_set_new(doc, "artifacts", ar);
	json_object_set_new(doc, "launches", rep_launches_json(s->launches, s->nlaunches));
	notes_json(s, doc);
	json_object_set_new(doc, "llm_exchanges", rep_llm_json(s->llm, s->nllm));
	return doc;
}

/* ---- text ---- */

static void head(struct rt_sb *sb, bool color, const char *title)
{
	rt_sb_addf(sb, "\n%s%s%s\n", rep_ansi(color, "bold"), title, rep_ansi(color, "reset"));
}

static void label(struct rt_sb *sb, const char *l)
{
	rt_sb_addf(sb, "%-11s", l);
}

static void when(struct rt_sb *sb, int64_t ms)
{
	char b[32];
	rt_iso8601(ms, b);
	rt_sb_adds(sb, b);
}

/* Title line, then what was tried, when, why, and what was decided. */
static void text_header(const struct show *s, struct rt_sb *sb, bool color)
{
	const struct db_iteration *it = &s->it;
	const char *rs = rep_ansi(color, "reset");
	rt_sb_addf(sb, "%siteration ", rep_ansi(color, "bold"));
	rep_ref(sb, it->campaign_id, it->seq);
	rt_sb_addf(sb, "%s (id %lld, campaign ", rs, (long long)it->id);
	rep_term_escape(sb, s->c.name);
	rt_sb_addf(sb, " #%lld): %s %s", (long long)s->c.id, rep_glyph(it->state, it->invalidated),
		   db_iter_state_name(it->state));
	if (it->invalidated)
		rt_sb_addf(sb, " %s(INVALIDATED)%s", rep_ansi(color, "red"), rs);
	rt_sb_addc(sb, '\n');
	label(sb, "variant");
	rep_term_escape(sb, it->variant);
	rt_sb_adds(sb, " (");
	rep_term_escape(sb, it->kind);
	rt_sb_addc(sb, ')');
	if (it->parent_id && s->parent_seq >= 0) {
		rt_sb_adds(sb, ", applied on ");
		rep_ref(sb, it->campaign_id, s->parent_seq);
	}
	rt_sb_addc(sb, '\n');
	if (it->device) { /* a device pool's iteration: both arms measured on this device */
		label(sb, "pool");
		rt_sb_addf(sb, "round %d, %s on ", it->round, db_iter_role_name(it->role));
		rep_term_escape(sb, it->device);
		rt_sb_addc(sb, '\n');
	}
	label(sb, "started");
	when(sb, it->started_at);
	if (it->finished_at) {
		char d[32];
		rt_fmt_duration((double)(it->finished_at - it->started_at) / 1000, d, sizeof(d));
		rt_sb_addf(sb, ", took %s", d);
	}
	if (it->phase) {
		rt_sb_adds(sb, ", last phase ");
		rep_term_escape(sb, it->phase);
	}
	rt_sb_addc(sb, '\n');
	if (it->strategy_note) {
		label(sb, "proposed");
		rep_term_escape(sb, it->strategy_note);
		rt_sb_addc(sb, '\n');
	}
	label(sb, "decision");
	rep_term_escape(sb, it->decision ? it->decision : "—");
	if (it->reason) {
		rt_sb_adds(sb, ": ");
		rep_term_escape(sb, it->reason);
	}
	rt_sb_addc(sb, '\n');
}

/* The objective's change with its CI, and the test behind it. */
static void text_objective(const struct db_iteration *it, struct rt_sb *sb)
{
	if (!it->objective)
		return;
	label(sb, "objective");
	rep_term_escape(sb, it->objective);
	rt_sb_adds(sb, " ");
	rep_fmt_num(sb, it->obj_best);
	rt_sb_adds(sb, " -> ");
	rep_fmt_num(sb, it->obj_cand);
	rt_sb_adds(sb, "  ");
	double c, lo, hi;
	int better;
	rep_obj_change(it, &c, &lo, &hi, &better);
	rep_fmt_change(sb, c, lo, hi, better);
	if (!isnan(it->confidence))
		rt_sb_addf(sb, " at %.0f%%", it->confidence * 100);
	rt_sb_addc(sb, '\n');
	if (!it->test)
		return;
	label(sb, "test");
	rep_term_escape(sb, it->test);
	if (!isnan(it->p_value))
		rt_sb_addf(sb, ", p = %.3g", it->p_value);
	rt_sb_addf(sb, ", n = %d cand + %d best%s\n", it->n_cand, it->n_best,
		   it->paired ? ", paired (interleaved A/B)" : "");
}

/* The change's text, every line indented. */
static void text_change(const struct db_iteration *it, struct rt_sb *sb, bool color)
{
	if (!it->change_text || !*it->change_text)
		return;
	head(sb, color, "change");
	struct rt_sb t = RT_SB_INIT;
	rep_term_escape(&t, it->change_text);
	for (char *line = t.buf; line && *line;) {
		char *nl = strchr(line, '\n');
		rt_sb_adds(sb, "  ");
		rt_sb_add(sb, line, nl ? (size_t)(nl - line) : strlen(line));
		rt_sb_addc(sb, '\n');
		line = nl ? nl + 1 : NULL;
	}
	rt_sb_release(&t);
}

/* What a kernel benchmark's percent of peak is a percent of: the peak at
 * the nominal clock (pct_peak_flops, from device_peaks), or scaled to the
 * SM clock the device held during the sample (pct_peak_flops_held, from
 * telemetry); NULL for other metrics. */
static const char *peak_note(const char *metric)
{
	if (!strcmp(metric, "pct_peak_flops"))
		return "of peak at the nominal clock";
	if (!strcmp(metric, "pct_peak_flops_held"))
		return "of peak at the SM clock held";
	return NULL;
}

/* One row of a series table: name, arm, n, median, MAD, min, max, then the
 * unit (measurements) or the sum (log events). */
static void series_row(const struct db_q_series *m, struct rt_sb *sb, bool color, bool logs)
{
	struct rep_summary su;
	rep_summarise(m->v, m->n, &su);
	rt_sb_adds(sb, "  ");
	rep_pad_metric(sb, logs ? NULL : m->benchmark, m->metric, 24);
	rt_sb_addf(sb, " %-4s %3zu", m->arm, su.n);
	double cols[4] = { su.median, su.mad, su.min, su.max };
	for (int k = 0; k < 4; k++) {
		struct rt_sb c = RT_SB_INIT;
		rep_fmt_num(&c, cols[k]);
		rt_sb_addf(sb, " %*s", k == 1 ? 9 : 10, c.buf);
		rt_sb_release(&c);
	}
	if (logs) {
		rt_sb_adds(sb, "  ");
		rep_fmt_num(sb, series_sum(m));
	} else if (m->unit) {
		rt_sb_adds(sb, "  ");
		rep_term_escape(sb, m->unit);
		if (peak_note(m->metric))
			rt_sb_addf(sb, " %s", peak_note(m->metric));
	}
	if (m->n_invalid)
		rt_sb_addf(sb, "  %s(+%zu invalid)%s", rep_ansi(color, "red"), m->n_invalid,
			   rep_ansi(color, "reset"));
	rt_sb_addc(sb, '\n');
}

/* The measurements (logs false) or the log-event counts (benchmark "log"). */
static void text_series(const struct show *s, struct rt_sb *sb, bool color, bool logs)
{
	bool any = false;
	for (size_t i = 0; i < s->nser; i++) {
		const struct db_q_series *m = &s->ser[i];
		if ((strcmp(m->benchmark, "log") == 0) != logs)
			continue;
		if (!any) {
			head(sb, color, logs ? "log events (count per run)"
					     : "measurements (valid samples per metric and arm)");
			rt_sb_addf(sb, "  %s%-24s %-4s %3s %10s %9s %10s %10s  %s%s\n",
				   rep_ansi(color, "dim"), "metric", "arm", "n", "median", "MAD", "min",
				   "max", logs ? "sum" : "unit", rep_ansi(color, "reset"));
			any = true;
		}
		series_row(m, sb, color, logs);
	}
}

/* 1 when higher is better, -1 when lower is, 0 when unknown. */
static int stat_better(const struct db_metric_stat *m)
{
	return !m->better ? 0 : !strcmp(m->better, "higher") ? 1 : -1;
}

static void stat_row(const struct db_metric_stat *m, struct rt_sb *sb)
{
	rt_sb_adds(sb, "  ");
	rep_pad_metric(sb, m->benchmark, m->metric, 24);
	rt_sb_addf(sb, " %-6s ", m->better ? m->better : "?");
	rep_fmt_num(sb, m->best_median);
	rt_sb_adds(sb, " -> ");
	rep_fmt_num(sb, m->cand_median);
	rt_sb_adds(sb, "  ");
	rep_fmt_change(sb, m->ratio - 1, m->ci_lo - 1, m->ci_hi - 1, stat_better(m));
	if (!isnan(m->p_value))
		rt_sb_addf(sb, "  p = %.3g", m->p_value);
	rt_sb_addf(sb, "  n = %d + %d\n", m->n_cand, m->n_best);
}

/* Whether row m is the objective's metric ("bench.metric"). */
static bool is_objective(const struct db_iteration *it, const struct db_metric_stat *m)
{
	size_t lb = strlen(m->benchmark);
	return it->objective && !strncmp(it->objective, m->benchmark, lb) &&
	       it->objective[lb] == '.' && !strcmp(it->objective + lb + 1, m->metric);
}

/* Every metric's change (full), or the objective's and a count of the others
 * by the side of 0 their interval lies on (summary). */
static void text_stats(const struct show *s, struct rt_sb *sb, bool color, bool full)
{
	if (!s->nms)
		return;
	head(sb, color, "statistics (candidate vs best)");
	size_t others = 0, up = 0, down = 0;
	for (size_t i = 0; i < s->nms; i++) {
		const struct db_metric_stat *m = &s->ms[i];
		if (full || is_objective(&s->it, m)) {
			stat_row(m, sb);
			continue;
		}
		others++;
		int better = stat_better(m);
		int side = m->ci_lo > 1 ? 1 : m->ci_hi < 1 ? -1 : 0;
		up += side && side == better;
		down += side && side == -better;
	}
	if (others)
		rt_sb_addf(sb, "  %s%zu other metrics: %zu better, %zu worse, %zu with 0 in their interval "
			   "(--full lists them)%s\n", rep_ansi(color, "dim"), others, up, down,
			   others - up - down, rep_ansi(color, "reset"));
}

/* The paired comparison with the gate's baseline run, and its flips. */
static void text_gate_pairs(const struct show *s, struct rt_sb *sb, bool color)
{
	const struct db_gate_run *g = &s->gate;
	const char *rs = rep_ansi(color, "reset");
	rt_sb_addf(sb, "  vs run %lld: diff %+.2f pts", (long long)g->fig.baseline_run_id, g->fig.diff * 100);
	if (!isnan(g->fig.diff_lo))
		rt_sb_addf(sb, " [%+.2f, %+.2f]", g->fig.diff_lo * 100, g->fig.diff_hi * 100);
	if (!isnan(g->fig.mcnemar_p))
		rt_sb_addf(sb, ", McNemar mid-p %.3g", g->fig.mcnemar_p);
	if (!isnan(g->fig.identical_rate))
		rt_sb_addf(sb, ", %.1f%% identical answers", g->fig.identical_rate * 100);
	if (!isnan(g->fig.identical_response_rate))
		rt_sb_addf(sb, ", %.1f%% identical responses", g->fig.identical_response_rate * 100);
	rt_sb_addf(sb, "\n  flips: %d right -> wrong, %d wrong -> right", g->fig.flips_to_wrong,
		   g->fig.flips_to_right);
	rt_sb_addf(sb, " (%zu among stored answers)\n", s->nflips);
	for (size_t i = 0; i < s->nflips; i++) {
		const struct db_q_flip *f = &s->flips[i];
		rt_sb_addf(sb, "    q%-5d %s%s%s  target ", f->idx,
			   rep_ansi(color, f->now_correct ? "green" : "red"),
			   f->now_correct ? "wrong -> right" : "right -> wrong", rs);
		rep_term_escape(sb, f->target ? f->target : "?");
		rt_sb_adds(sb, ", was ");
		rep_term_escape(sb, f->before ? f->before : "(none)");
		rt_sb_adds(sb, ", now ");
		rep_term_escape(sb, f->after ? f->after : "(none)");
		rt_sb_addc(sb, '\n');
	}
}

static void text_gate(const struct show *s, struct rt_sb *sb, bool color)
{
	head(sb, color, "gate");
	if (!s->gate.id) {
		rt_sb_adds(sb, "  none\n");
		return;
	}
	const struct db_gate_run *g = &s->gate;
	rt_sb_addf(sb, "  run %lld: gsm8k %.2f%%", (long long)g->id, g->fig.accuracy * 100);
	if (!isnan(g->fig.wilson_lo))
		rt_sb_addf(sb, " [%.2f, %.2f]", g->fig.wilson_lo * 100, g->fig.wilson_hi * 100);
	rt_sb_addf(sb, " (%d/%d, ", g->fig.n_correct, g->fig.n_done);
	rep_term_escape(sb, g->extract ? g->extract : "?");
	rt_sb_addf(sb, ")  %s%s%s", rep_ansi(color, g->passed == 1 ? "green" : "red"),
		   g->passed == 1 ? "PASS" : g->passed == 0 ? "FAIL" : "unfinished",
		   rep_ansi(color, "reset"));
	if (!isnan(g->min_accuracy))
		rt_sb_addf(sb, " (min %.2f%%)", g->min_accuracy * 100);
	rt_sb_addc(sb, '\n');
	if (g->verdict) {
		rt_sb_adds(sb, "  ");
		rep_term_escape(sb, g->verdict);
		rt_sb_addc(sb, '\n');
	}
	if (g->fig.baseline_run_id)
		text_gate_pairs(s, sb, color);
}

static void text_regressions(const struct show *s, struct rt_sb *sb, bool color)
{
	if (!s->nregr)
		return;
	head(sb, color, "regressions");
	for (size_t i = 0; i < s->nregr; i++) {
		const struct db_q_regr *r = &s->regr[i];
		double c, lo, hi;
		int better;
		rep_regr_change(r, &c, &lo, &hi, &better);
		rt_sb_adds(sb, "  ");
		rep_term_escape(sb, r->benchmark);
		rt_sb_addc(sb, '.');
		rep_term_escape(sb, r->metric);
		rt_sb_adds(sb, "  ");
		rep_term_change(sb, r->before, r->after, r->unit);
		rt_sb_adds(sb, "  ");
		rep_fmt_change(sb, c, lo, hi, better);
		if (rep_self_metric(r->metric))
			rt_sb_adds(sb, "  (client self-metric)");
		rt_sb_adds(sb, r->kept ? "  (kept anyway)\n" : "\n");
	}
}

static void text_facts(const struct show *s, struct rt_sb *sb, bool color)
{
	if (s->nfacts)
		head(sb, color, "environment");
	for (size_t i = 0; i < s->nfacts; i++) {
		rt_sb_adds(sb, "  ");
		rep_pad(sb, s->facts[i].key, 18);
		rt_sb_adds(sb, " ");
		rep_term_escape(sb, s->facts[i].value);
		rt_sb_adds(sb, s->facts[i].campaign_wide ? "\n" : "  (this iteration)\n");
	}
}

/* The artifacts by their unique names (what --artifact takes); their
 * sha256 in the full view. */
static void text_artifacts(const struct show *s, struct rt_sb *sb, bool color, bool full)
{
	if (s->narts)
		head(sb, color, "artifacts (show --artifact NAME prints one)");
	for (size_t i = 0; i < s->narts; i++) {
		const struct db_q_kv *a = &s->arts[i];
		rt_sb_adds(sb, "  ");
		rep_pad(sb, a->key, 28);
		struct rt_sb kind = RT_SB_INIT;
		rep_term_escape(&kind, a->value);
		rt_sb_addf(sb, " %-12s %8lld B", kind.buf, (long long)a->size);
		rt_sb_release(&kind);
		if (full) {
			rt_sb_adds(sb, "  sha256 ");
			rep_term_escape(sb, a->sha256 ? a->sha256 : "?");
		}
		rt_sb_adds(sb, a->truncated ? "  (truncated)\n" : "\n");
	}
}

/* Notes, and corrections and invalidations linked both ways. */
static void text_notes(const struct show *s, struct rt_sb *sb, bool color)
{
	if (!s->nnotes)
		return;
	const char *rs = rep_ansi(color, "reset");
	head(sb, color, "notes, corrections, invalidations");
	for (size_t i = 0; i < s->nnotes; i++) {
		const struct db_note *n = &s->notes[i];
		rt_sb_adds(sb, "  ");
		bool mine = n->iteration_id == s->it.id;
		if (!strcmp(n->kind, "correction")) {
			rt_sb_addf(sb, "%s%s ", rep_ansi(color, "yellow"), mine ? "corrected by" : "corrects");
			rep_ref(sb, s->note_cid[i], mine ? n->by_seq : n->seq);
			rt_sb_addf(sb, "%s (id %lld): ", rs,
				   (long long)(mine ? n->by_iteration_id : n->iteration_id));
		} else if (!strcmp(n->kind, "invalidation"))
			rt_sb_addf(sb, "%sinvalidated%s: ", rep_ansi(color, "red"), rs);
		else
			rt_sb_adds(sb, "note: ");
		rep_term_escape(sb, n->text);
		rt_sb_adds(sb, "  (");
		if (n->author) {
			rep_term_escape(sb, n->author);
			rt_sb_adds(sb, ", ");
		}
		when(sb, n->created_at);
		rt_sb_adds(sb, ")\n");
	}
}

/* What the summary leaves out, for its last line; empty when nothing. */
static void left_out(const struct show *s, struct rt_sb *what)
{
	const char *parts[5];
	size_t n = 0;
	bool logs = false;
	for (size_t i = 0; i < s->nser; i++)
		logs |= !strcmp(s->ser[i].benchmark, "log");
	if (s->nms > 1)
		parts[n++] = "every metric";
	if (s->nser)
		parts[n++] = logs ? "the samples per arm, log events" : "the samples per arm";
	if (s->nfacts)
		parts[n++] = "the environment";
	if (s->nlaunches)
		parts[n++] = "each launch's provenance";
	if (s->nllm)
		parts[n++] = "the chat exchanges whole";
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(what, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " and ", parts[i]);
}

/* The summary: what was tried, the decision and its statistics, the gate,
 * regressions, launches and artifacts in short, notes. The full view adds
 * the samples per arm, log events, environment and provenance. */
static void show_text(const struct show *s, struct rt_sb *sb, bool color, bool full)
{
	text_header(s, sb, color);
	text_objective(&s->it, sb);
	text_change(&s->it, sb, color);
	if (full) {
		text_series(s, sb, color, false);
		text_series(s, sb, color, true);
	}
	text_stats(s, sb, color, full);
	text_gate(s, sb, color);
	text_regressions(s, sb, color);
	if (full)
		text_facts(s, sb, color);
	if (s->nlaunches) {
		head(sb, color, "engine launches");
		rep_launches_text(s->launches, s->nlaunches, sb, color, full);
	}
	text_artifacts(s, sb, color, full);
	text_notes(s, sb, color);
	if (s->nllm) {
		head(sb, color, "llm exchanges (strategy llm: the model's answers that led to this iteration)");
		rep_llm_text(s->llm, s->nllm, sb, full);
	}
	struct rt_sb what = RT_SB_INIT;
	if (!full)
		left_out(s, &what);
	if (what.len) {
		rt_sb_addf(sb, "\n%s(a summary; show ", rep_ansi(color, "dim"));
		rep_ref(sb, s->it.campaign_id, s->it.seq);
		rt_sb_addf(sb, " --full adds %s)%s\n", what.buf, rep_ansi(color, "reset"));
	}
	rt_sb_release(&what);
}

int rep_show(struct db *db, FILE *out, int64_t id, const struct rep_show_opts *o, struct rt_sb *err)
{
	struct show s;
	int rc = show_load(db, id, &s, err);
	if (!rc && o->json) {
		rc = rep_json_dump(show_json(&s), out, err);
	} else if (!rc) {
		struct rt_sb sb = RT_SB_INIT;
		show_text(&s, &sb, o->color, o->full);
		rc = rep_write_sb(&sb, out, "show", err);
		rt_sb_release(&sb);
	}
	show_release(&s);
	return rc;
}
