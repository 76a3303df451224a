/*
 * profile: how `ratchet profile import` and `ratchet observe` read this
 * campaign's profiles: regexes that classify kernel names into ops (each
 * replaces the default map's pattern for that op; agents/research/profile.c
 * holds the defaults for vLLM, AITER, llama.cpp/ggml and Triton), the
 * annotation that marks a step, the shape carried in a kernel name, and the
 * names of default (untuned) kernels.
 *
 *   profile:
 *     ops: {attention: "attn|fmha", gemm: "gemm|Cijk_"}
 *     step: "^ProfilerStep#"
 *     shape: "_M([0-9]+)_"
 *     fallback: "default"
 *     command: [sh, profile.sh, "{port}"]   # the runner profiles the best itself
 *     when: keep                            # baseline | keep | every (every: N)
 *     engine_flags: [--profile-dir, "{workdir}/.ratchet-profile"]
 *
 * With a command, the runner (runner/campaign/profile_step.c) starts the
 * engine on the best configuration with engine_flags and engine_env added,
 * runs the command with RATCHET_PROFILE_DIR ({workdir}/.ratchet-profile,
 * emptied first) in its environment, and imports every file the dir then
 * holds as one profile: an observed iteration with its findings.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

#include "runner/spec/spec_space.h"
#include "variants/var.h"

static const struct spec_field profile_fields[];

static void parse_one_op(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			 const char *path, const char *kp, void *arg)
{
	struct spec_profile *p = arg;
	int i = spec_name_index(ld, kn, path, "op", k, research_op_names);
	const char *re;
	if (i < 0)
		return;
	if (i == RESEARCH_OP_OTHER) {
		spec_lerr(ld, kn, kp, "'other' is what no other op matches; it takes no regex");
		return;
	}
	if ((re = spec_want_scalar(ld, vn, kp, "a regex")) && spec_check_regex(ld, vn, kp, re))
		p->op[i] = xstrdup(re);
}

static void parse_ops(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	(void)f;
	if (spec_want_map(ld, v, path))
		spec_map_each(ld, v, path, parse_one_op, &((struct spec *)base)->profile);
}

static json_t *dump_ops(const void *base, const struct spec_field *f)
{
	(void)f;
	const struct spec_profile *p = &((const struct spec *)base)->profile;
	json_t *o = json_object();
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		if (p->op[i])
			json_object_set_new(o, research_op_names[i], json_string(p->op[i]));
	if (json_object_size(o))
		return o;
	json_decref(o);
	return NULL;
}

/* A regex-valued key. */
static void parse_regex(struct spec_ld *ld, yaml_node_t *v, const char *path, char **out)
{
	const char *re = spec_want_scalar(ld, v, path, "a regex");
	if (re && spec_check_regex(ld, v, path, re))
		*out = xstrdup(re);
}

#define REGEX_FIELD(name)                                                                        \
	static void parse_##name(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base, \
				 const struct spec_field *f)                                      \
	{                                                                                         \
		(void)f;                                                                          \
		parse_regex(ld, v, path, &((struct spec *)base)->profile.name);                   \
	}                                                                                         \
	static json_t *dump_##name(const void *base, const struct spec_field *f)                  \
	{                                                                                         \
		(void)f;                                                                          \
		const char *s = ((const struct spec *)base)->profile.name;                        \
		return s ? json_string(s) : NULL;                                                 \
	}
REGEX_FIELD(step)
REGEX_FIELD(shape)
REGEX_FIELD(fallback)

const char *const spec_profile_when_names[] = {
#define W(e, name) name,
	SPEC_PROFILE_WHEN(W)
#undef W
	NULL
};

static void parse_format(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			 const struct spec_field *f)
{
	(void)f;
	const char *name = spec_want_scalar(ld, v, path, "a profile format");
	if (!name)
		return;
	for (const struct research_format *r = research_formats; r->name; r++)
		if (!strcmp(r->name, name)) {
			((struct spec *)base)->profile.format = xstrdup(name);
			return;
		}
	spec_lerr(ld, v, path, "unknown profile format '%s' (chrome, nsys, rocprof, unitrace, ncu)", name);
}

static json_t *dump_format(const void *base, const struct spec_field *f)
{
	(void)f;
	const char *s = ((const struct spec *)base)->profile.format;
	return s ? json_string(s) : NULL;
}

/* One keys: item, {match: regex with named groups, key: template}; every
 * {group} of the template must be a named group of the regex. */
