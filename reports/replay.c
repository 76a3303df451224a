/*
 * A replay's levers (db/replay.h) for people and for CI: the table
 * `ratchet replay` prints, the Replay section of `ratchet report` and
 * `report --campaigns` (lever, lineage, gain then, gain now, verdict, why,
 * side by side), and the JUnit XML and Markdown summary a nightly job
 * reads, in the shape `ratchet gate --junit/--summary` writes them: one test
 * case per lever, failed when the lever reversed.
 */
#include "reports/rep.h"
#include "reports/writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/replay.h"

/* A gain (+ is better) with its interval, in the journal's convention. */
static void gain(struct rt_sb *sb, double d, double lo, double hi)
{
	rep_fmt_change(sb, d, lo, hi, 1);
}

/* "campaign 3, iteration 3:5" */
static void lineage(struct rt_sb *sb, const struct db_lever *l)
{
	if (l->from_seq >= 0)
		rt_sb_addf(sb, "%lld:%d", (long long)l->from_campaign, l->from_seq);
	else
		rt_sb_addf(sb, "campaign %lld", (long long)l->from_campaign);
}

static const char *verdict_words(enum db_verdict v)
{
	return v == DB_VERDICT_NOT_APPLICABLE ? "not applicable" : db_verdict_name(v);
}

void rep_replay_text(struct rt_sb *out, const struct db_lever *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct rt_sb t = RT_SB_INIT;
		rt_sb_addf(&t, "%2d. %s (%s, from ", l[i].ord, l[i].variant, l[i].kind);
		lineage(&t, &l[i]);
		rt_sb_adds(&t, "): ");
		rt_sb_adds(&t, verdict_words(l[i].verdict));
		rt_sb_adds(&t, "\n    gain then ");
		gain(&t, l[i].then_delta, l[i].then_lo, l[i].then_hi);
		rt_sb_adds(&t, ", now ");
		gain(&t, l[i].now_delta, l[i].now_lo, l[i].now_hi);
		if (l[i].reason) {
			rt_sb_adds(&t, "\n    ");
			rt_sb_adds(&t, l[i].reason);
		}
		for (char *p = t.buf, *nl; p; p = nl ? nl + 1 : NULL) { /* each line escaped */
			if ((nl = strchr(p, '\n')))
				*nl = 0;
			rep_term_escape(out, p);
			rt_sb_addc(out, '\n');
		}
		rt_sb_release(&t);
	}
}

/* The levers' table in a journal or a comparison. */
static void table(struct rep_writer *w, const struct db_lever *l, size_t n)
{
	static const struct rep_col cols[] = {
		{ "lever", false }, { "kind", false }, { "lineage", false }, { "gain then", true },
		{ "gain now", true }, { "verdict", false }, { "why", false },
	};
	w->ops->table_begin(w, cols, RT_ARRAY_SIZE(cols));
	for (size_t i = 0; i < n; i++) {
		struct rt_sb t = RT_SB_INIT;
		w->ops->cell(w);
		w->ops->code(w, l[i].variant);
		w->ops->cell(w);
		w->ops->text(w, l[i].kind);
		w->ops->cell(w);
		lineage(&t, &l[i]);
		w->ops->text(w, t.buf);
		w->ops->cell(w);
		rep_w_change(w, l[i].then_delta, l[i].then_lo, l[i].then_hi, 1);
		w->ops->cell(w);
		rep_w_change(w, l[i].now_delta, l[i].now_lo, l[i].now_hi, 1);
		w->ops->cell(w);
		w->ops->strong(w, verdict_words(l[i].verdict));
		w->ops->cell(w);
		w->ops->text(w, l[i].reason ? l[i].reason : "");
		w->ops->row_end(w);
		rt_sb_release(&t);
	}
	w->ops->table_end(w);
}

