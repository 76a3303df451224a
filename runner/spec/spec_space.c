/*
 * space: the parameters a search strategy explores (runner/spec/
 * spec_space.h). Each parameter declares its values (range with step,
 * pow2, values, choices or bool) and one binding (table, flag, env or
 * template); parameters with the same binding form one target. The
 * restrictions are compiled here (agents/expr.c), each confined to one
 * target, so `ratchet check` reports an unknown name or a syntax error at
 * its line. A point becomes a variant object run through the variant
 * parser of spec_variants.c.
 */
#include "runner/spec/spec_int.h"
#include "runner/spec/spec_space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Values one parameter may have at most. */
#define SPACE_MAX_VALUES 100000

static const char *const value_keys[] = { "range", "pow2", "values", "choices", "bool" };
static const char *const bind_keys[] = { "table", "flag", "env", "template" };
static const char *const param_keys[] = { "name", "range", "pow2", "values", "choices", "bool", "step",
					  "table", "flag", "env", "template", "description", NULL };
static const struct spec_field space_keys[] = { { "parameters", SF_CUSTOM }, { "restrictions", SF_CUSTOM },
						{ 0 } };

void spec_space_free(struct spec_space *sp)
{
	for (size_t t = 0; t < sp->n_targets; t++) {
		struct spec_target *g = &sp->targets[t];
		for (size_t i = 0; i < g->space.n_params; i++)
			free(g->fields ? g->fields[i] : NULL);
		free(g->fields);
		agent_space_release(&g->space);
		free(g->label);
		json_decref(g->table);
		free(g->key);
		free(g->name);
		free(g->source);
		free(g->target);
		json_decref(g->build);
	}
	free(sp->targets);
}

/* ---- values ---- */

/* Two integers [lo, hi] with lo <= hi. */
static bool int_pair(struct spec_ld *ld, yaml_node_t *vn, const char *vp, json_t *j, json_int_t *lo,
		     json_int_t *hi)
{
	if (!json_is_array(j) || json_array_size(j) != 2 || !json_is_integer(json_array_get(j, 0)) ||
	    !json_is_integer(json_array_get(j, 1))) {
		spec_lerr(ld, vn, vp, "expected [low, high], two integers");
		return false;
	}
	*lo = json_integer_value(json_array_get(j, 0));
	*hi = json_integer_value(json_array_get(j, 1));
	if (*lo > *hi)
		spec_lerr(ld, vn, vp, "low (%lld) is above high (%lld)", (long long)*lo, (long long)*hi);
	return *lo <= *hi;
}

static bool pow2(json_int_t x)
{
	return x > 0 && !(x & (x - 1));
}

/* range: [lo, hi] with step (default 1). */
static json_t *range_values(struct spec_ld *ld, yaml_node_t *it, yaml_node_t *vn, const char *ip, json_t *j)
{
	json_int_t lo, hi, step = 1;
	char *vp = spec_path_join(ip, "range");
	bool ok = int_pair(ld, vn, vp, j, &lo, &hi);
	yaml_node_t *sn = spec_map_get(ld, it, "step");
	char *sp = spec_path_join(ip, "step");
	const char *st = sn ? spec_want_scalar(ld, sn, sp, "a positive integer") : NULL;
	char *end = NULL;
	if (st) {
		step = strtoll(st, &end, 10);
		if (*end || step < 1) {
			spec_lerr(ld, sn, sp, "expected a positive integer, got '%s'", st);
			ok = false;
		}
	}
	json_t *a = NULL;
	if (ok && (hi - lo) / step + 1 > SPACE_MAX_VALUES)
		spec_lerr(ld, vn, vp, "%lld values; a parameter may have at most %d",
			  (long long)((hi - lo) / step + 1), SPACE_MAX_VALUES);
	else if (ok)
		a = json_array();
	for (json_int_t x = lo; a && x <= hi; x += step)
		json_array_append_new(a, json_integer(x));
	free(vp);
	free(sp);
	return a;
}

