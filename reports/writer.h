/*
 * The journal's writer (reports only, not part of the reports API): one ops
 * table of document primitives (headings, paragraphs, lists, tables, code,
 * sections, charts) with two implementations, Markdown and self-contained
 * HTML, chosen once by rep_writer_init. Report code calls rep_w_* and never
 * asks which format it writes. Every primitive that takes text escapes it for
 * the format (rep_md_escape, rep_html_escape); ids and CSS classes are the
 * caller's fixed words.
 *
 * Markdown blocks (heading, paragraph, list, table) start with a blank line
 * unless the output is empty or already ends in one, so sections never run
 * into each other. Markdown has no inline SVG: its charts primitive writes
 * nothing, Charts heading included.
 */
#ifndef REP_WRITER_H
#define REP_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "reports/rep.h"

/* The HTML journal's style sheet: reports/report.css, compacted, made a C
 * string at build time by cmake/embed_text.cmake. */
extern const char rep_report_css[];

struct rep_writer;

/* One column of a table. */
struct rep_col {
	const char *name; /* header text */
	bool numeric;     /* right-aligned (Markdown ---:, HTML class "n") */
};

/* One figure of the Charts section. */
struct rep_chart {
	void (*draw)(struct rt_sb *sb, const void *arg); /* writes one <svg> (reports/svg.c) */
	const void *arg;                                 /* what draw reads */
	const char *caption;                             /* plain text under the chart */
};

/* The primitives. None fails: they append to the writer's buffer. */
struct rep_writer_ops {
	const char *name; /* "md" or "html" */
	/* Document start (HTML: head with title, inline CSS, <body>) and end. */
	void (*doc_begin)(struct rep_writer *w, const char *title);
	void (*doc_end)(struct rep_writer *w);
	/* Heading of level 1..6; id is its anchor (HTML only). */
	void (*heading)(struct rep_writer *w, int level, const char *id, const char *title);
	/* Paragraph; cls a CSS class or NULL. */
	void (*para_begin)(struct rep_writer *w, const char *cls);
	void (*para_end)(struct rep_writer *w);
	/* Running text, bold text, inline code, strikethrough on (open) or off. */
	void (*text)(struct rep_writer *w, const char *s);
	void (*strong)(struct rep_writer *w, const char *s);
	void (*code)(struct rep_writer *w, const char *s);
	void (*strike)(struct rep_writer *w, bool open);
	/* A multi-line code block inside a list item (Markdown: a fence indented two spaces). */
	void (*code_block)(struct rep_writer *w, const char *s);
	/* List (numbered or bullets; cls a CSS class or NULL) and its items:
	 * ordinal numbers an item (Markdown "3. "), 0 makes a bullet; aside, a
	 * CSS class or NULL, sets the item apart (Markdown quotes it). Lists do
	 * not nest. */
	void (*list_begin)(struct rep_writer *w, bool numbered, const char *cls);
	void (*item_begin)(struct rep_writer *w, size_t ordinal, const char *aside);
	void (*item_end)(struct rep_writer *w);
	void (*list_end)(struct rep_writer *w, bool numbered);
	/* Table: the header, then per row one cell() before each cell's content
	 * and row_end() after the last. cols must outlive the table. HTML cells
	 * carry their column's name (data-l), which narrow screens show beside
	 * the cell when the header row is hidden. */
	void (*table_begin)(struct rep_writer *w, const struct rep_col *cols, size_t n);
	void (*cell)(struct rep_writer *w);
	void (*row_end)(struct rep_writer *w);
	void (*table_end)(struct rep_writer *w);
	/* A block around related content (HTML <section>; cls its classes). */
	void (*section_begin)(struct rep_writer *w, const char *cls);
	void (*section_end)(struct rep_writer *w);
	/* The Charts section: heading "Charts" (id "charts") and one figure per
	 * chart; nothing at all when n is 0. */
	void (*charts)(struct rep_writer *w, const struct rep_chart *c, size_t n);
	/* A block folded under a one-line summary (HTML <details>; Markdown the
	 * same tags, which GitHub renders); id its anchor. */
	void (*details_begin)(struct rep_writer *w, const char *id, const char *summary);
	void (*details_end)(struct rep_writer *w);
};

/* A writer: where the document goes and the state of the open table. */
struct rep_writer {
	const struct rep_writer_ops *ops; /* Markdown or HTML */
	struct rt_sb *sb;                 /* output, not owned */
	const struct rep_col *cols;       /* columns of the open table */
	size_t ncols;                     /* how many */
	size_t col;                       /* cells started in the current row */
};

/* Point w at sb (not owned; the writer holds nothing to release). */
void rep_writer_init(struct rep_writer *w, struct rt_sb *sb, enum rep_format fmt);

/* Text built from trusted pieces (numbers, fixed words), escaped all the same. */
void rep_w_textf(struct rep_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rep_fmt_num and rep_fmt_change as text. */
void rep_w_num(struct rep_writer *w, double v);
void rep_w_change(struct rep_writer *w, double change, double lo, double hi, int better);
/* An iteration's objective change (rep_obj_change), or "—". */
void rep_w_obj_change(struct rep_writer *w, const struct db_iteration *it);

#endif
