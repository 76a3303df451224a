/*
 * The journal's two writers behind struct rep_writer_ops (reports/writer.h):
 * Markdown (GitHub flavour: pipe tables, ~~strikethrough~~) and one
 * self-contained HTML file (inline CSS from reports/report.css, inline SVG,
 * no script). Each primitive escapes the text it is given for its format.
 */
#include "reports/writer.h"

#include <stdarg.h>
#include <string.h>

/* ---- Markdown ---- */

/* Start a block: a blank line before it unless at the start or after one. */
static void md_gap(struct rep_writer *w)
{
	struct rt_sb *b = w->sb;
	if (!b->len)
		return;
	while (!(b->len >= 2 && b->buf[b->len - 1] == '\n' && b->buf[b->len - 2] == '\n'))
		rt_sb_addc(b, '\n');
}

/* The longest run of backticks in s, at least min (a fence must be longer). */
static size_t md_fence(const char *s, size_t min)
{
	size_t run = 0, best = min;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		best = run > best ? run : best;
	}
	return best + 1;
}

static void md_ticks(struct rt_sb *sb, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_sb_addc(sb, '`');
}

/* Markdown has no document frame and no sections. */
static void md_none(struct rep_writer *w)
{
}

static void md_none_s(struct rep_writer *w, const char *s)
{
}

static void md_heading(struct rep_writer *w, int level, const char *id, const char *title)
{
	md_gap(w);
	for (int i = 0; i < level; i++)
		rt_sb_addc(w->sb, '#');
	rt_sb_addc(w->sb, ' ');
	rep_md_escape(w->sb, title);
	rt_sb_adds(w->sb, "\n\n");
}

static void md_para_begin(struct rep_writer *w, const char *cls)
{
	md_gap(w);
}

static void md_line_end(struct rep_writer *w)
{
	rt_sb_addc(w->sb, '\n');
}

static void md_text(struct rep_writer *w, const char *s)
{
	rep_md_escape(w->sb, s);
}

static void md_strong(struct rep_writer *w, const char *s)
{
	rt_sb_adds(w->sb, "**");
	rep_md_escape(w->sb, s);
	rt_sb_adds(w->sb, "**");
}

/* A control byte (ESC, BEL, ...) that a terminal showing the file would obey. */
static bool ctrl(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/* Inline code: a backtick fence longer than any run inside, padded with a
 * space when the text starts or ends with a backtick or a space. */
static void md_code(struct rep_writer *w, const char *s)
{
	size_t fence = md_fence(s, 0), n = strlen(s);
	bool pad = !n || s[0] == '`' || s[0] == ' ' || s[n - 1] == '`' || s[n - 1] == ' ';
	md_ticks(w->sb, fence);
	if (pad)
		rt_sb_addc(w->sb, ' ');
	for (const char *p = s; *p; p++)
		rt_sb_addc(w->sb, *p == '\n' || *p == '\r' ? ' ' : ctrl(*p) ? '?' : *p);
	if (pad)
		rt_sb_addc(w->sb, ' ');
	md_ticks(w->sb, fence);
}

static void md_strike(struct rep_writer *w, bool open)
{
	rt_sb_adds(w->sb, "~~");
}

/* A fence of at least three backticks, every line indented to stay in the item. */
static void md_code_block(struct rep_writer *w, const char *s)
{
	size_t fence = md_fence(s, 2);
	rt_sb_adds(w->sb, "\n\n  ");
	md_ticks(w->sb, fence);
	rt_sb_adds(w->sb, "\n  ");
	for (const char *p = s; *p; p++) {
		if (*p == '\r')
			continue;
		rt_sb_addc(w->sb, ctrl(*p) && *p != '\n' && *p != '\t' ? '?' : *p);
		if (*p == '\n')
			rt_sb_adds(w->sb, "  ");
	}
	rt_sb_adds(w->sb, "\n  ");
	md_ticks(w->sb, fence);
}

static void md_list_begin(struct rep_writer *w, bool numbered, const char *cls)
{
	md_gap(w);
}

static void md_item_begin(struct rep_writer *w, size_t ordinal, const char *aside)
{
	if (ordinal)
		rt_sb_addf(w->sb, "%zu. ", ordinal);
	else
		rt_sb_adds(w->sb, "- ");
	if (aside)
		rt_sb_adds(w->sb, "> ");
}

static void md_list_end(struct rep_writer *w, bool numbered)
{
}

static void md_table_begin(struct rep_writer *w, const struct rep_col *cols, size_t n)
{
	w->cols = cols, w->ncols = n, w->col = 0;
	md_gap(w);
	for (size_t i = 0; i < n; i++) {
		rt_sb_adds(w->sb, "| ");
		rep_md_escape(w->sb, cols[i].name);
		rt_sb_addc(w->sb, ' ');
	}
	rt_sb_adds(w->sb, "|\n");
	for (size_t i = 0; i < n; i++)
		rt_sb_adds(w->sb, cols[i].numeric ? "|---:" : "|---");
	rt_sb_adds(w->sb, "|\n");
}

static void md_cell(struct rep_writer *w)
{
	rt_sb_adds(w->sb, w->col++ ? " | " : "| ");
}

static void md_row_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, " |\n");
	w->col = 0;
}