static json_t *pow2_values(struct spec_ld *ld, yaml_node_t *vn, const char *ip, json_t *j)
{
	json_int_t lo, hi;
	char *vp = spec_path_join(ip, "pow2");
	json_t *a = NULL;
	if (int_pair(ld, vn, vp, j, &lo, &hi)) {
		if (!pow2(lo) || !pow2(hi))
			spec_lerr(ld, vn, vp, "low and high must be powers of two (1, 2, 4, ...)");
		else
			a = json_array();
		for (json_int_t x = lo; a && x <= hi; x *= 2)
			json_array_append_new(a, json_integer(x));
	}
	free(vp);
	return a;
}

/* values: or choices: a non-empty list of distinct scalars. */
static json_t *list_values(struct spec_ld *ld, yaml_node_t *vn, const char *vp, json_t *j)
{
	if (!json_is_array(j) || !json_array_size(j)) {
		spec_lerr(ld, vn, vp, "expected a non-empty list of values");
		return NULL;
	}
	for (size_t i = 0; i < json_array_size(j); i++) {
		json_t *x = json_array_get(j, i);
		if (json_is_array(x) || json_is_object(x) || json_is_null(x)) {
			spec_lerr(ld, vn, vp, "value %zu: expected a number, a string or a boolean", i + 1);
			return NULL;
		}
		for (size_t k = 0; k < i; k++)
			if (json_equal(x, json_array_get(j, k))) {
				spec_lerr(ld, vn, vp, "value %zu repeats value %zu", i + 1, k + 1);
				return NULL;
			}
	}
	if (json_array_size(j) > SPACE_MAX_VALUES) {
		spec_lerr(ld, vn, vp, "%zu values; a parameter may have at most %d", json_array_size(j),
			  SPACE_MAX_VALUES);
		return NULL;
	}
	return json_incref(j);
}

/* The one key of keys[0..n) the item has (nodes: their values), or -1
 * after reporting two (two: a format with both names) or none. */
static int one_key(struct spec_ld *ld, yaml_node_t *it, const char *ip, const char *const *keys, int n,
		   yaml_node_t **nodes, const char *two, const char *none)
{
	int first, second;
	int got = spec_which_keys(ld, it, keys, n, nodes, &first, &second);
	if (got > 1) {
		char *msg = xasprintf(two, keys[first], keys[second]);
		spec_lerr(ld, nodes[second], ip, "%s", msg);
		free(msg);
	} else if (!got) {
		spec_lerr(ld, it, ip, "%s", none);
	}
	return got == 1 ? first : -1;
}

/* The parameter's values from the one value key it has. */
static bool param_values(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct agent_param *p)
{
	yaml_node_t *nodes[RT_ARRAY_SIZE(value_keys)];
	int first = one_key(ld, it, ip, value_keys, (int)RT_ARRAY_SIZE(value_keys), nodes,
			    "two value lists ('%s' and '%s'); give one",
			    "no values: give one of range, pow2, values, choices, bool");
	if (first < 0)
		return false;
	char *vp = spec_path_join(ip, value_keys[first]);
	json_t *j = spec_node_json(ld, nodes[first], vp);
	p->kind = (enum agent_param_kind)first;
	if (j && p->kind == AGENT_PARAM_RANGE)
		p->values = range_values(ld, it, nodes[first], ip, j);
	else if (j && p->kind == AGENT_PARAM_POW2)
		p->values = pow2_values(ld, nodes[first], ip, j);
	else if (j && p->kind == AGENT_PARAM_BOOL && json_is_true(j))
		p->values = json_pack("[bb]", 0, 1);
	else if (j && p->kind == AGENT_PARAM_BOOL)
		spec_lerr(ld, nodes[first], vp, "write bool: true for a parameter that is false or true");
	else if (j)
		p->values = list_values(ld, nodes[first], vp, j);
	if (p->kind != AGENT_PARAM_RANGE && spec_map_get(ld, it, "step"))
		spec_lerr(ld, spec_map_get(ld, it, "step"), ip, "step applies to range only");
	json_decref(j);
	free(vp);
	return p->values != NULL;
}

