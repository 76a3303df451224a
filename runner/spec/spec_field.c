/*
 * The generic field-table machinery of the spec loader: unknown and
 * duplicate keys (with did-you-mean), one parser per field type (strings,
 * whole numbers, durations, percentages, sizes, booleans, enums, argv and
 * environment lists, dimensions, number lists, nested tables), bounds,
 * placeholders and regexes. Section files (spec_*.c) describe their keys
 * with tables of struct spec_field and call spec_parse_fields().
 */
#define _GNU_SOURCE /* tdestroy */
#include "runner/spec/spec_int.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scalar conversions ---- */

static bool parse_frac(const char *s, double *out)
{
	double v;
	const char *u;
	if (rt_split_unit(s, &v, &u))
		return false;
	if (!strcmp(u, "%")) {
		*out = v / 100.0;
		return true;
	}
	if (!*u && v <= 1.0) {
		*out = v;
		return true;
	}
	return false;
}

bool spec_parse_size(const char *s, size_t *out)
{
	double v;
	const char *u;
	if (rt_split_unit(s, &v, &u) || v < 0)
		return false;
	static const struct {
		const char *unit;
		double mul;
	} units[] = { { "", 1 }, { "B", 1 }, { "K", 1024 }, { "KiB", 1024 }, { "KB", 1e3 },
		      { "M", 1048576 }, { "MiB", 1048576 }, { "MB", 1e6 },
		      { "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1e9 } };
	for (size_t i = 0; i < RT_ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i].unit)) {
			double b = v * units[i].mul;
			if (b > 1e15)
				return false;
			*out = (size_t)b;
			return true;
		}
	return false;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "on", "On" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "off", "Off" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(yes); i++)
		if (!strcmp(s, yes[i])) {
			*out = true;
			return true;
		}
	for (size_t i = 0; i < RT_ARRAY_SIZE(no); i++)
		if (!strcmp(s, no[i])) {
			*out = false;
			return true;
		}
	return false;
}

/* ---- placeholders, regexes, names ---- */

static const char *const placeholders[] = { "port", "workdir", "nonce", "iteration" };

bool spec_check_tmpl(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *s)
{
	bool ok = true;
	for (const char *p = s; (p = strchr(p, '{')); p++) {
		const char *q = p + 1;
		if (!isalpha((unsigned char)*q) && *q != '_')
			continue;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		if (*q != '}')
			continue;
		char *name = xstrndup(p + 1, (size_t)(q - p - 1));
		bool known = false;
		for (size_t i = 0; i < RT_ARRAY_SIZE(placeholders); i++)
			known |= !strcmp(name, placeholders[i]);
		if (!known) {
			const char *dym = rt_did_you_mean(name, placeholders, RT_ARRAY_SIZE(placeholders));
			if (dym)
				spec_lerr(ld, at, path, "unknown placeholder '{%s}' (did you mean '{%s}'?)",
					  name, dym);
			else
				spec_lerr(ld, at, path,
					  "unknown placeholder '{%s}' (known: {port} {workdir} {nonce} {iteration})",
					  name);
			ok = false;
		}
		free(name);
	}
	return ok;
}

bool spec_ident_ok(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && !strchr(extra, *p))
			return false;
	return true;
}

bool spec_check_regex(struct spec_ld *ld, yaml_node_t *at, const char *path, const char *re)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (c) {
		pcre2_code_free(c);
		return true;
	}
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(code, msg, sizeof(msg));
	struct rt_pos p = spec_node_pos(at);
	bool quoted = at->type == YAML_SCALAR_NODE && at->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	if (at->start_mark.line == at->end_mark.line)
		p.col += (int)off + (quoted ? 1 : 0);
	spec_lerr_at(ld, p, path, "bad regex at offset %zu: %s", (size_t)off, (const char *)msg);
	return false;
}

/* ---- generic fields ---- */

bool spec_in_table(const struct spec_field *tbl, const char *key)
{
	for (const struct spec_field *f = tbl; f && f->key; f++)
		if (!strcmp(f->key, key))
			return true;
	return false;
}