static void md_table_end(struct rep_writer *w)
{
	w->cols = NULL, w->ncols = 0, w->col = 0;
}

/* No inline SVG in Markdown: no Charts section at all. */
static void md_charts(struct rep_writer *w, const struct rep_chart *c, size_t n)
{
}

/* GitHub renders <details> in Markdown; a blank line after <summary> lets
 * the table inside be Markdown again. */
static void md_details_begin(struct rep_writer *w, const char *id, const char *summary)
{
	md_gap(w);
	rt_sb_adds(w->sb, "<details><summary>");
	rep_html_escape(w->sb, summary);
	rt_sb_adds(w->sb, "</summary>\n\n");
}

static void md_details_end(struct rep_writer *w)
{
	md_gap(w);
	rt_sb_adds(w->sb, "</details>\n");
}

static const struct rep_writer_ops md_ops = {
	.name = "md",
	.doc_begin = md_none_s,
	.doc_end = md_none,
	.heading = md_heading,
	.para_begin = md_para_begin,
	.para_end = md_line_end,
	.text = md_text,
	.strong = md_strong,
	.code = md_code,
	.strike = md_strike,
	.code_block = md_code_block,
	.list_begin = md_list_begin,
	.item_begin = md_item_begin,
	.item_end = md_line_end,
	.list_end = md_list_end,
	.table_begin = md_table_begin,
	.cell = md_cell,
	.row_end = md_row_end,
	.table_end = md_table_end,
	.section_begin = md_none_s,
	.section_end = md_none,
	.charts = md_charts,
	.details_begin = md_details_begin,
	.details_end = md_details_end,
};

/* ---- HTML ---- */

static void html_doc_begin(struct rep_writer *w, const char *title)
{
	rt_sb_adds(w->sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
			  "<meta name=\"generator\" content=\"ratchet " RATCHET_VERSION "\"><title>");
	rep_html_escape(w->sb, title);
	rt_sb_adds(w->sb, "</title><style>");
	rt_sb_adds(w->sb, rep_report_css);
	rt_sb_adds(w->sb, "</style></head><body>\n");
}

static void html_doc_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</body></html>\n");
}

static void html_heading(struct rep_writer *w, int level, const char *id, const char *title)
{
	rt_sb_addf(w->sb, "<h%d id=\"", level);
	rep_html_escape(w->sb, id);
	rt_sb_adds(w->sb, "\">");
	rep_html_escape(w->sb, title);
	rt_sb_addf(w->sb, "</h%d>\n", level);
}

/* "<tag>" or "<tag class=\"cls\">" */
static void html_open(struct rep_writer *w, const char *tag, const char *cls)
{
	rt_sb_addf(w->sb, "<%s", tag);
	if (cls) {
		rt_sb_adds(w->sb, " class=\"");
		rep_html_escape(w->sb, cls);
		rt_sb_addc(w->sb, '"');
	}
	rt_sb_addc(w->sb, '>');
}

/* text wrapped in <tag>...</tag> */
static void html_wrap(struct rep_writer *w, const char *tag, const char *s)
{
	rt_sb_addf(w->sb, "<%s>", tag);
	rep_html_escape(w->sb, s);
	rt_sb_addf(w->sb, "</%s>", tag);
}

static void html_para_begin(struct rep_writer *w, const char *cls)
{
	html_open(w, "p", cls);
}

static void html_para_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</p>\n");
}

static void html_text(struct rep_writer *w, const char *s)
{
	rep_html_escape(w->sb, s);
}

static void html_strong(struct rep_writer *w, const char *s)
{
	html_wrap(w, "b", s);
}

static void html_code(struct rep_writer *w, const char *s)
{
	html_wrap(w, "code", s);
}

static void html_strike(struct rep_writer *w, bool open)
{
	rt_sb_adds(w->sb, open ? "<del>" : "</del>");
}

static void html_code_block(struct rep_writer *w, const char *s)
{
	rt_sb_adds(w->sb, "<pre>");
	html_wrap(w, "code", s);
	rt_sb_adds(w->sb, "</pre>");
}

static void html_list_begin(struct rep_writer *w, bool numbered, const char *cls)
{
	html_open(w, numbered ? "ol" : "ul", cls);
	rt_sb_addc(w->sb, '\n');
}

static void html_item_begin(struct rep_writer *w, size_t ordinal, const char *aside)
{
	html_open(w, "li", aside);
}

