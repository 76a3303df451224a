/*
 * The table kind: set, replace or delete one entry of a tuned table.
 *   JSON: a top-level object keyed by strings such as AITER's
 *         "D_GEQ_512.Q_GEQ_256.DT_fp8_fp8" (keys are never split on dots);
 *         re-serialized by jansson with the file's indent and key order.
 *   CSV:  rows keyed by the values of key columns (e.g. M,N,K); only the
 *         edited row is re-written, every other byte (quoting, line endings,
 *         column order) stays as it was.
 *   YAML: a top-level mapping, parsed and emitted by libyaml (comments are
 *         not kept by libyaml; revert restores the original bytes anyway).
 * The plan holds the file's before and after bytes; apply and revert are one
 * atomic write each.
 */
#include "variants/var.h"

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

static int edit_csv(const struct var_def *v, const char *d, size_t len, struct edit *e,
		    struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	struct var_csv c;
	int rc = var_csv_parse(t->file, d, len, &c, err);
	if (rc)
		return rc;
	size_t nk = t->key_columns.n;
	size_t *kidx = xcalloc(nk + 1, sizeof(size_t));
	char **keys = NULL;
	size_t nkeys = 0;
	long row = -1;
	if (c.n == 0) {
		rc = rt_errf(err, RT_EPARSE, "%s: empty CSV (no header)", t->file);
		goto out;
	}
	struct var_csv_row *h = &c.rows[0];
	const char **cols = xcalloc(h->n + 1, sizeof(char *));
	for (size_t j = 0; j < h->n; j++) {
		trim(h->f[j].value);
		cols[j] = h->f[j].value;
	}
	if (nk == 0) {
		rc = rt_errf(err, RT_EINVAL, "%s: table.key_columns: required for CSV", t->file);
		goto out_cols;
	}
	for (size_t k = 0; k < nk; k++) {
		size_t j = 0;
		while (j < h->n && strcmp(cols[j], t->key_columns.v[k]) != 0)
			j++;
		if (j == h->n) {
			const char *dym = rt_did_you_mean(t->key_columns.v[k], cols, h->n);
			rc = rt_errf(err, RT_EINVAL, "%s: table.key_columns: column '%s' not in header%s%s%s",
				     t->file, t->key_columns.v[k], dym ? " (did you mean '" : "",
				     dym ? dym : "", dym ? "'?)" : "");
			goto out_cols;
		}
		kidx[k] = j;
	}
	/* split the key "v1,v2,.." */
	for (const char *p = t->key;;) {
		const char *q = strchr(p, ',');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		keys = xrealloc(keys, (nkeys + 1) * sizeof(char *));
		keys[nkeys] = xstrndup(p, n);
		trim(keys[nkeys++]);
		if (!q)
			break;
		p = q + 1;
	}
	if (nkeys != nk) {
		rc = rt_errf(err, RT_EINVAL, "%s: table.key: \"%s\" has %zu values for %zu key columns",
			     t->file, t->key, nkeys, nk);
		goto out_cols;
	}
	for (size_t i = 1; i < c.n && row < 0; i++) {
		bool match = true;
		for (size_t k = 0; k < nk && match; k++) {
			if (kidx[k] >= c.rows[i].n) {
				match = false;
				break;
			}
			char *cell = xstrdup(c.rows[i].f[kidx[k]].value);
			trim(cell);
			match = strcmp(cell, keys[k]) == 0;
			free(cell);
		}
		if (match)
			row = (long)i;
	}
	if (row >= 0) {
		e->old_entry = json_object();
		for (size_t j = 0; j < h->n && j < c.rows[row].n; j++)
			json_object_set_new(e->old_entry, cols[j], json_string(c.rows[row].f[j].value));
	}
	/* value fields must be columns */
	if (t->value && json_is_object(t->value)) {
		const char *k;
		json_t *val;
		json_object_foreach(t->value, k, val)
		{
			size_t j = 0;
			while (j < h->n && strcmp(cols[j], k) != 0)
				j++;
			if (j == h->n) {
				const char *dym = rt_did_you_mean(k, cols, h->n);
				rc = rt_errf(err, RT_EINVAL, "%s: table.value: column '%s' not in header%s%s%s",
					     t->file, k, dym ? " (did you mean '" : "", dym ? dym : "",
					     dym ? "'?)" : "");
				goto out_cols;
			}
		}
	} else if (t->op != VAR_TBL_DELETE) {
		rc = rt_errf(err, RT_EINVAL, "%s: table.value: must be an object of columns", t->file);
		goto out_cols;
	}
	if ((rc = compute_new(v, e, err)))
		goto out_cols;
	/* line terminator of the file, for new rows */
	const char *eol = "\n";
	if (h->term < h->end && d[h->term] == '\r')
		eol = "\r\n";
	if (row >= 0) {
		struct var_csv_row *r = &c.rows[row];
		rt_sb_add(&e->out, d, r->start);
		if (e->new_entry) {
			for (size_t j = 0; j < h->n; j++) {
				if (j)
					rt_sb_addc(&e->out, ',');
				bool is_key = false;
				for (size_t k = 0; k < nk; k++)
					is_key |= kidx[k] == j;
				json_t *nv = is_key ? NULL : json_object_get(t->value, cols[j]);
				bool keep_raw = j < r->n && (is_key || (t->op == VAR_TBL_SET && !nv));
				if (keep_raw) {
					rt_sb_add(&e->out, d + r->f[j].start, r->f[j].end - r->f[j].start);
					continue;
				}
				char *txt = NULL;
				if (nv && (rc = cell_text(t->file, cols[j], nv, &txt, err)))
					goto out_cols;
				csv_cell(&e->out, txt ? txt : "", j < r->n && r->f[j].quoted);
				free(txt);
			}
			/* the row's own terminator */
			rt_sb_add(&e->out, d + r->term, r->end - r->term);
		}
		rt_sb_add(&e->out, d + r->end, len - r->end);
	} else {
		/* set on a missing key: append a row in header order */
		rt_sb_add(&e->out, d, len);
		if (len && d[len - 1] != '\n')
			rt_sb_adds(&e->out, eol);
		for (size_t j = 0; j < h->n; j++) {
			if (j)
				rt_sb_addc(&e->out, ',');
			const char *kv = NULL;
			for (size_t k = 0; k < nk; k++)
				if (kidx[k] == j)
					kv = keys[k];
			if (kv) {
				csv_cell(&e->out, kv, false);
				continue;
			}
			json_t *nv = json_object_get(t->value, cols[j]);
			char *txt = NULL;
			if (nv && (rc = cell_text(t->file, cols[j], nv, &txt, err)))
				goto out_cols;
			csv_cell(&e->out, txt ? txt : "", false);
			free(txt);
		}
		rt_sb_adds(&e->out, eol);
		/* the new entry as the row will read back, key columns included */
		json_decref(e->new_entry);
		e->new_entry = json_deep_copy(t->value);
	}
out_cols:
	free(cols);
out:
	for (size_t i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);
	free(kidx);
	var_csv_release(&c);
	return rc;
}

