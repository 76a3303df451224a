/*
 * Importing a profile into the store, and the findings read from it (see
 * findings.h): hot ops, table holes, fallbacks, ungraphed steps (from
 * simserve's step annotations, or from the trace's timing and launches), the
 * GPU's idle share of the wall time, and recompile storms from a campaign's
 * log events.
 */
#include "agents/research/findings.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/research/holes.h"

/* An op below this share of kernel time is not called hot. */
#define HOT_OP_MIN_SHARE 0.05
/* A GPU idle for less of the wall time than this is no finding. */
#define GPU_IDLE_MIN_SHARE 0.20

static const struct {
	const char *name; /* findings.kind */
	double speedup;   /* plausible speedup of acting on it */
} kinds[] = {
#define XX(code, kind, speedup, what) { kind, speedup },
	RESEARCH_FINDING_MAP(XX)
#undef XX
};

const char *research_finding_name(enum research_finding_kind k)
{
	return (unsigned)k < RESEARCH_N_FINDING_KINDS ? kinds[k].name : "unknown";
}

double research_finding_speedup(enum research_finding_kind k)
{
	return (unsigned)k < RESEARCH_N_FINDING_KINDS ? kinds[k].speedup : 1;
}

double research_bound(double share, double speedup)
{
	return speedup > 0 ? share * (1 - 1 / speedup) : 0;
}

