/*
 * variants: the changes to try, one each: table (set, replace or delete one
 * entry of a JSON, CSV or YAML table), flag, env, patch (+ build) or file.
 * Exactly one kind and one change per variant; names are unique.
 */
#include "runner/spec/spec_int.h"
#include "runner/base/rt_json.h"

#include <stdlib.h>
#include <string.h>

const struct spec_field spec_table_fields[] = {
	{ "file", SF_STR, SPEC_OFF(struct var_def_table, file), 0, FL_REQ | FL_PATH, .help = "the table file" },
	{ "format", SF_ENUM, SPEC_OFF(struct var_def_table, format), .names = spec_tblfmt_names,
	  .help = "auto (from the extension), json, csv or yaml" },
	{ "key_columns", SF_STRV, SPEC_OFF(struct var_def_table, key_columns), 0, FL_OMIT0,
	  .help = "CSV: the columns that form the key" },
	{ "atomic", SF_BOOL, SPEC_OFF(struct var_def_table, atomic), 0, FL_OMIT0,
	  .help = "several entries (set/replace: a mapping of them, delete: a list of keys) as one change" },
	{ 0 }
};

const struct spec_field spec_patch_fields[] = {
	{ "file", SF_STR, SPEC_OFF(struct var_def_patch, file), 0, FL_REQ | FL_PATH, .help = "unified diff" },
	{ "dir", SF_STR, SPEC_OFF(struct var_def_patch, dir), 0, FL_REQ | FL_PATH, .help = "folder it applies to" },
	{ 0 }
};

const struct spec_field spec_file_fields[] = {
	{ "target", SF_STR, SPEC_OFF(struct var_def_file, target), 0, FL_REQ | FL_PATH, .help = "file to replace" },
	{ "source", SF_STR, SPEC_OFF(struct var_def_file, source), 0, FL_REQ | FL_PATH, .help = "the variant's copy" },
	{ 0 }
};

static const struct spec_field variant_keys[] = {
	{ "name", SF_CUSTOM }, { "description", SF_CUSTOM }, { "build", SF_CUSTOM },
	{ "table", SF_CUSTOM }, { "flag", SF_CUSTOM }, { "env", SF_CUSTOM },
	{ "patch", SF_CUSTOM }, { "file", SF_CUSTOM }, { 0 }
};
static const char *const var_kinds[] = { "table", "flag", "env", "patch", "file" };
/* NULL-terminated: spec_parse_fields reads it as a list of extra keys. */
static const char *const tbl_ops[] = { "set", "replace", "delete", NULL };
#define N_TBL_OPS ((int)RT_ARRAY_SIZE(tbl_ops) - 1)

/* One entry of an atomic change: KEY: {fields}. */
static void parse_atomic_entry(struct spec_ld *ld, yaml_node_t *kn, const char *key, yaml_node_t *vn,
			       const char *path, const char *kpath, void *arg)
{
	struct var_def_table *t = arg;
	char buf[80];
	if (vn->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, vn, kpath, "expected a mapping of fields, got %s", spec_got(vn, buf, sizeof(buf)));
		return;
	}
	t->entries = xrealloc(t->entries, (t->n_entries + 1) * sizeof(*t->entries));
	t->entries[t->n_entries++] = (struct var_def_tbl_entry){ xstrdup(key), spec_node_json(ld, vn, kpath) };
}

/* atomic: set/replace: {KEY: {fields}, ...}, delete: [KEY, ...]; one at least. */
static void parse_atomic(struct spec_ld *ld, yaml_node_t *on, const char *op, struct var_def_table *t)
{
	if (t->op != VAR_TBL_DELETE) {
		if (spec_want_map(ld, on, op))
			spec_map_each(ld, on, op, parse_atomic_entry, t);
	} else if (spec_want_seq(ld, on, op)) {
		for (size_t i = 0; i < spec_seq_len(on); i++) {
			char *ip = spec_path_index(op, i);
			const char *k = spec_want_scalar(ld, spec_seq_item(ld, on, i), ip, "an entry key");
			if (k) {
				t->entries = xrealloc(t->entries, (t->n_entries + 1) * sizeof(*t->entries));
				t->entries[t->n_entries++] = (struct var_def_tbl_entry){ xstrdup(k), NULL };
			}
			free(ip);
		}
	}
	for (size_t i = 0; t->op == VAR_TBL_DELETE && i < t->n_entries; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->entries[i].key, t->entries[j].key))
				spec_lerr(ld, on, op, "entry '%s' given twice", t->entries[i].key);
	if (!t->n_entries)
		spec_lerr(ld, on, op, "an atomic change needs one entry at least");
}

