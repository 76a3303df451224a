/*
 * Table-coverage holes (see holes.h): which shapes a profile saw that a
 * tuned table has no entry for, ranked by the most filling each could gain.
 */
#include "agents/research/holes.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/*
 * A column (or JSON field) a tuner measured rather than chose: a time, a
 * rate, an error. AITER's tuned CSVs carry us, tflops, bw and errRatio beside
 * the kernel they picked; copying them into another shape's entry would
 * present a measurement of one shape as a fact about another, so a
 * suggestion never carries them.
 */
static bool measured_column(const char *name)
{
	static const char *const exact[] = {
		"us", "ms", "ns", "s", "time", "times", "soltimes", "latency", "duration", "tflops",
		"gflops", "flops", "bw", "gbps", "bandwidth", "throughput", "errratio", "err", "error",
		"speedup", "util", "utilization",
	};
	static const char *const suffix[] = { "_us", "_ms", "_ns", "_time", "_tflops", "_gflops",
					      "_bw", "_gbps", "(us)", "(ms)", "_err" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(exact); i++)
		if (!strcasecmp(name, exact[i]))
			return true;
	size_t n = strlen(name);
	for (size_t i = 0; i < RT_ARRAY_SIZE(suffix); i++) {
		size_t m = strlen(suffix[i]);
		if (n > m && !strcasecmp(name + n - m, suffix[i]))
			return true;
	}
	return false;
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
			if (json_is_object(v)) { /* a copy without what was measured */
				json_t *c = json_object();
				const char *fk;
				json_t *fv;
				json_object_foreach(v, fk, fv)
					if (!measured_column(fk))
						json_object_set(c, fk, fv);
				v = c;
			} else {
				json_incref(v);
			}
			(*out)[*n].key = xstrdup(k);
			(*out)[*n].fields = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
			json_decref(v);
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
			bool key = measured_column(c.rows[0].f[j].value);
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

/* Row order, so equal keys stay in it. */
struct keyed {
	const char *key; /* the row's key (borrowed) */
	size_t i;        /* the row's index */
};

static int by_key(const void *x, const void *y)
{
	return strcmp(((const struct keyed *)x)->key, ((const struct keyed *)y)->key);
}

static int by_key_then_index(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* A sorted index of n keys taken from base with stride size; the caller
 * frees it. */
static struct keyed *sort_keys(const void *base, size_t n, size_t size)
{
	struct keyed *k = xcalloc(n + 1, sizeof(*k));
	for (size_t i = 0; i < n; i++)
		k[i] = (struct keyed){ *(char *const *)((const char *)base + i * size), i };
	qsort(k, n, sizeof(*k), by_key_then_index);
	return k;
}

/* One struct seen per row in, one per distinct key out: each key where it
 * first appeared, its weight summed in row order. Sorting makes it n log n. */
static void merge_rows(struct seen *s, size_t *n)
{
	struct keyed *k = sort_keys(s, *n, sizeof(*s));
	bool *dropped = xcalloc(*n + 1, sizeof(bool));
	for (size_t a = 0, b; a < *n; a = b) {
		struct seen *first = &s[k[a].i];
		for (b = a + 1; b < *n && !strcmp(k[b].key, k[a].key); b++) {
			first->weight += s[k[b].i].weight;
			dropped[k[b].i] = true;
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		if (dropped[i])
			free(s[i].key);
		else
			s[m++] = s[i];
	}
	*n = m;
	free(dropped);
	free(k);
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
		*out = *n ? *out : xcalloc(c.n, sizeof(**out));
		(*out)[*n].key = row_key(r, idx, nkc);
		(*out)[(*n)++].weight = w;
	}
	free(idx);
	var_csv_release(&c);
	if (!rc)
		merge_rows(*out, n);
	return rc;
}

/* ---- the nearest entry ----
 * A key is a shape when it holds numbers: each comma-separated part that is
 * a finite positive number (M, N, K, cu_num), or, in a key without commas,
 * each run of digits ("decode.BS_LE_32"). What is left, the categorical
 * parts ("gfx942", "bf16", "False"; "decode.BS_LE_#"), is the shape's
 * family. Two shapes of one family are the sum of |log2| of their numbers'
 * ratios apart, numerically; any other two keys are SHAPE_FAR plus their edit
 * distance apart, so a shape of the same family is always nearer. The nearest
 * entry is the closest, the first in table order among equals. A k-d tree
 * over each family's shapes (in log2 coordinates) and a BK-tree over all keys
 * (edit distance is a metric) find it without comparing every hole with every
 * entry: about n log n for shapes.
 */
#define SHAPE_FAR 1000.0

/* A key's numbers in log2 and its family (both owned), or n == 0 when it has
 * no number. */
struct shape {
	double *x;    /* log2 of each number */
	size_t n;     /* numbers; 0: not a shape */
	char *family; /* the key with each number replaced by '#' */
};

/* A finite positive number spanning all of [p, end). */
static bool positive_number(const char *p, const char *end, double *v)
{
	char *e;
	if (p == end || isspace((unsigned char)*p))
		return false;
	*v = strtod(p, &e);
	return e == end && *v > 0 && isfinite(*v);
}

static struct shape shape_parse(const char *key)
{
	struct shape sh = { 0 };
	size_t len = strlen(key);
	struct rt_sb fam = RT_SB_INIT;
	sh.x = xcalloc(len + 1, sizeof(double));
	bool parts = strchr(key, ',') != NULL;
	for (const char *p = key; *p;) {
		const char *end = p;
		double v = 0;
		if (parts) { /* one comma-separated part */
			end = p + strcspn(p, ",");
		} else if (isdigit((unsigned char)*p)) { /* one run of digits */
			while (isdigit((unsigned char)*end))
				end++;
		}
		if (end > p && positive_number(p, end, &v)) {
			sh.x[sh.n++] = log2(v);
			rt_sb_addc(&fam, '#');
		} else {
			end = end > p ? end : p + 1;
			rt_sb_add(&fam, p, (size_t)(end - p));
		}
		p = end;
		if (parts && *p == ',')
			rt_sb_addc(&fam, *p++);
	}
	if (!sh.n) {
		free(sh.x);
		rt_sb_release(&fam);
		return (struct shape){ 0 };
	}
	sh.family = rt_sb_detach(&fam, NULL);
	return sh;
}

static void shape_release(struct shape *sh)
{
	free(sh->x);
	free(sh->family);
}

static bool same_family(const struct shape *a, const struct shape *b)
{
	return a->n && a->n == b->n && !strcmp(a->family, b->family);
}

static double shape_distance(const struct shape *a, const struct shape *b)
{
	double d = 0;
	for (size_t i = 0; i < a->n; i++)
		d += fabs(a->x[i] - b->x[i]);
	return d;
}

/* Every entry, indexed. */
struct near_index {
	const struct entry *e;  /* the table's entries (borrowed) */
	size_t ne;
	struct shape *sh;       /* each entry's shape */
	size_t *kd;             /* entries that are shapes, by family, each family a k-d tree */
	size_t nkd;
	size_t *bk_child;       /* BK-tree: first child of each entry, or SIZE_MAX */
	size_t *bk_next;        /* next sibling, or SIZE_MAX */
	size_t *bk_edge;        /* distance to the parent */
	bool bk_built;          /* the BK-tree is built (only when a key needs it) */
};

/* The best so far: the least distance, then the first entry. */
struct near_best {
	double d;  /* distance */
	size_t i;  /* entry, SIZE_MAX: none yet */
};

static void near_offer(struct near_best *b, double d, size_t i)
{
	if (d < b->d || (d == b->d && i < b->i))
		b->d = d, b->i = i;
}

/* An entry and the value it is sorted by. */
struct kd_item {
	double v; /* a coordinate */
	size_t i; /* the entry */
};

static int by_value(const void *x, const void *y)
{
	const struct kd_item *a = x, *b = y;
	if (a->v != b->v)
		return (a->v > b->v) - (a->v < b->v);
	return (a->i > b->i) - (a->i < b->i);
}

/* Sort ix->kd[lo, hi) by axis. */
static void kd_sort(struct near_index *ix, size_t lo, size_t hi, size_t axis)
{
	struct kd_item *t = xmalloc((hi - lo + 1) * sizeof(*t));
	for (size_t k = lo; k < hi; k++)
		t[k - lo] = (struct kd_item){ ix->sh[ix->kd[k]].x[axis], ix->kd[k] };
	qsort(t, hi - lo, sizeof(*t), by_value);
	for (size_t k = lo; k < hi; k++)
		ix->kd[k] = t[k - lo].i;
	free(t);
}

/* The k-d tree: kd[lo, hi) of one family, split at the middle on axis depth % n. */
static void kd_build(struct near_index *ix, size_t lo, size_t hi, size_t depth)
{
	if (hi - lo < 2)
		return;
	kd_sort(ix, lo, hi, depth % ix->sh[ix->kd[lo]].n);
	size_t mid = lo + (hi - lo) / 2;
	kd_build(ix, lo, mid, depth + 1);
	kd_build(ix, mid + 1, hi, depth + 1);
}

static void kd_search(const struct near_index *ix, const struct shape *q, size_t lo, size_t hi,
		      size_t depth, struct near_best *b)
{
	if (lo >= hi)
		return;
	size_t mid = lo + (hi - lo) / 2, p = ix->kd[mid], axis = depth % q->n;
	near_offer(b, shape_distance(q, &ix->sh[p]), p);
	double diff = q->x[axis] - ix->sh[p].x[axis];
	/* Left of mid lies at or below the split on this axis, right at or
	 * above: the far side is at least |diff| away (equal may still tie). */
	if (diff < 0) {
		kd_search(ix, q, lo, mid, depth + 1, b);
		if (-diff <= b->d)
			kd_search(ix, q, mid + 1, hi, depth + 1, b);
	} else {
		kd_search(ix, q, mid + 1, hi, depth + 1, b);
		if (diff <= b->d)
			kd_search(ix, q, lo, mid, depth + 1, b);
	}
}

/* ix->kd in order of family (then entry): each family's shapes one run. */
static void group_families(struct near_index *ix)
{
	struct keyed *t = xcalloc(ix->nkd + 1, sizeof(*t));
	for (size_t k = 0; k < ix->nkd; k++)
		t[k] = (struct keyed){ ix->sh[ix->kd[k]].family, ix->kd[k] };
	qsort(t, ix->nkd, sizeof(*t), by_key_then_index);
	for (size_t k = 0; k < ix->nkd; k++)
		ix->kd[k] = t[k].i;
	free(t);
}

/* The first and end of family's k-d tree in ix->kd (none: equal). */
static void kd_range(const struct near_index *ix, const char *family, size_t *lo, size_t *hi)
{
	size_t a = 0, b = ix->nkd;
	while (a < b) { /* the first entry of a family >= family */
		size_t m = a + (b - a) / 2;
		if (strcmp(ix->sh[ix->kd[m]].family, family) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	for (b = ix->nkd; a < b;) { /* the first of a family > family */
		size_t m = a + (b - a) / 2;
		if (strcmp(ix->sh[ix->kd[m]].family, family) <= 0)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

static void near_init(struct near_index *ix, const struct entry *e, size_t ne)
{
	memset(ix, 0, sizeof(*ix));
	ix->e = e;
	ix->ne = ne;
	ix->sh = xcalloc(ne + 1, sizeof(*ix->sh));
	ix->kd = xcalloc(ne + 1, sizeof(size_t));
	for (size_t i = 0; i < ne; i++)
		if ((ix->sh[i] = shape_parse(e[i].key)).n)
			ix->kd[ix->nkd++] = i;
	group_families(ix);
	for (size_t lo = 0, hi; lo < ix->nkd; lo = hi) {
		kd_range(ix, ix->sh[ix->kd[lo]].family, &lo, &hi);
		kd_build(ix, lo, hi, 0);
	}
}

static void near_release(struct near_index *ix)
{
	for (size_t i = 0; i < ix->ne; i++)
		shape_release(&ix->sh[i]);
	free(ix->sh);
	free(ix->kd);
	free(ix->bk_child);
	free(ix->bk_next);
	free(ix->bk_edge);
}

/* The BK-tree of every key by edit distance, rooted at entry 0. */
static void bk_build(struct near_index *ix)
{
	ix->bk_built = true;
	ix->bk_child = xmalloc((ix->ne + 1) * sizeof(size_t));
	ix->bk_next = xmalloc((ix->ne + 1) * sizeof(size_t));
	ix->bk_edge = xcalloc(ix->ne + 1, sizeof(size_t));
	for (size_t i = 0; i < ix->ne; i++)
		ix->bk_child[i] = ix->bk_next[i] = SIZE_MAX;
	for (size_t i = 1; i < ix->ne; i++) {
		size_t node = 0;
		for (;;) {
			size_t d = rt_edit_distance(ix->e[i].key, ix->e[node].key), c;
			for (c = ix->bk_child[node]; c != SIZE_MAX && ix->bk_edge[c] != d; c = ix->bk_next[c])
				;
			if (c == SIZE_MAX) {
				ix->bk_edge[i] = d;
				ix->bk_next[i] = ix->bk_child[node];
				ix->bk_child[node] = i;
				break;
			}
			node = c;
		}
	}
}

/* A BK-tree node to visit, and the least distance its subtree can hold. */
struct bk_visit {
	size_t node; /* entry */
	size_t gap;  /* lower bound on the edit distance of its subtree */
};

static int by_gap_down(const void *x, const void *y)
{
	const struct bk_visit *a = x, *b = y;
	return (a->gap < b->gap) - (a->gap > b->gap);
}

/* Every entry is SHAPE_FAR + edit distance from key: the BK-tree skips the
 * subtrees the triangle inequality rules out. Nearer subtrees go first, and
 * each bound is checked again when its turn comes, as the best shrinks. */
static void bk_search(struct near_index *ix, const char *key, struct near_best *b)
{
	if (!ix->ne)
		return;
	if (!ix->bk_built)
		bk_build(ix);
	struct bk_visit *stack = xmalloc((ix->ne + 1) * sizeof(*stack));
	size_t top = 0;
	stack[top++] = (struct bk_visit){ 0, 0 };
	while (top) {
		struct bk_visit v = stack[--top];
		if (SHAPE_FAR + (double)v.gap > b->d)
			continue;
		size_t d = rt_edit_distance(key, ix->e[v.node].key), from = top;
		near_offer(b, SHAPE_FAR + (double)d, v.node);
		for (size_t c = ix->bk_child[v.node]; c != SIZE_MAX; c = ix->bk_next[c]) {
			size_t e = ix->bk_edge[c], gap = e > d ? e - d : d - e;
			if (SHAPE_FAR + (double)gap <= b->d)
				stack[top++] = (struct bk_visit){ c, gap };
		}
		qsort(stack + from, top - from, sizeof(*stack), by_gap_down);
	}
	free(stack);
}

/* The distance of the definition above, for the rare case the trees do not
 * settle (shapes of the same family, but SHAPE_FAR or more apart). */
static double key_distance(const struct near_index *ix, const struct shape *q, const char *key,
			   size_t j)
{
	if (same_family(q, &ix->sh[j]))
		return shape_distance(q, &ix->sh[j]);
	return SHAPE_FAR + (double)rt_edit_distance(key, ix->e[j].key);
}

/* The nearest entry to key, or SIZE_MAX for an empty table. */
static size_t near_find(struct near_index *ix, const char *key)
{
	struct near_best b = { INFINITY, SIZE_MAX };
	struct shape q = shape_parse(key);
	size_t lo = 0, hi = 0;
	if (q.n)
		kd_range(ix, q.family, &lo, &hi);
	kd_search(ix, &q, lo, hi, 0, &b);
	if (b.d >= SHAPE_FAR) {
		if (lo < hi) {
			for (size_t j = 0; j < ix->ne; j++)
				near_offer(&b, key_distance(ix, &q, key, j), j);
		} else {
			bk_search(ix, key, &b);
		}
	}
	shape_release(&q);
	return b.i;
}

static int by_share(const void *x, const void *y)
{
	const struct research_hole *a = x, *b = y;
	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return strcmp(a->key, b->key);
}

/* The holes of table e (ne entries) among the observed keys s (ns, merged);
 * consumes neither. */
static int holes_core(const char *profile_name, const char *weight_col, const struct entry *e,
		      size_t ne, bool csv, const struct seen *s, size_t ns, struct research_holes *out,
		      struct rt_sb *err)
{
	out->csv = csv;
	out->entries = ne;
	out->observed = ns;
	double total = 0, covered = 0;
	for (size_t i = 0; i < ns; i++)
		total += s[i].weight;
	if (!isfinite(total)) /* found by the holes fuzzer: shares would be NaN */
		return rt_errf(err, RT_EINVAL, "%s: the weights in column '%s' add up beyond a double",
			       profile_name, weight_col ? weight_col : "(count)");
	out->v = xcalloc(ns + 1, sizeof(*out->v));
	struct keyed *sorted = sort_keys(e, ne, sizeof(*e));
	struct near_index ix;
	near_init(&ix, e, ne);
	for (size_t i = 0; i < ns; i++) {
		struct keyed want = { s[i].key, 0 };
		if (bsearch(&want, sorted, ne, sizeof(*sorted), by_key)) {
			out->covered++;
			covered += s[i].weight;
			continue;
		}
		struct research_hole *h = &out->v[out->n++];
		h->key = xstrdup(s[i].key);
		h->weight = s[i].weight;
		h->share = total > 0 ? s[i].weight / total : 0;
		size_t j = near_find(&ix, s[i].key);
		if (j != SIZE_MAX) {
			h->nearest = xstrdup(e[j].key);
			h->fields_json = xstrdup(e[j].fields);
		}
	}
	near_release(&ix);
	free(sorted);
	out->covered_share = total > 0 ? covered / total : 0;
	qsort(out->v, out->n, sizeof(*out->v), by_share);
	return 0;
}

static void free_entries(struct entry *e, size_t ne)
{
	for (size_t i = 0; i < ne; i++) {
		free(e[i].key);
		free(e[i].fields);
	}
	free(e);
}

static void free_seen(struct seen *s, size_t ns)
{
	for (size_t i = 0; i < ns; i++)
		free(s[i].key);
	free(s);
}

int research_holes_find(const char *table_path, const char *profile_path,
			const char *const *key_columns, size_t n_key_columns, const char *weight_col,
			struct research_holes *out, struct rt_sb *err)
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
	if (!rc)
		rc = holes_core(profile_path, weight_col, e, ne, csv, s, ns, out, err);
	free_entries(e, ne);
	free_seen(s, ns);
	if (rc)
		research_holes_release(out);
	return rc;
}

int research_holes_find_obs(const char *table_path, const struct research_hole_obs *obs, size_t n,
			    const char *const *key_columns, size_t n_key_columns,
			    struct research_holes *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	struct entry *e = NULL;
	size_t ne = 0;
	bool csv = false;
	int rc = load_table(table_path, key_columns, n_key_columns, &e, &ne, &csv, err);
	struct seen *s = xcalloc(n + 1, sizeof(*s));
	size_t ns = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!(obs[i].weight >= 0) || !isfinite(obs[i].weight)) {
			rc = rt_errf(err, RT_EINVAL, "%s: observed shape '%s': weight %g is not a number >= 0",
				     table_path, obs[i].key, obs[i].weight);
			break;
		}
		s[ns].key = xstrdup(obs[i].key);
		s[ns++].weight = obs[i].weight;
	}
	if (!rc) {
		merge_rows(s, &ns);
		rc = holes_core("the profile", "time", e, ne, csv, s, ns, out, err);
	}
	free_entries(e, ne);
	free_seen(s, ns);
	if (rc)
		research_holes_release(out);
	return rc;
}

void research_holes_release(struct research_holes *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].key);
		free(h->v[i].nearest);
		free(h->v[i].fields_json);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}
