/*
 * The normalized spec: the field tables of spec_fields.c turned back into a
 * JSON tree (every default filled in, durations in seconds, percentages as
 * fractions, paths absolute), and that tree printed as block YAML that
 * spec_load_text() reads back to the same structs. `ratchet check` prints
 * one or the other.
 */
#include "runner/spec/spec_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whole numbers as JSON integers, so 300 seconds prints as 300. */
static json_t *num(double x)
{
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return json_real(x);
}

/* Shortest %g text that reads back as x. */
void spec_shortest(double x, char *out, size_t n)
{
	if (x == floor(x) && fabs(x) < 1e15) {
		snprintf(out, n, "%.0f", x);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(out, n, "%.*g", p, x);
		if (strtod(out, NULL) == x)
			return;
	}
}

json_t *spec_fields_json(const void *base, const struct spec_field *tbl)
{
	json_t *o = json_object();
	for (const struct spec_field *f = tbl; f->key; f++) {
		const void *p = (const char *)base + f->off;
		bool omit0 = f->flags & FL_OMIT0;
		json_t *v = NULL;
		switch (f->type) {
		case SF_STR: {
			const char *s = *(char *const *)p;
			v = s ? json_string(s) : (f->flags & FL_NULLOK) ? json_null() : NULL;
			break;
		}
		case SF_INT:
			if (!omit0 || *(const int *)p)
				v = json_integer(*(const int *)p);
			break;
		case SF_UINT:
			if (!omit0 || *(const unsigned *)p)
				v = json_integer(*(const unsigned *)p);
			break;
		case SF_U64: {
			uint64_t x = *(const uint64_t *)p;
			if (omit0 && !x)
				break;
			if (x <= (uint64_t)INT64_MAX) {
				v = json_integer((json_int_t)x);
			} else {
				char buf[32];
				snprintf(buf, sizeof(buf), "%llu", (unsigned long long)x);
				v = json_string(buf);
			}
			break;
		}
		case SF_DBL:
		case SF_DUR:
			if (!omit0 || *(const double *)p != 0)
				v = num(*(const double *)p);
			break;
		case SF_FRAC: {
			double x = *(const double *)p;
			if (omit0 && x == 0)
				break;
			if (x <= 1) {
				v = num(x);
			} else {
				char buf[40];
				spec_shortest(x * 100, buf, sizeof(buf) - 1);
				strcat(buf, "%");
				v = json_string(buf);
			}
			break;
		}
		case SF_BOOL:
			v = json_boolean(*(const bool *)p);
			break;
		case SF_SIZE:
			v = json_integer((json_int_t) * (const size_t *)p);
			break;
		case SF_ENUM:
			if (!omit0 || *(const int *)p)
				v = json_string(f->names[*(const int *)p]);
			break;
		case SF_STRV: {
			const struct rt_strv *sv = p;
			if (omit0 && !sv->n)
				break;
			v = json_array();
			for (size_t i = 0; i < sv->n; i++)
				json_array_append_new(v, json_string(sv->v[i]));
			break;
		}
		case SF_ENVV: {
			const struct rt_envv *e = p;
			if (!e->n)
				break;
			v = json_object();
			for (size_t i = 0; i < e->n; i++)
				json_object_set_new(v, e->v[i].name,
						    e->v[i].value ? json_string(e->v[i].value) : json_null());
			break;
		}
		case SF_DIM3U: {
			const unsigned *d = p;
			if (omit0 && !d[0])
				break;
			v = json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
			break;
		}
		case SF_DIM3L: {
			const uint64_t *d = p;
			if (omit0 && !d[0])
				break;
			v = json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
			break;
		}
		case SF_DBLV:
		case SF_U64V: {
			const void *arr = *(void *const *)p;
			size_t n = *(const size_t *)((const char *)base + f->off2);
			if (omit0 && !n)
				break;
			v = json_array();
			for (size_t i = 0; i < n; i++)
				json_array_append_new(v, f->type == SF_DBLV
								 ? num(((const double *)arr)[i])
								 : json_integer((json_int_t)((const uint64_t *)arr)[i]));
			break;
		}
		case SF_SUB:
			v = spec_fields_json(base, f->sub);
			if (!json_object_size(v)) {
				json_decref(v);
				v = NULL;
			}
			break;
		case SF_CUSTOM:
			v = f->dump ? f->dump(base, f) : NULL;
			break;
		case SF_END:
			break;
		}
		if (v)
			json_object_set_new(o, f->key, v);
	}
	return o;
}

json_t *spec_to_json(const struct spec *s)
{
	return spec_fields_json(s, spec_top_fields);
}

/* ---- JSON tree to block YAML ---- */