/* ---- bindings ---- */

/* A parameter's binding, before it is grouped into a target. */
struct binding {
	enum spec_bind kind; /* what it sets */
	json_t *j;           /* the binding as written (owned) */
	char *id;            /* what makes two bindings one target */
	char *field;         /* table: the field */
};

static bool binding_of(struct spec_ld *ld, yaml_node_t *it, const char *ip, const char *pname, struct binding *b)
{
	yaml_node_t *nodes[RT_ARRAY_SIZE(bind_keys)];
	int first = one_key(ld, it, ip, bind_keys, (int)RT_ARRAY_SIZE(bind_keys), nodes,
			    "two bindings ('%s' and '%s'); a parameter sets one thing",
			    "no binding: give one of table, flag, env, template");
	if (first < 0)
		return false;
	char *bp = spec_path_join(ip, bind_keys[first]);
	b->kind = (enum spec_bind)first;
	b->j = spec_node_json(ld, nodes[first], bp);
	bool ok = b->j != NULL;
	if (ok && (b->kind == SPEC_BIND_FLAG || b->kind == SPEC_BIND_ENV)) {
		ok = json_is_string(b->j) && json_string_length(b->j);
		if (!ok)
			spec_lerr(ld, nodes[first], bp, "expected the %s's name", bind_keys[first]);
		else
			b->id = xasprintf("%s %s", bind_keys[first], json_string_value(b->j));
	} else if (ok && b->kind == SPEC_BIND_TABLE) {
		json_t *key = json_object_get(b->j, "key"), *field = json_object_get(b->j, "field");
		ok = json_is_object(b->j) && json_is_string(json_object_get(b->j, "file")) && json_is_string(key);
		if (!ok)
			spec_lerr(ld, nodes[first], bp, "expected {file: TABLE, key: ENTRY, field: FIELD}");
		else if (field && !json_is_string(field))
			spec_lerr(ld, nodes[first], bp, "field: expected a string"), ok = false;
		if (ok) {
			b->field = xstrdup(field ? json_string_value(field) : pname);
			b->id = xasprintf("table %s entry %s", json_string_value(json_object_get(b->j, "file")),
					  json_string_value(key));
			json_object_del(b->j, "field");
		}
	} else if (ok) {
		json_t *build = json_is_object(b->j) ? json_object_get(b->j, "build") : NULL;
		ok = json_is_object(b->j) && json_is_string(json_object_get(b->j, "source")) &&
		     json_is_string(json_object_get(b->j, "target")) && json_object_size(b->j) == 2 + !!build &&
		     (!build || (json_is_array(build) && json_array_size(build)));
		if (!ok)
			spec_lerr(ld, nodes[first], bp, "expected {source: TEMPLATE, target: FILE, build?: [argv]}");
		else
			b->id = xasprintf("template %s -> %s", json_string_value(json_object_get(b->j, "source")),
					  json_string_value(json_object_get(b->j, "target")));
	}
	free(bp);
	return ok;
}

/* The target of binding b (a new one when none matches yet). */
static struct spec_target *target_for(struct spec_ld *ld, struct spec_space *sp, struct binding *b,
				      yaml_node_t *it)
{
	for (size_t t = 0; t < sp->n_targets; t++)
		if (!strcmp(sp->targets[t].label, b->id))
			return &sp->targets[t];
	struct spec_target *g = &sp->targets[sp->n_targets++];
	g->kind = b->kind;
	g->label = xstrdup(b->id);
	g->pos = spec_node_pos(it);
	if (b->kind == SPEC_BIND_TABLE) {
		g->key = xstrdup(json_string_value(json_object_get(b->j, "key")));
		json_object_del(b->j, "key");
		g->table = json_incref(b->j);
	} else if (b->kind == SPEC_BIND_TEMPLATE) {
		g->source = spec_resolve(ld->s, json_string_value(json_object_get(b->j, "source")));
		g->target = xstrdup(json_string_value(json_object_get(b->j, "target")));
		g->build = json_incref(json_object_get(b->j, "build"));
	} else {
		g->name = xstrdup(json_string_value(b->j));
	}
	return g;
}