/* set: {KEY: {fields}} or replace: {KEY: {fields}}: exactly one entry */
static void parse_table_entry(struct spec_ld *ld, yaml_node_t *on, const char *op,
			      struct var_def_table *t)
{
	char buf[80];
	if (on->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, on, op, "expected KEY: {fields}, got %s", spec_got(on, buf, sizeof(buf)));
		return;
	}
	yaml_node_pair_t *p = on->data.mapping.pairs.start;
	size_t n = spec_map_len(on);
	if (n == 0) {
		spec_lerr(ld, on, op, "expected one entry KEY: {fields}");
	} else if (n > 1) {
		const char *k0 = spec_scalar(spec_node(ld, p[0].key));
		const char *k1 = spec_scalar(spec_node(ld, p[1].key));
		spec_lerr(ld, spec_node(ld, p[1].key), op,
			  "two changes in one variant ('%s' and '%s'); split them", k0 ? k0 : "?",
			  k1 ? k1 : "?");
	} else {
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_want_scalar(ld, kn, op, "an entry key");
		char *kp = k ? spec_path_join(op, k) : NULL;
		if (k && vn->type != YAML_MAPPING_NODE) {
			spec_lerr(ld, vn, kp, "expected a mapping of fields, got %s",
				  spec_got(vn, buf, sizeof(buf)));
		} else if (k) {
			t->key = xstrdup(k);
			t->value = spec_node_json(ld, vn, kp);
		}
		free(kp);
	}
}

/* format: auto follows the file's extension. */
static void table_format(struct spec_ld *ld, yaml_node_t *tv, const char *tp, struct var_def_table *t)
{
	const char *dot = t->file ? strrchr(t->file, '.') : NULL;
	if (t->format != VAR_TBL_AUTO || !t->file)
		return;
	if (dot && !strcmp(dot, ".json"))
		t->format = VAR_TBL_JSON;
	else if (dot && !strcmp(dot, ".csv"))
		t->format = VAR_TBL_CSV;
	else if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
		t->format = VAR_TBL_YAML;
	else
		spec_lerr(ld, spec_map_get(ld, tv, "file"), tp,
			  "cannot tell the format of '%s' from its name; give format: json, csv or yaml",
			  t->file);
}

/* A CSV table needs key_columns, as many as the key has values; others none. */
static void table_key_columns(struct spec_ld *ld, yaml_node_t *tv, yaml_node_t *on, const char *tp,
			      struct var_def_table *t)
{
	if (t->format != VAR_TBL_CSV) {
		if (t->key_columns.n)
			spec_lerr(ld, spec_map_get(ld, tv, "key_columns"), tp,
				  "key_columns applies to CSV tables only");
		return;
	}
	if (!t->key_columns.n) {
		spec_lerr(ld, tv, tp, "a CSV table needs key_columns");
		return;
	}
	for (size_t i = 0; i < (t->atomic ? t->n_entries : 1); i++) {
		const char *key = t->atomic ? t->entries[i].key : t->key;
		size_t parts = 1;
		for (const char *c = key; c && *c; c++)
			parts += *c == ',';
		if (key && parts != t->key_columns.n)
			spec_lerr(ld, on, tp, "key '%s' has %zu values but key_columns has %zu", key, parts,
				  t->key_columns.n);
	}
}