static bool in_list(const char *const *list, const char *key)
{
	for (const char *const *k = list; k && *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

/* A key of a mapping and where it is. */
struct key_at {
	const char *k; /* the key */
	size_t i;      /* its pair */
};

static int by_key_then_pair(const void *x, const void *y)
{
	const struct key_at *a = x, *b = y;
	int c = strcmp(a->k, b->k);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* For each pair of map: the key node of the first pair with the same key
 * when this pair repeats it, else NULL. Sorting the keys makes it n log n, so
 * a mapping of 100k keys is checked in well under a second. The caller frees
 * the array. */
static yaml_node_t **earlier_keys(struct spec_ld *ld, yaml_node_t *map)
{
	size_t n = spec_map_len(map), m = 0;
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	yaml_node_t **first = xcalloc(n + 1, sizeof(*first));
	struct key_at *keys = xcalloc(n + 1, sizeof(*keys));
	for (size_t i = 0; i < n; i++) {
		const char *k = spec_scalar(spec_node(ld, pairs[i].key));
		if (k)
			keys[m++] = (struct key_at){ k, i };
	}
	qsort(keys, m, sizeof(*keys), by_key_then_pair);
	for (size_t a = 0, b; a < m; a = b)
		for (b = a + 1; b < m && !strcmp(keys[b].k, keys[a].k); b++)
			first[keys[b].i] = spec_node(ld, pairs[keys[a].i].key);
	free(keys);
	return first;
}

static void unknown_key(struct spec_ld *ld, yaml_node_t *kn, const char *path, const char *k,
			const struct spec_field *tbl, const char *const *extra)
{
	size_t n = 0;
	for (const struct spec_field *f = tbl; f && f->key; f++)
		n++;
	for (const char *const *e = extra; e && *e; e++)
		n++;
	const char **cands = xcalloc(n + 1, sizeof(*cands));
	n = 0;
	for (const struct spec_field *f = tbl; f && f->key; f++)
		cands[n++] = f->key;
	for (const char *const *e = extra; e && *e; e++)
		cands[n++] = *e;
	const char *dym = rt_did_you_mean(k, cands, n);
	if (dym)
		spec_lerr(ld, kn, path, "unknown key '%s' (did you mean '%s'?)", k, dym);
	else
		spec_lerr(ld, kn, path, "unknown key '%s'", k);
	free(cands);
}

/* Report unknown and duplicate keys of a mapping (see spec_check_keys); returns
 * earlier_keys(), which the caller frees. */
static yaml_node_t **check_keys(struct spec_ld *ld, yaml_node_t *map, const char *path,
				const struct spec_field *tbl, const char *const *extra)
{
	yaml_node_t **earlier = earlier_keys(ld, map);
	for (size_t i = 0; i < spec_map_len(map); i++) {
		yaml_node_pair_t *p = &map->data.mapping.pairs.start[i];
		yaml_node_t *kn = spec_node(ld, p->key), *first = earlier[i];
		const char *k = spec_scalar(kn);
		if (!k) {
			spec_lerr(ld, kn, path, "keys must be strings");
		} else if (first) {
			spec_lerr(ld, kn, path, "duplicate key '%s' (first at %d:%d)", k,
				  (int)first->start_mark.line + 1, (int)first->start_mark.column + 1);
		} else if ((tbl || extra) && !spec_in_table(tbl, k) && !in_list(extra, k)) {
			unknown_key(ld, kn, path, k, tbl, extra);
		}
	}
	return earlier;
}

/* Report unknown and duplicate keys of a mapping; with neither tbl nor extra,
 * every key is allowed and only duplicates are reported. */
void spec_check_keys(struct spec_ld *ld, yaml_node_t *map, const char *path,
		     const struct spec_field *tbl, const char *const *extra)
{
	free(check_keys(ld, map, path, tbl, extra));
}

static bool bounds_ok(struct spec_ld *ld, yaml_node_t *v, const char *path,
		      const struct spec_field *f, double x, const char *shown)
{
	if ((f->flags & FL_LO) && !(x >= f->lo))
		spec_lerr(ld, v, path, "%s is below the minimum %g", shown, f->lo);
	else if ((f->flags & FL_LOX) && !(x > f->lo))
		spec_lerr(ld, v, path, "%s must be above %g", shown, f->lo);
	else if ((f->flags & FL_HI) && !(x <= f->hi))
		spec_lerr(ld, v, path, "%s is above the maximum %g", shown, f->hi);
	else if ((f->flags & FL_HIX) && !(x < f->hi))
		spec_lerr(ld, v, path, "%s must be below %g", shown, f->hi);
	else
		return true;
	return false;
}

/* A scalar, or an error naming what was expected. */
const char *spec_want_scalar(struct spec_ld *ld, yaml_node_t *v, const char *path,
			     const char *what)
{
	char buf[80];
	if (v->type != YAML_SCALAR_NODE || spec_is_null(v)) {
		spec_lerr(ld, v, path, "expected %s, got %s", what, spec_got(v, buf, sizeof(buf)));
		return NULL;
	}
	return spec_scalar(v);
}

static char *parse_string(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags)
{
	const char *s = spec_want_scalar(ld, v, path, "a string");
	if (!s)
		return NULL;
	if ((flags & (FL_TMPL | FL_PATH)) && !spec_check_tmpl(ld, v, path, s))
		return NULL;
	if ((flags & FL_PATH) && !*s) {
		spec_lerr(ld, v, path, "empty path");
		return NULL;
	}
	return (flags & FL_PATH) ? spec_resolve(ld->s, s) : xstrdup(s);
}

void spec_parse_strv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_strv *out)
{
	char buf[80];
	if (v->type != YAML_SEQUENCE_NODE) {
		spec_lerr(ld, v, path, "expected a list, got %s", spec_got(v, buf, sizeof(buf)));
		return;
	}
	rt_strv_release(out);
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	out->v = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = spec_node(ld, v->data.sequence.items.start[i]);
		char *ip = spec_path_index(path, i);
		const char *s = spec_want_scalar(ld, it, ip, "a string");
		if (s && (!(flags & FL_TMPL) || spec_check_tmpl(ld, it, ip, s)))
			out->v[out->n++] = xstrdup(s);
		free(ip);
	}
}

static bool env_name_ok(const char *k)
{
	if (!isalpha((unsigned char)*k) && *k != '_')
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

size_t spec_map_len(const yaml_node_t *map)
{
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

void spec_map_each(struct spec_ld *ld, yaml_node_t *map, const char *path, spec_entry_fn fn,
		   void *arg)
{
	/* duplicates only: every name is allowed */
	yaml_node_t **earlier = check_keys(ld, map, path, NULL, NULL);
	for (size_t i = 0; i < spec_map_len(map); i++) {
		yaml_node_pair_t *p = &map->data.mapping.pairs.start[i];
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_scalar(kn);
		if (!k || earlier[i])
			continue; /* reported by check_keys */
		char *kp = spec_path_join(path, k);
		fn(ld, kn, k, vn, path, kp, arg);
		free(kp);
	}
	free(earlier);
}

void spec_seq_each(struct spec_ld *ld, yaml_node_t *seq, const char *path, spec_item_fn fn,
		   void *arg)
{
	for (size_t i = 0; i < spec_seq_len(seq); i++) {
		yaml_node_t *it = spec_seq_item(ld, seq, i);
		char *ip = spec_path_index(path, i);
		if (spec_want_map(ld, it, ip))
			fn(ld, it, ip, arg);
		free(ip);
	}
}

/* Where environment entries go, and whether placeholders are allowed. */
struct env_dst {
	struct rt_envv *out; /* the list being filled */
	unsigned flags;      /* FL_TMPL or 0 */
};

static void parse_one_env(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			  const char *path, const char *kp, void *arg)
{
	struct env_dst *d = arg;
	const char *s = NULL;
	if (!env_name_ok(k)) {
		spec_lerr(ld, kn, path, "'%s' is not a valid environment variable name", k);
		return;
	}
	if (!spec_is_null(vn)) {
		s = spec_want_scalar(ld, vn, kp, "a string or null");
		if (!s || ((d->flags & FL_TMPL) && !spec_check_tmpl(ld, vn, kp, s)))
			return;
	}
	rt_secret_add_env(k, s); /* HF_TOKEN: its value is redacted wherever it is quoted */
	d->out->v[d->out->n].name = xstrdup(k);
	d->out->v[d->out->n++].value = xstrdup(s); /* NULL: unset it */
}

void spec_parse_envv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_envv *out)
{
	char buf[80];
	if (v->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, v, path, "expected a mapping of NAME: value, got %s",
			  spec_got(v, buf, sizeof(buf)));
		return;
	}
	struct env_dst d = { out, flags };
	out->v = xcalloc(spec_map_len(v) + 1, sizeof(*out->v));
	spec_map_each(ld, v, path, parse_one_env, &d);
}

/* ---- one parser per field type (struct spec_field .type) ---- */

#define DST(T) ((T *)((char *)base + f->off))

static void parse_str(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	char **d = DST(char *);
	char *str = NULL;
	if (!((f->flags & FL_NULLOK) && spec_is_null(v)) && !(str = parse_string(ld, v, path, f->flags)))
		return;
	free(*d);
	*d = str;
}

/* A whole number within the field's bounds and [lo, hi]. */
static bool whole(struct spec_ld *ld, yaml_node_t *v, const char *path, const struct spec_field *f,
		  double lo, double hi, double *x, const char **text)
{
	const char *s = spec_want_scalar(ld, v, path, "a whole number");
	if (!s)
		return false;
	if (rt_parse_number(s, x) || *x != floor(*x)) {
		spec_lerr(ld, v, path, "expected a whole number, got '%s'", s);
		return false;
	}
	if (!bounds_ok(ld, v, path, f, *x, s))
		return false;
	if (*x < lo || *x > hi) {
		spec_lerr(ld, v, path, "'%s' is out of range", s);
		return false;
	}
	*text = s;
	return true;
}

static void parse_int(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	double x;
	const char *s;
	if (whole(ld, v, path, f, -2147483648.0, 2147483647.0, &x, &s))
		*DST(int) = (int)x;
}

static void parse_uint(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	double x;
	const char *s;
	if (whole(ld, v, path, f, 0, 4294967295.0, &x, &s))
		*DST(unsigned) = (unsigned)x;
}

static void parse_u64(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	double x;
	const char *s;
	/* parse exactly: doubles lose digits above 2^53 */
	if (whole(ld, v, path, f, 0, 18446744073709549568.0, &x, &s))
		*DST(uint64_t) = strtoull(s[0] == '+' ? s + 1 : s, NULL, 10);
}

static void parse_dbl(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	double x;
	const char *s = spec_want_scalar(ld, v, path, "a number");
	if (!s)
		return;
	if ((f->flags & FL_INF) && !strcmp(s, "inf"))
		x = INFINITY;
	else if (rt_parse_number(s, &x)) {
		spec_lerr(ld, v, path, "expected a number, got '%s'", s);
		return;
	}
	if (bounds_ok(ld, v, path, f, x, s))
		*DST(double) = x;
}

static void parse_dur(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	double x;
	const char *s = spec_want_scalar(ld, v, path, "a duration");
	if (!s)
		return;
	if (rt_parse_duration(s, &x))
		spec_lerr(ld, v, path, "expected a duration like 300s, 250ms or 5m, got '%s'", s);
	else if (x < 0)
		spec_lerr(ld, v, path, "a duration cannot be negative, got '%s'", s);
	else if (bounds_ok(ld, v, path, f, x, s))
		*DST(double) = x;
}

static void parse_frac_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	double x;
	const char *s = spec_want_scalar(ld, v, path, "a percentage");
	if (!s)
		return;
	if (!parse_frac(s, &x))
		spec_lerr(ld, v, path, "expected a percentage like 2%% or a fraction up to 1, got '%s'", s);
	else if (x < 0)
		spec_lerr(ld, v, path, "'%s' cannot be negative", s);
	else if (bounds_ok(ld, v, path, f, x, s))
		*DST(double) = x;
}

