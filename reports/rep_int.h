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

/* ANSI style by name ("green", "red", "yellow", "dim", "bold", "strike",
 * "reset"), or "" when colour is off. */
const char *rep_ansi(bool color, const char *which);
/* Columns taken by UTF-8 text (one per code point). */
size_t rep_width(const char *s);
/* Append s cut to at most w columns (ending in "…" when cut), then pad with spaces to w. */
void rep_pad(struct rt_sb *sb, const char *s, size_t w);
/* Dump a JSON document (consumed) to out with a newline; RT_EIO on failure. */
int rep_json_dump(json_t *doc, FILE *out, struct rt_sb *err);
/* The JSON object of one iteration row. */
json_t *rep_iter_json(const struct db_iteration *it);

#endif