static bool plain_ok(const char *s, bool flow)
{
	size_t n = strlen(s);
	if (!n || n > 200)
		return false;
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return false;
	unsigned char c0 = (unsigned char)s[0];
	bool start = (c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_' || c0 == '/' ||
		     (c0 == '.' && s[1] == '/') ||
		     (c0 == '-' && s[1] == '-' && ((s[2] >= 'a' && s[2] <= 'z') || (s[2] >= 'A' && s[2] <= 'Z')));
	if (!start)
		return false;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			continue;
		if (strchr("_./+=@%-", c))
			continue;
		if (c == ':' && !flow && p[1] && p[1] != ' ')
			continue;
		return false;
	}
	return true;
}

static void y_string(const char *s, bool flow, struct rt_sb *out)
{
	if (plain_ok(s, flow)) {
		rt_sb_adds(out, s);
		return;
	}
	rt_sb_addc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			rt_sb_adds(out, "\\\"");
			break;
		case '\\':
			rt_sb_adds(out, "\\\\");
			break;
		case '\n':
			rt_sb_adds(out, "\\n");
			break;
		case '\t':
			rt_sb_adds(out, "\\t");
			break;
		case '\r':
			rt_sb_adds(out, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				rt_sb_addf(out, "\\x%02x", *p);
			else
				rt_sb_addc(out, (char)*p);
		}
	}
	rt_sb_addc(out, '"');
}

static void y_scalar(const json_t *v, bool flow, struct rt_sb *out)
{
	char buf[48];
	switch (json_typeof(v)) {
	case JSON_STRING:
		y_string(json_string_value(v), flow, out);
		break;
	case JSON_INTEGER:
		rt_sb_addf(out, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		spec_shortest(json_real_value(v), buf, sizeof(buf) - 3);
		if (!strpbrk(buf, ".e"))
			strcat(buf, ".0");
		rt_sb_adds(out, buf);
		break;
	case JSON_TRUE:
		rt_sb_adds(out, "true");
		break;
	case JSON_FALSE:
		rt_sb_adds(out, "false");
		break;
	default:
		rt_sb_adds(out, "null");
	}
}

static void indent(struct rt_sb *out, int n)
{
	for (int i = 0; i < n; i++)
		rt_sb_addc(out, ' ');
}

/* A short list of scalars prints as [a, b, c]. */
static bool flow_list(const json_t *a, struct rt_sb *out)
{
	size_t i;
	json_t *e;
	struct rt_sb t = RT_SB_INIT;
	json_array_foreach(a, i, e) {
		if (json_is_object(e) || json_is_array(e)) {
			rt_sb_release(&t);
			return false;
		}
		rt_sb_adds(&t, i ? ", " : "[");
		y_scalar(e, true, &t);
	}
	rt_sb_addc(&t, ']');
	bool ok = t.len <= 100 && !strchr(t.buf, '\n');
	if (ok)
		rt_sb_add(out, t.buf, t.len);
	rt_sb_release(&t);
	return ok;
}

static void emit_map(const json_t *o, int ind, bool first_inline, struct rt_sb *out);
static void emit_seq(const json_t *a, int ind, struct rt_sb *out);

/* After "key:" or "-". */
static void emit_after(const json_t *v, int ind, struct rt_sb *out)
{
	if (json_is_object(v) && json_object_size(v)) {
		rt_sb_addc(out, '\n');
		emit_map(v, ind + 2, false, out);
	} else if (json_is_array(v) && json_array_size(v)) {
		rt_sb_addc(out, ' ');
		if (flow_list(v, out)) {
			rt_sb_addc(out, '\n');
			return;
		}
		out->len--; /* drop the space */
		out->buf[out->len] = '\0';
		rt_sb_addc(out, '\n');
		emit_seq(v, ind + 2, out);
	} else if (json_is_object(v)) {
		rt_sb_adds(out, " {}\n");
	} else if (json_is_array(v)) {
		rt_sb_adds(out, " []\n");
	} else {
		rt_sb_addc(out, ' ');
		y_scalar(v, false, out);
		rt_sb_addc(out, '\n');
	}
}

static void emit_map(const json_t *o, int ind, bool first_inline, struct rt_sb *out)
{
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)o, k, v) {
		if (!(first && first_inline))
			indent(out, ind);
		first = false;
		y_string(k, false, out);
		rt_sb_addc(out, ':');
		emit_after(v, ind, out);
	}
}

static void emit_seq(const json_t *a, int ind, struct rt_sb *out)
{
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) {
		indent(out, ind);
		rt_sb_addc(out, '-');
		if (json_is_object(e) && json_object_size(e)) {
			rt_sb_addc(out, ' ');
			emit_map(e, ind + 2, true, out);
		} else {
			emit_after(e, ind, out);
		}
	}
}

void spec_yaml_json(const json_t *v, struct rt_sb *out)
{
	if (json_is_object(v))
		emit_map(v, 0, false, out);
	else
		emit_after(v, 0, out);
}

void spec_dump(const struct spec *s, struct rt_sb *out)
{
	json_t *j = spec_to_json(s);
	spec_yaml_json(j, out);
	json_decref(j);
}