/* ---- parameters ---- */

/* Loader state of the section. */
struct space_ld {
	struct spec_space *sp; /* being filled */
	size_t cap;            /* room in sp->targets */
};

static void parse_param(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg)
{
	struct space_ld *x = arg;
	struct agent_param p = { 0 };
	struct binding b = { 0 };
	spec_check_keys(ld, it, ip, NULL, param_keys);
	/* variant_names: a space strategy has no variants (spec_space_post), so
	 * the parameters may use that tree for their own names */
	p.name = spec_item_name(ld, it, ip, "parameter", "", &ld->variant_names);
	bool ok = p.name && param_values(ld, it, ip, &p);
	ok = binding_of(ld, it, ip, p.name ? p.name : "", &b) && ok;
	if (ok) {
		struct spec_target *g = target_for(ld, x->sp, &b, it);
		struct agent_space *s = &g->space;
		if (g->kind != SPEC_BIND_TABLE && g->kind != SPEC_BIND_TEMPLATE && s->n_params)
			spec_lerr(ld, it, ip, "%s is already set by parameter '%s'; a %s takes one parameter", g->label,
				  s->params[0].name, bind_keys[g->kind]);
		for (size_t i = 0; g->fields && b.field && i < s->n_params; i++)
			if (!strcmp(g->fields[i], b.field))
				spec_lerr(ld, it, ip, "field '%s' of %s is already set by parameter '%s'", b.field,
					  g->label, s->params[i].name);
		s->params = xrealloc(s->params, (s->n_params + 1) * sizeof(*s->params));
		g->fields = xrealloc(g->fields, (s->n_params + 1) * sizeof(*g->fields));
		g->fields[s->n_params] = b.field;
		s->params[s->n_params++] = p;
		x->sp->n_params++;
		b.field = NULL;
		memset(&p, 0, sizeof(p));
	}
	free(p.name);
	json_decref(p.values);
	json_decref(b.j);
	free(b.id);
	free(b.field);
}

/* ---- restrictions ---- */

/* Every parameter name, and the target of each. */
static const char **all_names(const struct spec_space *sp, size_t **target_of)
{
	const char **names = xcalloc(sp->n_params + 1, sizeof(*names));
	*target_of = xcalloc(sp->n_params + 1, sizeof(**target_of));
	size_t k = 0;
	for (size_t t = 0; t < sp->n_targets; t++)
		for (size_t i = 0; i < sp->targets[t].space.n_params; i++) {
			(*target_of)[k] = t;
			names[k++] = sp->targets[t].space.params[i].name;
		}
	return names;
}

/* One restriction: compiled over every name (messages), then over the one
 * target it may concern. */
static void parse_restriction(struct spec_ld *ld, struct spec_space *sp, yaml_node_t *rn, const char *rp)
{
	const char *text = spec_want_scalar(ld, rn, rp, "an expression");
	if (!text)
		return;
	size_t *target_of;
	const char **names = all_names(sp, &target_of);
	struct rt_sb why = RT_SB_INIT;
	struct agent_expr *e = agent_expr_compile(text, names, sp->n_params, &why);
	long t = -1;
	for (size_t i = 0; e && i < sp->n_params; i++) {
		if (!agent_expr_uses(e, i))
			continue;
		if (t >= 0 && (size_t)t != target_of[i])
			spec_lerr(ld, rn, rp, "'%s' relates parameters of two targets (%s and %s); a restriction "
				  "may relate the parameters of one target", text, sp->targets[t].label,
				  sp->targets[target_of[i]].label);
		t = (long)target_of[i];
	}
	if (!e) {
		spec_lerr(ld, rn, rp, "'%s': %s", text, why.buf);
	} else if (t < 0) {
		spec_lerr(ld, rn, rp, "'%s' names no parameter", text);
	} else {
		struct agent_space *s = &sp->targets[t].space;
		const char **local = xcalloc(s->n_params + 1, sizeof(*local));
		for (size_t i = 0; i < s->n_params; i++)
			local[i] = s->params[i].name;
		s->restr = xrealloc(s->restr, (s->n_restr + 1) * sizeof(*s->restr));
		s->restr_text = xrealloc(s->restr_text, (s->n_restr + 1) * sizeof(*s->restr_text));
		s->restr[s->n_restr] = agent_expr_compile(text, local, s->n_params, NULL);
		s->restr_text[s->n_restr++] = xstrdup(text);
		free(local);
	}
	agent_expr_free(e);
	rt_sb_release(&why);
	free(names);
	free(target_of);
}