void research_variant_name(const char *prefix, const char *key, char *out, size_t n)
{
	size_t k = (size_t)snprintf(out, n, "%s-", prefix);
	for (const char *p = key; *p && k + 1 < n; p++)
		out[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-';
	out[k < n ? k : n - 1] = 0;
}

/* ---- import ---- */

static void to_rows(const struct research_profile *p, long steps, double wall,
		    struct db_profile_op *ops, struct db_profile_kernel *k)
{
	struct research_op_sum sum[RESEARCH_N_OPS];
	research_profile_ops(p, sum);
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		ops[i] = (struct db_profile_op){ (char *)research_op_names[i], sum[i].us, sum[i].share,
						 sum[i].calls,
						 steps > 0 ? (double)sum[i].calls / (double)steps : NAN,
						 wall > 0 ? sum[i].us / wall : NAN };
	for (size_t i = 0; i < p->n; i++)
		k[i] = (struct db_profile_kernel){ p->k[i].name, (char *)research_op_names[p->k[i].op],
						   p->k[i].shape, p->k[i].fallback, p->k[i].us,
						   p->total_us > 0 ? p->k[i].us / p->total_us : 0,
						   p->k[i].calls };
}

/* Read every file into p (one format); the profile's name and fingerprint
 * (sha256 of the files' sha256s) into *names and sha. */
static int read_all(const struct research_import *in, const struct research_format *f,
		    struct research_profile *p, char **names, char sha[65], struct rt_sb *err)
{
	struct rt_sb all = RT_SB_INIT, shas = RT_SB_INIT;
	int rc = 0;
	for (size_t i = 0; i < in->n_paths && !rc; i++) {
		const struct research_format *g;
		char one[65];
		if (i && !in->format && !(rc = research_format_find(NULL, in->paths[i], &g, err)) && g != f)
			rc = rt_errf(err, RT_EUSAGE, "%s is a %s profile, %s a %s one: import them apart",
				     in->paths[i], g->name, in->paths[0], f->name);
		if (!rc)
			rc = f->read(in->paths[i], p, err);
		research_profile_file_done(p);
		if (!rc)
			rc = rt_sha256_file(in->paths[i], one, err);
		rt_sb_addf(&all, "%s%s", i ? " " : "", in->paths[i]);
		if (!rc)
			rt_sb_adds(&shas, one);
	}
	rt_sha256_hex(shas.buf, shas.len, sha);
	*names = rt_sb_detach(&all, NULL);
	rt_sb_release(&shas);
	return rc;
}

int research_import(struct db *db, const struct research_import *in, struct research_opmap *map,
		    int64_t *profile_id, const struct research_format **format, struct rt_sb *err)
{
	const struct research_format *f;
	if (!in->n_paths)
		return rt_errf(err, RT_EUSAGE, "no profile file given");
	int rc = research_format_find(in->format, in->paths[0], &f, err);
	if (rc)
		return rc;
	*format = f;
	struct research_profile p;
	research_profile_init(&p, map);
	p.format = f->name;
	char sha[65] = "", *names = NULL;
	rc = read_all(in, f, &p, &names, sha, err);
	if (!rc && !p.launches)
		rc = rt_errf(err, RT_EINVAL, "%s: no GPU kernel in this %s profile", names, f->name);
	int64_t dup = 0;
	/* the same bytes into one campaign again: its findings would count twice
	 * in findings and propose (without a campaign, another --spec may map
	 * the same trace otherwise: imported again) */
	int drc = rc || in->campaign_id <= 0 ? RT_ENOENT : db_profile_find_sha(db, in->campaign_id, sha, &dup, err);
	if (!drc)
		rc = rt_errf(err, RT_EUSAGE, "%s: already imported as profile %lld (the same sha256 %.12s...); "
			     "`ratchet findings --profile %lld` lists its findings", names, (long long)dup, sha,
			     (long long)dup);
	else if (drc != RT_ENOENT)
		rc = drc;
	if (rc) {
		research_profile_release(&p);
		free(names);
		return rc;
	}
	research_profile_sort(&p);
	long steps = in->steps > 0 ? in->steps : p.steps > 0 ? p.steps : -1;
	const char *wall_from;
	double wall = research_profile_wall(&p, &wall_from);
	bool timed = p.timed > 0;
	struct db_profile row = {
		.campaign_id = in->campaign_id, .iteration_id = in->iteration_id,
		.path = names, .format = (char *)f->name, .sha256 = sha,
		.total_us = p.total_us, .launches = p.launches, .steps = steps,
		.steps_from = in->steps > 0 ? "option" : p.steps > 0 ? "trace" : NULL,
		.ungraphed_steps = p.ungraphed_steps, .ungraphed_us = p.ungraphed_us,
		.ungraphed_batch = p.ungraphed_batch, .graph_max_batch = p.graph_max_batch,
		.wall_us = wall > 0 ? wall : NAN, .wall_from = (char *)wall_from,
		.short_kernels = timed ? p.short_kernels : -1,
		.host_launches = timed ? p.host_launches : -1,
		.graph_launches = timed ? p.graph_launches : -1,
	};
	struct db_profile_op ops[RESEARCH_N_OPS];
	struct db_profile_kernel *k = xcalloc(p.n + 1, sizeof(*k));
	to_rows(&p, steps, wall, ops, k);
	rc = db_profile_add(db, &row, ops, RESEARCH_N_OPS, k, p.n, profile_id, err);
	free(k);
	free(names);
	research_profile_release(&p);
	return rc;
}

/* ---- findings from a profile ---- */

/* What research_find works from. */
struct find_ctx {
	struct db *db;                    /* the store */
	struct db_profile prof;           /* the profile */
	struct db_profile_op *ops;        /* its ops, largest first */
	size_t nops;
	struct db_profile_kernel *k;      /* its kernels, largest first */
	size_t nk;
	int64_t campaign_id;              /* findings belong here */
	int64_t iteration_id;
	size_t added;                     /* findings recorded */
	char **hole_shapes;               /* shapes reported as holes (fallbacks skip them) */
	size_t n_hole_shapes;
	const struct research_table *tables; /* the tables checked for holes */
	size_t n_tables;
};

/* The table whose space-searched entries include key, or NULL. */
static const struct research_table *searched_by(const struct research_table *t, size_t n,
						const char *key)
{
	for (size_t i = 0; key && i < n; i++)
		for (size_t j = 0; j < t[i].n_searched; j++)
			if (!strcmp(t[i].searched[j], key))
				return &t[i];
	return NULL;
}

static int put(struct find_ctx *c, enum research_finding_kind kind, const char *subject,
	       double share, const char *detail, const char *evidence, const char *variant,
	       struct rt_sb *err)
{
	double k = research_finding_speedup(kind);
	struct db_finding f = {
		.campaign_id = c->campaign_id, .profile_id = c->prof.id, .iteration_id = c->iteration_id,
		.kind = (char *)research_finding_name(kind), .subject = (char *)subject,
		.detail = (char *)detail, .evidence = (char *)evidence, .variant = (char *)variant,
		.share = share, .speedup = k, .potential = research_bound(share, k),
	};
	int64_t id;
	int rc = db_finding_put(c->db, &f, &id, err);
	c->added += !rc;
	return rc;
}

static int hot_ops(struct find_ctx *c, struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < c->nops && !rc; i++) {
		const struct db_profile_op *o = &c->ops[i];
		if (!strcmp(o->op, "other") || o->share < HOT_OP_MIN_SHARE)
			continue;
		struct rt_sb ev = RT_SB_INIT;
		rt_sb_addf(&ev, "%.1f%% of kernel time (%.0f us of %.0f), %ld launches", o->share * 100,
			   o->us, c->prof.total_us, o->calls);
		if (!isnan(o->calls_per_step))
			rt_sb_addf(&ev, ", %.1f per step over %ld steps", o->calls_per_step, c->prof.steps);
		for (size_t j = 0; j < c->nk; j++)
			if (!strcmp(c->k[j].op, o->op)) {
				rt_sb_addf(&ev, "; hottest kernel %s (%.1f%%)", c->k[j].name, c->k[j].share * 100);
				break;
			}
		if (!isnan(o->wall_share))
			rt_sb_addf(&ev, "; %.1f%% of wall time (%s, %.0f us)", o->wall_share * 100,
				   c->prof.wall_from ? c->prof.wall_from : "?", c->prof.wall_us);
		char *detail = isnan(o->wall_share)
				       ? xasprintf("%s at %.1f%% of kernel time", o->op, o->share * 100)
				       : xasprintf("%s at %.1f%% of kernel time, %.1f%% of wall time", o->op,
						   o->share * 100, o->wall_share * 100);
		rc = put(c, RESEARCH_FIND_HOT_OP, o->op, o->share, detail, ev.buf, NULL, err);
		free(detail);
		rt_sb_release(&ev);
	}
	return rc;
}

