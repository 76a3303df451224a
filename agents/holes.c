/*
 * Table-coverage holes (see holes.h): which shapes a profile saw that a
 * tuned table has no entry for, ranked by the most filling each could gain.
 */
#include "agents/holes.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "variants/var.h"

/* One table entry: its key and its fields as JSON. */
struct entry {
	char *key;    /* entry key */
	char *fields; /* JSON object text (owned) */
};

/* One observed key and its summed weight. */
struct seen {
	char *key;     /* entry key the shape needs */
	double weight; /* summed weight */
};

static bool is_csv(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && !strcmp(path + n - 4, ".csv");
}

static int col_index(const struct var_csv *c, const char *name)
{
	if (!c->n)
		return -1;
	for (size_t j = 0; j < c->rows[0].n; j++)
		if (!strcmp(c->rows[0].f[j].value, name))
			return (int)j;
	return -1;
}

static int missing_col(const char *file, const struct var_csv *c, const char *name,
		       struct rt_sb *err)
{
	rt_errf(err, RT_EINVAL, "%s:1: no column '%s' (columns:", file, name);
	for (size_t j = 0; c->n && j < c->rows[0].n; j++)
		rt_errf(err, 0, "%s %s", j ? "," : "", c->rows[0].f[j].value);
	return rt_errf(err, RT_EINVAL, ")");
}

static bool blank_row(const struct var_csv_row *r)
{
	return r->n == 1 && !r->f[0].value[0];
}

/* The key of a CSV row: its key columns joined with ','. */
static char *row_key(const struct var_csv_row *r, const int *idx, size_t n)
{
	struct rt_sb sb = RT_SB_INIT;
	for (size_t k = 0; k < n; k++) {
		if (k)
			rt_sb_addc(&sb, ',');
		if ((size_t)idx[k] < r->n)
			rt_sb_adds(&sb, r->f[idx[k]].value);
	}
	return rt_sb_detach(&sb, NULL);
}

static json_t *cell_json(const char *s)
{
	char *end;
	double d = strtod(s, &end);
	if (*s && !*end && end != s)
		return d == floor(d) && fabs(d) < 9e15 ? json_integer((json_int_t)d) : json_real(d);
	return json_string(s);
}

