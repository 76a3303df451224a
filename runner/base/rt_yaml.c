/*
 * YAML <-> JSON through libyaml and jansson (see rt_yaml.h for the scalar
 * typing rule when reading and the quoting rule when writing).
 */
#include "runner/base/rt_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 64

/* ---- reading ---- */

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static bool is_plain(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool in_words(const char *s, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, words[i]))
			return true;
	return false;
}

bool rt_yaml_is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	return is_plain(n) && in_words(scalar_text(n), nulls, RT_ARRAY_SIZE(nulls));
}

json_t *rt_yaml_scalar_json(const yaml_node_t *n)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	const char *s = scalar_text(n);
	if (!is_plain(n))
		return json_stringn(s, n->data.scalar.length);
	if (rt_yaml_is_null(n))
		return json_null();
	if (in_words(s, yes, RT_ARRAY_SIZE(yes)))
		return json_true();
	if (in_words(s, no, RT_ARRAY_SIZE(no)))
		return json_false();
	double d;
	if (!rt_parse_number(s, &d)) {
		if (!strpbrk(s, ".eE")) {
			errno = 0;
			long long i = strtoll(s, NULL, 10);
			if (!errno)
				return json_integer((json_int_t)i);
		}
		return json_real(d);
	}
	return json_stringn(s, n->data.scalar.length);
}

static json_t *fail(struct rt_yaml_err *err, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static json_t *fail(struct rt_yaml_err *err, const yaml_node_t *at, const char *fmt, ...)
{
	va_list ap;
	err->at = at;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return NULL;
}

static json_t *to_json(yaml_document_t *doc, yaml_node_t *n, int depth, struct rt_yaml_err *err);

static json_t *seq_json(yaml_document_t *doc, yaml_node_t *n, int depth, struct rt_yaml_err *err)
{
	json_t *a = json_array();
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		json_t *e = to_json(doc, yaml_document_get_node(doc, *i), depth + 1, err);
		if (!e) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, e);
	}
	return a;
}

/* The key node of pair p, or an error when it is not a scalar or repeats an
 * earlier key of the same mapping. */
static yaml_node_t *map_key(yaml_document_t *doc, yaml_node_t *map, yaml_node_pair_t *p,
			    struct rt_yaml_err *err)
{
	yaml_node_t *k = yaml_document_get_node(doc, p->key);
	if (!k || k->type != YAML_SCALAR_NODE) {
		fail(err, k ? k : map, "keys must be strings");
		return NULL;
	}
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
		yaml_node_t *qk = yaml_document_get_node(doc, q->key);
		if (qk->type == YAML_SCALAR_NODE && !strcmp(scalar_text(qk), scalar_text(k))) {
			fail(err, k, "duplicate key '%.60s' (first at %d:%d)", scalar_text(k),
			     (int)qk->start_mark.line + 1, (int)qk->start_mark.column + 1);
			return NULL;
		}
	}
	return k;
}

static json_t *map_json(yaml_document_t *doc, yaml_node_t *n, int depth, struct rt_yaml_err *err)
{
	json_t *o = json_object();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = map_key(doc, n, p, err);
		json_t *e = k ? to_json(doc, yaml_document_get_node(doc, p->value), depth + 1, err) : NULL;
		if (!e) {
			json_decref(o);
			return NULL;
		}
		if (json_object_set_new(o, scalar_text(k), e)) {
			json_decref(o);
			return fail(err, k, "not valid UTF-8");
		}
	}
	return o;
}

static json_t *to_json(yaml_document_t *doc, yaml_node_t *n, int depth, struct rt_yaml_err *err)
{
	if (!n)
		return fail(err, NULL, "missing node");
	if (depth > MAX_DEPTH)
		return fail(err, n, "nested too deep");
	switch (n->type) {
	case YAML_SCALAR_NODE: {
		json_t *j = rt_yaml_scalar_json(n);
		return j ? j : fail(err, n, "not valid UTF-8");
	}
	case YAML_SEQUENCE_NODE:
		return seq_json(doc, n, depth, err);
	case YAML_MAPPING_NODE:
		return map_json(doc, n, depth, err);
	default:
		return fail(err, n, "empty node");
	}
}

json_t *rt_yaml_to_json(yaml_document_t *doc, yaml_node_t *n, struct rt_yaml_err *err)
{
	struct rt_yaml_err tmp;
	return to_json(doc, n, 0, err ? err : &tmp);
}

/* ---- writing ---- */

void rt_yaml_real_text(double x, char *out, size_t n)
{
	if (x > -1e15 && x < 1e15 && x == (double)(long long)x) { /* the cast only in range */
		snprintf(out, n, "%.0f", x);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(out, n, "%.*g", p, x);
		if (strtod(out, NULL) == x)
			return;
	}
}