/* The key a shape needs in a CSV table: "4096x4096x128" -> "4096,4096,128". */
static char *shape_key(const char *shape, bool csv)
{
	char *s = xstrdup(shape);
	for (char *p = s; csv && *p; p++)
		if (*p == 'x' && p > s && isdigit((unsigned char)p[-1]) && isdigit((unsigned char)p[1]))
			*p = ',';
	return s;
}

/* The variant that fills a hole with its nearest entry's fields (JSON). */
static char *fill_variant(const struct research_table *t, const struct research_hole *h)
{
	char name[96];
	research_variant_name("fill", h->key, name, sizeof(name));
	json_t *fields = json_loads(h->fields_json, JSON_DECODE_ANY, NULL);
	json_t *table = json_pack("{s:s, s:{s:o}}", "file", t->file, "set", h->key,
				  fields ? fields : json_object());
	if (t->n_key_columns) {
		json_t *kc = json_array();
		for (size_t i = 0; i < t->n_key_columns; i++)
			json_array_append_new(kc, json_string(t->key_columns[i]));
		json_object_set_new(table, "key_columns", kc);
	}
	char *desc = xasprintf("fill the %s hole with the nearest entry (%s)", h->key, h->nearest);
	json_t *v = json_pack("{s:s, s:s, s:o}", "name", name, "description", desc, "table", table);
	char *out = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(v);
	free(desc);
	return out;
}

