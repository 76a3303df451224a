/*
 * `ratchet report --campaigns A,B,...`: campaigns side by side, to answer
 * "which levers carried over" from one model or machine to the next. Each
 * campaign is loaded as its journal is (rep_j_load) and written through the
 * same writer, so Markdown and HTML come from one piece of code:
 *
 *   1. the answer: how many levers were tried in more than one campaign and
 *      which of them were kept everywhere they were tried;
 *   2. the campaigns: objective, engine and model, machine, totals, and the
 *      objective baseline -> final;
 *   3. the levers tried in more than one campaign: per campaign the
 *      decision, the objective's change with its interval, and the
 *      confidence (CI level, test's p);
 *   4. the levers tried in one campaign only, apart.
 *
 * A lever is a change as the iterations record it: two iterations of
 * different campaigns are the same lever when they have the same variant
 * name or the same change fingerprint (iterations.change_sha256, which
 * hashes the change itself, so a renamed variant still matches). Within a
 * campaign a lever's last conclusive try speaks for it (a confirmation
 * after its trial; an invalidated try only when there is no other).
 */
#include "reports/journal_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One lever and where it was tried. */
struct lever {
	const struct db_iteration **at; /* per campaign: the try that speaks for it, or NULL */
	size_t *tries;                  /* per campaign: how many iterations tried it */
	size_t ncamp;                   /* campaigns that tried it */
	size_t nkept;                   /* of them, campaigns that kept it */
	size_t first;                   /* order of discovery (stable sort) */
};

/* The campaigns and their levers. */
struct cmp {
	struct journal *j;  /* one journal per campaign, in the order asked */
	size_t n;           /* how many campaigns */
	struct lever *l;    /* levers, in order of discovery, then sorted */
	size_t nl;          /* how many */
};

static bool same_change(const struct db_iteration *a, const struct db_iteration *b)
{
	if (!strcmp(a->variant, b->variant))
		return true;
	return a->change_sha256 && b->change_sha256 && !strcmp(a->change_sha256, b->change_sha256);
}

static struct lever *lever_find(struct cmp *c, const struct db_iteration *it)
{
	for (size_t i = 0; i < c->nl; i++)
		for (size_t k = 0; k < c->n; k++)
			if (c->l[i].at[k] && same_change(c->l[i].at[k], it))
				return &c->l[i];
	c->l = xrealloc(c->l, (c->nl + 1) * sizeof(*c->l));
	struct lever *l = &c->l[c->nl];
	*l = (struct lever){ xcalloc(c->n, sizeof(*l->at)), xcalloc(c->n, sizeof(*l->tries)), 0, 0,
			     c->nl };
	c->nl++;
	return l;
}

static bool kept(const struct db_iteration *it)
{
	return it && it->state == DB_ITER_KEPT && !it->invalidated;
}

