/*
 * `ratchet report`: the campaign journal, in Markdown or as one
 * self-contained HTML file (inline CSS and SVG, no script, no external
 * asset). One writer produces both: the same sections in the same order,
 * each piece of database text escaped for the format it lands in.
 *
 *   1. title and summary: baseline -> final for every metric, the kept
 *      changes in order (HTML adds the charts here);
 *   2. every iteration as a numbered entry: change, effect with CI and test,
 *      decision and reason, gate, notes; invalidated results struck through,
 *      corrections beside the entry they correct (and on the correcting one);
 *   3. the map of levers: outcome by kind of change, then what worked and the
 *      dead ends grouped by how they died (reverted, gated, failed, other);
 *   4. the regressions.
 */
#include "reports/rep_int.h"

#include <stdlib.h>
#include <string.h>

/* Everything the journal shows, loaded with a handful of queries. */
struct journal {
	struct db_campaign c;        /* the campaign */
	struct db_iteration *it;          /* all iterations, seq order, with change_text */
	size_t n;
	struct db_note *notes;         /* every note of the campaign */
	size_t nnotes;
	struct db_q_regr *regr;        /* every regression */
	size_t nregr;
	const struct db_iteration *base;  /* seq 0, or NULL */
	const struct db_iteration *fin;   /* the final (best) configuration, or NULL */
	struct db_q_series *bser;      /* baseline measurements */
	size_t nbser;
	struct db_q_series *fser;      /* final measurements */
	size_t nfser;
	struct db_metric_stat *fms;    /* final iteration's metric_stats (for "better") */
	size_t nfms;
	double threshold;              /* gate min accuracy, NAN when unknown */
	struct rep_gate_pt *gates;     /* gate chart points */
	size_t ngates;
	double *lat[4];                /* ttft base, ttft final, e2el base, e2el final */
	size_t nlat[4];
};

static void journal_release(struct journal *j)
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

static int journal_load(struct db *db, int64_t campaign_id, struct journal *j, struct rt_sb *err)
{
	memset(j, 0, sizeof(*j));
	j->threshold = NAN;
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
				g->lo = gr.wilson_lo, g->hi = gr.wilson_hi;
			if (isnan(j->threshold))
				j->threshold = gr.min_accuracy;
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

/* ---- the writer: Markdown or HTML ---- */

struct w {
	struct rt_sb *sb; /* output */
	bool html;        /* HTML, else Markdown */
};

static void lit(struct w *w, const char *md, const char *html)
{
	rt_sb_adds(w->sb, w->html ? html : md);
}

static void txt(struct w *w, const char *s)
{
	if (w->html)
		rep_html_escape(w->sb, s);
	else
		rep_md_escape(w->sb, s);
}

/* Formatted text from trusted pieces (numbers, fixed words); escaped all the same. */
static void txtf(struct w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void txtf(struct w *w, const char *fmt, ...)
{
	struct rt_sb t = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&t, fmt, ap);
	va_end(ap);
	txt(w, t.buf);
	rt_sb_release(&t);
}

static void num(struct w *w, double v)
{
	struct rt_sb t = RT_SB_INIT;
	rep_fmt_num(&t, v);
	txt(w, t.buf);
	rt_sb_release(&t);
}

static void delta(struct w *w, double d, double lo, double hi)
{
	struct rt_sb t = RT_SB_INIT;
	rep_fmt_delta(&t, d, lo, hi);
	txt(w, t.buf);
	rt_sb_release(&t);
}

/* Inline code: Markdown picks a backtick fence longer than any run inside. */
static void code(struct w *w, const char *s)
{
	if (w->html) {
		rt_sb_adds(w->sb, "<code>");
		rep_html_escape(w->sb, s);
		rt_sb_adds(w->sb, "</code>");
		return;
	}
	size_t run = 0, best = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		best = run > best ? run : best;
	}
	size_t n = strlen(s);
	bool pad = !n || s[0] == '`' || s[0] == ' ' || s[n - 1] == '`' || s[n - 1] == ' ';
	for (size_t i = 0; i <= best; i++)
		rt_sb_addc(w->sb, '`');
	if (pad)
		rt_sb_addc(w->sb, ' ');
	for (const char *p = s; *p; p++)
		rt_sb_addc(w->sb, *p == '\n' || *p == '\r' ? ' ' : *p);
	if (pad)
		rt_sb_addc(w->sb, ' ');
	for (size_t i = 0; i <= best; i++)
		rt_sb_addc(w->sb, '`');
}