/* Each target's space: not too large, and not empty under its restrictions. */
static void check_sizes(struct spec_ld *ld, yaml_node_t *v, const char *path, struct spec_space *sp)
{
	for (size_t t = 0; t < sp->n_targets; t++) {
		struct agent_space *s = &sp->targets[t].space;
		uint64_t n = agent_space_size(s);
		if (n > AGENT_SPACE_MAX_POINTS) {
			spec_lerr_at(ld, sp->targets[t].pos, path, "%s: %llu points; a target may have at most %llu",
				     sp->targets[t].label, (unsigned long long)n, AGENT_SPACE_MAX_POINTS);
			continue;
		}
		size_t nv;
		free(agent_space_valid(s, &nv));
		if (!nv)
			spec_lerr(ld, v, path, "%s: no point satisfies the restrictions", sp->targets[t].label);
	}
}

void spec_parse_space(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	struct spec *s = base;
	if (spec_is_null(v) || !spec_want_map(ld, v, path))
		return;
	spec_check_keys(ld, v, path, space_keys, NULL);
	yaml_node_t *pn = spec_map_get(ld, v, "parameters");
	char *pp = spec_path_join(path, "parameters");
	s->space = xcalloc(1, sizeof(*s->space));
	if (!pn || !spec_want_seq(ld, pn, pp) || !spec_seq_len(pn)) {
		if (!pn || pn->type == YAML_SEQUENCE_NODE)
			spec_lerr(ld, pn ? pn : v, pp, "a space needs at least one parameter");
		free(pp);
		return;
	}
	struct space_ld x = { .sp = s->space, .cap = spec_seq_len(pn) };
	s->space->targets = xcalloc(x.cap + 1, sizeof(*s->space->targets));
	spec_seq_each(ld, pn, pp, parse_param, &x);
	free(pp);
	yaml_node_t *rn = spec_map_get(ld, v, "restrictions");
	char *rp = spec_path_join(path, "restrictions");
	if (rn && !spec_is_null(rn) && spec_want_seq(ld, rn, rp)) {
		for (size_t i = 0; i < spec_seq_len(rn); i++) {
			char *ri = spec_path_index(rp, i);
			parse_restriction(ld, s->space, spec_seq_item(ld, rn, i), ri);
			free(ri);
		}
	}
	free(rp);
	if (!ld->nerr)
		check_sizes(ld, v, path, s->space);
}

/* A space strategy needs a space and no variants; list and greedy the
 * reverse. A space with no strategy: written is searched by auto, the
 * portfolio, measured within 1.5x of the best single strategy on every
 * space in the repository (docs/figures.md, "Search v2, fifth pass"). */