/* Most campaigns that kept it first, then most campaigns that tried it. */
static int lever_cmp(const void *pa, const void *pb)
{
	const struct lever *a = pa, *b = pb;
	if (a->nkept != b->nkept)
		return a->nkept > b->nkept ? -1 : 1;
	if (a->ncamp != b->ncamp)
		return a->ncamp > b->ncamp ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static void cmp_levers(struct cmp *c)
{
	for (size_t k = 0; k < c->n; k++) {
		const struct journal *j = &c->j[k];
		for (size_t i = 0; i < j->n; i++) {
			const struct db_iteration *it = &j->it[i];
			if (it->seq == 0 || it->state == DB_ITER_BASELINE)
				continue;
			struct lever *l = lever_find(c, it);
			if (!l->at[k] || l->at[k]->invalidated || !it->invalidated)
				l->at[k] = it;
			l->tries[k]++;
		}
	}
	for (size_t i = 0; i < c->nl; i++)
		for (size_t k = 0; k < c->n; k++) {
			c->l[i].ncamp += c->l[i].at[k] != NULL;
			c->l[i].nkept += kept(c->l[i].at[k]);
		}
	qsort(c->l, c->nl, sizeof(*c->l), lever_cmp);
}

static void cmp_release(struct cmp *c)
{
	for (size_t k = 0; k < c->n; k++)
		rep_j_release(&c->j[k]);
	free(c->j);
	for (size_t i = 0; i < c->nl; i++) {
		free(c->l[i].at);
		free(c->l[i].tries);
	}
	free(c->l);
}

/* The lever's name: its variant's in the first campaign that tried it. */
static const struct db_iteration *lever_first(const struct cmp *c, const struct lever *l)
{
	for (size_t k = 0; k < c->n; k++)
		if (l->at[k])
			return l->at[k];
	return NULL;
}

/* ---- pieces of the tables ---- */

static void campaign_ref(struct rep_writer *w, const struct journal *j)
{
	rep_w_textf(w, "#%lld ", (long long)j->c.id);
	w->ops->code(w, j->c.name ? j->c.name : "?");
}

/* The engine's program and the model it serves, from the spec as it was run:
 * engine.identity.model, else the argument after --model. */
static void engine_text(struct rt_sb *sb, const json_t *spec)
{
	const json_t *eng = json_object_get(spec, "engine");
	const json_t *cmd = json_object_get(eng, "command");
	const char *prog = json_string_value(json_array_get(cmd, 0));
	if (!prog) {
		const json_t *b0 = json_array_get(json_object_get(spec, "benchmarks"), 0);
		const char *backend = json_string_value(json_object_get(json_object_get(b0, "kernel"), "backend"));
		if (backend)
			rt_sb_addf(sb, "no engine: kernels on %s", backend);
		else
			rt_sb_adds(sb, "no engine");
		return;
	}
	const char *slash = strrchr(prog, '/');
	rt_sb_adds(sb, slash ? slash + 1 : prog);
	const char *model = json_string_value(json_object_get(json_object_get(eng, "identity"), "model"));
	for (size_t i = 0; !model && i + 1 < json_array_size(cmd); i++) {
		const char *arg = json_string_value(json_array_get(cmd, i));
		if (arg && !strcmp(arg, "--model"))
			model = json_string_value(json_array_get(cmd, i + 1));
	}
	if (model)
		rt_sb_addf(sb, ", model %s", model);
}

/* Where it ran: the host, its CPU, the device of the kernel benchmarks. */
static int machine_text(struct db *db, const struct journal *j, struct rt_sb *sb, struct rt_sb *err)
{
	static const char *const keys[] = { "host", "cpu", "device" };
	struct db_q_kv *f;
	size_t n;
	int rc = db_q_facts(db, j->c.id, j->base ? j->base->id : 0, &f, &n, err);
	if (rc)
		return rc;
	for (size_t k = 0; k < RT_ARRAY_SIZE(keys); k++)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(f[i].key, keys[k])) {
				rt_sb_addf(sb, "%s%s", sb->len ? ", " : "", f[i].value);
				break;
			}
	db_q_kvs_free(f, n);
	if (!sb->len)
		rt_sb_adds(sb, "not recorded");
	return 0;
}

static void decision_cell(struct rep_writer *w, const struct db_iteration *it, size_t tries)
{
	if (!it) {
		w->ops->text(w, "not tried");
		return;
	}
	rep_w_textf(w, "%s %s", rep_glyph(it->state, it->invalidated),
		    it->invalidated ? "invalidated" : db_iter_state_name(it->state));
	if (tries > 1)
		rep_w_textf(w, " (%zu tries)", tries);
	rep_w_textf(w, ", %lld:%d", (long long)it->campaign_id, it->seq);
}

static void effect_cell(struct rep_writer *w, const struct db_iteration *it)
{
	if (!it || it->invalidated)
		w->ops->text(w, "—");
	else
		rep_w_obj_change(w, it);
}

static void confidence_cell(struct rep_writer *w, const struct db_iteration *it)
{
	if (!it || it->invalidated || (isnan(it->confidence) && isnan(it->p_value))) {
		w->ops->text(w, "—");
		return;
	}
	if (!isnan(it->confidence))
		rep_w_textf(w, "%.0f%% CI", it->confidence * 100);
	if (!isnan(it->p_value))
		rep_w_textf(w, "%sp = %.2g", isnan(it->confidence) ? "" : ", ", it->p_value);
	if (it->test)
		rep_w_textf(w, " (%s)", it->test);
}

/* The three cells of one campaign's try: decision, effect, confidence. */
static void try_cells(struct rep_writer *w, const struct db_iteration *it, size_t tries)
{
	w->ops->cell(w);
	decision_cell(w, it, tries);
	w->ops->cell(w);
	effect_cell(w, it);
	w->ops->cell(w);
	confidence_cell(w, it);
}

/* End a table that got rows; without any, say so instead. */
static void table_or_none(struct rep_writer *w, size_t rows, const char *none)
{
	if (rows) {
		w->ops->table_end(w);
		return;
	}
	w->ops->para_begin(w, NULL);
	w->ops->text(w, none);
	w->ops->para_end(w);
}

/* ---- 1. the answer ---- */

static void answer(struct rep_writer *w, const struct cmp *c)
{
	const struct rep_writer_ops *o = w->ops;
	size_t shared = 0, carried = 0;
	for (size_t i = 0; i < c->nl; i++) {
		shared += c->l[i].ncamp > 1;
		carried += c->l[i].ncamp > 1 && c->l[i].nkept == c->l[i].ncamp;
	}
	o->para_begin(w, "meta");
	rep_w_textf(w, "%zu levers in all; %zu tried in more than one campaign, of which %zu carried "
		    "over (kept in every campaign that tried them)", c->nl, shared, carried);
	size_t shown = 0;
	for (size_t i = 0; i < c->nl; i++) {
		const struct lever *l = &c->l[i];
		if (l->ncamp < 2 || l->nkept != l->ncamp)
			continue;
		o->text(w, shown++ ? ", " : ": ");
		o->code(w, lever_first(c, l)->variant);
	}
	o->text(w, ".");
	o->para_end(w);
}

