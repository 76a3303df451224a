/*
 * The performance model of simserve: a tile table keyed by shape class and
 * the formula for the duration of one scheduler step.
 *
 * Each shape class has a hidden "true best" tile. The entry in use costs
 * 1 + 0.15 per power of two away from it, summed over BLOCK_M, BLOCK_N and
 * num_warps; a missing entry falls back to a slow default (1.6); an entry
 * with "broken": true is fast (0.8) but breaks every GSM8K answer.
 */
#include "simserve.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row per shape class: its name and the hidden best tile (another
 * "model" replaces the tiles with --best: ss_best_set). */
static struct {
	const char *name; /* key in the table */
	long block_m;     /* best BLOCK_M */
	long block_n;     /* best BLOCK_N */
	long num_warps;   /* best num_warps */
} classes[SS_NCLASS] = {
	[SS_DEC_BS_LE_8] = { "decode.BS_LE_8", 16, 64, 4 },
	[SS_DEC_BS_LE_32] = { "decode.BS_LE_32", 32, 64, 4 },
	[SS_DEC_BS_GT_32] = { "decode.BS_GT_32", 64, 128, 8 },
	[SS_PRE_T_LE_512] = { "prefill.T_LE_512", 64, 64, 4 },
	[SS_PRE_T_GT_512] = { "prefill.T_GT_512", 128, 128, 8 },
};

#define MISSING_FACTOR 1.6
#define BROKEN_FACTOR 0.8
#define STEP_FACTOR 0.15

const char *ss_class_name(enum ss_class c)
{
	return classes[c].name;
}

int ss_best_set(const char *spec, struct rt_sb *err)
{
	char *copy = xstrdup(spec), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(copy, " ", &save); tok && !rc; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		long m, n, w;
		char tail;
		int c = SS_NCLASS;
		if (eq) {
			*eq = 0;
			for (c = 0; c < SS_NCLASS && strcmp(classes[c].name, tok); c++)
				;
		}
		if (c == SS_NCLASS || sscanf(eq + 1, "%ld,%ld,%ld%c", &m, &n, &w, &tail) != 3 || m < 1 || n < 1 ||
		    w < 1 || (m & (m - 1)) || (n & (n - 1)) || (w & (w - 1)))
			rc = rt_errf(err, RT_EINVAL, "--best: '%s': expected CLASS=BLOCK_M,BLOCK_N,num_warps with a "
				     "shape class and powers of two", tok);
		else {
			classes[c].block_m = m;
			classes[c].block_n = n;
			classes[c].num_warps = w;
		}
	}
	free(copy);
	return rc;
}

static int field(json_t *entry, const char *path, const char *key, const char *name, long *out,
		 struct rt_sb *err)
{
	json_t *v = json_object_get(entry, name);
	if (!v)
		return rt_errf(err, RT_EINVAL, "%s: %s: missing field '%s'", path, key, name);
	if (!json_is_integer(v))
		return rt_errf(err, RT_EINVAL, "%s: %s.%s: expected an integer", path, key, name);
	json_int_t n = json_integer_value(v);
	if (n < 1 || n > 4096 || (n & (n - 1)))
		return rt_errf(err, RT_EINVAL, "%s: %s.%s: %lld is not a power of two in 1..4096",
			       path, key, name, (long long)n);
	*out = (long)n;
	return 0;
}

static double away(long have, long best)
{
	return fabs(log2((double)have) - log2((double)best));
}