/* ---- YAML ---- */
static json_t *yaml_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
	if (!n || depth > 64)
		return json_null();
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			json_array_append_new(a, yaml_to_json(doc, yaml_document_get_node(doc, *it), depth + 1));
		return a;
	}
	case YAML_MAPPING_NODE: {
		json_t *o = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			if (!k || k->type != YAML_SCALAR_NODE)
				continue;
			char *ks = xstrndup((const char *)k->data.scalar.value, k->data.scalar.length);
			json_object_set_new(o, ks, yaml_to_json(doc, yaml_document_get_node(doc, p->value), depth + 1));
			free(ks);
		}
		return o;
	}
	default:
		return json_null();
	}
}

/* Would a plain scalar s be read back as something other than a string? */
static bool looks_typed(const char *s)
{
	if (!*s)
		return true;
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "~",
					     "True", "False", "TRUE", "FALSE", "Yes", "No", "Null", "NULL" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(words); i++)
		if (strcmp(s, words[i]) == 0)
			return true;
	char *end;
	strtod(s, &end);
	return *end == 0;
}

static int json_to_yaml(yaml_document_t *doc, json_t *v)
{
	if (json_is_object(v)) {
		int m = yaml_document_add_mapping(doc, NULL, YAML_ANY_MAPPING_STYLE);
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			int kn = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)k, (int)strlen(k),
							  YAML_ANY_SCALAR_STYLE);
			yaml_document_append_mapping_pair(doc, m, kn, json_to_yaml(doc, x));
		}
		return m;
	}
	if (json_is_array(v)) {
		int s = yaml_document_add_sequence(doc, NULL, YAML_ANY_SEQUENCE_STYLE);
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			yaml_document_append_sequence_item(doc, s, json_to_yaml(doc, x));
		return s;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		return yaml_document_add_scalar(doc, NULL, (yaml_char_t *)s, (int)strlen(s),
						looks_typed(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
							       : YAML_ANY_SCALAR_STYLE);
	}
	char *t = json_is_null(v) ? xstrdup("null") : val_text(v);
	int n = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)t, (int)strlen(t),
					 YAML_PLAIN_SCALAR_STYLE);
	free(t);
	return n;
}