static void parse_var_table(struct spec_ld *ld, yaml_node_t *tv, const char *tp, struct var_def_table *t)
{
	yaml_node_t *ops[N_TBL_OPS];
	int first, second;
	if (!spec_want_map(ld, tv, tp))
		return;
	spec_parse_fields(ld, tv, tp, t, spec_table_fields, tbl_ops);
	int nops = spec_which_keys(ld, tv, tbl_ops, N_TBL_OPS, ops, &first, &second);
	if (nops > 1) {
		spec_lerr(ld, ops[second], tp, "two changes in one variant ('%s' and '%s'); split them",
			  tbl_ops[first], tbl_ops[second]);
		return;
	}
	if (nops == 0) {
		spec_lerr(ld, tv, tp, "missing one of 'set', 'replace', 'delete'");
		return;
	}
	t->op = (enum var_table_op)first;
	char *op = spec_path_join(tp, tbl_ops[first]);
	if (t->atomic) {
		parse_atomic(ld, ops[first], op, t);
	} else if (t->op == VAR_TBL_DELETE) {
		const char *k = spec_want_scalar(ld, ops[first], op, "an entry key");
		if (k)
			t->key = xstrdup(k);
	} else {
		parse_table_entry(ld, ops[first], op, t);
	}
	free(op);
	table_format(ld, tv, tp, t);
	table_key_columns(ld, tv, ops[first], tp, t);
}

static const struct spec_field flag_key_fields[] = {
	{ "name", SF_STR, SPEC_OFF(struct var_def_flag_key, name), 0, FL_REQ,
	  .help = "the option whose value is a JSON object, e.g. --compilation-config" },
	{ "key", SF_STR, SPEC_OFF(struct var_def_flag_key, key), 0, FL_REQ,
	  .help = "the key inside it: a dotted path (a.b) or a JSON pointer (/a/b)" },
	{ 0 }
};
static const char *const flag_key_extra[] = { "value", NULL };

/* flag: {name, key, value}: one key inside a JSON-valued flag. */
static void parse_flag_key(struct spec_ld *ld, yaml_node_t *kv, const char *kp, struct var_def_flag_key *k)
{
	spec_parse_fields(ld, kv, kp, k, flag_key_fields, flag_key_extra);
	yaml_node_t *vn = spec_map_get(ld, kv, "value");
	char *vp = spec_path_join(kp, "value");
	if (!vn)
		spec_lerr(ld, kv, kp, "missing 'value' (what the key is set to)");
	else
		k->value = spec_node_json(ld, vn, vp);
	free(vp);
	if (k->name && (k->name[0] != '-' || strchr(k->name, '=')))
		spec_lerr(ld, spec_map_get(ld, kv, "name"), kp, "name '%s' is not an option such as --x",
			  k->name);
	struct rt_sb why = RT_SB_INIT;
	struct rt_strv path;
	if (k->key && rt_json_path_split(k->key, &path, &why))
		spec_lerr(ld, spec_map_get(ld, kv, "key"), kp, "%s", why.buf);
	else if (k->key)
		rt_strv_release(&path);
	rt_sb_release(&why);
}

/* Without an engine, flags go to the command benchmarks' argv. */
static void parse_var_flag(struct spec_ld *ld, yaml_node_t *kv, const char *kp, struct var_def *var)
{
	const struct spec *s = ld->s;
	bool cmd = false;
	if (kv->type == YAML_MAPPING_NODE)
		parse_flag_key(ld, kv, kp, &var->flag_key);
	else
		spec_parse_strv(ld, kv, kp, FL_TMPL, &var->flag);
	if (kv->type == YAML_SEQUENCE_NODE && !var->flag.n)
		spec_lerr(ld, kv, kp, "an empty flag list changes nothing");
	for (size_t i = 0; i < s->n_benches; i++)
		cmd |= s->benches[i].kind == SPEC_BENCH_COMMAND;
	if (!s->engine.present && !cmd)
		spec_lerr(ld, kv, kp,
			  "a flag variant changes a command line, and the spec has no engine and no command benchmark");
}

/* The change itself, under the key of its kind. */
static void parse_var_kind(struct spec_ld *ld, yaml_node_t *kv, const char *kp, struct var_def *var)
{
	switch (var->kind) {
	case VAR_KIND_TABLE:
		parse_var_table(ld, kv, kp, &var->table);
		break;
	case VAR_KIND_FLAG:
		parse_var_flag(ld, kv, kp, var);
		break;
	case VAR_KIND_ENV:
		spec_parse_envv(ld, kv, kp, FL_TMPL, &var->env);
		if (kv->type == YAML_MAPPING_NODE && !spec_map_len(kv))
			spec_lerr(ld, kv, kp, "an empty env mapping changes nothing");
		break;
	case VAR_KIND_PATCH:
		spec_parse_fields(ld, kv, kp, &var->patch, spec_patch_fields, NULL);
		break;
	case VAR_KIND_FILE:
		spec_parse_fields(ld, kv, kp, &var->file, spec_file_fields, NULL);
		break;
	}
}

