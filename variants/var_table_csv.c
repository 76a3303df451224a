/*
 * CSV tables: rows keyed by the values of key columns (e.g. M,N,K), parsed
 * with their byte offsets by var_csv.c. Only the edited row is rewritten;
 * every other byte (quoting, line endings, column order) stays as it was,
 * and a set keeps the raw bytes of the cells it does not change.
 */
#include "variants/var_table_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void trim(char *s)
{
	size_t n = strlen(s), a = 0;
	while (a < n && isspace((unsigned char)s[a]))
		a++;
	while (n > a && isspace((unsigned char)s[n - 1]))
		n--;
	memmove(s, s + a, n - a);
	s[n - a] = 0;
}

/* One cell, quoted where RFC 4180 needs it (or force_quote); the only cell
 * of a row is quoted when empty, as Python's csv writer does: unquoted it
 * would be a blank line, which is no row (csv_blank). */
static void csv_cell(struct rt_sb *sb, const char *s, bool force_quote)
{
	bool q = force_quote || strpbrk(s, ",\"\r\n") ||
		 (s[0] && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[strlen(s) - 1])));
	if (!q) {
		rt_sb_adds(sb, s);
		return;
	}
	rt_sb_addc(sb, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			rt_sb_addc(sb, '"');
		rt_sb_addc(sb, *p);
	}
	rt_sb_addc(sb, '"');
}

/* Cell text of a JSON scalar, or an error. */
static int cell_text(const char *file, const char *col, json_t *v, char **out, struct rt_sb *err)
{
	if (json_is_object(v) || json_is_array(v))
		return rt_errf(err, RT_EINVAL, "%s: table.value.%s: a CSV cell must be a scalar", file,
			       col);
	*out = var_tbl_val_text(v);
	return 0;
}

/* A CSV table being edited. */
struct csv_edit {
	struct var_csv c;  /* parsed rows; rows[0] is the header */
	const char **cols; /* header names, trimmed (point into c) */
	size_t ncols;      /* entries in cols */
	size_t *kidx;      /* the column of each key column */
	char **keys;       /* the key's values, trimmed (owned) */
	size_t nk;         /* key columns, and values in keys */
	long row;          /* the row whose key matches, -1 when none */
};

static void csv_edit_release(struct csv_edit *x)
{
	for (size_t i = 0; i < x->nk; i++)
		free(x->keys[i]);
	free(x->keys);
	free(x->kidx);
	free(x->cols);
	var_csv_release(&x->c);
}

/* Index of column name, or an error (with did-you-mean) naming what for. */
static int csv_column(const struct csv_edit *x, const char *file, const char *what,
		      const char *name, size_t *out, struct rt_sb *err)
{
	for (size_t j = 0; j < x->ncols; j++)
		if (!strcmp(x->cols[j], name)) {
			*out = j;
			return 0;
		}
	const char *dym = rt_did_you_mean(name, x->cols, x->ncols);
	return rt_errf(err, RT_EINVAL, "%s: %s: column '%s' not in header%s%s%s", file, what, name,
		       dym ? " (did you mean '" : "", dym ? dym : "", dym ? "'?)" : "");
}

/* The header, the key columns, and the key "v1,v2,..." split into values. */
static int csv_keys(const struct var_def_table *t, struct csv_edit *x, struct rt_sb *err)
{
	struct var_csv_row *h = &x->c.rows[0];
	x->ncols = h->n;
	x->cols = xcalloc(h->n + 1, sizeof(char *));
	for (size_t j = 0; j < h->n; j++) {
		trim(h->f[j].value);
		x->cols[j] = h->f[j].value;
	}
	if (!t->key_columns.n)
		return rt_errf(err, RT_EINVAL, "%s: table.key_columns: required for CSV", t->file);
	x->kidx = xcalloc(t->key_columns.n, sizeof(size_t));
	for (size_t k = 0; k < t->key_columns.n; k++) {
		int rc = csv_column(x, t->file, "table.key_columns", t->key_columns.v[k], &x->kidx[k], err);
		if (rc)
			return rc;
		for (size_t e = 0; e < k; e++) /* one column twice: no row could match both values */
			if (x->kidx[e] == x->kidx[k])
				return rt_errf(err, RT_EINVAL, "%s: table.key_columns: column '%s' given twice",
					       t->file, t->key_columns.v[k]);
	}
	size_t nvals = 0;
	for (const char *p = t->key;;) {
		const char *q = strchr(p, ',');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		x->keys = xrealloc(x->keys, (nvals + 1) * sizeof(char *));
		x->keys[nvals] = xstrndup(p, n);
		trim(x->keys[nvals++]);
		if (!q)
			break;
		p = q + 1;
	}
	x->nk = nvals;
	if (nvals != t->key_columns.n)
		return rt_errf(err, RT_EINVAL, "%s: table.key: \"%s\" has %zu values for %zu key columns",
			       t->file, t->key, nvals, t->key_columns.n);
	return 0;
}

/* A blank line: no row for Python's csv module (its reader gives [] and
 * DictReader skips it) nor for pandas' read_csv (skip_blank_lines), which
 * read AITER's and vLLM's tuned CSVs; so it never matches a key, not even
 * an empty one. */
static bool csv_blank(const struct var_csv_row *r)
{
	return r->n == 1 && !r->f[0].quoted && r->f[0].end == r->f[0].start;
}

