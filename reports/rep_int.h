/*
 * Helpers shared by the report files only (not part of the reports API):
 * JSON values that map NAN and NULL to null, ANSI styles that vanish when
 * colour is off, and the display width of UTF-8 text for column layout.
 */
#ifndef REP_INT_H
#define REP_INT_H

#include <jansson.h>
#include <math.h>

#include "reports/rep.h"

static inline json_t *rep_jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static inline json_t *rep_jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* An iteration as people name it and `ratchet show` takes it: "CAMPAIGN:SEQ"
 * (3:5). The global id is the second form, printed beside it. */
static inline void rep_ref(struct rt_sb *sb, int64_t campaign_id, int seq)
{
	rt_sb_addf(sb, "%lld:%d", (long long)campaign_id, seq);
}

/* ANSI style by name ("green", "red", "yellow", "dim", "bold", "strike",
 * "reset"), or "" when colour is off. */
const char *rep_ansi(bool color, const char *which);
/* Columns taken by UTF-8 text (one per code point). */
size_t rep_width(const char *s);
/* Append s cut to at most w columns (ending in "…" when cut), then pad with spaces to w. */
void rep_pad(struct rt_sb *sb, const char *s, size_t w);
/* rep_pad of "bench.metric" (bench NULL: the metric alone). */
void rep_pad_metric(struct rt_sb *sb, const char *bench, const char *metric, size_t w);
/* "before -> after unit" for a terminal (the unit escaped, left out when empty). */
void rep_term_change(struct rt_sb *sb, double before, double after, const char *unit);
/* Write sb's text to out; RT_EIO ("write <what>: output error") on failure. */
int rep_write_sb(const struct rt_sb *sb, FILE *out, const char *what, struct rt_sb *err);
/* Dump a JSON document (consumed) to out with a newline; RT_EIO on failure. */
int rep_json_dump(json_t *doc, FILE *out, struct rt_sb *err);
/* The JSON object of one iteration row. */
json_t *rep_iter_json(const struct db_iteration *it);
/* The JSON object of one regression; with_iteration puts the iteration that
 * caused it first (iteration_id, seq, variant, state). */
json_t *rep_regr_json(const struct db_q_regr *r, bool with_iteration);

/* show_llm.c: an iteration's llm exchanges, as JSON (a new array) and as
 * the text under show's "llm exchanges" heading (full: nothing cut). */
struct db_llm_exchange;
json_t *rep_llm_json(const struct db_llm_exchange *xs, size_t n);
void rep_llm_text(const struct db_llm_exchange *xs, size_t n, struct rt_sb *sb, bool full);

/* launch.c: the engines an iteration started, as JSON (a new array) and as
 * the text under show's "engine launches" heading (identical launches as one
 * block; full: each launch and all of its provenance). */
struct db_launch;
json_t *rep_launches_json(const struct db_launch *v, size_t n);
void rep_launches_text(const struct db_launch *v, size_t n, struct rt_sb *sb, bool color, bool full);

#endif