void spec_space_post(struct spec_ld *ld, yaml_node_t *root)
{
	struct spec *s = ld->s;
	yaml_node_t *sn = spec_map_get(ld, root, "strategy");
	if (!sn && s->space)
		s->strategy = AGENT_STRAT_AUTO;
	enum agent_source from = agent_strategy_source(s->strategy);
	bool searches = from == AGENT_FROM_SPACE;
	if (searches && !s->space)
		spec_lerr(ld, sn ? sn : root, "strategy", "strategy '%s' searches a space: declare space: "
			  "with its parameters", agent_strategy_name(s->strategy));
	else if (from == AGENT_FROM_VARIANTS && s->space) {
		struct rt_sb names = RT_SB_INIT;
		agent_strategy_list(AGENT_SET_SPACE, &names);
		spec_lerr(ld, spec_map_get(ld, root, "space"), "space",
			  "strategy '%s' tries the variants one by one; a space needs %s",
			  agent_strategy_name(s->strategy), names.buf);
		rt_sb_release(&names);
	}
	else if (searches && s->n_variants)
		spec_lerr(ld, spec_map_get(ld, root, "variants"), "variants",
			  "strategy '%s' generates its variants from space:; leave variants: out",
			  agent_strategy_name(s->strategy));
}

json_t *spec_dump_space(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	if (!s->space)
		return NULL;
	json_t *params = json_array(), *restr = json_array();
	for (size_t t = 0; t < s->space->n_targets; t++) {
		const struct spec_target *g = &s->space->targets[t];
		for (size_t i = 0; i < g->space.n_params; i++) {
			const struct agent_param *p = &g->space.params[i];
			json_t *o = json_pack("{s:s,s:s,s:O}", "name", p->name, "kind", agent_param_kind_names[p->kind],
					      "values", p->values);
			json_t *b = g->table ? json_deep_copy(g->table) : NULL;
			if (b) {
				json_object_set_new(b, "key", json_string(g->key));
				json_object_set_new(b, "field", json_string(g->fields[i]));
			} else if (g->kind == SPEC_BIND_TEMPLATE) {
				b = json_pack("{s:s,s:s}", "source", g->source, "target", g->target);
				if (g->build)
					json_object_set(b, "build", g->build);
			} else {
				b = json_string(g->name);
			}
			json_object_set_new(o, bind_keys[g->kind], b);
			json_array_append_new(params, o);
		}
		for (size_t r = 0; r < g->space.n_restr; r++)
			json_array_append_new(restr, json_string(g->space.restr_text[r]));
	}
	return json_pack("{s:o,s:o}", "parameters", params, "restrictions", restr);
}

/* ---- points to variants ---- */

