/*
 * The table kind: set, replace or delete one entry of a tuned table.
 *   JSON: a top-level object keyed by strings such as AITER's
 *         "D_GEQ_512.Q_GEQ_256.DT_fp8_fp8" (keys are never split on dots);
 *         re-serialized by jansson with the file's indent and key order.
 *   CSV:  rows keyed by the values of key columns (e.g. M,N,K); only the
 *         edited row is re-written, every other byte (quoting, line endings,
 *         column order) stays as it was.
 *   YAML: a top-level mapping, read and written by runner/base/rt_yaml
 *         (libyaml; its one scalar-typing rule, so entries read here have
 *         the types the spec's values have). Comments are not kept by
 *         libyaml; revert restores the original bytes anyway.
 * The plan holds the file's before and after bytes; apply and revert are one
 * atomic write each.
 */
#include "variants/var.h"
#include "runner/base/rt_yaml.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum var_table_format var_table_format_of(const struct var_def_table *t)
{
	if (t->format != VAR_TBL_AUTO)
		return t->format;
	const char *dot = t->file ? strrchr(t->file, '.') : NULL;
	if (dot && strcasecmp(dot, ".csv") == 0)
		return VAR_TBL_CSV;
	if (dot && (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0))
		return VAR_TBL_YAML;
	return VAR_TBL_JSON;
}

/* Text of a JSON value for people and CSV cells: strings raw, the rest compact JSON. */
static char *val_text(json_t *v)
{
	if (!v)
		return xstrdup("unset");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_null(v))
		return xstrdup("");
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	char *r = xstrdup(s ? s : "");
	free(s);
	return r;
}

/* Shared result of every format: the entry before and after (NULL: absent). */
struct edit {
	json_t *old_entry; /* entry now, or NULL (owned) */
	json_t *new_entry; /* entry after, or NULL for delete (owned) */
	struct rt_sb out;  /* the new file bytes */
};

/* new entry from the old one and the op; 0 or an error naming file and key */
static int compute_new(const struct var_def *v, struct edit *e, struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	switch (t->op) {
	case VAR_TBL_DELETE:
		if (!e->old_entry)
			return rt_errf(err, RT_ENOENT, "%s: table.key: key \"%s\" not found for delete",
				       t->file, t->key);
		e->new_entry = NULL;
		return 0;
	case VAR_TBL_REPLACE:
		if (!e->old_entry)
			return rt_errf(err, RT_ENOENT, "%s: table.key: key \"%s\" not found for replace",
				       t->file, t->key);
		if (!t->value)
			return rt_errf(err, RT_EINVAL, "%s: table.replace: no value", t->file);
		e->new_entry = json_deep_copy(t->value);
		return 0;
	case VAR_TBL_SET:
		if (!t->value)
			return rt_errf(err, RT_EINVAL, "%s: table.set: no value", t->file);
		if (e->old_entry && json_is_object(e->old_entry) && json_is_object(t->value)) {
			e->new_entry = json_deep_copy(e->old_entry);
			json_object_update(e->new_entry, t->value);
		} else {
			e->new_entry = json_deep_copy(t->value);
		}
		return 0;
	}
	return RT_EINVAL;
}

/* ---- JSON ---- */
static int edit_json(const struct var_def *v, const char *data, size_t len, struct edit *e,
		     struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	json_error_t je;
	json_t *doc = json_loadb(data, len, 0, &je);
	if (!doc)
		return rt_errf(err, RT_EPARSE, "%s:%d:%d: invalid JSON: %s", t->file, je.line, je.column,
			       je.text);
	int rc = 0;
	if (!json_is_object(doc)) {
		rc = rt_errf(err, RT_EPARSE, "%s: top level is not an object", t->file);
		goto out;
	}
	json_t *old = json_object_get(doc, t->key);
	e->old_entry = old ? json_incref(old) : NULL;
	if ((rc = compute_new(v, e, err)))
		goto out;
	if (e->new_entry)
		json_object_set(doc, t->key, e->new_entry);
	else
		json_object_del(doc, t->key);
	/* keep the file's indent: the spaces after the first newline */
	size_t indent = 0;
	const char *nl = memchr(data, '\n', len);
	bool pretty = nl && (size_t)(nl - data) + 1 < len;
	if (pretty)
		for (const char *p = nl + 1; p < data + len && *p == ' '; p++)
			indent++;
	size_t flags = JSON_REAL_PRECISION(17);
	flags |= pretty ? JSON_INDENT(indent ? (indent > 31 ? 31 : indent) : 2) : 0;
	char *s = json_dumps(doc, flags);
	rt_sb_adds(&e->out, s);
	free(s);
	if (len && data[len - 1] == '\n')
		rt_sb_addc(&e->out, '\n');
out:
	json_decref(doc);
	return rc;
}