void spec_parse_variant_item(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg)
{
	struct spec *s = arg;
	struct var_def *var = &s->variants[s->n_variants++];
	yaml_node_t *kinds[RT_ARRAY_SIZE(var_kinds)];
	int first, second;
	var->pos = spec_node_pos(it);
	spec_check_keys(ld, it, ip, variant_keys, NULL);
	var->name = spec_item_name(ld, it, ip, "variant", "-.+:", &ld->variant_names);
	yaml_node_t *dn = spec_map_get(ld, it, "description");
	if (dn && !spec_is_null(dn)) {
		char *dp = spec_path_join(ip, "description");
		const char *d = spec_want_scalar(ld, dn, dp, "a string");
		var->description = xstrdup(d);
		free(dp);
	}
	yaml_node_t *bn = spec_map_get(ld, it, "build");
	if (bn) {
		char *bp = spec_path_join(ip, "build");
		spec_parse_strv(ld, bn, bp, FL_TMPL, &var->build);
		free(bp);
	}
	int nk = spec_which_keys(ld, it, var_kinds, (int)RT_ARRAY_SIZE(var_kinds), kinds, &first, &second);
	if (nk > 1) {
		spec_lerr(ld, it, ip, "two changes in one variant ('%s' and '%s'); split them into two variants",
			  var_kinds[first], var_kinds[second]);
		return;
	}
	if (nk == 0) {
		spec_lerr(ld, it, ip, "no change: give one of table, flag, env, patch, file");
		return;
	}
	var->kind = (enum var_kind)first;
	char *kp = spec_path_join(ip, var_kinds[first]);
	parse_var_kind(ld, kinds[first], kp, var);
	free(kp);
}

void spec_parse_variants(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			 const struct spec_field *f)
{
	struct spec *s = base;
	if (spec_is_null(v))
		return;
	if (!spec_want_seq(ld, v, path))
		return;
	s->variants = xcalloc(spec_seq_len(v) + 1, sizeof(*s->variants));
	spec_seq_each(ld, v, path, spec_parse_variant_item, s);
}

json_t *spec_dump_variants(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_variants; i++) {
		const struct var_def *v = &s->variants[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(v->name));
		if (v->description)
			json_object_set_new(o, "description", json_string(v->description));
		json_t *k = NULL;
		switch (v->kind) {
		case VAR_KIND_TABLE: {
			k = spec_fields_json(&v->table, spec_table_fields);
			if (v->table.atomic) {
				json_t *e = v->table.op == VAR_TBL_DELETE ? json_array() : json_object();
				for (size_t j = 0; j < v->table.n_entries; j++) {
					const struct var_def_tbl_entry *en = &v->table.entries[j];
					if (json_is_array(e))
						json_array_append_new(e, json_string(en->key));
					else
						json_object_set(e, en->key, en->value);
				}
				json_object_set_new(k, tbl_ops[v->table.op], e);
			} else if (v->table.op == VAR_TBL_DELETE) {
				json_object_set_new(k, "delete", json_string(v->table.key));
			} else {
				json_t *e = json_object();
				json_object_set_new(e, v->table.key,
						    v->table.value ? json_incref(v->table.value) : json_object());
				json_object_set_new(k, tbl_ops[v->table.op], e);
			}
			break;
		}
		case VAR_KIND_FLAG:
			if (v->flag_key.name) {
				k = spec_fields_json(&v->flag_key, flag_key_fields);
				json_object_set(k, "value", v->flag_key.value);
			} else {
				k = spec_strv_json(&v->flag);
			}
			break;
		case VAR_KIND_ENV:
			k = spec_envv_json(&v->env);
			break;
		case VAR_KIND_PATCH:
			k = spec_fields_json(&v->patch, spec_patch_fields);
			break;
		case VAR_KIND_FILE:
			k = spec_fields_json(&v->file, spec_file_fields);
			break;
		}
		json_object_set_new(o, var_kinds[v->kind], k);
		if (v->build.n)
			json_object_set_new(o, "build", spec_strv_json(&v->build));
		json_array_append_new(a, o);
	}
	return a;
}