/* ---- 2. the campaigns ---- */

static int campaigns(struct rep_writer *w, struct db *db, const struct cmp *c, struct rt_sb *err)
{
	static const struct rep_col cols[] = {
		{ "campaign", false }, { "objective", false }, { "engine and model", false },
		{ "machine", false },  { "tried", true },      { "kept", true },
		{ "reverted", true },  { "gated", true },      { "failed", true },
		{ "baseline → final", false },
	};
	static const enum db_iter_state counted[] = { DB_ITER_KEPT, DB_ITER_REVERTED, DB_ITER_GATED,
						       DB_ITER_FAILED };
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "campaigns", "Campaigns");
	o->table_begin(w, cols, RT_ARRAY_SIZE(cols));
	for (size_t k = 0; k < c->n; k++) {
		const struct journal *j = &c->j[k];
		json_t *spec = rep_j_spec(j);
		struct rt_sb t = RT_SB_INIT;
		o->cell(w);
		campaign_ref(w, j);
		o->cell(w);
		const char *metric = j->base && j->base->objective
					     ? j->base->objective
					     : json_string_value(json_object_get(json_object_get(spec, "objective"), "metric"));
		const char *dir = rep_j_direction(j, json_object_get(spec, "objective"), metric);
		o->code(w, metric ? metric : "not recorded");
		if (dir)
			rep_w_textf(w, ", %s", dir);
		o->cell(w);
		engine_text(&t, spec);
		o->text(w, t.buf);
		json_decref(spec);
		o->cell(w);
		rt_sb_reset(&t);
		int rc = machine_text(db, j, &t, err);
		o->text(w, t.buf);
		rt_sb_release(&t);
		if (rc)
			return rc;
		size_t tried = 0;
		for (size_t i = 0; i < j->n; i++)
			tried += j->it[i].seq > 0;
		o->cell(w);
		rep_w_textf(w, "%zu", tried);
		for (size_t s = 0; s < RT_ARRAY_SIZE(counted); s++) {
			size_t cnt = 0;
			for (size_t i = 0; i < j->n; i++)
				cnt += j->it[i].state == counted[s] && !j->it[i].invalidated;
			o->cell(w);
			rep_w_textf(w, "%zu", cnt);
		}
		o->cell(w);
		double vb, vf;
		const char *unit;
		if (!rep_j_answer(j, &vb, &vf, &unit)) {
			o->text(w, "no baseline");
		} else {
			rep_w_num(w, vb);
			o->text(w, " → ");
			rep_w_num(w, vf);
			if (unit)
				rep_w_textf(w, " %s", unit);
			int better;
			double ch = rep_kept_compound(j->it, j->n, &better);
			if (j->fin && j->fin != j->base) {
				o->text(w, ", ");
				rep_w_change(w, ch, NAN, NAN, better);
			}
		}
		o->row_end(w);
	}
	o->table_end(w);
	return 0;
}

/* ---- 3. the levers tried in more than one campaign ---- */

static void shared_levers(struct rep_writer *w, const struct cmp *c)
{
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "carried", "Levers tried in more than one campaign");
	size_t ncols = 3 + 3 * c->n;
	struct rep_col *cols = xcalloc(ncols, sizeof(*cols));
	char **names = xcalloc(ncols, sizeof(*names));
	names[0] = xstrdup("lever");
	names[1] = xstrdup("kind");
	names[2] = xstrdup("carried over");
	for (size_t k = 0; k < c->n; k++) {
		long long id = (long long)c->j[k].c.id;
		names[3 + 3 * k] = xasprintf("#%lld decision", id);
		names[4 + 3 * k] = xasprintf("#%lld effect", id);
		names[5 + 3 * k] = xasprintf("#%lld confidence", id);
	}
	for (size_t i = 0; i < ncols; i++)
		cols[i] = (struct rep_col){ names[i], false };
	size_t rows = 0;
	for (size_t i = 0; i < c->nl; i++) {
		const struct lever *l = &c->l[i];
		if (l->ncamp < 2)
			continue;
		if (!rows++)
			o->table_begin(w, cols, ncols);
		const struct db_iteration *first = lever_first(c, l);
		o->cell(w);
		o->code(w, first->variant);
		for (size_t k = 0; k < c->n; k++)
			if (l->at[k] && strcmp(l->at[k]->variant, first->variant)) {
				rep_w_textf(w, " (#%lld: ", (long long)c->j[k].c.id);
				o->code(w, l->at[k]->variant);
				o->text(w, ", same change)");
			}
		o->cell(w);
		o->text(w, first->kind);
		o->cell(w);
		if (l->nkept == l->ncamp)
			rep_w_textf(w, "yes, kept in all %zu", l->ncamp);
		else if (l->nkept)
			rep_w_textf(w, "partly, kept in %zu of %zu", l->nkept, l->ncamp);
		else
			rep_w_textf(w, "no, kept in none of %zu", l->ncamp);
		for (size_t k = 0; k < c->n; k++)
			try_cells(w, l->at[k], l->tries[k]);
		o->row_end(w);
	}
	table_or_none(w, rows, "None: no change was tried in more than one of these campaigns.");
	for (size_t i = 0; i < ncols; i++)
		free(names[i]);
	free(names);
	free(cols);
}