static void parse_bool_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	const char *s = spec_want_scalar(ld, v, path, "true or false");
	if (s && !parse_bool(s, DST(bool)))
		spec_lerr(ld, v, path, "expected true or false, got '%s'", s);
}

static void parse_size_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	const char *s = spec_want_scalar(ld, v, path, "a size");
	if (s && !spec_parse_size(s, DST(size_t)))
		spec_lerr(ld, v, path, "expected a size like 64MiB or 4096, got '%s'", s);
}

int spec_name_index(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *what,
		    const char *s, const char *const *names)
{
	size_t n = 0;
	for (; names[n]; n++)
		if (!strcmp(names[n], s))
			return (int)n;
	const char *dym = rt_did_you_mean(s, names, n);
	if (dym) {
		spec_lerr(ld, at, path, "unknown %s '%s' (did you mean '%s'?)", what, s, dym);
		return -1;
	}
	struct rt_sb all = RT_SB_INIT;
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(&all, "%s%s", i ? ", " : "", names[i]);
	spec_lerr(ld, at, path, "unknown %s '%s' (expected one of %s)", what, s, all.buf);
	rt_sb_release(&all);
	return -1;
}

static void parse_enum(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	const char *s = spec_want_scalar(ld, v, path, "a name");
	int i = s ? spec_name_index(ld, v, path, "value", s, f->names) : -1;
	if (i >= 0)
		*DST(int) = i;
}