/* ---- CSV (rows parsed by var_csv.c) ---- */
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
	*out = val_text(v);
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

/* The first row whose key cells (trimmed) equal the key, or -1. */
static long csv_find_row(const struct csv_edit *x)
{
	for (size_t i = 1; i < x->c.n; i++) {
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
 * A set keeps the raw bytes of the cells it does not change. The new entry
 * becomes the row as it will read back (key cells kept, a replace empties
 * the cells it does not name), so describe shows what the file will hold. */
static int csv_rewrite_row(const struct var_def_table *t, const struct csv_edit *x, const char *d,
			   size_t len, struct edit *e, struct rt_sb *err)
{
	const struct var_csv_row *r = &x->c.rows[x->row];
	json_t *back = e->new_entry ? json_object() : NULL;
	rt_sb_add(&e->out, d, r->start);
	for (size_t j = 0; e->new_entry && j < x->ncols; j++) {
		json_t *nv = csv_is_key(x, j) ? NULL : json_object_get(t->value, x->cols[j]);
		bool keep_raw = j < r->n && (csv_is_key(x, j) || (t->op == VAR_TBL_SET && !nv));
		char *txt = NULL;
		int rc;
		if (j)
			rt_sb_addc(&e->out, ',');
		if (keep_raw) {
			rt_sb_add(&e->out, d + r->f[j].start, r->f[j].end - r->f[j].start);
			json_object_set_new(back, x->cols[j], json_string(r->f[j].value));
			continue;
		}
		if (nv && (rc = cell_text(t->file, x->cols[j], nv, &txt, err))) {
			json_decref(back);
			return rc;
		}
		csv_cell(&e->out, txt ? txt : "", j < r->n && r->f[j].quoted);
		json_object_set_new(back, x->cols[j], json_string(txt ? txt : ""));
		free(txt);
	}
	json_decref(e->new_entry);
	e->new_entry = back;
	if (e->new_entry) /* the row's own terminator */
		rt_sb_add(&e->out, d + r->term, r->end - r->term);
	rt_sb_add(&e->out, d + r->end, len - r->end);
	return 0;
}

/* A set on a missing key: a new row in header order, ended like the header. */
static int csv_append_row(const struct var_def_table *t, const struct csv_edit *x, const char *d,
			  size_t len, struct edit *e, struct rt_sb *err)
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
		csv_cell(&e->out, kv ? kv : txt ? txt : "", false);
		free(txt);
	}
	rt_sb_adds(&e->out, eol);
	/* the new entry as the row will read back, key columns included */
	json_decref(e->new_entry);
	e->new_entry = json_deep_copy(t->value);
	return 0;
}

static int edit_csv(const struct var_def *v, const char *d, size_t len, struct edit *e,
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
		rc = compute_new(v, e, err);
	if (!rc)
		rc = x.row >= 0 ? csv_rewrite_row(t, &x, d, len, e, err)
				: csv_append_row(t, &x, d, len, e, err);
	csv_edit_release(&x);
	return rc;
}

/* ---- YAML (read and written by runner/base/rt_yaml) ---- */

/* Is node n the scalar key? */
static bool yaml_key_is(const yaml_node_t *n, const char *key)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(key) &&
	       memcmp(n->data.scalar.value, key, n->data.scalar.length) == 0;
}

/* Index of the pair of mapping map whose key is key, or -1. */
static long yaml_pair_of(yaml_document_t *doc, const yaml_node_t *map, const char *key)
{
	long at = -1;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		if (yaml_key_is(yaml_document_get_node(doc, p->key), key))
			at = p - map->data.mapping.pairs.start; /* the last one, as readers do */
	return at;
}

/* A set of fields on an existing mapping entry: each field replaced in
 * place or added at the end, so the entry keeps its order. */
static int yaml_merge(yaml_document_t *doc, int entry, const json_t *fields)
{
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)fields, k, x) {
		int nv = rt_yaml_add_json(doc, x);
		yaml_node_t *en = yaml_document_get_node(doc, entry);
		long at = yaml_pair_of(doc, en, k);
		if (!nv)
			return RT_ENOMEM;
		if (at >= 0) {
			en->data.mapping.pairs.start[at].value = nv;
		} else {
			json_t *key = json_string(k);
			int kn = rt_yaml_add_json(doc, key);
			json_decref(key);
			if (!kn || !yaml_document_append_mapping_pair(doc, entry, kn, nv))
				return RT_ENOMEM;
		}
	}
	return 0;
}

