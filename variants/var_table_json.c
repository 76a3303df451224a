/*
 * JSON tables: a top-level object keyed by strings such as AITER's
 * "D_GEQ_512.Q_GEQ_256.DT_fp8_fp8" (keys are never split on dots), edited
 * in place. jansson checks the whole document (integers beyond 64 bits read
 * as reals, so such a table stays usable) and then reads it member by
 * member with JSON_DISABLE_EOF_CHECK, whose read position gives each key's
 * and value's byte span. Only the changed value (for a set on an object
 * entry: only the changed fields) is written anew, laid out like the text
 * it replaces; every other byte is copied.
 */
#include "variants/var_table_int.h"

#include <stdlib.h>
#include <string.h>

/* One value at a time, as many as the text holds, big integers as reals. */
#define SCAN_FLAGS (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL)

/* A JSON table being edited. */
struct jdoc {
	const char *d;      /* its bytes */
	size_t len;         /* bytes in d */
	struct var_map top; /* the top-level members */
	size_t unit;        /* indent step of the document (2 when it is on one line) */
	bool spaced;        /* ": " between keys and values */
};

/* How a value is laid out. */
struct layout {
	size_t unit; /* indent step; 0: on one line */
	bool spaced; /* ", " and ": " on one line */
};

static size_t skip_ws(const char *d, size_t len, size_t i)
{
	while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i;
}

/* The value at d[at] (NULL when there is none); *end gets the offset after it. */
static json_t *read_at(const char *d, size_t len, size_t at, size_t flags, size_t *end)
{
	json_error_t je;
	json_t *v = at < len ? json_loadb(d + at, len - at, flags, &je) : NULL;
	if (v)
		*end = at + (size_t)je.position;
	return v;
}

/* The members of the object whose '{' is at d[open]; RT_EPARSE when the
 * text is not one. */
static int scan_object(const char *d, size_t len, size_t open, struct var_map *m)
{
	*m = (struct var_map){ .open = open };
	size_t i = skip_ws(d, len, open + 1);
	while (i < len && d[i] != '}') {
		size_t ke = 0, ve = 0;
		json_t *k = read_at(d, len, i, SCAN_FLAGS, &ke);
		size_t colon = skip_ws(d, len, ke);
		size_t vs = skip_ws(d, len, colon + 1);
		json_t *v = json_is_string(k) && colon < len && d[colon] == ':'
				    ? read_at(d, len, vs, SCAN_FLAGS, &ve)
				    : NULL;
		if (v)
			var_map_add(m, json_string_value(k), i, ke, vs, ve);
		json_decref(k);
		json_decref(v);
		if (!v)
			return RT_EPARSE;
		i = skip_ws(d, len, ve);
		if (i < len && d[i] == ',')
			i = skip_ws(d, len, i + 1);
		else if (i >= len || d[i] != '}')
			return RT_EPARSE;
	}
	if (i >= len)
		return RT_EPARSE;
	m->close = i;
	return 0;
}

/* A member's value, integers as integers unless one is beyond 64 bits. */
static json_t *member_json(const char *d, const struct var_member *m)
{
	size_t n = m->val_end - m->val_start;
	json_t *v = json_loadb(d + m->val_start, n, JSON_DECODE_ANY, NULL);
	return v ? v : json_loadb(d + m->val_start, n, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, NULL);
}

/* Layout of the object m: its members on their own lines or on one. */
static struct layout object_layout(const char *d, const struct var_map *m, size_t doc_unit)
{
	struct layout l = { 0, true };
	if (!m->n)
		return l;
	const struct var_member *f = &m->m[0];
	l.spaced = f->val_start > f->key_end + 1;
	if (memchr(d + m->open, '\n', f->key_start - m->open)) {
		size_t in = var_line_indent(d, f->key_start), out = var_line_indent(d, m->open);
		l.unit = in > out ? in - out : doc_unit;
	}
	return l;
}

/* Layout of the value text in [vs, ve). */
static struct layout span_layout(const struct jdoc *j, size_t vs, size_t ve)
{
	bool lines = memchr(j->d + vs, '\n', ve - vs) != NULL;
	struct layout l = { lines ? j->unit : 0, j->spaced };
	struct var_map m;
	if (j->d[vs] == '{' && !scan_object(j->d, ve, vs, &m)) {
		l = object_layout(j->d, &m, j->unit);
		if (lines && !l.unit)
			l.unit = j->unit;
	}
	if (j->d[vs] == '{')
		var_map_release(&m);
	return l;
}

/* Text of v to stand where [vs, ve) stands, laid out like it. Caller frees. */
static char *value_text(const struct jdoc *j, size_t vs, size_t ve, const json_t *v)
{
	struct layout l = span_layout(j, vs, ve);
	char *s = var_json_text(v, l.unit, l.spaced);
	char *r = var_reindent(s, var_line_indent(j->d, vs), false);
	free(s);
	return r;
}