/* Evidence of one hole: its time and launches, and the default kernels it ran. */
static void hole_evidence(const struct find_ctx *c, const struct research_table *t,
			  const struct research_hole *h, bool csv, struct rt_sb *ev)
{
	long calls = 0;
	const char *fallback = NULL;
	for (size_t j = 0; j < c->nk; j++) {
		if (!c->k[j].shape)
			continue;
		char *key = shape_key(c->k[j].shape, csv);
		if (!strcmp(key, h->key)) {
			calls += c->k[j].calls;
			if (c->k[j].fallback && !fallback)
				fallback = c->k[j].name;
		}
		free(key);
	}
	rt_sb_addf(ev, "%.0f us over %ld launches on shape %s (%.1f%% of kernel time); %s has no "
		   "entry for it", h->weight, calls, h->key,
		   c->prof.total_us > 0 ? 100 * h->weight / c->prof.total_us : 0, t->file);
	if (fallback)
		rt_sb_addf(ev, "; the default kernel ran: %s", fallback);
	rt_sb_addf(ev, "; nearest entry %s", h->nearest ? h->nearest : "none (empty table)");
}

/* Two keys of one family: the same leading word ("prefill.T_LE_512" and
 * "prefill.T_GT_512"), or, for numeric shapes ("4096,128"), as many parts.
 * A table is checked against every shape of the profile; a shape whose
 * nearest entry is of another family belongs to another table. */