static int load_table(const char *path, const char *const *kc, size_t nkc, struct entry **out,
		      size_t *n, bool *csv, struct rt_sb *err)
{
	char *text;
	size_t len;
	int rc = rt_read_file(path, &text, &len, err);
	if (rc)
		return rc;
	*out = NULL;
	*n = 0;
	*csv = is_csv(path);
	if (!*csv) {
		json_error_t je;
		json_t *root = json_loadb(text, len, 0, &je);
		free(text);
		if (!root)
			return rt_errf(err, RT_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		if (!json_is_object(root)) {
			json_decref(root);
			return rt_errf(err, RT_EINVAL, "%s: expected a JSON object keyed by entry", path);
		}
		const char *k;
		json_t *v;
		*out = xcalloc(json_object_size(root) + 1, sizeof(**out));
		json_object_foreach(root, k, v) {
			(*out)[*n].key = xstrdup(k);
			(*out)[*n].fields = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
			(*n)++;
		}
		json_decref(root);
		return 0;
	}
	struct var_csv c;
	rc = var_csv_parse(path, text, len, &c, err);
	free(text);
	if (rc)
		return rc;
	if (!nkc) {
		var_csv_release(&c);
		return rt_errf(err, RT_EUSAGE, "%s: a CSV table needs --key-columns (e.g. M,N,K)", path);
	}
	int *idx = xcalloc(nkc, sizeof(int));
	for (size_t k = 0; k < nkc && !rc; k++)
		if ((idx[k] = col_index(&c, kc[k])) < 0)
			rc = missing_col(path, &c, kc[k], err);
	*out = xcalloc(c.n + 1, sizeof(**out));
	for (size_t i = 1; i < c.n && !rc; i++) {
		const struct var_csv_row *r = &c.rows[i];
		if (blank_row(r))
			continue;
		json_t *fields = json_object();
		for (size_t j = 0; j < r->n && j < c.rows[0].n; j++) {
			bool key = false;
			for (size_t k = 0; k < nkc; k++)
				key |= (size_t)idx[k] == j;
			if (!key)
				json_object_set_new(fields, c.rows[0].f[j].value, cell_json(r->f[j].value));
		}
		(*out)[*n].key = row_key(r, idx, nkc);
		(*out)[*n].fields = json_dumps(fields, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(fields);
		(*n)++;
	}
	free(idx);
	var_csv_release(&c);
	return rc;
}

static int load_profile(const char *path, const char *const *kc, size_t nkc, bool table_csv,
			const char *weight_col, struct seen **out, size_t *n, struct rt_sb *err)
{
	char *text;
	size_t len;
	int rc = rt_read_file(path, &text, &len, err);
	if (rc)
		return rc;
	struct var_csv c;
	rc = var_csv_parse(path, text, len, &c, err);
	free(text);
	if (rc)
		return rc;
	static const char *const json_key[] = { "key" };
	if (!table_csv) {
		/* A JSON table's key is one column of the profile. */
		if (!nkc) {
			kc = json_key;
		}
		nkc = 1;
	}
	int *idx = xcalloc(nkc, sizeof(int));
	for (size_t k = 0; k < nkc && !rc; k++)
		if ((idx[k] = col_index(&c, kc[k])) < 0)
			rc = missing_col(path, &c, kc[k], err);
	int wi = -1;
	if (!rc && weight_col && (wi = col_index(&c, weight_col)) < 0)
		rc = missing_col(path, &c, weight_col, err);
	*out = NULL;
	*n = 0;
	for (size_t i = 1; i < c.n && !rc; i++) {
		const struct var_csv_row *r = &c.rows[i];
		if (blank_row(r))
			continue;
		double w = 1;
		if (wi >= 0) {
			const char *s = (size_t)wi < r->n ? r->f[wi].value : "";
			char *end;
			w = strtod(s, &end);
			if (!*s || *end || !isfinite(w) || w < 0) {
				rc = rt_errf(err, RT_EINVAL, "%s:%d: column '%s': '%s' is not a weight (a number >= 0)",
					     path, r->line, weight_col, s);
				break;
			}
		}
		char *key = row_key(r, idx, nkc);
		size_t k = 0;
		while (k < *n && strcmp((*out)[k].key, key))
			k++;
		if (k == *n) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[k].key = key;
			(*out)[k].weight = 0;
			(*n)++;
		} else {
			free(key);
		}
		(*out)[k].weight += w;
	}
	free(idx);
	var_csv_release(&c);
	return rc;
}

/* Distance between two keys: summed |log2| ratios when every part is a
 * positive number (shapes), else the edit distance of the strings. */
static double key_distance(const char *a, const char *b)
{
	double d = 0;
	const char *p = a, *q = b;
	for (;;) {
		char *ea, *eb;
		double x = strtod(p, &ea), y = strtod(q, &eb);
		if (ea == p || eb == q || !(x > 0 && y > 0 && isfinite(x) && isfinite(y)) ||
		    (*ea != ',' && *ea) || (*eb != ',' && *eb))
			return 1000.0 + (double)rt_edit_distance(a, b);
		d += fabs(log2(x) - log2(y)); /* finite for any finite x, y > 0; x / y may overflow */
		if (!*ea || !*eb)
			return *ea == *eb ? d : 1000.0 + (double)rt_edit_distance(a, b);
		p = ea + 1;
		q = eb + 1;
	}
}

static int by_share(const void *x, const void *y)
{
	const struct agent_hole *a = x, *b = y;
	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return strcmp(a->key, b->key);
}

int agent_holes_find(const char *table_path, const char *profile_path,
		     const char *const *key_columns, size_t n_key_columns, const char *weight_col,
		     struct agent_holes *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	struct entry *e = NULL;
	size_t ne = 0;
	struct seen *s = NULL;
	size_t ns = 0;
	bool csv = false;
	int rc = load_table(table_path, key_columns, n_key_columns, &e, &ne, &csv, err);
	if (!rc)
		rc = load_profile(profile_path, key_columns, n_key_columns, csv, weight_col, &s, &ns, err);
	if (rc)
		goto done;
	out->csv = csv;
	out->entries = ne;
	out->observed = ns;
	double total = 0, covered = 0;
	for (size_t i = 0; i < ns; i++)
		total += s[i].weight;
	if (!isfinite(total)) { /* each weight is finite, their sum may not be */
		rc = rt_errf(err, RT_EINVAL, "%s: column '%s': the weights add up beyond %g",
			     profile_path, weight_col ? weight_col : "", DBL_MAX);
		goto done;
	}
	out->v = xcalloc(ns + 1, sizeof(*out->v));
	for (size_t i = 0; i < ns; i++) {
		size_t k = 0;
		while (k < ne && strcmp(e[k].key, s[i].key))
			k++;
		if (k < ne) {
			out->covered++;
			covered += s[i].weight;
			continue;
		}
		struct agent_hole *h = &out->v[out->n++];
		h->key = xstrdup(s[i].key);
		h->weight = s[i].weight;
		h->share = total > 0 ? s[i].weight / total : 0;
		double best = INFINITY;
		for (size_t j = 0; j < ne; j++) {
			double d = key_distance(s[i].key, e[j].key);
			if (d < best) {
				best = d;
				h->nearest = e[j].key;
				h->fields_json = e[j].fields;
			}
		}
		h->nearest = xstrdup(h->nearest);
		h->fields_json = xstrdup(h->fields_json);
	}
	out->covered_share = total > 0 ? covered / total : 0;
	qsort(out->v, out->n, sizeof(*out->v), by_share);
done:
	for (size_t i = 0; i < ne; i++) {
		free(e[i].key);
		free(e[i].fields);
	}
	free(e);
	for (size_t i = 0; i < ns; i++)
		free(s[i].key);
	free(s);
	if (rc)
		agent_holes_release(out);
	return rc;
}

void agent_holes_release(struct agent_holes *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].key);
		free(h->v[i].nearest);
		free(h->v[i].fields_json);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}
