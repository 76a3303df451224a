/*
 * The campaign spec loader: YAML (libyaml's document API) into the typed
 * structs of spec.h, with every key checked against the field tables of
 * spec_fields.c, units converted, placeholders checked, relative paths
 * resolved against workdir, and cross references (objective, constraints)
 * resolved. Errors are collected, up to SPEC_MAX_ERRORS, one per line, each
 * "file:line:col: key.path: message".
 */
#include "runner/spec/spec_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- messages ---- */

static void vlerr(struct spec_ld *ld, int line, int col, const char *path, const char *fmt,
		  va_list ap)
{
	if (ld->nerr >= SPEC_MAX_ERRORS)
		return;
	ld->nerr++;
	rt_sb_addf(ld->err, "%s:%d:%d: ", ld->file, line, col);
	if (path && *path)
		rt_sb_addf(ld->err, "%s: ", path);
	rt_sb_vaddf(ld->err, fmt, ap);
	rt_sb_addc(ld->err, '\n');
}

struct rt_pos spec_node_pos(const yaml_node_t *n)
{
	struct rt_pos p = { 1, 1 };
	if (n) {
		p.line = (int)n->start_mark.line + 1;
		p.col = (int)n->start_mark.column + 1;
	}
	return p;
}

void spec_lerr(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *fmt, ...)
{
	struct rt_pos p = spec_node_pos(at);
	va_list ap;
	va_start(ap, fmt);
	vlerr(ld, p.line, p.col, path, fmt, ap);
	va_end(ap);
}

void spec_lerr_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlerr(ld, pos.line ? pos.line : 1, pos.col ? pos.col : 1, path, fmt, ap);
	va_end(ap);
}

/* "a.b", or "b" at the top. */
char *spec_path_join(const char *path, const char *key)
{
	if (!path || !*path)
		return xstrdup(key);
	return xasprintf("%s.%s", path, key);
}

char *spec_path_index(const char *path, size_t i)
{
	return xasprintf("%s[%zu]", path, i);
}

/* ---- node helpers ---- */

const char *spec_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_plain(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

bool spec_is_null(const yaml_node_t *n)
{
	if (!is_plain(n))
		return false;
	const char *v = spec_scalar(n);
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* What a node is, for "expected X, got Y". */
const char *spec_got(const yaml_node_t *n, char *buf, size_t len)
{
	if (!n)
		return "nothing";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (spec_is_null(n))
		return "null";
	const char *s = spec_scalar(n);
	snprintf(buf, len, "'%.60s'", s ? s : "");
	return buf;
}

yaml_node_t *spec_node(struct spec_ld *ld, int id)
{
	return yaml_document_get_node(ld->doc, id);
}

yaml_node_t *spec_map_get(struct spec_ld *ld, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = spec_scalar(spec_node(ld, p->key));
		if (k && !strcmp(k, key))
			return spec_node(ld, p->value);
	}
	return NULL;
}

/* ---- scalar conversions ---- */

/* A decimal number: [+-]digits[.digits][e[+-]digits]; no inf, nan or hex. */
static bool is_number(const char *s)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	bool digits = false;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0';
}

bool spec_parse_number(const char *s, double *out)
{
	if (!s || !is_number(s))
		return false;
	errno = 0;
	*out = strtod(s, NULL);
	return !errno && isfinite(*out);
}

/* Number followed by a unit suffix; returns false if no number. */
bool spec_split_num(const char *s, double *v, const char **unit)
{
	char *end;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s || !(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+'))
		return false;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno || !isfinite(*v))
		return false;
	/* strtod takes hex and inf; the digit check above rules out inf, not hex */
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return false;
	while (isspace((unsigned char)*end))
		end++;
	*unit = end;
	return true;
}

bool spec_parse_duration(const char *s, double *out)
{
	double v;
	const char *u;
	if (!s || !spec_split_num(s, &v, &u))
		return false;
	static const struct {
		const char *unit;
		double mul;
	} units[] = { { "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 },
		      { "m", 60 }, { "min", 60 }, { "h", 3600 } };
	for (size_t i = 0; i < RT_ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i].unit)) {
			*out = v * units[i].mul;
			return true;
		}
	return false;
}