static void parse_key_rule(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg)
{
	struct spec_profile *p = arg;
	yaml_node_t *mn = spec_map_get(ld, it, "match"), *kn = spec_map_get(ld, it, "key");
	char *mp = xasprintf("%s.match", ip), *kp = xasprintf("%s.key", ip);
	const char *re = mn ? spec_want_scalar(ld, mn, mp, "a regex") : NULL;
	const char *key = kn ? spec_want_scalar(ld, kn, kp, "a key template") : NULL;
	if (!mn || !kn)
		spec_lerr(ld, it, ip, "a key rule needs match: (a regex with named groups) and key: "
			  "(\"{M},{N},{K}\")");
	else if (re && key && spec_check_regex(ld, mn, mp, re)) {
		for (const char *g = strchr(key, '{'); g; g = strchr(g + 1, '{')) {
			const char *e = strchr(g, '}');
			char *named = e ? xasprintf("(?<%.*s>", (int)(e - g - 1), g + 1) : NULL;
			char *named_p = e ? xasprintf("(?P<%.*s>", (int)(e - g - 1), g + 1) : NULL;
			if (named && !strstr(re, named) && !strstr(re, named_p))
				spec_lerr(ld, kn, kp, "'%.*s' is no named group of match: (write (?<%.*s>...))",
					  (int)(e - g - 1), g + 1, (int)(e - g - 1), g + 1);
			free(named);
			free(named_p);
		}
		p->key_match = xrealloc(p->key_match, (p->n_keys + 1) * sizeof(char *));
		p->key_tmpl = xrealloc(p->key_tmpl, (p->n_keys + 1) * sizeof(char *));
		p->key_match[p->n_keys] = xstrdup(re);
		p->key_tmpl[p->n_keys++] = xstrdup(key);
	}
	free(mp);
	free(kp);
}

static void parse_keys(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	(void)f;
	if (spec_want_seq(ld, v, path))
		spec_seq_each(ld, v, path, parse_key_rule, &((struct spec *)base)->profile);
}

static json_t *dump_keys(const void *base, const struct spec_field *f)
{
	(void)f;
	const struct spec_profile *p = &((const struct spec *)base)->profile;
	if (!p->n_keys)
		return NULL;
	json_t *a = json_array();
	for (size_t i = 0; i < p->n_keys; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "match", p->key_match[i], "key", p->key_tmpl[i]));
	return a;
}

static const struct spec_field profile_fields[] = {
	{ "keys", SF_CUSTOM, 0, 0, 0, .parse = parse_keys, .dump = dump_keys,
	  .help = "kernel names to tuned-table keys: [{match: regex with named groups over \"name op[dims]\", key: \"{M},{N},{K}\"}]" },
	{ "command", SF_STRV, SPEC_OFF(struct spec, profile.command), 0, FL_TMPL | FL_OMIT0,
	  .help = "argv run on the best configuration (its engine up, {port}); it writes the profile "
		  "into $RATCHET_PROFILE_DIR, which the runner imports as an observed iteration" },
	{ "when", SF_ENUM, SPEC_OFF(struct spec, profile.when), 0, FL_OMIT0,
	  .names = spec_profile_when_names, .help = "baseline, keep (each new best) or every (N changes)" },
	{ "every", SF_INT, SPEC_OFF(struct spec, profile.every), 0, FL_LO | FL_OMIT0, 1,
	  .help = "with when: every, the changes between two profiles" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec, profile.timeout_s), 0, FL_LOX,
	  .help = "the command's limit, seconds" },
	{ "engine_flags", SF_STRV, SPEC_OFF(struct spec, profile.engine_flags), 0, FL_TMPL | FL_OMIT0,
	  .help = "flags added to the engine while it is profiled" },
	{ "engine_env", SF_ENVV, SPEC_OFF(struct spec, profile.engine_env), 0, FL_TMPL | FL_OMIT0,
	  .help = "environment added to the engine while it is profiled" },
	{ "format", SF_CUSTOM, 0, 0, 0, .parse = parse_format, .dump = dump_format,
	  .help = "the profile's format (default: detect)" },
	{ "ops", SF_CUSTOM, 0, 0, 0, .parse = parse_ops, .dump = dump_ops,
	  .help = "op name -> regex over kernel names (attention, gemm, norm, activation, quantize, communication)" },
	{ "step", SF_CUSTOM, 0, 0, 0, .parse = parse_step, .dump = dump_step,
	  .help = "regex over annotation names that mark one step" },
	{ "shape", SF_CUSTOM, 0, 0, 0, .parse = parse_shape, .dump = dump_shape,
	  .help = "regex whose first group is the shape a kernel name carries" },
	{ "fallback", SF_CUSTOM, 0, 0, 0, .parse = parse_fallback, .dump = dump_fallback,
	  .help = "regex over the names of default (untuned) kernels" },
	{ 0 }
};

void spec_parse_profile(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	(void)f;
	if (!spec_want_map(ld, v, path))
		return;
	struct spec_profile *p = &((struct spec *)base)->profile;
	p->present = true;
	p->timeout_s = 600;
	spec_parse_fields(ld, v, path, base, profile_fields, NULL);
	if (p->command.n && p->when == SPEC_PROFILE_NEVER && !spec_map_get(ld, v, "when"))
		p->when = SPEC_PROFILE_BASELINE;
	if (!p->command.n && p->when != SPEC_PROFILE_NEVER)
		spec_lerr(ld, v, path, "when: %s needs a command", spec_profile_when_names[p->when]);
	if (p->when == SPEC_PROFILE_EVERY && p->every < 1)
		spec_lerr(ld, v, path, "when: every needs every: N (N >= 1)");
}

json_t *spec_dump_profile(const void *base, const struct spec_field *f)
{
	(void)f;
	if (!((const struct spec *)base)->profile.present)
		return NULL;
	return spec_fields_json(base, profile_fields);
}