/* A code block inside a list item (Markdown: indented two spaces). */
static void block(struct w *w, const char *s)
{
	if (w->html) {
		rt_sb_adds(w->sb, "<pre><code>");
		rep_html_escape(w->sb, s);
		rt_sb_adds(w->sb, "</code></pre>");
		return;
	}
	size_t run = 0, best = 2;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		best = run > best ? run : best;
	}
	rt_sb_adds(w->sb, "\n\n  ");
	for (size_t i = 0; i <= best; i++)
		rt_sb_addc(w->sb, '`');
	rt_sb_adds(w->sb, "\n  ");
	for (const char *p = s; *p; p++) {
		if (*p == '\r')
			continue;
		rt_sb_addc(w->sb, *p);
		if (*p == '\n')
			rt_sb_adds(w->sb, "  ");
	}
	rt_sb_adds(w->sb, "\n  ");
	for (size_t i = 0; i <= best; i++)
		rt_sb_addc(w->sb, '`');
}

static void h(struct w *w, int level, const char *id, const char *title)
{
	if (w->html) {
		rt_sb_addf(w->sb, "<h%d id=\"%s\">", level, id);
		rep_html_escape(w->sb, title);
		rt_sb_addf(w->sb, "</h%d>\n", level);
	} else {
		struct rt_sb *b = w->sb;
		if (b->len && !(b->len >= 2 && b->buf[b->len - 1] == '\n' && b->buf[b->len - 2] == '\n'))
			rt_sb_addc(b, '\n');
		for (int i = 0; i < level; i++)
			rt_sb_addc(w->sb, '#');
		rt_sb_addc(w->sb, ' ');
		rep_md_escape(w->sb, title);
		rt_sb_adds(w->sb, "\n\n");
	}
}

static void item(struct w *w, const char *label)
{
	if (w->html)
		rt_sb_addf(w->sb, "<li><b>%s</b> ", label);
	else
		rt_sb_addf(w->sb, "- **%s** ", label);
}

static void item_end(struct w *w)
{
	lit(w, "\n", "</li>\n");
}

static void strike(struct w *w, bool on, bool open)
{
	if (on)
		lit(w, "~~", open ? "<del>" : "</del>");
}

static const char *when(int64_t ms, char buf[32])
{
	rt_iso8601(ms, buf);
	return buf;
}

static const struct db_iteration *by_id(const struct journal *j, int64_t id)
{
	for (size_t i = 0; i < j->n; i++) /* ids are increasing in seq order */
		if (j->it[i].id == id)
			return &j->it[i];
	return NULL;
}