/* Could a YAML 1.1 or 1.2 reader take the plain scalar s for a non-string? */
static bool looks_typed(const char *s)
{
	static const char *const words[] = { "", "~", "null", "true", "false", "yes", "no",
					     "on", "off", "y", "n" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return true;
	const char *p = s + (*s == '+' || *s == '-');
	if ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))
		return true; /* numbers in any base, dates, 1:30 sexagesimals */
	return !strcasecmp(p, ".inf") || !strcasecmp(p, ".nan");
}

static int add_scalar(yaml_document_t *doc, const char *s, yaml_scalar_style_t style)
{
	return yaml_document_add_scalar(doc, NULL, (yaml_char_t *)s, (int)strlen(s), style);
}

/* Text of a non-string scalar. */
static void scalar_of(const json_t *v, char *buf, size_t n)
{
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		rt_yaml_real_text(json_real_value(v), buf, n - 2);
		if (!strpbrk(buf, ".eE"))
			strcat(buf, ".0");
		break;
	case JSON_TRUE:
		snprintf(buf, n, "true");
		break;
	case JSON_FALSE:
		snprintf(buf, n, "false");
		break;
	default:
		snprintf(buf, n, "null");
	}
}

/* A list of scalars short enough for one flow line. */
static bool flow_list(const json_t *a)
{
	size_t i, width = 2;
	json_t *e;
	json_array_foreach(a, i, e) {
		if (json_is_object(e) || json_is_array(e))
			return false;
		width += 2 + (json_is_string(e) ? json_string_length(e) + 2 : 24);
	}
	return json_array_size(a) && width <= 80;
}

int rt_yaml_add_json(yaml_document_t *doc, const json_t *v)
{
	if (json_is_object(v)) {
		int m = yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			int kn = add_scalar(doc, k, looks_typed(k) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
								 : YAML_ANY_SCALAR_STYLE);
			int vn = rt_yaml_add_json(doc, x);
			if (!m || !kn || !vn || !yaml_document_append_mapping_pair(doc, m, kn, vn))
				return 0;
		}
		return m;
	}
	if (json_is_array(v)) {
		int s = yaml_document_add_sequence(doc, NULL, flow_list(v) ? YAML_FLOW_SEQUENCE_STYLE
									    : YAML_BLOCK_SEQUENCE_STYLE);
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			int xn = rt_yaml_add_json(doc, x);
			if (!s || !xn || !yaml_document_append_sequence_item(doc, s, xn))
				return 0;
		}
		return s;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		return add_scalar(doc, s, looks_typed(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
							 : YAML_ANY_SCALAR_STYLE);
	}
	char buf[48];
	scalar_of(v, buf, sizeof(buf));
	return add_scalar(doc, buf, YAML_PLAIN_SCALAR_STYLE);
}

static int write_sb(void *data, unsigned char *buf, size_t n)
{
	return rt_sb_add(data, buf, n) == 0;
}

int rt_yaml_emit(yaml_document_t *doc, struct rt_sb *out, struct rt_sb *err)
{
	yaml_emitter_t em;
	int rc = 0;
	yaml_emitter_initialize(&em);
	yaml_emitter_set_output(&em, write_sb, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_indent(&em, 2);
	if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, doc) || !yaml_emitter_close(&em))
		rc = rt_errf(err, RT_EIO, "cannot emit YAML: %s", em.problem ? em.problem : "error");
	yaml_emitter_delete(&em);
	yaml_document_delete(doc); /* a no-op when yaml_emitter_dump consumed it */
	return rc;
}

json_t *rt_yaml_text_json(const char *name, const char *text, size_t len, struct rt_sb *err)
{
	yaml_parser_t p;
	yaml_document_t doc;
	json_t *out = NULL;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (yaml_parser_load(&p, &doc)) {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		struct rt_yaml_err ye = { 0 };
		out = root ? rt_yaml_to_json(&doc, root, &ye) : NULL;
		if (!out)
			rt_errf(err, RT_EPARSE, "%s:%lu:%lu: %s", name,
				ye.at ? (unsigned long)ye.at->start_mark.line + 1 : 1UL,
				ye.at ? (unsigned long)ye.at->start_mark.column + 1 : 1UL,
				root ? ye.msg : "empty document");
		yaml_document_delete(&doc);
	} else {
		rt_errf(err, RT_EPARSE, "%s:%lu:%lu: %s", name, (unsigned long)p.problem_mark.line + 1,
			(unsigned long)p.problem_mark.column + 1, p.problem ? p.problem : "not YAML");
	}
	yaml_parser_delete(&p);
	return out;
}

int rt_yaml_from_json(const json_t *v, struct rt_sb *out, struct rt_sb *err)
{
	yaml_document_t doc;
	if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1))
		return rt_errf(err, RT_EIO, "cannot emit YAML: out of memory");
	if (!rt_yaml_add_json(&doc, v)) {
		yaml_document_delete(&doc);
		return rt_errf(err, RT_EIO, "cannot emit YAML: out of memory");
	}
	return rt_yaml_emit(&doc, out, err);
}