/* ---- 4. the levers tried in one campaign only ---- */

static void single_levers(struct rep_writer *w, const struct cmp *c)
{
	static const struct rep_col cols[] = {
		{ "lever", false },  { "kind", false },   { "campaign", false },
		{ "decision", false }, { "effect", false }, { "confidence", false },
	};
	const struct rep_writer_ops *o = w->ops;
	o->heading(w, 2, "single", "Levers tried in one campaign only");
	size_t rows = 0;
	for (size_t i = 0; i < c->nl; i++) {
		const struct lever *l = &c->l[i];
		if (l->ncamp != 1)
			continue;
		if (!rows++)
			o->table_begin(w, cols, RT_ARRAY_SIZE(cols));
		size_t k = 0;
		while (!l->at[k])
			k++;
		const struct db_iteration *it = l->at[k];
		o->cell(w);
		o->code(w, it->variant);
		o->cell(w);
		o->text(w, it->kind);
		o->cell(w);
		campaign_ref(w, &c->j[k]);
		try_cells(w, it, l->tries[k]);
		o->row_end(w);
	}
	table_or_none(w, rows, "None: every change was tried in more than one of these campaigns.");
}

int rep_parse_campaigns(const char *s, int64_t **ids, size_t *n, struct rt_sb *err)
{
	*ids = NULL;
	*n = 0;
	const char *p = s;
	for (;;) {
		size_t len = strcspn(p, ",");
		char *end;
		errno = 0;
		long long v = len && p[0] >= '0' && p[0] <= '9' ? strtoll(p, &end, 10) : 0;
		if (!len || errno || v <= 0 || end != p + len) {
			int l = (int)(len > 40 ? 40 : len);
			free(*ids);
			*ids = NULL;
			*n = 0;
			return rt_errf(err, RT_EUSAGE,
				       "--campaigns: '%.*s' is not a campaign id (a list of ids: --campaigns 3,4)", l,
				       p);
		}
		for (size_t i = 0; i < *n; i++)
			if ((*ids)[i] == v) {
				free(*ids);
				*ids = NULL;
				*n = 0;
				return rt_errf(err, RT_EUSAGE, "--campaigns: campaign %lld is named twice", v);
			}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = v;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (*n < 2) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rt_errf(err, RT_EUSAGE, "--campaigns: name at least two campaigns to compare (3,4)");
	}
	return 0;
}

int rep_compare(struct db *db, const int64_t *ids, size_t n, enum rep_format fmt, struct rt_sb *out,
		struct rt_sb *err)
{
	struct cmp c = { xcalloc(n, sizeof(*c.j)), 0, NULL, 0 };
	int rc = 0;
	for (; c.n < n && !rc; c.n++)
		rc = rep_j_load(db, ids[c.n], &c.j[c.n], err);
	if (rc) {
		cmp_release(&c);
		return rc;
	}
	cmp_levers(&c);
	struct rep_writer w;
	rep_writer_init(&w, out, fmt);
	struct rt_sb t = RT_SB_INIT;
	rt_sb_adds(&t, "Campaigns");
	for (size_t k = 0; k < n; k++)
		rt_sb_addf(&t, "%s #%lld", k ? (k + 1 == n ? " and" : ",") : "", (long long)ids[k]);
	rt_sb_adds(&t, " compared");
	w.ops->doc_begin(&w, t.buf);
	w.ops->heading(&w, 1, "top", t.buf);
	rt_sb_release(&t);
	answer(&w, &c);
	rc = campaigns(&w, db, &c, err);
	if (!rc) {
		shared_levers(&w, &c);
		single_levers(&w, &c);
		for (size_t k = 0; k < n && !rc; k++) /* a replay's levers: then and now, side by side */
			rc = rep_replay_section(&w, db, ids[k], 2, err);
		w.ops->doc_end(&w);
	}
	cmp_release(&c);
	return rc;
}
