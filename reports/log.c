/*
 * `ratchet log` and `ratchet regressions`: one line per iteration (or per
 * regression) for the terminal, or one JSON document. A page of the log is
 * the newest N iterations, printed oldest first, read with one indexed query.
 * Regressions are listed by what they mean: those of kept changes (what
 * shipped) first, the client's self-metrics apart, the rest with --all.
 */
#include "reports/rep_int.h"

#include <string.h>

const char *rep_ansi(bool color, const char *which)
{
	static const struct {
		const char *name, *code;
	} styles[] = {
		{ "red", "\033[31m" }, { "green", "\033[32m" }, { "yellow", "\033[33m" },
		{ "blue", "\033[34m" }, { "dim", "\033[2m" },   { "bold", "\033[1m" },
		{ "strike", "\033[9m" }, { "reset", "\033[0m" },
	};
	if (!color)
		return "";
	for (size_t i = 0; i < RT_ARRAY_SIZE(styles); i++)
		if (!strcmp(styles[i].name, which))
			return styles[i].code;
	return "";
}

size_t rep_width(const char *s)
{
	size_t w = 0;
	for (; s && *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void rep_pad(struct rt_sb *sb, const char *s, size_t w)
{
	struct rt_sb t = RT_SB_INIT;
	rep_term_escape(&t, s ? s : "");
	for (char *c = t.buf; *c; c++)
		if (*c == '\n')
			*c = ' ';
	size_t have = rep_width(t.buf);
	if (have > w) {
		size_t cols = 0, i = 0;
		while (t.buf[i] && cols < w - 1) {
			i++;
			while (((unsigned char)t.buf[i] & 0xc0) == 0x80)
				i++;
			cols++;
		}
		rt_sb_add(sb, t.buf, i);
		rt_sb_adds(sb, "…");
		have = w;
	} else {
		rt_sb_adds(sb, t.buf);
	}
	for (; have < w; have++)
		rt_sb_addc(sb, ' ');
	rt_sb_release(&t);
}

/* The change column: as wide as its widest name, from 28 to CHANGE_W_MAX
 * columns; a longer name is cut in the middle ("BLOCK_M:16+BLOCK_N:3…
 * num_warps:8"), so names that differ only at the end stay apart. */
#define CHANGE_W_MIN 28
#define CHANGE_W_MAX 60

static size_t change_width(const struct db_iteration *v, size_t n)
{
	size_t w = CHANGE_W_MIN;
	for (size_t i = 0; i < n; i++) {
		struct rt_sb t = RT_SB_INIT;
		rep_term_escape(&t, v[i].variant ? v[i].variant : "");
		size_t have = rep_width(t.buf);
		rt_sb_release(&t);
		w = have > w ? have : w;
	}
	return w < CHANGE_W_MAX ? w : CHANGE_W_MAX;
}

/* Byte offset of column col of UTF-8 text t (one column per code point). */
static size_t col_at(const char *t, size_t col)
{
	size_t i = 0;
	for (size_t c = 0; t[i] && c < col; c++) {
		i++;
		while (((unsigned char)t[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

static void pad_mid(struct rt_sb *sb, const char *s, size_t w)
{
	struct rt_sb t = RT_SB_INIT;
	rep_term_escape(&t, s ? s : "");
	for (char *c = t.buf; *c; c++)
		if (*c == '\n')
			*c = ' ';
	size_t have = rep_width(t.buf);
	if (have <= w) {
		rep_pad(sb, s, w);
	} else {
		size_t head = (w - 1) / 2, tail = w - 1 - head;
		rt_sb_add(sb, t.buf, col_at(t.buf, head));
		rt_sb_adds(sb, "…");
		rt_sb_adds(sb, t.buf + col_at(t.buf, have - tail));
	}
	rt_sb_release(&t);
}

void rep_pad_metric(struct rt_sb *sb, const char *bench, const char *metric, size_t w)
{
	struct rt_sb name = RT_SB_INIT;
	if (bench)
		rt_sb_addf(&name, "%s.", bench);
	rt_sb_adds(&name, metric ? metric : "");
	rep_pad(sb, name.buf, w);
	rt_sb_release(&name);
}

void rep_term_change(struct rt_sb *sb, double before, double after, const char *unit)
{
	rep_fmt_num(sb, before);
	rt_sb_adds(sb, " -> ");
	rep_fmt_num(sb, after);
	if (unit && *unit) {
		rt_sb_addc(sb, ' ');
		rep_term_escape(sb, unit);
	}
}

int rep_write_sb(const struct rt_sb *sb, FILE *out, const char *what, struct rt_sb *err)
{
	if (fwrite(sb->buf, 1, sb->len, out) != sb->len)
		return rt_errf(err, RT_EIO, "write %s: output error", what);
	return 0;
}

int rep_json_dump(json_t *doc, FILE *out, struct rt_sb *err)
{
	int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(doc);
	if (rc || fputc('\n', out) == EOF)
		return rt_errf(err, RT_EIO, "write json: output error");
	return 0;
}

json_t *rep_iter_json(const struct db_iteration *it)
{
	json_t *o = json_object();
	struct rt_sb ref = RT_SB_INIT;
	rep_ref(&ref, it->campaign_id, it->seq);
	json_object_set_new(o, "ref", json_string(ref.buf));
	rt_sb_release(&ref);
	json_object_set_new(o, "id", json_integer(it->id));
	json_object_set_new(o, "campaign_id", json_integer(it->campaign_id));
	json_object_set_new(o, "seq", json_integer(it->seq));
	json_object_set_new(o, "parent_id", it->parent_id ? json_integer(it->parent_id) : json_null());
	json_object_set_new(o, "variant", rep_jstr(it->variant));
	json_object_set_new(o, "kind", rep_jstr(it->kind));
	if (it->device) { /* a device pool's iteration (migration 12) */
		json_object_set_new(o, "round", json_integer(it->round));
		json_object_set_new(o, "device", json_string(it->device));
	}
	if (it->change_text)
		json_object_set_new(o, "change", json_string(it->change_text));
	json_object_set_new(o, "state", json_string(db_iter_state_name(it->state)));
	json_object_set_new(o, "invalidated", json_boolean(it->invalidated));
	json_object_set_new(o, "corrected_by",
			    it->corrected_by ? json_integer(it->corrected_by) : json_null());
	json_object_set_new(o, "phase", rep_jstr(it->phase));
	json_object_set_new(o, "decision", rep_jstr(it->decision));
	json_object_set_new(o, "reason", rep_jstr(it->reason));
	json_object_set_new(o, "objective", rep_jstr(it->objective));
	json_object_set_new(o, "obj_best", rep_jnum(it->obj_best));
	json_object_set_new(o, "obj_cand", rep_jnum(it->obj_cand));
	json_object_set_new(o, "delta", rep_jnum(it->obj_delta));
	json_object_set_new(o, "ci_lo", rep_jnum(it->obj_ci_lo));
	json_object_set_new(o, "ci_hi", rep_jnum(it->obj_ci_hi));
	json_object_set_new(o, "confidence", rep_jnum(it->confidence));
	json_object_set_new(o, "test", rep_jstr(it->test));
	json_object_set_new(o, "p_value", rep_jnum(it->p_value));
	json_object_set_new(o, "n_cand", json_integer(it->n_cand));
	json_object_set_new(o, "n_best", json_integer(it->n_best));
	json_object_set_new(o, "paired", json_boolean(it->paired));
	json_object_set_new(o, "gate_run_id", it->gate_run_id ? json_integer(it->gate_run_id) : json_null());
	json_object_set_new(o, "gate_accuracy", rep_jnum(it->gate_accuracy));
	json_object_set_new(o, "gate_passed", it->gate_passed < 0 ? json_null() : json_boolean(it->gate_passed));
	json_object_set_new(o, "started_at", json_integer(it->started_at));
	json_object_set_new(o, "finished_at", it->finished_at ? json_integer(it->finished_at) : json_null());
	return o;
}

static const char *state_color(const struct db_iteration *it)
{
	if (it->invalidated)
		return "dim";
	switch (it->state) {
	case DB_ITER_KEPT: return "green";
	case DB_ITER_GATED:
	case DB_ITER_FAILED: return "red";
	case DB_ITER_REVERTED:
	case DB_ITER_INTERRUPTED: return "yellow";
	default: return "bold";
	}
}

/* Columns of the objective cell: "+10.0% [+7.1, +12.8] (better)". */
#define OBJ_W 31

/* Objective column: the metric's change with its CI and direction, or the
 * baseline's absolute value. */
static void objective_cell(struct rt_sb *sb, const struct db_iteration *it)
{
	if (!strcmp(it->kind, "baseline") && !isnan(it->obj_cand)) {
		rep_fmt_num(sb, it->obj_cand);
		return;
	}
	double c, lo, hi;
	int better;
	rep_obj_change(it, &c, &lo, &hi, &better);
	rep_fmt_change(sb, c, lo, hi, better);
}

static void gate_cell(struct rt_sb *sb, const struct db_iteration *it)
{
	if (isnan(it->gate_accuracy))
		rt_sb_adds(sb, "—");
	else
		rt_sb_addf(sb, "gsm8k %.1f%%", it->gate_accuracy * 100);
}

/* "corrected by 1:5": the correcting iteration by its seq when it is on the page. */
static void corrected_by(struct rt_sb *sb, const struct db_iteration *it,
			 const struct db_iteration *v, size_t n)
{
	rt_sb_adds(sb, "  corrected by ");
	for (size_t i = 0; i < n; i++)
		if (v[i].id == it->corrected_by) {
			rep_ref(sb, v[i].campaign_id, v[i].seq);
			return;
		}
	rt_sb_addf(sb, "id %lld", (long long)it->corrected_by);
}

static void log_line(struct rt_sb *sb, const struct db_iteration *it, const struct db_iteration *v,
		     size_t n, size_t cw, bool color)
{
	const char *c = rep_ansi(color, state_color(it)), *rs = rep_ansi(color, "reset");
	const char *g = rep_glyph(it->state, it->invalidated);
	struct rt_sb cell = RT_SB_INIT;
	rep_ref(&cell, it->campaign_id, it->seq);
	/* ⚡ is drawn two columns wide by most terminals */
	rt_sb_addf(sb, "%9s %6lld %s%s%s%s", cell.buf, (long long)it->id, c, g, rs,
		   strcmp(g, "⚡") ? "  " : " ");
	rt_sb_reset(&cell);
	pad_mid(sb, it->variant, cw);
	rt_sb_adds(sb, "  ");
	objective_cell(&cell, it);
	if (it->invalidated)
		rt_sb_addf(sb, "%s%s", rep_ansi(color, "dim"), rep_ansi(color, "strike"));
	rep_pad(sb, cell.buf, OBJ_W);
	if (it->invalidated)
		rt_sb_adds(sb, rs);
	rt_sb_adds(sb, "  ");
	rt_sb_reset(&cell);
	gate_cell(&cell, it);
	rep_pad(sb, cell.buf, 12);
	rt_sb_release(&cell);
	if (it->invalidated)
		rt_sb_addf(sb, "  %sinvalid, was %s%s", rep_ansi(color, "dim"),
			   db_iter_state_name(it->state), rs);
	else if (it->state == DB_ITER_KEPT || it->state == DB_ITER_BASELINE ||
		 it->state == DB_ITER_REVERTED)
		; /* the glyph and delta say it */
	else
		rt_sb_addf(sb, "  %s%s%s", c, db_iter_state_name(it->state), rs);
	if (it->corrected_by)
		corrected_by(sb, it, v, n);
	if (it->device) { /* a device pool's iteration: its round and device */
		rt_sb_addf(sb, "  %sround %d on ", rep_ansi(color, "dim"), it->round);
		rep_term_escape(sb, it->device);
		rt_sb_adds(sb, rs);
	}
	while (sb->len && sb->buf[sb->len - 1] == ' ')
		sb->buf[--sb->len] = 0;
	rt_sb_addc(sb, '\n');
}

static json_t *log_json(const struct db_campaign *c, const struct db_iteration *v, size_t n)
{
	json_t *doc = json_object(), *arr = json_array();
	json_object_set_new(doc, "campaign", json_pack("{s:I,s:s?,s:s?,s:b,s:I}", "id", (json_int_t)c->id,
						       "name", c->name, "state", c->state, "resumable",
						       !strcmp(rep_campaign_state(c), "stopped (resumable)"),
						       "iterations", (json_int_t)c->n_iterations));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, rep_iter_json(&v[i]));
	json_object_set_new(doc, "iterations", arr);
	return doc;
}

static void log_text(struct rt_sb *sb, const struct db_campaign *c, const struct db_iteration *v,
		     size_t n, bool color)
{
	rt_sb_addf(sb, "%scampaign ", rep_ansi(color, "bold"));
	rep_term_escape(sb, c->name);
	rt_sb_addf(sb, " (#%lld, %s)%s: %lld iterations", (long long)c->id, rep_campaign_state(c),
		   rep_ansi(color, "reset"), (long long)c->n_iterations);
	if (n < (size_t)c->n_iterations)
		rt_sb_addf(sb, ", showing %zu", n);
	size_t cw = change_width(v, n);
	rt_sb_addf(sb, "\n%s%9s %6s %s  %-*s  %-*s  %s%s\n", rep_ansi(color, "dim"), "iteration",
		   "id", " ", (int)cw, "change", OBJ_W, "objective [CI]", "gate", rep_ansi(color, "reset"));
	for (size_t i = 0; i < n; i++)
		log_line(sb, &v[i], v, n, cw, color);
	if (!n)
		rt_sb_adds(sb, "(no iterations match)\n");
}

int rep_log(struct db *db, FILE *out, const struct rep_log_opts *o, struct rt_sb *err)
{
	struct db_campaign c;
	int rc = db_q_campaign_get(db, o->campaign_id, &c, err);
	if (rc)
		return rc;
	struct db_q_iter_filter f = {
		.campaign_id = c.id, .state = o->state, .since_ms = o->since_ms, .limit = o->limit,
	};
	struct db_iteration *v = NULL;
	size_t n = 0;
	if (!(rc = db_q_iters(db, &f, &v, &n, err))) {
		struct rt_sb sb = RT_SB_INIT;
		if (o->json) {
			rc = rep_json_dump(log_json(&c, v, n), out, err);
		} else {
			log_text(&sb, &c, v, n, o->color);
			rc = rep_write_sb(&sb, out, "log", err);
		}
		rt_sb_release(&sb);
	}
	db_iterations_free(v, n);
	db_campaign_release(&c);
	return rc;
}

json_t *rep_regr_json(const struct db_q_regr *r, bool with_iteration)
{
	json_t *o = json_object();
	if (with_iteration) {
		json_object_set_new(o, "iteration_id", json_integer(r->iteration_id));
		json_object_set_new(o, "seq", json_integer(r->seq));
		json_object_set_new(o, "variant", rep_jstr(r->variant));
		json_object_set_new(o, "state", json_string(db_iter_state_name(r->state)));
	}
	double c, lo, hi;
	int better;
	rep_regr_change(r, &c, &lo, &hi, &better);
	json_object_set_new(o, "benchmark", rep_jstr(r->benchmark));
	json_object_set_new(o, "metric", rep_jstr(r->metric));
	json_object_set_new(o, "unit", rep_jstr(r->unit));
	json_object_set_new(o, "before", rep_jnum(r->before));
	json_object_set_new(o, "after", rep_jnum(r->after));
	json_object_set_new(o, "change", rep_jnum(c));
	json_object_set_new(o, "change_lo", rep_jnum(lo));
	json_object_set_new(o, "change_hi", rep_jnum(hi));
	json_object_set_new(o, "better", better ? json_string(better > 0 ? "higher" : "lower") : json_null());
	json_object_set_new(o, "delta", rep_jnum(r->delta));
	json_object_set_new(o, "ci_lo", rep_jnum(r->ci_lo));
	json_object_set_new(o, "ci_hi", rep_jnum(r->ci_hi));
	json_object_set_new(o, "kept", json_boolean(r->kept));
	json_object_set_new(o, "self_metric", json_boolean(rep_self_metric(r->metric)));
	return o;
}

/* The three groups of `ratchet regressions`, in the order printed. */
enum regr_group { RG_KEPT, RG_SELF, RG_OTHER, RG_N };

static enum regr_group regr_group_of(const struct db_q_regr *r)
{
	if (rep_self_metric(r->metric))
		return RG_SELF;
	return r->kept ? RG_KEPT : RG_OTHER;
}

static void regr_line(struct rt_sb *sb, int64_t campaign_id, const struct db_q_regr *r, bool color)
{
	double c, lo, hi;
	int better;
	rep_regr_change(r, &c, &lo, &hi, &better);
	rt_sb_adds(sb, "  ");
	rep_pad_metric(sb, r->benchmark, r->metric, 22);
	rt_sb_adds(sb, "  ");
	rep_term_change(sb, r->before, r->after, r->unit);
	rt_sb_addf(sb, "  %s", rep_ansi(color, "red"));
	rep_fmt_change(sb, c, lo, hi, better);
	rt_sb_addf(sb, "%s  by ", rep_ansi(color, "reset"));
	rep_ref(sb, campaign_id, r->seq);
	rt_sb_addf(sb, " (id %lld, ", (long long)r->iteration_id);
	rep_term_escape(sb, r->variant);
	rt_sb_adds(sb, ")");
	if (!r->kept)
		rt_sb_addf(sb, "  %s%s%s", rep_ansi(color, "yellow"), db_iter_state_name(r->state),
			   rep_ansi(color, "reset"));
	rt_sb_addc(sb, '\n');
}

static void regr_text(struct rt_sb *sb, const struct db_campaign *c, const struct db_q_regr *r,
		      size_t n, const struct rep_regr_opts *o)
{
	static const char *const heads[RG_N] = {
		"of kept changes (in the final configuration unless invalidated)",
		"of the client's self-metrics (send lag, a kernel's rsd and samples: not the engine's)",
		"of changes not kept",
	};
	size_t cnt[RG_N] = { 0 }, hidden = 0;
	for (size_t i = 0; i < n; i++) {
		if (o->all || r[i].kept)
			cnt[regr_group_of(&r[i])]++;
		else
			hidden++;
	}
	rt_sb_addf(sb, "%scampaign ", rep_ansi(o->color, "bold"));
	rep_term_escape(sb, c->name);
	rt_sb_addf(sb, " (#%lld)%s: %zu regression%s of kept changes", (long long)c->id,
		   rep_ansi(o->color, "reset"), cnt[RG_KEPT], cnt[RG_KEPT] == 1 ? "" : "s");
	if (hidden)
		rt_sb_addf(sb, " (%zu more of changes not kept: --all)", hidden);
	rt_sb_addc(sb, '\n');
	for (int g = 0; g < RG_N; g++) {
		if (!cnt[g])
			continue;
		if (g != RG_KEPT)
			rt_sb_addf(sb, "%s%zu %s%s\n", rep_ansi(o->color, "dim"), cnt[g], heads[g],
				   rep_ansi(o->color, "reset"));
		for (size_t i = 0; i < n; i++)
			if (regr_group_of(&r[i]) == (enum regr_group)g && (o->all || r[i].kept))
				regr_line(sb, c->id, &r[i], o->color);
	}
}

int rep_regressions(struct db *db, FILE *out, const struct rep_regr_opts *o, struct rt_sb *err)
{
	struct db_campaign c;
	int rc = db_q_campaign_get(db, o->campaign_id, &c, err);
	if (rc)
		return rc;
	struct db_q_regr *r = NULL;
	size_t n = 0;
	if (!(rc = db_q_regrs(db, c.id, 0, &r, &n, err))) {
		struct rt_sb sb = RT_SB_INIT;
		if (o->json) {
			json_t *arr = json_array();
			for (size_t i = 0; i < n; i++)
				if (o->all || r[i].kept)
					json_array_append_new(arr, rep_regr_json(&r[i], true));
			rc = rep_json_dump(json_pack("{s:I,s:b,s:o}", "campaign_id", (json_int_t)c.id,
						     "all", o->all, "regressions", arr),
					   out, err);
		} else {
			regr_text(&sb, &c, r, n, o);
			rc = rep_write_sb(&sb, out, "regressions", err);
		}
		rt_sb_release(&sb);
	}
	db_q_regrs_free(r, n);
	db_campaign_release(&c);
	return rc;
}
