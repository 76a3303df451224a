/*
 * The table kind: set, replace or delete one entry of a tuned table (JSON,
 * CSV or YAML; one file per format, var_table_*.c). Every format edits the
 * bytes of the entry in place and keeps every other byte, so an edit never
 * changes an entry it did not touch (0.1 stays 0.1, compact entries stay
 * compact, comments and tags stay). The plan holds the file's before and
 * after bytes; apply and revert are one atomic write each.
 */
#include "variants/var_table_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

char *var_tbl_val_text(json_t *v)
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

int var_tbl_compute_new(const struct var_def *v, struct var_tbl_edit *e, struct rt_sb *err)
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

bool var_tbl_same(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *x;
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach((json_t *)a, k, x) {
			if (!json_object_get(b, k) || !var_tbl_same(x, json_object_get(b, k)))
				return false;
		}
		return true;
	}
	if (json_is_array(a) && json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!var_tbl_same(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	return json_equal((json_t *)a, (json_t *)b);
}

int var_tbl_readback_err(const struct var_def_table *t, struct rt_sb *err)
{
	return rt_errf(err, RT_ESTATE,
		       "%s: the edited table does not read back with the planned entry \"%s\" "
		       "(a layout the in-place edit does not handle); nothing was written",
		       t->file, t->key);
}

/* ---- ops ---- */

/* Edits in the change: the entries of an atomic one, else one. */
static size_t n_edits(const struct var_def *v)
{
	return v->table.atomic ? v->table.n_entries : 1;
}

/* Edit i of v as a change of its own (a shallow copy: nothing to free). */
static struct var_def edit_def(const struct var_def *v, size_t i)
{
	struct var_def one = *v;
	if (v->table.atomic) {
		one.table.key = v->table.entries[i].key;
		one.table.value = v->table.entries[i].value;
		one.table.atomic = false;
	}
	return one;
}

static int edit_file(const struct var_def *v, const struct var_ctx *ctx, const char *data,
		     size_t len, struct var_tbl_edit *e, struct rt_sb *err)
{
	rt_sb_init(&e->out, 0);
	e->old_entry = e->new_entry = NULL;
	if (!v->table.key)
		return rt_errf(err, RT_EINVAL, "%s: table.key: required", v->table.file);
	switch (var_table_format_of(&v->table)) {
	case VAR_TBL_CSV:
		return var_tbl_edit_csv(v, data, len, e, err);
	case VAR_TBL_YAML:
		return var_tbl_edit_yaml(v, data, len, e, err);
	default:
		return var_tbl_edit_json(v, data, len, e, err);
	}
}

static void edit_release(struct var_tbl_edit *e)
{
	json_decref(e->old_entry);
	json_decref(e->new_entry);
	rt_sb_release(&e->out);
}

int var_table_entry(const struct var_def *v, const struct var_ctx *ctx, json_t **entry, struct rt_sb *err)
{
	*entry = NULL;
	char *abs = var_path(ctx, v->table.file), *data = NULL;
	size_t len = 0;
	int rc = rt_read_file(abs, &data, &len, err);
	free(abs);
	if (rc)
		return rc;
	struct var_def one = edit_def(v, 0);
	struct var_tbl_edit e;
	rc = edit_file(&one, ctx, data, len, &e, err);
	if (!rc)
		*entry = json_incref(e.old_entry);
	edit_release(&e);
	free(data);
	return rc;
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
	/* every edit on the bytes the one before wrote: one file, one write */
	size_t len = f->before_len;
	char *data = xmalloc(len + 1);
	memcpy(data, f->before, len);
	for (size_t i = 0; i < n_edits(v) && !rc; i++) {
		struct var_def one = edit_def(v, i);
		struct var_tbl_edit e;
		rc = edit_file(&one, ctx, data, len, &e, err);
		if (!rc) {
			if (!e.out.len)
				rt_sb_adds(&e.out, ""); /* an empty result is still a buffer */
			free(data);
			data = rt_sb_detach(&e.out, &len);
		}
		edit_release(&e);
	}
	if (!rc) {
		f->has_after = true;
		f->after = data;
		f->after_len = len;
	} else {
		free(data);
		var_plan_release(out);
	}
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
	struct rt_sb sb = RT_SB_INIT;
	for (size_t k = 0; k < n_edits(v); k++) {
		struct var_def one = edit_def(v, k);
		const struct var_def_table *e = &one.table;
		rt_sb_addf(&sb, "%stable%c%s%c%d%c%s%c%s%c", k ? "\n" : "", 0, e->file ? e->file : "", 0,
			   (int)var_table_format_of(e), 0, op_names[e->op], 0, e->key ? e->key : "", 0);
		for (size_t i = 0; i < e->key_columns.n; i++)
			rt_sb_addf(&sb, "%s,", e->key_columns.v[i]);
		rt_sb_addc(&sb, 0);
		if (e->value) {
			char *s = json_dumps(e->value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
			rt_sb_adds(&sb, s);
			free(s);
		}
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	return 0;
}

/* One edit's line: what the entry was and becomes. */
static void describe_edit(const struct var_def *v, const struct var_ctx *ctx, const struct var_tbl_edit *e,
			  struct rt_sb *out)
{
	const struct var_def_table *t = &v->table;
	if (!e->old_entry) {
		char *s = json_dumps(e->new_entry, JSON_ENCODE_ANY | JSON_COMPACT);
		rt_sb_addf(out, "%s: + \"%s\" %s", var_display_path(ctx, t->file), t->key, s);
		free(s);
	} else if (!e->new_entry) {
		rt_sb_addf(out, "%s: - \"%s\"", var_display_path(ctx, t->file), t->key);
	} else if (json_is_object(e->old_entry) && json_is_object(e->new_entry)) {
		rt_sb_addf(out, "%s: \"%s\": ", var_display_path(ctx, t->file), t->key);
		int shown = 0;
		const char *k;
		json_t *x;
		/* fields in the old order, then fields only in the new entry */
		for (int pass = 0; pass < 2; pass++) {
			json_t *src = pass ? e->new_entry : e->old_entry;
			json_object_foreach(src, k, x)
			{
				if (pass && json_object_get(e->old_entry, k))
					continue;
				json_t *ox = json_object_get(e->old_entry, k), *nx = json_object_get(e->new_entry, k);
				/* numerically equal is unchanged: an entry holding an integer too
				 * large for jansson reads back with every number as a real */
				if (ox && nx && var_tbl_same(ox, nx))
					continue;
				char *a = var_tbl_val_text(ox), *b = var_tbl_val_text(nx);
				if (strcmp(a, b) != 0)
					rt_sb_addf(out, "%s%s %s -> %s", shown++ ? ", " : "", k, a, b);
				free(a);
				free(b);
			}
		}
		if (!shown)
			rt_sb_adds(out, "no change");
	} else {
		char *a = var_tbl_val_text(e->old_entry), *b = var_tbl_val_text(e->new_entry);
		rt_sb_addf(out, "%s: \"%s\": %s -> %s", var_display_path(ctx, t->file), t->key, a, b);
		free(a);
		free(b);
	}
}

/* One line per edit; an atomic change says so first and indents its edits,
 * each compared with the bytes the edits before it left. */
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
	if (t->atomic)
		rt_sb_addf(out, "%s: %zu entries as one change", var_display_path(ctx, t->file), n_edits(v));
	for (size_t i = 0; i < n_edits(v) && !rc; i++) {
		struct var_def one = edit_def(v, i);
		struct var_tbl_edit e;
		rc = edit_file(&one, ctx, data, len, &e, err);
		if (!rc) {
			if (t->atomic)
				rt_sb_adds(out, "\n  ");
			describe_edit(&one, ctx, &e, out);
			if (!e.out.len)
				rt_sb_adds(&e.out, "");
			free(data);
			data = rt_sb_detach(&e.out, &len);
		}
		edit_release(&e);
	}
	free(data);
	return rc;
}

const struct var_ops var_table_ops = {
	.name = "table",
	.plan = table_plan,
	.apply = table_apply,
	.revert = table_revert,
	.fingerprint = table_fingerprint,
	.describe = table_describe,
};