static void html_item_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</li>\n");
}

static void html_list_end(struct rep_writer *w, bool numbered)
{
	rt_sb_adds(w->sb, numbered ? "</ol>\n" : "</ul>\n");
}

static void html_table_begin(struct rep_writer *w, const struct rep_col *cols, size_t n)
{
	w->cols = cols, w->ncols = n, w->col = 0;
	rt_sb_adds(w->sb, "<div class=\"tw\"><table><thead><tr>");
	for (size_t i = 0; i < n; i++)
		html_wrap(w, "th", cols[i].name);
	rt_sb_adds(w->sb, "</tr></thead><tbody>\n");
}

static void html_cell(struct rep_writer *w)
{
	const struct rep_col *col = w->col < w->ncols ? &w->cols[w->col] : NULL;
	rt_sb_adds(w->sb, w->col++ ? "</td>" : "<tr>");
	rt_sb_adds(w->sb, "<td");
	if (col && col->numeric)
		rt_sb_adds(w->sb, " class=\"n\"");
	if (col) {
		rt_sb_adds(w->sb, " data-l=\"");
		rep_html_escape(w->sb, col->name);
		rt_sb_addc(w->sb, '"');
	}
	rt_sb_addc(w->sb, '>');
}

static void html_row_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</td></tr>\n");
	w->col = 0;
}

static void html_table_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</tbody></table></div>\n");
	w->cols = NULL, w->ncols = 0, w->col = 0;
}

static void html_section_begin(struct rep_writer *w, const char *cls)
{
	html_open(w, "section", cls);
	rt_sb_addc(w->sb, '\n');
}

static void html_section_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</section>\n");
}

static void html_charts(struct rep_writer *w, const struct rep_chart *c, size_t n)
{
	if (!n)
		return;
	html_heading(w, 2, "charts", "Charts");
	for (size_t i = 0; i < n; i++) {
		rt_sb_adds(w->sb, "<figure><div class=\"cw\">");
		c[i].draw(w->sb, c[i].arg);
		rt_sb_adds(w->sb, "</div>");
		html_wrap(w, "figcaption", c[i].caption);
		rt_sb_adds(w->sb, "</figure>\n");
	}
}

static void html_details_begin(struct rep_writer *w, const char *id, const char *summary)
{
	rt_sb_adds(w->sb, "<details id=\"");
	rep_html_escape(w->sb, id);
	rt_sb_adds(w->sb, "\"><summary>");
	rep_html_escape(w->sb, summary);
	rt_sb_adds(w->sb, "</summary>\n");
}

static void html_details_end(struct rep_writer *w)
{
	rt_sb_adds(w->sb, "</details>\n");
}

static const struct rep_writer_ops html_ops = {
	.name = "html",
	.doc_begin = html_doc_begin,
	.doc_end = html_doc_end,
	.heading = html_heading,
	.para_begin = html_para_begin,
	.para_end = html_para_end,
	.text = html_text,
	.strong = html_strong,
	.code = html_code,
	.strike = html_strike,
	.code_block = html_code_block,
	.list_begin = html_list_begin,
	.item_begin = html_item_begin,
	.item_end = html_item_end,
	.list_end = html_list_end,
	.table_begin = html_table_begin,
	.cell = html_cell,
	.row_end = html_row_end,
	.table_end = html_table_end,
	.section_begin = html_section_begin,
	.section_end = html_section_end,
	.charts = html_charts,
	.details_begin = html_details_begin,
	.details_end = html_details_end,
};

/* ---- shared ---- */

void rep_writer_init(struct rep_writer *w, struct rt_sb *sb, enum rep_format fmt)
{
	*w = (struct rep_writer){ .ops = fmt == REP_HTML ? &html_ops : &md_ops, .sb = sb };
}

void rep_w_textf(struct rep_writer *w, const char *fmt, ...)
{
	struct rt_sb t = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&t, fmt, ap);
	va_end(ap);
	w->ops->text(w, t.buf);
	rt_sb_release(&t);
}

void rep_w_num(struct rep_writer *w, double v)
{
	struct rt_sb t = RT_SB_INIT;
	rep_fmt_num(&t, v);
	w->ops->text(w, t.buf);
	rt_sb_release(&t);
}

void rep_w_change(struct rep_writer *w, double change, double lo, double hi, int better)
{
	struct rt_sb t = RT_SB_INIT;
	rep_fmt_change(&t, change, lo, hi, better);
	w->ops->text(w, t.buf);
	rt_sb_release(&t);
}

void rep_w_obj_change(struct rep_writer *w, const struct db_iteration *it)
{
	double c, lo, hi;
	int better;
	rep_obj_change(it, &c, &lo, &hi, &better);
	rep_w_change(w, c, lo, hi, better);
}