void spec_profile_release(struct spec_profile *p)
{
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		free(p->op[i]);
	free(p->step);
	free(p->shape);
	free(p->fallback);
	rt_strv_release(&p->command);
	rt_strv_release(&p->engine_flags);
	rt_envv_release(&p->engine_env);
	free(p->format);
	for (size_t i = 0; i < p->n_keys; i++) {
		free(p->key_match[i]);
		free(p->key_tmpl[i]);
	}
	free(p->key_match);
	free(p->key_tmpl);
}

void spec_profile_def(const struct spec *s, struct research_opmap_def *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; s && i < RESEARCH_N_OPS; i++)
		out->op[i] = s->profile.op[i];
	if (s) {
		out->step = s->profile.step;
		out->shape = s->profile.shape;
		out->fallback = s->profile.fallback;
		out->key_match = (const char *const *)s->profile.key_match;
		out->key_tmpl = (const char *const *)s->profile.key_tmpl;
		out->n_keys = s->profile.n_keys;
	}
}

/* The index of the table shown as file in tables[0..n), or n. */
static size_t table_index(const struct research_table *t, size_t n, const char *file)
{
	size_t j = 0;
	while (j < n && strcmp(t[j].file, file))
		j++;
	return j;
}

/* Pointers the tables of a space borrow (searched keys, key columns), laid
 * out after the tables in their one allocation. */
struct borrowed {
	const char **next; /* the next free slot */
};

/* The key columns of a space's table binding ({key_columns: [...]}) into
 * slots of b; *n gets how many. */
static const char *const *space_key_columns(json_t *table, struct borrowed *b, size_t *n)
{
	json_t *kc = json_object_get(table, "key_columns"), *v;
	size_t i;
	const char **first = b->next;
	*n = 0;
	json_array_foreach(kc, i, v)
		if (json_is_string(v)) {
			*b->next++ = json_string_value(v);
			(*n)++;
		}
	return first;
}

/* Add the tables a space's targets bind (a file no variant names), then
 * give each table the entries the space searches: a profile's shape that
 * one of them covers is the search's to fill, not a hole. */
static size_t space_tables(const struct spec *s, struct var_ctx *vc, struct research_table *t,
			   char **paths, size_t n, struct borrowed *b)
{
	const struct spec_space *sp = s->space;
	for (size_t i = 0; sp && i < sp->n_targets; i++) {
		const struct spec_target *g = &sp->targets[i];
		if (g->kind != SPEC_BIND_TABLE)
			continue;
		char *path = var_path(vc, json_string_value(json_object_get(g->table, "file")));
		const char *shown = var_display_path(vc, path);
		if (table_index(t, n, shown) < n) {
			free(path);
			continue;
		}
		paths[n] = path;
		t[n] = (struct research_table){ shown, path, NULL, 0 };
		t[n].key_columns = space_key_columns(g->table, b, &t[n].n_key_columns);
		n++;
	}
	for (size_t j = 0; sp && j < n; j++) {
		t[j].searched = b->next;
		for (size_t i = 0; i < sp->n_targets; i++) {
			const struct spec_target *g = &sp->targets[i];
			if (g->kind != SPEC_BIND_TABLE)
				continue;
			char *path = var_path(vc, json_string_value(json_object_get(g->table, "file")));
			if (!strcmp(path, t[j].path))
				*b->next++ = g->key;
			free(path);
		}
		t[j].n_searched = (size_t)(b->next - t[j].searched);
	}
	return n;
}

/* Slots for the pointers a space's tables borrow: a searched key and the
 * key columns per target. */
static size_t space_slots(const struct spec *s)
{
	size_t n = 0;
	for (size_t i = 0; s->space && i < s->space->n_targets; i++) {
		const struct spec_target *g = &s->space->targets[i];
		n += 1 + json_array_size(json_object_get(g->table, "key_columns"));
	}
	return n;
}

size_t spec_research_tables(const struct spec *s, struct research_table **tables, char ***paths)
{
	/* the spec holds each file absolute; variants name it as written */
	struct var_ctx vc = { .workdir = s->workdir };
	size_t n = 0, nt = s->space ? s->space->n_targets : 0;
	size_t room = (s->n_variants + nt + 1) * sizeof(**tables);
	*tables = xcalloc(1, room + (space_slots(s) + 1) * sizeof(char *));
	*paths = xcalloc(s->n_variants + nt + 1, sizeof(char *));
	struct borrowed b = { (const char **)((char *)*tables + room) };
	for (size_t i = 0; i < s->n_variants; i++) {
		const struct var_def *v = &s->variants[i];
		if (v->kind != VAR_KIND_TABLE)
			continue;
		const char *shown = var_display_path(&vc, v->table.file);
		if (table_index(*tables, n, shown) < n)
			continue;
		(*paths)[n] = var_path(&vc, v->table.file);
		(*tables)[n] = (struct research_table){ shown, (*paths)[n],
							(const char *const *)v->table.key_columns.v,
							v->table.key_columns.n };
		n++;
	}
	return space_tables(s, &vc, *tables, *paths, n, &b);
}