static bool same_family(const char *a, const char *b)
{
	size_t la = strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
	size_t lb = strspn(b, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
	if (la || lb)
		return la == lb && !strncmp(a, b, la);
	size_t pa = 0, pb = 0;
	for (; *a; a++)
		pa += !isdigit((unsigned char)*a) && *a != '.';
	for (; *b; b++)
		pb += !isdigit((unsigned char)*b) && *b != '.';
	return pa == pb;
}

int research_record_hole(struct db *db, const struct research_table *t, const struct research_hole *h,
			 double share, const char *evidence, int64_t campaign_id, int64_t profile_id,
			 int64_t iteration_id, struct rt_sb *err)
{
	double k = research_finding_speedup(RESEARCH_FIND_HOLE);
	char *subject = xasprintf("%s: %s", t->file, h->key);
	char *detail = xasprintf("%s has no entry for %s (%.1f%% of the time)", t->file, h->key,
				 share * 100);
	char *variant = h->fields_json ? fill_variant(t, h) : NULL;
	struct db_finding f = {
		.campaign_id = campaign_id, .profile_id = profile_id, .iteration_id = iteration_id,
		.kind = (char *)research_finding_name(RESEARCH_FIND_HOLE), .subject = subject,
		.detail = detail, .evidence = (char *)evidence, .variant = variant, .share = share,
		.speedup = k, .potential = research_bound(share, k),
	};
	int64_t id;
	int rc = db_finding_put(db, &f, &id, err);
	free(subject);
	free(detail);
	free(variant);
	return rc;
}

static int table_holes(struct find_ctx *c, const struct research_table *t, struct rt_sb *err)
{
	struct research_hole_obs *obs = xcalloc(c->nk + 1, sizeof(*obs));
	char **keys = xcalloc(c->nk + 1, sizeof(char *));
	size_t n = 0;
	bool csv = t->n_key_columns > 0;
	for (size_t j = 0; j < c->nk; j++)
		if (c->k[j].shape) {
			keys[n] = shape_key(c->k[j].shape, csv);
			obs[n] = (struct research_hole_obs){ keys[n], c->k[j].us };
			n++;
		}
	struct research_holes h;
	int rc = research_holes_find_obs(t->path, obs, n, t->key_columns, t->n_key_columns, &h, err);
	for (size_t j = 0; j < n; j++)
		free(keys[j]);
	free(keys);
	free(obs);
	if (rc)
		return rc;
	for (size_t i = 0; i < h.n && !rc; i++) {
		const struct research_hole *x = &h.v[i];
		if (x->nearest && !same_family(x->key, x->nearest))
			continue; /* a shape of another table (another op's) */
		if (searched_by(t, 1, x->key))
			continue; /* the space's search fills it: not a hole */
		double share = c->prof.total_us > 0 ? x->weight / c->prof.total_us : 0;
		struct rt_sb ev = RT_SB_INIT;
		hole_evidence(c, t, x, h.csv, &ev);
		rc = research_record_hole(c->db, t, x, share, ev.buf, c->campaign_id, c->prof.id,
					  c->iteration_id, err);
		c->added += !rc;
		c->hole_shapes = xrealloc(c->hole_shapes, (c->n_hole_shapes + 1) * sizeof(char *));
		c->hole_shapes[c->n_hole_shapes++] = xstrdup(x->key);
		rt_sb_release(&ev);
	}
	research_holes_release(&h);
	return rc;
}

static bool is_hole(const struct find_ctx *c, const char *shape)
{
	for (size_t i = 0; shape && i < c->n_hole_shapes; i++)
		if (!strcmp(c->hole_shapes[i], shape))
			return true;
	return false;
}

static int fallbacks(struct find_ctx *c, struct rt_sb *err)
{
	int rc = 0;
	for (size_t j = 0; j < c->nk && !rc; j++) {
		const struct db_profile_kernel *k = &c->k[j];
		if (!k->fallback || is_hole(c, k->shape))
			continue;
		const struct research_table *t = searched_by(c->tables, c->n_tables, k->shape);
		char *ev = xasprintf("%.0f us over %ld launches (%.1f%% of kernel time)%s%s: the name says "
				     "a default kernel ran, %s%s%s", k->us, k->calls, k->share * 100,
				     k->shape ? " on shape " : "", k->shape ? k->shape : "",
				     t ? "in a configuration without the entry that the space searches in " :
					 "no tuned config matched",
				     t ? t->file : "", t ? " (the search sets it: not a hole)" : "");
		char *detail = t ? xasprintf("%s ran a default kernel on %s, an entry the space searches",
					     k->op, k->shape)
				 : xasprintf("%s fell back to a default kernel", k->op);
		rc = put(c, RESEARCH_FIND_FALLBACK, k->name, k->share, detail, ev, NULL, err);
		free(ev);
		free(detail);
	}
	return rc;
}

/* The GPU's idle share of the wall time: 1 - kernel time / wall time (a
 * lower bound where streams overlap, their kernel time counted twice); NAN
 * when the wall time is unknown. */
static double idle_share(const struct db_profile *p)
{
	if (isnan(p->wall_us) || p->wall_us <= 0)
		return NAN;
	double idle = 1 - p->total_us / p->wall_us;
	return idle < 0 ? 0 : idle;
}

/* What the trace's timing says, as evidence. */
static void idle_evidence(const struct db_profile *p, double idle, struct rt_sb *ev)
{
	rt_sb_addf(ev, "kernels ran %.0f us of %.0f us of wall time (from the %s", p->total_us,
		   p->wall_us, p->wall_from && !strcmp(p->wall_from, "steps") ? "step annotations" :
		   "kernels' span");
	if (p->steps > 0 && p->wall_from && !strcmp(p->wall_from, "steps"))
		rt_sb_addf(ev, ", %ld steps", p->steps);
	rt_sb_addf(ev, "): the GPU idle %.1f%% of it; %ld of %ld kernels under %.0f us; the host "
		   "launched %ld kernels one at a time and %ld graphs", idle * 100, p->short_kernels,
		   p->launches, RESEARCH_SHORT_US, p->host_launches, p->graph_launches);
}

/* "GPU idle 31% of the step, 2,400 launches under 10 us": from timing alone. */
static int gpu_idle(struct find_ctx *c, struct rt_sb *err)
{
	const struct db_profile *p = &c->prof;
	double idle = idle_share(p);
	if (isnan(idle) || idle < GPU_IDLE_MIN_SHARE)
		return 0;
	struct rt_sb ev = RT_SB_INIT;
	idle_evidence(p, idle, &ev);
	char *detail = xasprintf("GPU idle %.1f%% of the %s (wall time), %ld kernels under %.0f us",
				 idle * 100, p->wall_from && !strcmp(p->wall_from, "steps") ? "steps" :
				 "trace", p->short_kernels, RESEARCH_SHORT_US);
	int rc = put(c, RESEARCH_FIND_GPU_IDLE, "wall time", idle, detail, ev.buf, NULL, err);
	free(detail);
	rt_sb_release(&ev);
	return rc;
}

/* Without step annotations that say so: the trace's timing. The GPU idle
 * for a large share of the wall time while most kernels were launched one at
 * a time by the host is what a CUDA graph removes. */
static int ungraphed_timing(struct find_ctx *c, struct rt_sb *err)
{
	const struct db_profile *p = &c->prof;
	double idle = idle_share(p);
	if (isnan(idle) || idle < GPU_IDLE_MIN_SHARE || p->host_launches <= 0 ||
	    2 * p->host_launches < p->launches)
		return 0;
	struct rt_sb ev = RT_SB_INIT;
	idle_evidence(p, idle, &ev);
	rt_sb_adds(&ev, ". Capture the steps in a CUDA graph (PyTorch: torch.cuda.CUDAGraph or "
		   "torch.compile mode=\"reduce-overhead\"; vLLM: compilation_config "
		   "cudagraph_capture_sizes; llama.cpp: GGML_CUDA_GRAPHS)");
	char *detail = xasprintf("%ld of %ld kernels launched one at a time from the CPU, the GPU idle "
				 "%.1f%% of the wall time", p->host_launches, p->launches, idle * 100);
	int rc = put(c, RESEARCH_FIND_UNGRAPHED, "kernel launches", idle, detail, ev.buf, NULL, err);
	free(detail);
	rt_sb_release(&ev);
	return rc;
}

static int ungraphed(struct find_ctx *c, struct rt_sb *err)
{
	const struct db_profile *p = &c->prof;
	if (p->ungraphed_steps <= 0 || p->total_us <= 0)
		return ungraphed_timing(c, err);
	double share = p->ungraphed_us / p->total_us;
	share = share > 1 ? 1 : share;
	char subject[64], graphed[32] = "none";
	snprintf(subject, sizeof(subject), "batch %ld", p->ungraphed_batch);
	if (p->graph_max_batch >= 0)
		snprintf(graphed, sizeof(graphed), "%ld", p->graph_max_batch);
	char *ev = xasprintf("%ld steps ran without a graph, batch up to %ld, %.0f us (%.1f%% of the "
			     "time); the largest graphed batch seen: %s. Capture larger sizes (vLLM: "
			     "compilation_config cudagraph_capture_sizes; simserve: --max-graph-bs)",
			     p->ungraphed_steps, p->ungraphed_batch, p->ungraphed_us, share * 100, graphed);
	char *detail = xasprintf("batch sizes up to %ld run without a CUDA graph", p->ungraphed_batch);
	int rc = put(c, RESEARCH_FIND_UNGRAPHED, subject, share, detail, ev, NULL, err);
	free(ev);
	free(detail);
	return rc;
}

int research_find(struct db *db, int64_t profile_id, const struct research_table *tables,
		  size_t n_tables, int64_t campaign_id, int64_t iteration_id, size_t *n,
		  struct rt_sb *err)
{
	struct find_ctx c = { .db = db, .campaign_id = campaign_id, .iteration_id = iteration_id,
			      .tables = tables, .n_tables = n_tables };
	int rc = db_profile_get(db, profile_id, &c.prof, err);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "no profile %lld", (long long)profile_id);
	if (rc)
		return rc;
	if (!(rc = db_profile_ops_list(db, profile_id, &c.ops, &c.nops, err)))
		rc = db_profile_kernels_list(db, profile_id, &c.k, &c.nk, err);
	for (size_t i = 0; i < n_tables && !rc; i++)
		rc = table_holes(&c, &tables[i], err);
	if (!rc)
		rc = hot_ops(&c, err);
	if (!rc)
		rc = fallbacks(&c, err);
	if (!rc)
		rc = ungraphed(&c, err);
	if (!rc)
		rc = gpu_idle(&c, err);
	*n = c.added;
	for (size_t i = 0; i < c.n_hole_shapes; i++)
		free(c.hole_shapes[i]);
	free(c.hole_shapes);
	db_profile_ops_free(c.ops, c.nops);
	db_profile_kernels_free(c.k, c.nk);
	db_profile_release(&c.prof);
	return rc;
}