/* A value as text: a string bare, anything else as JSON. */
static char *value_text(json_t *v)
{
	return json_is_string(v) ? xstrdup(json_string_value(v)) : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* The variant's name: "MC:64+NC:128", other characters as _. */
static char *point_name(const struct agent_space *sp, uint64_t code)
{
	struct rt_sb sb = RT_SB_INIT;
	json_t *o = agent_point_json(sp, code);
	for (size_t i = 0; i < sp->n_params; i++) {
		char *t = value_text(json_object_get(o, sp->params[i].name));
		rt_sb_addf(&sb, "%s%s:", i ? "+" : "", sp->params[i].name);
		for (char *c = t; *c; c++)
			rt_sb_addc(&sb, spec_ident_ok((char[]){ *c, 0 }, "-.") ? *c : '_');
		free(t);
	}
	json_decref(o);
	return rt_sb_detach(&sb, NULL);
}

/* Render the template of target g with the point's values into a file of
 * its own under <workdir>/.ratchet/space/; *out: its path. */
static int render(const struct spec *s, const struct spec_target *g, json_t *point, char **out,
		  struct rt_sb *err)
{
	char *text;
	size_t len;
	int rc = rt_read_file(g->source, &text, &len, err);
	if (rc)
		return rc;
	struct rt_sb sb = RT_SB_INIT;
	for (const char *c = text; *c;) {
		const char *open = strstr(c, "{{"), *close = open ? strstr(open, "}}") : NULL;
		if (!close) {
			rt_sb_adds(&sb, c);
			break;
		}
		char *name = xstrndup(open + 2, (size_t)(close - open - 2));
		json_t *v = json_object_get(point, name);
		rt_sb_add(&sb, c, (size_t)(open - c));
		char *t = v ? value_text(v) : xstrndup(open, (size_t)(close - open + 2));
		rt_sb_adds(&sb, t);
		free(t);
		free(name);
		c = close + 2;
	}
	free(text);
	char sha[65];
	rt_sha256_hex(sb.buf, sb.len, sha);
	const char *base = strrchr(g->target, '/');
	char *dir = xasprintf("%s/.ratchet/space", s->workdir);
	*out = xasprintf("%s/%.12s-%s", dir, sha, base ? base + 1 : g->target);
	rc = rt_mkdirs(dir, err);
	if (!rc)
		rc = rt_write_file_atomic(*out, sb.buf, sb.len, 0644, err);
	free(dir);
	rt_sb_release(&sb);
	return rc;
}

int spec_space_variant(const struct spec *s, size_t t, uint64_t code, json_t **variant, struct rt_sb *err)
{
	const struct spec_target *g = &s->space->targets[t];
	json_t *point = agent_point_json(&g->space, code);
	char *name = point_name(&g->space, code);
	json_t *v = json_pack("{s:s%,s:s}", "name", name, strlen(name), "description", g->label);
	int rc = 0;
	if (g->kind == SPEC_BIND_TABLE) {
		json_t *fields = json_object(), *tbl = json_deep_copy(g->table);
		for (size_t i = 0; i < g->space.n_params; i++)
			json_object_set(fields, g->fields[i], json_object_get(point, g->space.params[i].name));
		json_object_set_new(tbl, "set", json_pack("{s:o}", g->key, fields));
		json_object_set_new(v, "table", tbl);
	} else if (g->kind == SPEC_BIND_FLAG) {
		char *val = value_text(json_object_get(point, g->space.params[0].name));
		json_object_set_new(v, "flag", json_pack("[ss]", g->name, val));
		free(val);
	} else if (g->kind == SPEC_BIND_ENV) {
		char *val = value_text(json_object_get(point, g->space.params[0].name));
		json_object_set_new(v, "env", json_pack("{ss}", g->name, val));
		free(val);
	} else {
		char *src = NULL;
		rc = render(s, g, point, &src, err);
		if (!rc)
			json_object_set_new(v, "file", json_pack("{s:s,s:s}", "target", g->target, "source", src));
		if (!rc && g->build)
			json_object_set(v, "build", g->build);
		free(src);
	}
	free(name);
	json_decref(point);
	if (rc)
		json_decref(v);
	*variant = rc ? NULL : v;
	return rc;
}

int spec_variant_from_json(const struct spec *s, json_t *variant, struct var_def *out, struct rt_sb *err)
{
	/* JSON is YAML: the text goes through libyaml as a spec would. */
	char *text = json_dumps(variant, JSON_COMPACT);
	yaml_parser_t pr;
	yaml_document_t doc;
	struct spec tmp = *s; /* the engine, benchmarks and workdir the parser checks against */
	struct var_def one[1];
	memset(one, 0, sizeof(one));
	tmp.variants = one;
	tmp.n_variants = 0;
	struct spec_ld ld = { .file = "(generated variant)", .doc = &doc, .err = err, .s = &tmp };
	yaml_parser_initialize(&pr);
	yaml_parser_set_input_string(&pr, (const unsigned char *)text, strlen(text));
	int rc = RT_EUSAGE;
	if (yaml_parser_load(&pr, &doc)) {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (root && root->type == YAML_MAPPING_NODE) {
			spec_parse_variant_item(&ld, root, "variant", &tmp);
			rc = ld.nerr ? RT_EUSAGE : 0;
		}
		spec_names_release(&ld);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&pr);
	if (rc && !ld.nerr)
		rt_errf(err, rc, "generated variant %s is not valid YAML", text);
	free(text);
	if (rc)
		spec_variant_release(&one[0]);
	else
		*out = one[0];
	return rc;
}