/* Apply the change to the document's root mapping (node 1); at is the
 * entry's pair, -1 when the key is new. Pointers into the document move when
 * nodes are added, so this works by index. */
static int yaml_change(yaml_document_t *doc, const struct var_def_table *t, long at,
		       const struct edit *e)
{
	yaml_node_t *root = yaml_document_get_node(doc, 1);
	yaml_node_pair_t *pairs = root->data.mapping.pairs.start;
	if (!e->new_entry) {
		size_t n = (size_t)(root->data.mapping.pairs.top - pairs);
		memmove(&pairs[at], &pairs[at + 1], (n - (size_t)at - 1) * sizeof(*pairs));
		root->data.mapping.pairs.top--;
		return 0;
	}
	if (at >= 0 && t->op == VAR_TBL_SET && json_is_object(t->value) &&
	    yaml_document_get_node(doc, pairs[at].value)->type == YAML_MAPPING_NODE)
		return yaml_merge(doc, pairs[at].value, t->value);
	int nv = rt_yaml_add_json(doc, e->new_entry);
	if (!nv)
		return RT_ENOMEM;
	if (at >= 0) {
		yaml_document_get_node(doc, 1)->data.mapping.pairs.start[at].value = nv;
		return 0;
	}
	json_t *key = json_string(t->key);
	int kn = rt_yaml_add_json(doc, key);
	json_decref(key);
	return kn && yaml_document_append_mapping_pair(doc, 1, kn, nv) ? 0 : RT_ENOMEM;
}

static int edit_yaml(const struct var_def *v, const char *data, size_t len, struct edit *e,
		     struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	yaml_parser_t parser;
	yaml_document_t doc;
	struct rt_yaml_err ye;
	int rc = 0;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = rt_errf(err, RT_EPARSE, "%s:%zu:%zu: invalid YAML: %s", t->file,
			     parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			     parser.problem ? parser.problem : "error");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_parser_delete(&parser);
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	long at = root && root->type == YAML_MAPPING_NODE ? yaml_pair_of(&doc, root, t->key) : -1;
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = rt_errf(err, RT_EPARSE, "%s: top level is not a mapping", t->file);
	} else if (at >= 0) {
		yaml_node_t *en = yaml_document_get_node(&doc, root->data.mapping.pairs.start[at].value);
		if (!(e->old_entry = rt_yaml_to_json(&doc, en, &ye)))
			rc = rt_errf(err, RT_EPARSE, "%s:%d:%d: %s", t->file,
				     ye.at ? (int)ye.at->start_mark.line + 1 : 1,
				     ye.at ? (int)ye.at->start_mark.column + 1 : 1, ye.msg);
	}
	if (!rc)
		rc = compute_new(v, e, err);
	if (!rc && (rc = yaml_change(&doc, t, at, e)))
		rt_errf(err, rc, "%s: cannot build the YAML document", t->file);
	if (rc) {
		yaml_document_delete(&doc);
		return rc;
	}
	struct rt_sb why = RT_SB_INIT;
	rc = rt_yaml_emit(&doc, &e->out, &why); /* consumes doc */
	if (rc)
		rt_errf(err, rc, "%s: %s", t->file, why.buf);
	rt_sb_release(&why);
	return rc;
}

/* ---- ops ---- */
static int edit_file(const struct var_def *v, const struct var_ctx *ctx, const char *data,
		     size_t len, struct edit *e, struct rt_sb *err)
{
	rt_sb_init(&e->out, 0);
	e->old_entry = e->new_entry = NULL;
	if (!v->table.key)
		return rt_errf(err, RT_EINVAL, "%s: table.key: required", v->table.file);
	switch (var_table_format_of(&v->table)) {
	case VAR_TBL_CSV:
		return edit_csv(v, data, len, e, err);
	case VAR_TBL_YAML:
		return edit_yaml(v, data, len, e, err);
	default:
		return edit_json(v, data, len, e, err);
	}
}

static void edit_release(struct edit *e)
{
	json_decref(e->old_entry);
	json_decref(e->new_entry);
	rt_sb_release(&e->out);
}