static bool parse_frac(const char *s, double *out)
{
	double v;
	const char *u;
	if (!s || !spec_split_num(s, &v, &u))
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

static bool parse_size(const char *s, size_t *out)
{
	double v;
	const char *u;
	if (!s || !spec_split_num(s, &v, &u) || v < 0)
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

/* ---- placeholders and paths ---- */

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

/* Lexically normalize an absolute path: drop "." and "//", fold "x/..". */
static char *normalize_abs(const char *p)
{
	size_t n = strlen(p);
	char *out = xmalloc(n + 2);
	size_t len = 0;
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchr(s, '/');
		size_t seg = e ? (size_t)(e - s) : strlen(s);
		if (seg == 1 && s[0] == '.') {
			/* skip */
		} else if (seg == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else {
			out[len++] = '/';
			memcpy(out + len, s, seg);
			len += seg;
		}
		s += seg;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}

static char *absolute(const char *p)
{
	if (p[0] == '/')
		return normalize_abs(p);
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	char *j = xasprintf("%s/%s", cwd, p);
	char *r = normalize_abs(j);
	free(j);
	return r;
}

char *spec_resolve(const struct spec *s, const char *p)
{
	if (p[0] == '/' || p[0] == '{' || !s->workdir)
		return xstrdup(p);
	char *j = xasprintf("%s/%s", s->workdir, p);
	char *r = normalize_abs(j);
	free(j);
	return r;
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

/* Report unknown and duplicate keys of a mapping; with neither tbl nor extra,
 * every key is allowed and only duplicates are reported. */
void spec_check_keys(struct spec_ld *ld, yaml_node_t *map, const char *path,
		     const struct spec_field *tbl, const char *const *extra)
{
	yaml_node_pair_t *start = map->data.mapping.pairs.start;
	for (yaml_node_pair_t *p = start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key);
		const char *k = spec_scalar(kn);
		if (!k) {
			spec_lerr(ld, kn, path, "keys must be strings");
			continue;
		}
		bool dup = false;
		for (yaml_node_pair_t *q = start; q < p; q++) {
			yaml_node_t *qn = spec_node(ld, q->key);
			const char *qk = spec_scalar(qn);
			if (qk && !strcmp(qk, k)) {
				spec_lerr(ld, kn, path, "duplicate key '%s' (first at %d:%d)", k,
					  (int)qn->start_mark.line + 1, (int)qn->start_mark.column + 1);
				dup = true;
				break;
			}
		}
		if (dup || (!tbl && !extra) || spec_in_table(tbl, k) || in_list(extra, k))
			continue;
		const char *cands[64];
		size_t n = 0;
		for (const struct spec_field *f = tbl; f && f->key && n < 64; f++)
			cands[n++] = f->key;
		for (const char *const *e = extra; e && *e && n < 64; e++)
			cands[n++] = *e;
		const char *dym = rt_did_you_mean(k, cands, n);
		if (dym)
			spec_lerr(ld, kn, path, "unknown key '%s' (did you mean '%s'?)", k, dym);
		else
			spec_lerr(ld, kn, path, "unknown key '%s'", k);
	}
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

void spec_parse_envv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_envv *out)
{
	char buf[80];
	if (v->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, v, path, "expected a mapping of NAME: value, got %s",
			  spec_got(v, buf, sizeof(buf)));
		return;
	}
	spec_check_keys(ld, v, path, NULL, NULL); /* duplicates only: every name is allowed */
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_scalar(kn);
		if (!k)
			continue;
		char *kp = spec_path_join(path, k);
		if (!env_name_ok(k)) {
			spec_lerr(ld, kn, path, "'%s' is not a valid environment variable name", k);
		} else if (spec_map_get(ld, v, k) != vn) {
			/* a duplicate, reported above */
		} else if (spec_is_null(vn)) {
			out->v[out->n].name = xstrdup(k);
			out->v[out->n++].value = NULL;
		} else {
			const char *s = spec_want_scalar(ld, vn, kp, "a string or null");
			if (s && (!(flags & FL_TMPL) || spec_check_tmpl(ld, vn, kp, s))) {
				out->v[out->n].name = xstrdup(k);
				out->v[out->n++].value = xstrdup(s);
			}
		}
		free(kp);
	}
}

static void parse_dim3(struct spec_ld *ld, yaml_node_t *v, const char *path, bool wide, void *dst)
{
	yaml_node_t *items[3] = { 0 };
	size_t n = 0;
	if (v->type == YAML_SEQUENCE_NODE) {
		n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		if (n < 1 || n > 3) {
			spec_lerr(ld, v, path, "expected 1 to 3 numbers, got %zu", n);
			return;
		}
		for (size_t i = 0; i < n; i++)
			items[i] = spec_node(ld, v->data.sequence.items.start[i]);
	} else {
		items[0] = v;
		n = 1;
	}
	for (size_t i = 0; i < 3; i++) {
		double x = 1;
		if (i < n) {
			const char *s = spec_want_scalar(ld, items[i], path, "a whole number");
			if (!s)
				return;
			if (!spec_parse_number(s, &x) || x < 0 || x != floor(x) || x > (wide ? 1e18 : 4294967295.0)) {
				spec_lerr(ld, items[i], path, "expected a whole number >= 0, got '%s'", s);
				return;
			}
		}
		if (wide)
			((uint64_t *)dst)[i] = (uint64_t)x;
		else
			((unsigned *)dst)[i] = (unsigned)x;
	}
}

static void parse_numv(struct spec_ld *ld, yaml_node_t *v, const char *path, const struct spec_field *f,
		       void *base)
{
	char buf[80];
	yaml_node_t *one[1] = { v };
	yaml_node_t **items = one;
	size_t n = 1;
	yaml_node_t *tmp[256];
	if (v->type == YAML_SEQUENCE_NODE) {
		n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		if (n > 256) {
			spec_lerr(ld, v, path, "at most 256 values");
			return;
		}
		for (size_t i = 0; i < n; i++)
			tmp[i] = spec_node(ld, v->data.sequence.items.start[i]);
		items = tmp;
	} else if (v->type != YAML_SCALAR_NODE) {
		spec_lerr(ld, v, path, "expected a list of numbers, got %s", spec_got(v, buf, sizeof(buf)));
		return;
	}
	bool u64 = f->type == SF_U64V;
	void *arr = xcalloc(n ? n : 1, u64 ? sizeof(uint64_t) : sizeof(double));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char *ip = spec_path_index(path, i);
		const char *s = spec_want_scalar(ld, items[i], ip, "a number");
		double x;
		if (s && !spec_parse_number(s, &x)) {
			spec_lerr(ld, items[i], ip, "expected a number, got '%s'", s);
		} else if (s && u64 && (x < 0 || x != floor(x) || x > 1.8e19)) {
			spec_lerr(ld, items[i], ip, "expected a whole number >= 0, got '%s'", s);
		} else if (s && bounds_ok(ld, items[i], ip, f, x, s)) {
			if (u64)
				((uint64_t *)arr)[k++] = (uint64_t)x;
			else
				((double *)arr)[k++] = x;
		}
		free(ip);
	}
	void **slot = (void **)((char *)base + f->off);
	free(*slot);
	*slot = arr;
	*(size_t *)((char *)base + f->off2) = k;
}