static int load_entry(const char *path, const char *key, json_t *entry, struct ss_tiles *t,
		      struct rt_sb *err)
{
	static const char *const fields[] = { "BLOCK_M", "BLOCK_N", "num_warps", "broken" };
	const char *names[SS_NCLASS];
	int c;
	for (c = 0; c < SS_NCLASS; c++) {
		names[c] = classes[c].name;
		if (!strcmp(classes[c].name, key))
			break;
	}
	if (c == SS_NCLASS) {
		const char *dym = rt_did_you_mean(key, names, SS_NCLASS);
		if (dym)
			return rt_errf(err, RT_EINVAL, "%s: %s: unknown shape class (did you mean '%s'?)",
				       path, key, dym);
		return rt_errf(err, RT_EINVAL, "%s: %s: unknown shape class", path, key);
	}
	if (!json_is_object(entry))
		return rt_errf(err, RT_EINVAL, "%s: %s: expected an object", path, key);
	const char *fk;
	json_t *fv;
	json_object_foreach(entry, fk, fv) {
		size_t i;
		for (i = 0; i < RT_ARRAY_SIZE(fields); i++)
			if (!strcmp(fk, fields[i]))
				break;
		if (i == RT_ARRAY_SIZE(fields)) {
			const char *dym = rt_did_you_mean(fk, fields, RT_ARRAY_SIZE(fields));
			return rt_errf(err, RT_EINVAL, "%s: %s: unknown field '%s'%s%s%s", path, key, fk,
				       dym ? " (did you mean '" : "", dym ? dym : "", dym ? "'?)" : "");
		}
	}
	long m, n, w;
	int rc;
	if ((rc = field(entry, path, key, "BLOCK_M", &m, err)) ||
	    (rc = field(entry, path, key, "BLOCK_N", &n, err)) ||
	    (rc = field(entry, path, key, "num_warps", &w, err)))
		return rc;
	json_t *b = json_object_get(entry, "broken");
	if (b && !json_is_boolean(b))
		return rt_errf(err, RT_EINVAL, "%s: %s.broken: expected true or false", path, key);
	ss_tiles_set(t, (enum ss_class)c,
		     1.0 + STEP_FACTOR * (away(m, classes[c].block_m) + away(n, classes[c].block_n) +
					  away(w, classes[c].num_warps)),
		     b && json_is_true(b));
	return 0;
}

static void tiles_init(struct ss_tiles *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < SS_NCLASS; c++)
		t->factor[c] = MISSING_FACTOR;
}

void ss_tiles_set(struct ss_tiles *t, enum ss_class c, double f, bool broken)
{
	t->present[c] = true;
	t->broken[c] = broken;
	t->factor[c] = broken ? BROKEN_FACTOR : f;
	if (broken)
		t->any_broken = true;
}

int ss_tiles_load_json(json_t *root, const char *name, struct ss_tiles *t, struct rt_sb *err)
{
	tiles_init(t);
	if (!json_is_object(root))
		return rt_errf(err, RT_EINVAL, "%s: expected an object keyed by shape class", name);
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		int rc = load_entry(name, key, v, t, err);
		if (rc)
			return rc;
	}
	return 0;
}

int ss_tiles_load(const char *path, struct ss_tiles *t, struct rt_sb *err)
{
	tiles_init(t);
	if (!path)
		return 0;
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return rt_errf(err, RT_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	int rc = ss_tiles_load_json(root, path, t, err);
	json_decref(root);
	return rc;
}

static enum ss_class decode_class(long batch)
{
	if (batch <= 8)
		return SS_DEC_BS_LE_8;
	return batch <= 32 ? SS_DEC_BS_LE_32 : SS_DEC_BS_GT_32;
}

int64_t ss_step_ns(const struct ss_config *cfg, const struct ss_tiles *t, long prefill_tokens,
		   long batch)
{
	if (cfg->zero_latency)
		return 0;
	double us = 0;
	if (prefill_tokens > 0) {
		enum ss_class pc = prefill_tokens <= 512 ? SS_PRE_T_LE_512 : SS_PRE_T_GT_512;
		us += (double)prefill_tokens * cfg->prefill_us_per_token * t->factor[pc] *
		      (cfg->prefill_speed > 0 ? cfg->prefill_speed : 1.0);
	}
	if (batch > 0) {
		double dec = (cfg->decode_us_per_step +
			      cfg->decode_us_per_seq * (double)batch * t->factor[decode_class(batch)]) *
			     (cfg->decode_speed > 0 ? cfg->decode_speed : 1.0);
		if (batch > cfg->max_graph_bs)
			dec *= 1.5; /* no CUDA graph captured for this size */
		us += dec;
	}
	return (int64_t)(us * 1000.0);
}