static int table_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		      struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	if (!v->table.file)
		return rt_errf(err, RT_EINVAL, "%s: table.file: required", v->name);
	char *abs = var_path(ctx, v->table.file);
	int rc = var_plan_add(out, abs, v->table.file, err);
	free(abs);
	if (rc)
		return rc;
	struct var_file *f = &out->files[0];
	if (!f->existed) {
		var_plan_release(out);
		return rt_errf(err, RT_ENOENT, "%s: table.file: table file missing", v->table.file);
	}
	struct edit e;
	rc = edit_file(v, ctx, f->before, f->before_len, &e, err);
	if (!rc) {
		f->has_after = true;
		if (!e.out.len)
			rt_sb_adds(&e.out, ""); /* an empty result is still a buffer */
		f->after = rt_sb_detach(&e.out, &f->after_len);
	} else {
		var_plan_release(out);
	}
	edit_release(&e);
	return rc;
}

static int table_apply(const struct var_def *v, const struct var_ctx *ctx,
		       const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	int rc = var_files_write_after(p, err);
	return rc ? rc : var_run_build(v, ctx, log, err);
}

static int table_revert(const struct var_def *v, const struct var_ctx *ctx,
			const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	int rc = var_files_restore(p, err);
	return rc ? rc : var_run_build(v, ctx, log, err);
}

static const char *const op_names[] = { "set", "replace", "delete" };

static int table_fingerprint(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			     struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_addf(&sb, "table%c%s%c%d%c%s%c%s%c", 0, t->file ? t->file : "", 0,
		   (int)var_table_format_of(t), 0, op_names[t->op], 0, t->key ? t->key : "", 0);
	for (size_t i = 0; i < t->key_columns.n; i++)
		rt_sb_addf(&sb, "%s,", t->key_columns.v[i]);
	rt_sb_addc(&sb, 0);
	if (t->value) {
		char *s = json_dumps(t->value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		rt_sb_adds(&sb, s);
		free(s);
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	return 0;
}

static int table_describe(const struct var_def *v, const struct var_ctx *ctx,
			  const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	char *abs = var_path(ctx, t->file);
	char *data = NULL;
	size_t len = 0;
	int rc = rt_read_file(abs, &data, &len, NULL);
	free(abs);
	if (rc)
		return rt_errf(err, rc, "%s: table.file: table file missing", t->file);
	struct edit e;
	rc = edit_file(v, ctx, data, len, &e, err);
	free(data);
	if (rc) {
		edit_release(&e);
		return rc;
	}
	if (!e.old_entry) {
		char *s = json_dumps(e.new_entry, JSON_ENCODE_ANY | JSON_COMPACT);
		rt_sb_addf(out, "%s: + \"%s\" %s", var_display_path(ctx, t->file), t->key, s);
		free(s);
	} else if (!e.new_entry) {
		rt_sb_addf(out, "%s: - \"%s\"", var_display_path(ctx, t->file), t->key);
	} else if (json_is_object(e.old_entry) && json_is_object(e.new_entry)) {
		rt_sb_addf(out, "%s: \"%s\": ", var_display_path(ctx, t->file), t->key);
		int shown = 0;
		const char *k;
		json_t *x;
		/* fields in the old order, then fields only in the new entry */
		for (int pass = 0; pass < 2; pass++) {
			json_t *src = pass ? e.new_entry : e.old_entry;
			json_object_foreach(src, k, x)
			{
				if (pass && json_object_get(e.old_entry, k))
					continue;
				char *a = val_text(json_object_get(e.old_entry, k));
				char *b = val_text(json_object_get(e.new_entry, k));
				if (!json_object_get(e.new_entry, k)) {
					free(b);
					b = xstrdup("unset");
				}
				if (strcmp(a, b) != 0)
					rt_sb_addf(out, "%s%s %s -> %s", shown++ ? ", " : "", k, a, b);
				free(a);
				free(b);
			}
		}
		if (!shown)
			rt_sb_adds(out, "no change");
	} else {
		char *a = val_text(e.old_entry), *b = val_text(e.new_entry);
		rt_sb_addf(out, "%s: \"%s\": %s -> %s", var_display_path(ctx, t->file), t->key, a, b);
		free(a);
		free(b);
	}
	edit_release(&e);
	return 0;
}

const struct var_ops var_table_ops = {
	.name = "table",
	.plan = table_plan,
	.apply = table_apply,
	.revert = table_revert,
	.fingerprint = table_fingerprint,
	.describe = table_describe,
};