static void parse_enum(struct spec_ld *ld, yaml_node_t *v, const char *path, const char *const *names,
		       int *dst)
{
	const char *s = spec_want_scalar(ld, v, path, "a name");
	if (!s)
		return;
	size_t n = 0;
	for (; names[n]; n++)
		if (!strcmp(names[n], s)) {
			*dst = (int)n;
			return;
		}
	const char *dym = rt_did_you_mean(s, (const char *const *)names, n);
	if (dym) {
		spec_lerr(ld, v, path, "unknown value '%s' (did you mean '%s'?)", s, dym);
		return;
	}
	struct rt_sb all = RT_SB_INIT;
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(&all, "%s%s", i ? ", " : "", names[i]);
	spec_lerr(ld, v, path, "unknown value '%s' (expected one of %s)", s, all.buf);
	rt_sb_release(&all);
}

static void parse_field(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	void *dst = (char *)base + f->off;
	const char *s;
	double x;
	char buf[80];
	switch (f->type) {
	case SF_STR: {
		char **d = dst;
		if ((f->flags & FL_NULLOK) && spec_is_null(v)) {
			free(*d);
			*d = NULL;
			return;
		}
		char *str = parse_string(ld, v, path, f->flags);
		if (str) {
			free(*d);
			*d = str;
		}
		return;
	}
	case SF_INT:
	case SF_U64:
	case SF_UINT:
		if (!(s = spec_want_scalar(ld, v, path, "a whole number")))
			return;
		if (!spec_parse_number(s, &x) || x != floor(x)) {
			spec_lerr(ld, v, path, "expected a whole number, got '%s'", s);
			return;
		}
		if (!bounds_ok(ld, v, path, f, x, s))
			return;
		if (f->type == SF_INT) {
			if (x < -2147483648.0 || x > 2147483647.0) {
				spec_lerr(ld, v, path, "'%s' is out of range", s);
				return;
			}
			*(int *)dst = (int)x;
		} else if (f->type == SF_UINT) {
			if (x < 0 || x > 4294967295.0) {
				spec_lerr(ld, v, path, "'%s' is out of range", s);
				return;
			}
			*(unsigned *)dst = (unsigned)x;
		} else {
			if (x < 0 || x >= 1.8446744073709552e19) {
				spec_lerr(ld, v, path, "'%s' is out of range", s);
				return;
			}
			/* parse exactly: doubles lose digits above 2^53 */
			*(uint64_t *)dst = strtoull(s[0] == '+' ? s + 1 : s, NULL, 10);
		}
		return;
	case SF_DBL:
		if (!(s = spec_want_scalar(ld, v, path, "a number")))
			return;
		if (!spec_parse_number(s, &x)) {
			spec_lerr(ld, v, path, "expected a number, got '%s'", s);
			return;
		}
		if (bounds_ok(ld, v, path, f, x, s))
			*(double *)dst = x;
		return;
	case SF_DUR:
		if (!(s = spec_want_scalar(ld, v, path, "a duration")))
			return;
		if (!spec_parse_duration(s, &x)) {
			spec_lerr(ld, v, path, "expected a duration like 300s, 250ms or 5m, got '%s'", s);
			return;
		}
		if (x < 0) {
			spec_lerr(ld, v, path, "a duration cannot be negative, got '%s'", s);
			return;
		}
		if (bounds_ok(ld, v, path, f, x, s))
			*(double *)dst = x;
		return;
	case SF_FRAC:
		if (!(s = spec_want_scalar(ld, v, path, "a percentage")))
			return;
		if (!parse_frac(s, &x)) {
			spec_lerr(ld, v, path, "expected a percentage like 2%% or a fraction up to 1, got '%s'", s);
			return;
		}
		if (x < 0) {
			spec_lerr(ld, v, path, "'%s' cannot be negative", s);
			return;
		}
		if (bounds_ok(ld, v, path, f, x, s))
			*(double *)dst = x;
		return;
	case SF_BOOL:
		if (!(s = spec_want_scalar(ld, v, path, "true or false")))
			return;
		if (!parse_bool(s, (bool *)dst))
			spec_lerr(ld, v, path, "expected true or false, got '%s'", s);
		return;
	case SF_SIZE:
		if (!(s = spec_want_scalar(ld, v, path, "a size")))
			return;
		if (!parse_size(s, (size_t *)dst))
			spec_lerr(ld, v, path, "expected a size like 64MiB or 4096, got '%s'", s);
		return;
	case SF_ENUM:
		parse_enum(ld, v, path, f->names, (int *)dst);
		return;
	case SF_STRV:
		spec_parse_strv(ld, v, path, f->flags, dst);
		return;
	case SF_ENVV: {
		struct rt_envv *e = dst;
		rt_envv_release(e);
		spec_parse_envv(ld, v, path, f->flags, e);
		return;
	}
	case SF_DIM3U:
	case SF_DIM3L:
		parse_dim3(ld, v, path, f->type == SF_DIM3L, dst);
		return;
	case SF_DBLV:
	case SF_U64V:
		parse_numv(ld, v, path, f, base);
		return;
	case SF_SUB:
		if (v->type != YAML_MAPPING_NODE) {
			spec_lerr(ld, v, path, "expected a mapping, got %s", spec_got(v, buf, sizeof(buf)));
			return;
		}
		spec_parse_fields(ld, v, path, base, f->sub, NULL);
		return;
	case SF_CUSTOM:
		if (f->parse)
			f->parse(ld, v, path, base, f);
		return;
	case SF_END:
		return;
	}
}