static void parse_strv_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	spec_parse_strv(ld, v, path, f->flags, DST(struct rt_strv));
}

static void parse_envv_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	rt_envv_release(DST(struct rt_envv));
	spec_parse_envv(ld, v, path, f->flags, DST(struct rt_envv));
}

/* A number or a list of 1 to 3; missing ones are 1. */
static void parse_dim3(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	bool wide = f->type == SF_DIM3L;
	size_t n = v->type == YAML_SEQUENCE_NODE ? spec_seq_len(v) : 1;
	if (n < 1 || n > 3) {
		spec_lerr(ld, v, path, "expected 1 to 3 numbers, got %zu", n);
		return;
	}
	double x[3] = { 1, 1, 1 };
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = v->type == YAML_SEQUENCE_NODE ? spec_seq_item(ld, v, i) : v;
		const char *s = spec_want_scalar(ld, it, path, "a whole number");
		if (!s)
			return;
		if (rt_parse_number(s, &x[i]) || x[i] < 0 || x[i] != floor(x[i]) ||
		    x[i] > (wide ? 1e18 : 4294967295.0)) {
			spec_lerr(ld, it, path, "expected a whole number >= 0, got '%s'", s);
			return;
		}
	}
	for (size_t i = 0; i < 3; i++) {
		if (wide)
			DST(uint64_t)[i] = (uint64_t)x[i];
		else
			DST(unsigned)[i] = (unsigned)x[i];
	}
}