/* The first row whose key cells (trimmed) equal the key, or -1. */
static long csv_find_row(const struct csv_edit *x)
{
	for (size_t i = 1; i < x->c.n; i++) {
		if (csv_blank(&x->c.rows[i]))
			continue;
		bool match = true;
		for (size_t k = 0; k < x->nk && match; k++) {
			if (x->kidx[k] >= x->c.rows[i].n) {
				match = false;
				break;
			}
			char *cell = xstrdup(x->c.rows[i].f[x->kidx[k]].value);
			trim(cell);
			match = strcmp(cell, x->keys[k]) == 0;
			free(cell);
		}
		if (match)
			return (long)i;
	}
	return -1;
}

static bool csv_is_key(const struct csv_edit *x, size_t j)
{
	for (size_t k = 0; k < x->nk; k++)
		if (x->kidx[k] == j)
			return true;
	return false;
}

/* The matching row rewritten (or dropped on delete); every other byte kept.
 * A set keeps the raw bytes of the cells it does not change, a replace those
 * of the key cells. e->new_entry becomes the row as it will read back (every
 * column a string, the key cells and emptied cells included), so that the
 * applied change describes as "no change". */
static int csv_rewrite_row(const struct var_def_table *t, const struct csv_edit *x, const char *d,
			   size_t len, struct var_tbl_edit *e, struct rt_sb *err)
{
	const struct var_csv_row *r = &x->c.rows[x->row];
	json_t *row = e->new_entry ? json_object() : NULL;
	int rc = 0;
	rt_sb_add(&e->out, d, r->start);
	for (size_t j = 0; row && j < x->ncols && !rc; j++) {
		json_t *nv = csv_is_key(x, j) ? NULL : json_object_get(t->value, x->cols[j]);
		bool keep_raw = j < r->n && (csv_is_key(x, j) || (t->op == VAR_TBL_SET && !nv));
		char *txt = NULL;
		if (j)
			rt_sb_addc(&e->out, ',');
		if (keep_raw) {
			if (x->ncols == 1 && r->f[j].end == r->f[j].start)
				rt_sb_adds(&e->out, "\"\""); /* not a blank line (csv_cell) */
			else
				rt_sb_add(&e->out, d + r->f[j].start, r->f[j].end - r->f[j].start);
			json_object_set_new(row, x->cols[j], json_string(r->f[j].value));
			continue;
		}
		if (nv && (rc = cell_text(t->file, x->cols[j], nv, &txt, err)))
			break;
		csv_cell(&e->out, txt ? txt : "", (j < r->n && r->f[j].quoted) || (x->ncols == 1 && !(txt && *txt)));
		json_object_set_new(row, x->cols[j], json_string(txt ? txt : ""));
		free(txt);
	}
	if (row && !rc) { /* the row's own terminator */
		rt_sb_add(&e->out, d + r->term, r->end - r->term);
		json_decref(e->new_entry);
		e->new_entry = json_incref(row);
	}
	json_decref(row);
	if (!rc)
		rt_sb_add(&e->out, d + r->end, len - r->end);
	return rc;
}

/* A set on a missing key: a new row in header order, ended like the header. */
static int csv_append_row(const struct var_def_table *t, const struct csv_edit *x, const char *d,
			  size_t len, struct var_tbl_edit *e, struct rt_sb *err)
{
	const struct var_csv_row *h = &x->c.rows[0];
	const char *eol = h->term < h->end && d[h->term] == '\r' ? "\r\n" : "\n";
	rt_sb_add(&e->out, d, len);
	if (len && d[len - 1] != '\n')
		rt_sb_adds(&e->out, eol);
	for (size_t j = 0; j < x->ncols; j++) {
		const char *kv = NULL;
		char *txt = NULL;
		int rc;
		for (size_t k = 0; k < x->nk; k++)
			if (x->kidx[k] == j)
				kv = x->keys[k];
		json_t *nv = kv ? NULL : json_object_get(t->value, x->cols[j]);
		if (nv && (rc = cell_text(t->file, x->cols[j], nv, &txt, err)))
			return rc;
		if (j)
			rt_sb_addc(&e->out, ',');
		const char *cell = kv ? kv : txt ? txt : "";
		csv_cell(&e->out, cell, x->ncols == 1 && !*cell);
		free(txt);
	}
	rt_sb_adds(&e->out, eol);
	/* the new entry as the row will read back, key columns included */
	json_decref(e->new_entry);
	e->new_entry = json_deep_copy(t->value);
	return 0;
}

int var_tbl_edit_csv(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		    struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	struct csv_edit x = { .row = -1 };
	int rc = var_csv_parse(t->file, d, len, &x.c, err);
	if (rc)
		return rc;
	if (x.c.n == 0)
		rc = rt_errf(err, RT_EPARSE, "%s: empty CSV (no header)", t->file);
	if (!rc)
		rc = csv_keys(t, &x, err);
	if (!rc && (x.row = csv_find_row(&x)) >= 0) {
		const struct var_csv_row *r = &x.c.rows[x.row];
		e->old_entry = json_object();
		for (size_t j = 0; j < x.ncols && j < r->n; j++)
			json_object_set_new(e->old_entry, x.cols[j], json_string(r->f[j].value));
	}
	/* value fields must be columns */
	const char *k;
	json_t *val;
	size_t col;
	if (!rc && t->value && json_is_object(t->value)) {
		json_object_foreach(t->value, k, val) {
			if ((rc = csv_column(&x, t->file, "table.value", k, &col, err)))
				break;
		}
	} else if (!rc && t->op != VAR_TBL_DELETE) {
		rc = rt_errf(err, RT_EINVAL, "%s: table.value: must be an object of columns", t->file);
	}
	if (!rc)
		rc = var_tbl_compute_new(v, e, err);
	if (!rc)
		rc = x.row >= 0 ? csv_rewrite_row(t, &x, d, len, e, err)
				: csv_append_row(t, &x, d, len, e, err);
	csv_edit_release(&x);
	return rc;
}