void spec_parse_fields(struct spec_ld *ld, yaml_node_t *map, const char *path, void *base,
		       const struct spec_field *tbl, const char *const *extra_keys)
{
	char buf[80];
	if (!map || map->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, map, path, "expected a mapping, got %s", spec_got(map, buf, sizeof(buf)));
		return;
	}
	spec_check_keys(ld, map, path, tbl, extra_keys);
	for (const struct spec_field *f = tbl; f->key; f++) {
		yaml_node_t *v = spec_map_get(ld, map, f->key);
		if (!v) {
			if (f->flags & FL_REQ)
				spec_lerr(ld, map, path, "missing key '%s'", f->key);
			continue;
		}
		char *fp = spec_path_join(path, f->key);
		parse_field(ld, v, fp, base, f);
		free(fp);
	}
}

/* YAML to JSON, for table entries: plain scalars become numbers, booleans
 * and null where they read as such; quoted scalars stay strings. */
json_t *spec_node_json(struct spec_ld *ld, yaml_node_t *n, const char *path, int depth)
{
	if (depth > 32) {
		spec_lerr(ld, n, path, "nested too deep");
		return NULL;
	}
	if (n->type == YAML_SCALAR_NODE) {
		const char *s = spec_scalar(n);
		if (!is_plain(n))
			return json_string(s);
		if (spec_is_null(n))
			return json_null();
		if (!strcmp(s, "true") || !strcmp(s, "True"))
			return json_true();
		if (!strcmp(s, "false") || !strcmp(s, "False"))
			return json_false();
		if (is_number(s)) {
			if (!strpbrk(s, ".eE")) {
				errno = 0;
				long long i = strtoll(s, NULL, 10);
				if (!errno)
					return json_integer(i);
			}
			double d;
			if (spec_parse_number(s, &d))
				return json_real(d);
		}
		json_t *j = json_string(s);
		if (!j)
			spec_lerr(ld, n, path, "not valid UTF-8");
		return j;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		json_t *a = json_array();
		for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
			json_t *e = spec_node_json(ld, spec_node(ld, *i), path, depth + 1);
			if (!e) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, e);
		}
		return a;
	}
	spec_check_keys(ld, n, path, NULL, NULL);
	json_t *o = json_object();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *k = spec_scalar(spec_node(ld, p->key));
		if (!k)
			continue;
		json_t *e = spec_node_json(ld, spec_node(ld, p->value), path, depth + 1);
		if (!e) {
			json_decref(o);
			return NULL;
		}
		if (!json_object_get(o, k))
			json_object_set_new(o, k, e);
		else
			json_decref(e);
	}
	return o;
}