/* A number or a list of numbers into an array and its count. */
static void parse_numv(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	char buf[80];
	if (v->type != YAML_SEQUENCE_NODE && v->type != YAML_SCALAR_NODE) {
		spec_lerr(ld, v, path, "expected a list of numbers, got %s", spec_got(v, buf, sizeof(buf)));
		return;
	}
	bool u64 = f->type == SF_U64V, seq = v->type == YAML_SEQUENCE_NODE;
	size_t n = seq ? spec_seq_len(v) : 1, k = 0;
	void *arr = xcalloc(n ? n : 1, u64 ? sizeof(uint64_t) : sizeof(double));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq ? spec_seq_item(ld, v, i) : v;
		char *ip = spec_path_index(path, i);
		const char *s = spec_want_scalar(ld, it, ip, "a number");
		double x;
		if (s && rt_parse_number(s, &x)) {
			spec_lerr(ld, it, ip, "expected a number, got '%s'", s);
		} else if (s && u64 && (x < 0 || x != floor(x) || x > 1.8e19)) {
			spec_lerr(ld, it, ip, "expected a whole number >= 0, got '%s'", s);
		} else if (s && bounds_ok(ld, it, ip, f, x, s)) {
			if (u64)
				((uint64_t *)arr)[k++] = (uint64_t)x;
			else
				((double *)arr)[k++] = x;
		}
		free(ip);
	}
	free(*DST(void *));
	*DST(void *) = arr;
	*(size_t *)((char *)base + f->off2) = k;
}

static void parse_sub(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	if (spec_want_map(ld, v, path))
		spec_parse_fields(ld, v, path, base, f->sub, NULL);
}

static void parse_custom(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			 const struct spec_field *f)
{
	if (f->parse)
		f->parse(ld, v, path, base, f);
}