int research_find_log(struct db *db, int64_t campaign_id, int64_t iteration_id, size_t *n,
		      struct rt_sb *err)
{
	struct db_log_count *v;
	size_t nv;
	*n = 0;
	int rc = db_log_counts(db, campaign_id, &v, &nv, err);
	struct find_ctx c = { .db = db, .campaign_id = campaign_id, .iteration_id = iteration_id };
	for (size_t i = 0; i < nv && !rc; i++) {
		if (v[i].late_firing <= 0 || v[i].late_samples <= 0)
			continue;
		double share = (double)v[i].late_firing / v[i].late_samples;
		struct rt_sb ev = RT_SB_INIT;
		rt_sb_addf(&ev, "log event '%s' fired %.0f times in %d samples; in %d of the %d samples "
			   "after each arm's first (%.0f events), so it is not only warm-up", v[i].event,
			   v[i].events, v[i].samples, v[i].late_firing, v[i].late_samples, v[i].late_events);
		char *detail;
		if (!isnan(v[i].seconds) && v[i].events > 0) {
			rt_sb_addf(&ev, "; its lines carried %.3f s (log.%s.seconds), %.3f s of it after "
				   "warm-up, %.0f ms an event", v[i].seconds, v[i].event,
				   isnan(v[i].late_seconds) ? 0 : v[i].late_seconds,
				   1e3 * v[i].seconds / v[i].events);
			detail = xasprintf("'%s' keeps firing: %d of %d warm samples, %.0f ms each", v[i].event,
					   v[i].late_firing, v[i].late_samples, 1e3 * v[i].seconds / v[i].events);
		} else {
			detail = xasprintf("'%s' keeps firing: %d of %d warm samples", v[i].event,
					   v[i].late_firing, v[i].late_samples);
		}
		rc = put(&c, RESEARCH_FIND_RECOMPILE_STORM, v[i].event, share, detail, ev.buf, NULL, err);
		rt_sb_release(&ev);
		free(detail);
	}
	db_log_counts_free(v, nv);
	*n = c.added;
	return rc;
}