/* ---- the document ---- */

/* libyaml rejects tabs in indentation with a generic message; say why. */
static bool tab_error(struct spec_ld *ld, const char *text, size_t len, size_t upto_line)
{
	size_t line = 1;
	const char *p = text, *end = text + len;
	while (p < end && line <= upto_line) {
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t')) {
			if (*q == '\t') {
				const char *nl = memchr(q, '\n', (size_t)(end - q));
				const char *e2 = nl ? nl : end;
				bool content = false;
				for (const char *r = q; r < e2; r++)
					content |= !isspace((unsigned char)*r);
				if (content) {
					if (ld->nerr < SPEC_MAX_ERRORS) {
						ld->nerr++;
						rt_sb_addf(ld->err,
							   "%s:%zu:%zu: tab character in indentation (YAML indents with spaces)\n",
							   ld->file, line, (size_t)(q - p) + 1);
					}
					return true;
				}
				break;
			}
			q++;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	return false;
}

static void syntax_error(struct spec_ld *ld, yaml_parser_t *pr, const char *text, size_t len)
{
	yaml_mark_t m = pr->problem_mark;
	if (pr->error == YAML_SCANNER_ERROR || pr->error == YAML_PARSER_ERROR) {
		if (tab_error(ld, text, len, m.line + 1))
			return;
	}
	ld->nerr++;
	if (pr->error == YAML_READER_ERROR) {
		rt_sb_addf(ld->err, "%s:1:1: %s at byte %zu\n", ld->file,
			   pr->problem ? pr->problem : "cannot read", pr->problem_offset);
		return;
	}
	rt_sb_addf(ld->err, "%s:%zu:%zu: %s", ld->file, m.line + 1, m.column + 1,
		   pr->problem ? pr->problem : "syntax error");
	if (pr->context)
		rt_sb_addf(ld->err, " (%s at %zu:%zu)", pr->context, pr->context_mark.line + 1,
			   pr->context_mark.column + 1);
	rt_sb_addc(ld->err, '\n');
}

/* Folder of the spec file, absolute. */
static char *spec_folder(const char *name)
{
	char *abs = absolute(name);
	char *slash = strrchr(abs, '/');
	if (slash == abs)
		abs[1] = '\0';
	else if (slash)
		*slash = '\0';
	return abs;
}


int spec_load_text(const char *name, const char *text, size_t len, struct spec **out,
		   struct rt_sb *err)
{
	*out = NULL;
	struct spec *s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(name);
	s->text = xstrndup(text, len);
	rt_sha256_hex(text, len, s->sha256);

	yaml_parser_t pr;
	yaml_document_t doc;
	struct spec_ld ld = { .file = name, .doc = &doc, .err = err, .s = s };
	struct rt_sb tmp = RT_SB_INIT;
	if (!err)
		ld.err = &tmp;
	yaml_parser_initialize(&pr);
	yaml_parser_set_input_string(&pr, (const unsigned char *)s->text, len);
	if (!yaml_parser_load(&pr, &doc)) {
		syntax_error(&ld, &pr, s->text, len);
		yaml_parser_delete(&pr);
		spec_free(s);
		rt_sb_release(&tmp);
		return RT_EUSAGE;
	}
	yaml_parser_delete(&pr);
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || spec_is_null(root)) {
		spec_lerr(&ld, NULL, "", "empty spec");
	} else if (root->type != YAML_MAPPING_NODE) {
		char buf[80];
		spec_lerr(&ld, root, "", "expected a mapping at the top, got %s", spec_got(root, buf, sizeof(buf)));
	} else {
		/* workdir first: every relative path resolves against it */
		yaml_node_t *wd = spec_map_get(&ld, root, "workdir");
		char *folder = spec_folder(name);
		if (wd) {
			const char *w = spec_want_scalar(&ld, wd, "workdir", "a path");
			if (w && *w) {
				char *j = w[0] == '/' ? xstrdup(w) : xasprintf("%s/%s", folder, w);
				s->workdir = normalize_abs(j);
				free(j);
			}
		}
		if (!s->workdir)
			s->workdir = xstrdup(folder);
		free(folder);
		spec_defaults(s);
		spec_parse_fields(&ld, root, "", s, spec_top_fields, NULL);
		spec_post_validate(&ld, root);
	}
	yaml_document_delete(&doc);
	rt_sb_release(&tmp);
	if (ld.nerr) {
		spec_free(s);
		return RT_EUSAGE;
	}
	*out = s;
	return 0;
}

int spec_load(const char *path, struct spec **out, struct rt_sb *err)
{
	char *text;
	size_t len;
	struct rt_sb e = RT_SB_INIT;
	*out = NULL;
	int rc = rt_read_file(path, &text, &len, &e);
	if (rc) {
		rt_errf(err, 0, "%s\n", e.buf);
		rt_sb_release(&e);
		return RT_EIO;
	}
	rc = spec_load_text(path, text, len, out, err);
	free(text);
	return rc;
}