static const spec_parse_fn parsers[SF_NTYPES] = {
	[SF_STR] = parse_str,		[SF_INT] = parse_int,
	[SF_U64] = parse_u64,		[SF_UINT] = parse_uint,
	[SF_DBL] = parse_dbl,		[SF_DUR] = parse_dur,
	[SF_FRAC] = parse_frac_field,	[SF_BOOL] = parse_bool_field,
	[SF_SIZE] = parse_size_field,	[SF_ENUM] = parse_enum,
	[SF_STRV] = parse_strv_field,	[SF_ENVV] = parse_envv_field,
	[SF_DIM3U] = parse_dim3,	[SF_DIM3L] = parse_dim3,
	[SF_DBLV] = parse_numv,		[SF_U64V] = parse_numv,
	[SF_SUB] = parse_sub,		[SF_CUSTOM] = parse_custom,
};

void spec_parse_fields(struct spec_ld *ld, yaml_node_t *map, const char *path, void *base,
		       const struct spec_field *tbl, const char *const *extra_keys)
{
	if (!spec_want_map(ld, map, path))
		return;
	spec_check_keys(ld, map, path, tbl, extra_keys);
	for (const struct spec_field *f = tbl; f->key; f++) {
		yaml_node_t *v = spec_map_get(ld, map, f->key);
		if (!v) {
			if (f->flags & FL_REQ)
				spec_lerr(ld, map, path, "missing key '%s'", f->key);
			continue;
		}
		char *fp = spec_path_join(path, f->key);
		parsers[f->type](ld, v, fp, base, f);
		free(fp);
	}
}

int spec_which_keys(struct spec_ld *ld, yaml_node_t *map, const char *const *keys, int n,
		    yaml_node_t **nodes, int *first, int *second)
{
	int count = 0;
	*first = *second = -1;
	for (int i = 0; i < n; i++) {
		nodes[i] = spec_map_get(ld, map, keys[i]);
		if (!nodes[i])
			continue;
		count++;
		if (*first < 0)
			*first = i;
		else if (*second < 0)
			*second = i;
	}
	return count;
}

/* A name in spec_item_name's tree: the name and where its item starts. */
struct named {
	char *name;       /* owned */
	struct rt_pos at; /* the item's position */
};

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct named *)x)->name, ((const struct named *)y)->name);
}

static void named_free(void *p)
{
	struct named *n = p;
	free(n->name);
	free(n);
}

void spec_names_release(struct spec_ld *ld)
{
	tdestroy(ld->bench_names, named_free);
	tdestroy(ld->variant_names, named_free);
	ld->bench_names = ld->variant_names = NULL;
}

/* true when name was given to an earlier item (*first: where); else it is
 * added, at the position of item it. */
static bool name_taken(void **seen, const char *name, const yaml_node_t *it, struct rt_pos *first)
{
	struct named *n = xcalloc(1, sizeof(*n));
	n->name = xstrdup(name);
	n->at = spec_node_pos(it);
	struct named **got = tsearch(n, seen, by_name);
	if (!got) {
		fprintf(stderr, "ratchet: out of memory\n");
		abort();
	}
	if (*got == n)
		return false;
	*first = (*got)->at;
	named_free(n);
	return true;
}

char *spec_item_name(struct spec_ld *ld, yaml_node_t *it, const char *ip, const char *what,
		     const char *extra, void **seen)
{
	yaml_node_t *nn = spec_map_get(ld, it, "name");
	if (!nn) {
		spec_lerr(ld, it, ip, "missing key 'name'");
		return NULL;
	}
	char *np = spec_path_join(ip, "name");
	const char *name = spec_want_scalar(ld, nn, np, "a name");
	struct rt_pos first;
	char *r = NULL;
	if (name && !spec_ident_ok(name, extra)) {
		struct rt_sb chars = RT_SB_INIT;
		for (const char *c = extra; *c; c++)
			rt_sb_addf(&chars, c[1] ? ", %c" : " and %c", *c);
		spec_lerr(ld, nn, np, "'%s': a %s name may hold only letters, digits, _%s", name, what,
			  chars.buf);
		rt_sb_release(&chars);
	} else if (name && name_taken(seen, name, it, &first)) {
		spec_lerr(ld, nn, np, "duplicate %s name '%s' (first at %d:%d)", what, name, first.line,
			  first.col);
		r = xstrdup(name);
	} else if (name) {
		r = xstrdup(name);
	}
	free(np);
	return r;
}