/* Check the document and find its top-level members. */
static int jdoc_open(struct jdoc *j, const struct var_def_table *t, const char *d, size_t len,
		     struct rt_sb *err)
{
	*j = (struct jdoc){ .d = d, .len = len };
	json_error_t je;
	json_t *doc = json_loadb(d, len, JSON_DECODE_INT_AS_REAL, &je);
	if (!doc)
		return rt_errf(err, RT_EPARSE, "%s:%d:%d: invalid JSON: %s", t->file, je.line, je.column,
			       je.text);
	bool object = json_is_object(doc);
	json_decref(doc);
	if (!object)
		return rt_errf(err, RT_EPARSE, "%s: top level is not an object", t->file);
	if (scan_object(d, len, skip_ws(d, len, 0), &j->top))
		return rt_errf(err, RT_EPARSE, "%s: cannot find the bytes of the entries", t->file);
	struct layout l = object_layout(d, &j->top, 2);
	j->unit = l.unit ? l.unit : 2;
	j->spaced = l.spaced;
	return 0;
}

/* The entry named t->key: its index (-1 when absent) and value. */
static int jdoc_entry(const struct jdoc *j, const struct var_def_table *t, long *at, json_t **val,
		      struct rt_sb *err)
{
	size_t dups;
	*at = var_map_find(&j->top, t->key, &dups);
	*val = NULL;
	if (dups > 1)
		return rt_errf(err, RT_EPARSE, "%s: key \"%s\" appears %zu times", t->file, t->key, dups);
	if (*at >= 0 && !(*val = member_json(j->d, &j->top.m[*at])))
		return rt_errf(err, RT_EPARSE, "%s: cannot read the entry \"%s\"", t->file, t->key);
	return 0;
}

/* A member added after the last one of m (laid out like its value), or into
 * an empty m on one line. */
static void add_member(const struct jdoc *j, const struct var_map *m, const char *key,
		       const json_t *v, size_t *added, struct var_splices *s)
{
	json_t *k = json_string(key);
	char *kt = var_json_text(k, 0, true);
	const struct var_member *last = m->n ? &m->m[m->n - 1] : NULL;
	char *vt = last ? value_text(j, last->val_start, last->val_end, v) : var_json_text(v, 0, j->spaced);
	var_map_insert(m, j->d, kt, j->spaced ? ": " : ":", vt, added, s);
	json_decref(k);
	free(kt);
	free(vt);
}

/* A set on an object entry: each field changed in place or added. */
static int merge_fields(const struct jdoc *j, const struct var_member *entry, const json_t *fields,
			struct var_splices *s)
{
	struct var_map em;
	int rc = scan_object(j->d, j->len, entry->val_start, &em);
	size_t added = 0, dups;
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)fields, k, x) {
		if (rc)
			break;
		long f = var_map_find(&em, k, &dups);
		if (f < 0) {
			add_member(j, &em, k, x, &added, s);
			continue;
		}
		const struct var_member *m = &em.m[f];
		json_t *old = member_json(j->d, m);
		if (!old || !var_tbl_same(old, x)) /* an unchanged field keeps its bytes */
			var_splice_add(s, m->val_start, m->val_end, value_text(j, m->val_start, m->val_end, x));
		json_decref(old);
	}
	var_map_release(&em);
	return rc;
}

static int json_change(const struct jdoc *j, const struct var_def_table *t, long at,
		       const struct var_tbl_edit *e, struct var_splices *s)
{
	size_t added = 0;
	if (!e->new_entry) {
		var_map_remove(&j->top, (size_t)at, s);
		return 0;
	}
	if (at < 0) {
		add_member(j, &j->top, t->key, e->new_entry, &added, s);
		return 0;
	}
	const struct var_member *m = &j->top.m[at];
	if (t->op == VAR_TBL_SET && json_is_object(e->old_entry) && json_is_object(t->value))
		return merge_fields(j, m, t->value, s);
	var_splice_add(s, m->val_start, m->val_end, value_text(j, m->val_start, m->val_end, e->new_entry));
	return 0;
}

/* The new bytes read back: the entry is the planned one (or gone). */
static int json_check(const struct var_def_table *t, const struct var_tbl_edit *e, struct rt_sb *err)
{
	struct jdoc j;
	struct rt_sb why = RT_SB_INIT;
	long at = -1;
	json_t *now = NULL;
	int rc = jdoc_open(&j, t, e->out.buf, e->out.len, &why);
	if (!rc)
		rc = jdoc_entry(&j, t, &at, &now, &why);
	bool ok = !rc && (e->new_entry ? now && var_tbl_same(now, e->new_entry) : !now);
	json_decref(now);
	var_map_release(&j.top);
	rt_sb_release(&why);
	return ok ? 0 : var_tbl_readback_err(t, err);
}

int var_tbl_edit_json(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		      struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	struct jdoc j;
	struct var_splices s = { 0 };
	long at = -1;
	int rc = jdoc_open(&j, t, d, len, err);
	if (!rc)
		rc = jdoc_entry(&j, t, &at, &e->old_entry, err);
	if (!rc)
		rc = var_tbl_compute_new(v, e, err);
	if (!rc && (rc = json_change(&j, t, at, e, &s)))
		rt_errf(err, rc, "%s: cannot find the bytes of the entry \"%s\"", t->file, t->key);
	var_splices_apply(&s, d, len, &e->out);
	if (!rc)
		rc = json_check(t, e, err);
	var_map_release(&j.top);
	return rc;
}