int research_holes_of_profile(const char *profile_path, struct research_opmap *map,
			      const char *table_path, const char *const *key_columns,
			      size_t n_key_columns, struct research_holes *out, struct rt_sb *err)
{
	const struct research_format *f;
	int rc = research_format_find(NULL, profile_path, &f, err);
	if (rc)
		return rc;
	struct research_profile p;
	research_profile_init(&p, map);
	rc = f->read(profile_path, &p, err);
	struct research_hole_obs *obs = xcalloc(p.n + 1, sizeof(*obs));
	char **keys = xcalloc(p.n + 1, sizeof(char *));
	size_t n = 0;
	for (size_t j = 0; j < p.n && !rc; j++)
		if (p.k[j].shape) {
			keys[n] = shape_key(p.k[j].shape, n_key_columns > 0);
			obs[n] = (struct research_hole_obs){ keys[n], p.k[j].us };
			n++;
		}
	if (!rc && !n)
		rc = rt_errf(err, RT_EINVAL, "%s: no kernel of this %s profile has a shape or table key "
			     "(map them with the spec's profile.keys)", profile_path, f->name);
	if (!rc)
		rc = research_holes_find_obs(table_path, obs, n, key_columns, n_key_columns, out, err);
	for (size_t j = 0; j < n; j++)
		free(keys[j]);
	free(keys);
	free(obs);
	research_profile_release(&p);
	return rc;
}