static const struct db_q_series *find_series(const struct db_q_series *v, size_t n, const char *b,
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

static double med(const struct db_q_series *s)
{
	struct rep_summary m;
	if (!s)
		return NAN;
	rep_summarise(s->v, s->n, &m);
	return m.median;
}

/* ---- sections ---- */

static void summary(struct w *w, const struct journal *j)
{
	char t0[32], t1[32];
	struct rt_sb title = RT_SB_INIT;
	rt_sb_addf(&title, "%s: tuning journal", j->c.name ? j->c.name : "campaign");
	h(w, 1, "top", title.buf);
	rt_sb_release(&title);
	lit(w, "", "<p class=\"meta\">");
	txtf(w, "Campaign #%lld, %s. Started %s", (long long)j->c.id, j->c.state,
	     when(j->c.created_at, t0));
	if (j->c.finished_at)
		txtf(w, ", finished %s", when(j->c.finished_at, t1));
	txtf(w, ". %zu iterations (baseline + %zu). Spec ", j->n, j->n ? j->n - 1 : 0);
	code(w, j->c.spec_path ? j->c.spec_path : "?");
	if (j->base && j->base->objective) {
		txt(w, ". Objective ");
		code(w, j->base->objective);
	}
	lit(w, ".\n", ".</p>\n");

	h(w, 2, "summary", "Summary: baseline to final");
	if (!j->base) {
		lit(w, "No baseline was measured.\n", "<p>No baseline was measured.</p>\n");
		return;
	}
	lit(w, "", "<p>");
	txt(w, "Final configuration: ");
	if (j->fin && j->fin != j->base)
		txtf(w, "iteration %d (%s, id %lld)", j->fin->seq, j->fin->variant, (long long)j->fin->id);
	else
		txt(w, "the baseline (no change was kept)");
	lit(w, ".\n\n", ".</p>\n");
	lit(w, "| metric | baseline | final | change |\n|---|---:|---:|---|\n",
	    "<div class=\"tw\"><table><thead><tr><th>metric</th><th>baseline</th><th>final</th>"
	    "<th>change</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < j->nbser; i++) {
		const struct db_q_series *b = &j->bser[i];
		if (i && !strcmp(b->benchmark, j->bser[i - 1].benchmark) &&
		    !strcmp(b->metric, j->bser[i - 1].metric))
			continue; /* one row per metric */
		b = find_series(j->bser, j->nbser, b->benchmark, b->metric, "cand");
		const struct db_q_series *f =
			find_series(j->fser, j->nfser, b->benchmark, b->metric, "cand");
		double vb = med(b), vf = med(f);
		const char *better = NULL;
		for (size_t k = 0; k < j->nfms; k++)
			if (!strcmp(j->fms[k].benchmark, b->benchmark) &&
			    !strcmp(j->fms[k].metric, b->metric))
				better = j->fms[k].better;
		lit(w, "| ", "<tr><td>");
		struct rt_sb name = RT_SB_INIT;
		rt_sb_addf(&name, "%s.%s", b->benchmark, b->metric);
		code(w, name.buf);
		rt_sb_release(&name);
		if (b->unit)
			txtf(w, " (%s)", b->unit);
		lit(w, " | ", "</td><td class=\"n\">");
		num(w, vb);
		lit(w, " | ", "</td><td class=\"n\">");
		num(w, vf);
		lit(w, " | ", "</td><td>");
		if (vb != 0 && !isnan(vb) && !isnan(vf) && vf != vb) {
			txtf(w, "%+.1f%%", (vf / vb - 1) * 100);
			if (better) {
				bool good = (vf > vb) == !strcmp(better, "higher");
				txt(w, good ? " (better)" : " (worse)");
			}
		} else if (!isnan(vb) && vf == vb) {
			txt(w, "unchanged");
		} else {
			txt(w, "—");
		}
		lit(w, " |\n", "</td></tr>\n");
	}
	lit(w, "", "</tbody></table></div>\n");
	lit(w, "\nKept changes, in order:\n\n", "<p>Kept changes, in order:</p>\n<ol class=\"kept\">\n");
	size_t nk = 0;
	for (size_t i = 0; i < j->n; i++) {
		const struct db_iteration *it = &j->it[i];
		if (!is(it, DB_ITER_KEPT))
			continue;
		nk++;
		lit(w, "", "<li>");
		if (!w->html)
			rt_sb_addf(w->sb, "%zu. ", nk);
		strike(w, it->invalidated, true);
		txtf(w, "iteration %d, ", it->seq);
		code(w, it->variant);
		txt(w, ": ");
		delta(w, it->obj_delta, it->obj_ci_lo, it->obj_ci_hi);
		strike(w, it->invalidated, false);
		if (it->invalidated)
			txt(w, " (invalidated)");
		lit(w, "\n", "</li>\n");
	}
	if (!nk)
		lit(w, "- none\n", "<li>none</li>\n");
	lit(w, "", "</ol>\n");
}

static void entry(struct w *w, const struct journal *j, const struct db_iteration *it)
{
	struct rt_sb t = RT_SB_INIT;
	rt_sb_addf(&t, "%d. %s %s %s", it->seq, it->variant, rep_glyph(it->state, it->invalidated),
		   it->invalidated ? "invalid" : db_iter_state_name(it->state));
	if (it->invalidated)
		rt_sb_addf(&t, " (was %s)", db_iter_state_name(it->state));
	char id[32];
	snprintf(id, sizeof(id), "it-%d", it->seq);
	if (w->html)
		rt_sb_addf(w->sb, "<section class=\"it %s%s\">\n", db_iter_state_name(it->state),
			   it->invalidated ? " invalidated" : "");
	h(w, 3, id, t.buf);
	rt_sb_release(&t);
	lit(w, "", "<ul>\n");
	item(w, "Change");
	txtf(w, "(%s, id %lld):", it->kind, (long long)it->id);
	if (!it->change_text || !*it->change_text)
		txt(w, is(it, DB_ITER_BASELINE) ? " none, the configuration as found" : " (not recorded)");
	else if (strchr(it->change_text, '\n'))
		block(w, it->change_text);
	else
		lit(w, " ", " "), code(w, it->change_text);
	item_end(w);
	if (!isnan(it->obj_cand) || !isnan(it->obj_delta)) {
		item(w, "Effect:");
		strike(w, it->invalidated, true);
		if (it->objective)
			code(w, it->objective), txt(w, " ");
		if (is(it, DB_ITER_BASELINE)) {
			num(w, it->obj_cand);
		} else {
			num(w, it->obj_best);
			txt(w, " → ");
			num(w, it->obj_cand);
			txt(w, ": ");
			delta(w, it->obj_delta, it->obj_ci_lo, it->obj_ci_hi);
			if (!isnan(it->confidence))
				txtf(w, " (%.0f%% CI", it->confidence * 100);
			else
				txt(w, " (");
			if (it->test)
				txtf(w, "; %s", it->test);
			if (!isnan(it->p_value))
				txtf(w, ", p = %.2g", it->p_value);
			txtf(w, ", n = %d + %d%s)", it->n_cand, it->n_best, it->paired ? ", paired" : "");
		}
		strike(w, it->invalidated, false);
		item_end(w);
	}
	item(w, "Decision:");
	strike(w, it->invalidated, true);
	txt(w, it->decision ? it->decision : is(it, DB_ITER_BASELINE) ? "baseline" : "none");
	if (it->reason)
		txt(w, ": "), txt(w, it->reason);
	strike(w, it->invalidated, false);
	item_end(w);
	item(w, "Gate:");
	if (isnan(it->gate_accuracy))
		txt(w, "—");
	else
		txtf(w, "gsm8k %.1f%% (%s)", it->gate_accuracy * 100,
		     it->gate_passed == 1 ? "pass" : it->gate_passed == 0 ? "FAIL" : "unfinished");
	item_end(w);
	for (size_t i = 0; i < j->nnotes; i++) {
		const struct db_note *n = &j->notes[i];
		bool on_me = n->iteration_id == it->id, by_me = n->by_iteration_id == it->id;
		if (!on_me && !by_me)
			continue;
		char lab[96];
		const struct db_iteration *o = NULL;
		if (!strcmp(n->kind, "invalidation") && on_me) {
			snprintf(lab, sizeof(lab), "Invalidated:");
		} else if (!strcmp(n->kind, "correction") && on_me) {
			o = by_id(j, n->by_iteration_id);
			snprintf(lab, sizeof(lab), "Corrected by iteration %d:", o ? o->seq : n->by_seq);
		} else if (!strcmp(n->kind, "correction") && by_me) {
			o = by_id(j, n->iteration_id);
			snprintf(lab, sizeof(lab), "Corrects iteration %d:", n->seq);
		} else if (on_me) {
			snprintf(lab, sizeof(lab), "Note:");
		} else {
			continue;
		}
		bool aside = strcmp(n->kind, "note") != 0;
		if (aside && w->html)
			rt_sb_addf(w->sb, "<li class=\"%s\">", n->kind);
		else
			lit(w, "", "<li>");
		if (!w->html)
			rt_sb_adds(w->sb, aside ? "- > **" : "- **");
		else
			rt_sb_adds(w->sb, "<b>");
		txt(w, lab);
		lit(w, "** ", "</b> ");
		if (o) {
			code(w, o->variant);
			txt(w, " — ");
		}
		txt(w, n->text);
		if (n->author)
			txt(w, " ("), txt(w, n->author), txt(w, ")");
		lit(w, "\n", "</li>\n");
	}
	lit(w, "", "</ul>\n</section>\n");
}

static void levers(struct w *w, const struct journal *j)
{
	h(w, 2, "levers", "Levers: what worked and what did not");
	static const char *const kinds[] = { "flag", "env", "table", "patch", "file" };
	static const enum db_iter_state outcomes[] = { DB_ITER_KEPT, DB_ITER_REVERTED, DB_ITER_GATED,
							DB_ITER_FAILED };
	lit(w, "| kind | tried | kept | reverted | gated | failed | other | best kept gain |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|\n",
	    "<div class=\"tw\"><table><thead><tr><th>kind</th><th>tried</th><th>kept</th>"
	    "<th>reverted</th><th>gated</th><th>failed</th><th>other</th><th>best kept gain</th>"
	    "</tr></thead><tbody>\n");
	for (size_t k = 0; k < RT_ARRAY_SIZE(kinds); k++) {
		size_t cnt[4] = { 0 }, tried = 0, other = 0;
		double best = NAN;
		for (size_t i = 0; i < j->n; i++) {
			const struct db_iteration *it = &j->it[i];
			if (strcmp(it->kind, kinds[k]))
				continue;
			tried++;
			bool hit = false;
			for (size_t o = 0; o < 4 && !it->invalidated; o++)
				if (is(it, outcomes[o]))
					cnt[o]++, hit = true;
			other += !hit;
			if (is(it, DB_ITER_KEPT) && !it->invalidated && !(best >= it->obj_delta))
				best = it->obj_delta;
		}
		if (!tried)
			continue;
		lit(w, "| ", "<tr><td>");
		txt(w, kinds[k]);
		char row[160];
		snprintf(row, sizeof(row), "%zu|%zu|%zu|%zu|%zu|%zu", tried, cnt[0], cnt[1], cnt[2], cnt[3],
			 other);
		for (char *p = strtok(row, "|"); p; p = strtok(NULL, "|")) {
			lit(w, " | ", "</td><td class=\"n\">");
			txt(w, p);
		}
		lit(w, " | ", "</td><td class=\"n\">");
		delta(w, best, NAN, NAN);
		lit(w, " |\n", "</td></tr>\n");
	}
	lit(w, "", "</tbody></table></div>\n");
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
	for (size_t g = 0; g < RT_ARRAY_SIZE(groups); g++) {
		size_t cnt = 0;
		for (size_t i = 0; i < j->n; i++) {
			const struct db_iteration *it = &j->it[i];
			bool in = groups[g].state >= 0 ? is(it, groups[g].state) && !it->invalidated
						  : it->invalidated || is(it, DB_ITER_INTERRUPTED) ||
							    is(it, DB_ITER_INVALID);
			if (!in)
				continue;
			if (!cnt++) {
				h(w, 3, groups[g].id, groups[g].title);
				lit(w, "", "<ul>\n");
			}
			lit(w, "- ", "<li>");
			txtf(w, "iteration %d, ", it->seq);
			code(w, it->variant);
			txtf(w, " (%s): ", it->kind);
			bool measured = !isnan(it->obj_delta) && !it->invalidated;
			if (measured)
				delta(w, it->obj_delta, it->obj_ci_lo, it->obj_ci_hi);
			if (it->invalidated)
				txt(w, "invalidated (see its entry)");
			else if (!is(it, DB_ITER_KEPT) && !is(it, DB_ITER_REVERTED) && it->reason)
				txt(w, measured ? "; " : ""), txt(w, it->reason);
			if (it->corrected_by) {
				const struct db_iteration *o = by_id(j, it->corrected_by);
				txtf(w, " — corrected by iteration %d", o ? o->seq : -1);
			}
			lit(w, "\n", "</li>\n");
		}
		if (cnt)
			lit(w, "", "</ul>\n");
	}
}

static void regressions(struct w *w, const struct journal *j)
{
	h(w, 2, "regressions", "Regressions");
	if (!j->nregr) {
		lit(w, "None recorded.\n", "<p>None recorded.</p>\n");
		return;
	}
	lit(w, "", "<ul>\n");
	for (size_t i = 0; i < j->nregr; i++) {
		const struct db_q_regr *r = &j->regr[i];
		lit(w, "- ", "<li>");
		struct rt_sb name = RT_SB_INIT;
		rt_sb_addf(&name, "%s.%s", r->benchmark, r->metric);
		code(w, name.buf);
		rt_sb_release(&name);
		txt(w, ": ");
		num(w, r->before);
		txt(w, " → ");
		num(w, r->after);
		if (r->unit)
			txt(w, " "), txt(w, r->unit);
		txt(w, ", ");
		delta(w, r->delta, r->ci_lo, r->ci_hi);
		txtf(w, ", by iteration %d ", r->seq);
		code(w, r->variant);
		txtf(w, " (id %lld)", (long long)r->iteration_id);
		if (r->kept)
			lit(w, ", **kept anyway**", ", <b>kept anyway</b>");
		lit(w, "\n", "</li>\n");
	}
	lit(w, "", "</ul>\n");
}

/* ---- charts (HTML only) ---- */

static void charts(struct w *w, const struct journal *j)
{
	h(w, 2, "charts", "Charts");
	struct rep_obj_pt *p = xcalloc(j->n ? j->n : 1, sizeof(*p));
	size_t np = 0;
	struct rep_gain *g = xcalloc(j->n ? j->n : 1, sizeof(*g));
	size_t ng = 0;
	const char *unit = NULL;
	for (size_t i = 0; i < j->nbser; i++)
		if (j->base && j->base->objective && !strncmp(j->base->objective, j->bser[i].benchmark,
							      strlen(j->bser[i].benchmark)) &&
		    !strcmp(j->base->objective + strlen(j->bser[i].benchmark) + 1, j->bser[i].metric))
			unit = j->bser[i].unit;
	for (size_t i = 0; i < j->n; i++) {
		const struct db_iteration *it = &j->it[i];
		if (isnan(it->obj_cand))
			continue;
		struct rep_obj_pt *q = &p[np++];
		q->seq = it->seq;
		q->value = it->obj_cand;
		q->lo = isnan(it->obj_ci_lo) ? NAN : it->obj_best * (1 + it->obj_ci_lo);
		q->hi = isnan(it->obj_ci_hi) ? NAN : it->obj_best * (1 + it->obj_ci_hi);
		q->mark = it->invalidated ? 'i' : is(it, DB_ITER_BASELINE) ? 'b' : is(it, DB_ITER_KEPT) ? 'k' :
			  is(it, DB_ITER_REVERTED) ? 'r' : is(it, DB_ITER_GATED) ? 'g' : 'o';
		if (q->mark == 'k' && !isnan(it->obj_delta))
			g[ng++] = (struct rep_gain){ it->variant, it->seq, it->obj_delta };
	}
	rt_sb_adds(w->sb, "<figure><div class=\"cw\">");
	rep_svg_objective(w->sb, p, np, j->base ? j->base->objective : NULL, unit);
	rt_sb_adds(w->sb, "</div><figcaption>Candidate median per iteration with its confidence interval. "
		   "Filled: kept (green) or baseline (blue); hollow: reverted or invalidated; red: "
		   "gated. The dashed step line is the best configuration so far.</figcaption></figure>\n");
	rt_sb_adds(w->sb, "<figure><div class=\"cw\">");
	rep_svg_gate(w->sb, j->gates, j->ngates, j->threshold);
	rt_sb_adds(w->sb, "</div><figcaption>GSM8K accuracy of every gate run, with its Wilson interval; "
		   "the dashed line is the minimum the gate requires.</figcaption></figure>\n");
	rt_sb_adds(w->sb, "<figure><div class=\"cw\">");
	rep_svg_waterfall(w->sb, g, ng);
	rt_sb_adds(w->sb, "</div><figcaption>How the kept changes add up: each bar starts where the "
		   "previous one ended (gains compound).</figcaption></figure>\n");
	struct rep_dist tt[2] = { { "baseline", j->lat[0], j->nlat[0] }, { "final", j->lat[1], j->nlat[1] } };
	struct rep_dist ee[2] = { { "baseline", j->lat[2], j->nlat[2] }, { "final", j->lat[3], j->nlat[3] } };
	const struct db_q_series *ob = NULL, *of = NULL;
	const char *dot = j->base && j->base->objective ? strchr(j->base->objective, '.') : NULL;
	if (!j->nlat[0] && !j->nlat[1] && !j->nlat[2] && !j->nlat[3] && dot) {
		/* No per-request records (a kernel or command campaign): show the
		 * objective's own measurements instead of an empty chart. */
		char *bench = xstrndup(j->base->objective, (size_t)(dot - j->base->objective));
		ob = find_series(j->bser, j->nbser, bench, dot + 1, "best");
		if (j->fin && j->fin != j->base)
			of = find_series(j->fser, j->nfser, bench, dot + 1, "cand");
		free(bench);
	}
	rt_sb_adds(w->sb, "<figure><div class=\"cw\">");
	if (ob) {
		struct rep_dist d[2] = { { "baseline", ob->v, ob->n }, { "final", of ? of->v : NULL, of ? of->n : 0 } };
		char *axis = ob->unit ? xasprintf("%s (%s)", j->base->objective, ob->unit)
				      : xstrdup(j->base->objective);
		rep_svg_samples(w->sb, axis, d, 2);
		free(axis);
		rt_sb_adds(w->sb, "</div><figcaption>Every measurement of the objective, baseline vs final "
			   "configuration (no per-request records in this campaign).</figcaption></figure>\n");
	} else {
		rep_svg_latency(w->sb, tt, 2, ee, 2);
		rt_sb_adds(w->sb, "</div><figcaption>Share of requests answered within a given time: further "
			   "left is faster.</figcaption></figure>\n");
	}
	free(p);
	free(g);
}

static const char CSS[] =
	":root{color-scheme:light;--fg:#1b1b1b;--mut:#616161;--line:#e0e0e0;--kept:#2e7d32;"
	"--rev:#757575;--bad:#c62828;--warn:#ef6c00}"
	"*{box-sizing:border-box}"
	"body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
	"max-width:980px;margin:0 auto;padding:1rem 1.25rem 4rem}"
	"h1{font-size:1.7rem;margin:.5rem 0}h2{margin-top:2.2rem;border-bottom:1px solid var(--line);"
	"padding-bottom:.2rem}h3{margin:1.4rem 0 .3rem;font-size:1.08rem}"
	".meta{color:var(--mut)}"
	"code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f5f5f5;"
	"padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}"
	"pre{background:#f5f5f5;padding:.6rem .8rem;border-radius:4px;overflow-x:auto;"
	"white-space:pre-wrap;overflow-wrap:anywhere}pre code{padding:0;background:none}"
	".tw{overflow-x:auto}table{border-collapse:collapse;margin:.5rem 0;min-width:60%}"
	"th,td{border-bottom:1px solid var(--line);padding:.3rem .6rem;text-align:left;vertical-align:top}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"figure{margin:1.2rem 0}.cw{overflow-x:auto}figcaption{color:var(--mut);font-size:.9rem}"
	"svg.chart{display:block;width:100%;max-width:100%;height:auto;border:1px solid var(--line);"
	"border-radius:4px}"
	"svg .tick{fill:#424242;font-size:11px}svg .axis{fill:#212121;font-size:12px}"
	"svg .legend{fill:#212121;font-size:11px}svg .val{fill:#212121;font-size:11px}"
	"svg .empty{fill:#757575;font-size:13px}"
	"section.it{border-left:4px solid var(--line);padding-left:.8rem;margin:1rem 0}"
	"section.kept{border-color:var(--kept)}section.gated,section.failed{border-color:var(--bad)}"
	"section.reverted{border-color:var(--rev)}section.interrupted{border-color:var(--warn)}"
	"section.invalidated{border-color:#bdbdbd;background:#fafafa}"
	"section.it ul{padding-left:1.1rem;margin:.2rem 0}"
	"li.correction,li.invalidation{list-style:none;margin:.4rem 0 .4rem -1.1rem;padding:.4rem .6rem;"
	"border-left:3px solid var(--warn);background:#fff8e1}"
	"li.invalidation{border-color:var(--bad);background:#ffebee}"
	"del{color:var(--mut)}"
	"@media (max-width:600px){body{font-size:14px;padding:.6rem}h1{font-size:1.35rem}"
	"svg.chart{min-width:600px}"
	"table{font-size:13px}th,td{padding:.25rem .35rem}}"
	"@media print{body{max-width:none;padding:0;font-size:11pt}a{color:inherit}"
	"h2{break-after:avoid}figure,section.it,tr{break-inside:avoid}"
	"svg.chart{border:none;max-height:9cm;min-width:0}.cw{overflow:visible}section.invalidated{background:none}"
	"pre{white-space:pre-wrap}}";

int rep_report(struct db *db, int64_t campaign_id, enum rep_format fmt, struct rt_sb *out,
	       struct rt_sb *err)
{
	struct journal j;
	int rc = journal_load(db, campaign_id, &j, err);
	if (rc) {
		journal_release(&j);
		return rc;
	}
	struct w w = { out, fmt == REP_HTML };
	if (w.html) {
		rt_sb_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
			   "<meta name=\"generator\" content=\"ratchet " RATCHET_VERSION "\"><title>");
		rep_html_escape(out, j.c.name);
		rt_sb_adds(out, ": ratchet journal</title><style>");
		rt_sb_adds(out, CSS);
		rt_sb_adds(out, "</style></head><body>\n");
	}
	summary(&w, &j);
	if (w.html)
		charts(&w, &j);
	h(&w, 2, "iterations", "Iterations");
	for (size_t i = 0; i < j.n; i++)
		entry(&w, &j, &j.it[i]);
	levers(&w, &j);
	regressions(&w, &j);
	if (w.html)
		rt_sb_adds(out, "</body></html>\n");
	journal_release(&j);
	return 0;
}