int rep_replay_section(struct rep_writer *w, struct db *db, int64_t cid, int level, struct rt_sb *err)
{
	struct db_replay r;
	struct rt_sb e = RT_SB_INIT;
	int rc = db_replay_get(db, cid, &r, &e);
	rt_sb_release(&e);
	if (rc == RT_ENOENT)
		return 0; /* not a replay */
	if (rc)
		return rt_errf(err, rc, "campaign %lld: its replay row cannot be read", (long long)cid);
	struct db_lever *l = NULL;
	size_t n = 0;
	rc = db_levers_list(db, cid, &l, &n, err);
	if (!rc) {
		char *title = xasprintf("Replay #%lld of campaign #%lld", (long long)cid, (long long)r.from_campaign);
		w->ops->heading(w, level, "replay", title);
		free(title);
		w->ops->para_begin(w, NULL);
		rep_w_textf(w, "The kept changes of campaign #%lld, in %s order%s", (long long)r.from_campaign,
			    r.ord, r.onto ? ", re-applied onto revision " : "");
		if (r.onto)
			w->ops->code(w, r.onto);
		rep_w_textf(w, ", each measured on top of this campaign's best. Gains are + when better, with "
			    "their intervals; lineage is CAMPAIGN:SEQ of the iteration that kept the lever then.");
		w->ops->para_end(w);
		table(w, l, n);
	}
	db_levers_free(l, n);
	db_replay_release(&r);
	return rc;
}

static size_t count(const struct db_lever *l, size_t n, enum db_verdict v)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += l[i].verdict == v;
	return k;
}

int rep_replay_junit(const struct db_lever *l, size_t n, const char *name, double wall_s, const char *path,
		     struct rt_sb *err)
{
	struct rt_sb x = RT_SB_INIT;
	rt_sb_adds(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"ratchet.replay\" tests=\"");
	rt_sb_addf(&x, "%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n  <properties>\n", n,
		   count(l, n, DB_VERDICT_REVERSED), count(l, n, DB_VERDICT_NONE), wall_s);
	rt_sb_adds(&x, "    <property name=\"campaign\" value=\"");
	rt_sb_add_markup(&x, name);
	rt_sb_adds(&x, "\"/>\n  </properties>\n");
	for (size_t i = 0; i < n; i++) {
		struct rt_sb t = RT_SB_INIT;
		rt_sb_adds(&x, "  <testcase classname=\"ratchet.replay\" name=\"");
		rt_sb_add_markup(&x, l[i].variant);
		rt_sb_adds(&x, "\">\n    <system-out>");
		rt_sb_adds(&t, verdict_words(l[i].verdict));
		rt_sb_adds(&t, "; from ");
		lineage(&t, &l[i]);
		rt_sb_adds(&t, "; gain then ");
		gain(&t, l[i].then_delta, l[i].then_lo, l[i].then_hi);
		rt_sb_adds(&t, ", now ");
		gain(&t, l[i].now_delta, l[i].now_lo, l[i].now_hi);
		if (l[i].reason)
			rt_sb_addf(&t, "; %s", l[i].reason);
		rt_sb_add_markup(&x, t.buf);
		rt_sb_adds(&x, "</system-out>\n");
		if (l[i].verdict == DB_VERDICT_REVERSED) {
			rt_sb_adds(&x, "    <failure message=\"reversed\" type=\"LeverReversed\">");
			rt_sb_add_markup(&x, t.buf);
			rt_sb_adds(&x, "</failure>\n");
		} else if (l[i].verdict == DB_VERDICT_NONE) {
			rt_sb_adds(&x, "    <skipped message=\"not decided yet\"/>\n");
		}
		rt_sb_adds(&x, "  </testcase>\n");
		rt_sb_release(&t);
	}
	rt_sb_adds(&x, "</testsuite>\n");
	int rc = rt_write_file_atomic(path, x.buf, x.len, 0644, err);
	rt_sb_release(&x);
	return rc;
}

int rep_replay_summary(struct db *db, int64_t cid, const char *path, bool append, struct rt_sb *err)
{
	struct rt_sb md = RT_SB_INIT;
	struct rep_writer w;
	rep_writer_init(&w, &md, REP_MD);
	int rc = rep_replay_section(&w, db, cid, 3, err);
	rt_sb_addc(&md, '\n');
	if (!rc && append) {
		FILE *f = fopen(path, "a");
		if (!f || fwrite(md.buf, 1, md.len, f) != md.len)
			rc = rt_errf(err, RT_EIO, "%s: cannot append", path);
		if (f && fclose(f) && !rc)
			rc = rt_errf(err, RT_EIO, "%s: cannot append", path);
	} else if (!rc) {
		rc = rt_write_file_atomic(path, md.buf, md.len, 0644, err);
	}
	rt_sb_release(&md);
	return rc;
}