static int yaml_write(void *data, unsigned char *buf, size_t n)
{
	rt_sb_add(data, buf, n);
	return 1;
}

static int edit_yaml(const struct var_def *v, const char *data, size_t len, struct edit *e,
		     struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		int rc = rt_errf(err, RT_EPARSE, "%s:%zu:%zu: invalid YAML: %s", t->file,
				 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "error");
		yaml_parser_delete(&parser);
		return rc;
	}
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = rt_errf(err, RT_EPARSE, "%s: top level is not a mapping", t->file);
		goto out;
	}
	yaml_node_pair_t *found = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(t->key) &&
		    memcmp(k->data.scalar.value, t->key, k->data.scalar.length) == 0)
			found = p;
	}
	if (found)
		e->old_entry = yaml_to_json(&doc, yaml_document_get_node(&doc, found->value), 0);
	if ((rc = compute_new(v, e, err)))
		goto out;
	/* pointers into the document move when nodes are added: work by index */
	int root_id = 1;
	long at = found ? (long)(found - root->data.mapping.pairs.start) : -1;
	if (!e->new_entry) {
		yaml_node_pair_t *s = root->data.mapping.pairs.start;
		size_t n = (size_t)(root->data.mapping.pairs.top - s);
		memmove(&s[at], &s[at + 1], (n - (size_t)at - 1) * sizeof(*s));
		root->data.mapping.pairs.top--;
	} else if (at >= 0 && t->op == VAR_TBL_SET &&
		   yaml_document_get_node(&doc, found->value)->type == YAML_MAPPING_NODE &&
		   json_is_object(t->value)) {
		/* merge the fields into the existing mapping, keeping its order */
		int entry = found->value;
		const char *k;
		json_t *x;
		json_object_foreach(t->value, k, x)
		{
			int nv = json_to_yaml(&doc, x);
			yaml_node_t *en = yaml_document_get_node(&doc, entry);
			bool done = false;
			for (yaml_node_pair_t *p = en->data.mapping.pairs.start; p < en->data.mapping.pairs.top; p++) {
				yaml_node_t *kn = yaml_document_get_node(&doc, p->key);
				if (kn->type == YAML_SCALAR_NODE && kn->data.scalar.length == strlen(k) &&
				    memcmp(kn->data.scalar.value, k, strlen(k)) == 0) {
					p->value = nv;
					done = true;
				}
			}
			if (!done) {
				int kn = yaml_document_add_scalar(&doc, NULL, (yaml_char_t *)k, (int)strlen(k),
								  YAML_ANY_SCALAR_STYLE);
				yaml_document_append_mapping_pair(&doc, entry, kn, nv);
			}
		}
	} else if (at >= 0) {
		int nv = json_to_yaml(&doc, e->new_entry);
		root = yaml_document_get_node(&doc, root_id);
		root->data.mapping.pairs.start[at].value = nv;
	} else {
		int kn = yaml_document_add_scalar(&doc, NULL, (yaml_char_t *)t->key, (int)strlen(t->key),
						  YAML_ANY_SCALAR_STYLE);
		int nv = json_to_yaml(&doc, e->new_entry);
		yaml_document_append_mapping_pair(&doc, root_id, kn, nv);
	}
	yaml_emitter_t em;
	yaml_emitter_initialize(&em);
	yaml_emitter_set_output(&em, yaml_write, &e->out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, &doc) || !yaml_emitter_close(&em))
		rc = rt_errf(err, RT_EIO, "%s: cannot emit YAML: %s", t->file,
			     em.problem ? em.problem : "error");
	yaml_emitter_delete(&em);
	yaml_parser_delete(&parser);
	return rc; /* yaml_emitter_dump consumed the document */
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
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
