/*
 * The research agent's findings: what an imported profile and a campaign's
 * log events say is worth trying, each ranked by its Amdahl bound.
 *
 * A finding concerns a share s of the profile's time; if the change it
 * suggests made that part k times faster, the whole would save at most
 * s * (1 - 1/k) of its time (Amdahl's law). k is a plausible speedup per kind
 * of finding (RESEARCH_FINDING_MAP below, stated, never measured), so the
 * bound is a ceiling to rank by, not a forecast; it is printed beside each
 * finding with its share and k.
 */
#ifndef RESEARCH_FINDINGS_H
#define RESEARCH_FINDINGS_H

#include "agents/research/profile.h"
#include "db/profiles.h"

/* XX(code, kind, speedup, what): each kind of finding and the plausible
 * speedup of acting on it. */
#define RESEARCH_FINDING_MAP(XX)                                                                  \
	XX(HOLE, "hole", 1.5, "a shape the tuned table has no entry for: the default kernel runs")  \
	XX(FALLBACK, "fallback", 1.5, "a default (untuned) kernel ran")                           \
	XX(HOT_OP, "hot_op", 1.2, "an op with a large share of kernel time")                      \
	XX(UNGRAPHED, "ungraphed", 1.3, "steps ran eagerly: kernels launched one at a time by the CPU") \
	XX(GPU_IDLE, "gpu_idle", 1.5, "the GPU idle between kernels for a large share of the wall time") \
	XX(RECOMPILE_STORM, "recompile_storm", 1.1, "a recompile log event still firing after warm-up") \
	XX(UPSTREAM, "upstream", 1.2, "an upstream change touching the profile's hot kernels")

enum research_finding_kind {
#define XX(code, kind, speedup, what) RESEARCH_FIND_##code,
	RESEARCH_FINDING_MAP(XX)
#undef XX
	RESEARCH_N_FINDING_KINDS
};
const char *research_finding_name(enum research_finding_kind k);
double research_finding_speedup(enum research_finding_kind k);
/* share * (1 - 1/speedup). */
double research_bound(double share, double speedup);

/* "fill-prefill-t-le-512" from ("fill", "prefill.T_LE_512"): the key lowercased,
 * each character other than a letter or digit a '-' (`ratchet holes` names its
 * suggestions so). */
void research_variant_name(const char *prefix, const char *key, char *out, size_t n);

/* What to import and where it belongs. */
struct research_import {
	const char *const *paths; /* the profile's files (one per rank or process), one format */
	size_t n_paths;
	const char *format;      /* a research_formats name, NULL: detect */
	long steps;              /* > 0: steps in the profile (overrides the trace's annotations) */
	int64_t campaign_id;     /* 0: none */
	int64_t iteration_id;    /* the observe iteration, 0: none */
};
/* Read in->paths as one profile (their kernels and steps summed: shares are
 * per launch, calls per step per file), classify with map, store it
 * (db/profiles.h); *profile_id and *format get what was stored and read. */
int research_import(struct db *db, const struct research_import *in, struct research_opmap *map,
		    int64_t *profile_id, const struct research_format **format, struct rt_sb *err);

/* A tuned table the profile's shapes are checked against. */
struct research_table {
	const char *file;                /* as the spec (and a variant) names it */
	const char *path;                /* the file to read */
	const char *const *key_columns;  /* CSV: the key columns */
	size_t n_key_columns;
	const char *const *searched;     /* entries the campaign's space searches: its shapes
					  * are the search's to fill, not holes */
	size_t n_searched;
};
/* Record the findings of a stored profile: hot ops, holes in each table,
 * fallbacks, ungraphed steps. *n gets how many were recorded. */
int research_find(struct db *db, int64_t profile_id, const struct research_table *tables,
		  size_t n_tables, int64_t campaign_id, int64_t iteration_id, size_t *n,
		  struct rt_sb *err);
struct research_hole;
/* Record one hole of table t as a finding concerning share of the time, with
 * its evidence and, when the table has entries, the variant that fills it with
 * the nearest entry's fields. */
int research_record_hole(struct db *db, const struct research_table *t, const struct research_hole *h,
			 double share, const char *evidence, int64_t campaign_id, int64_t profile_id,
			 int64_t iteration_id, struct rt_sb *err);
/* The holes of a tuned table from a profiler's output (any research
 * format, read with map: its profile.keys give real kernels their table
 * keys), each shape weighted by its kernels' time. */
struct research_holes;
int research_holes_of_profile(const char *profile_path, struct research_opmap *map,
			      const char *table_path, const char *const *key_columns,
			      size_t n_key_columns, struct research_holes *out, struct rt_sb *err);
/* Record recompile storms from a campaign's log events. */
int research_find_log(struct db *db, int64_t campaign_id, int64_t iteration_id, size_t *n,
		      struct rt_sb *err);

/* Import, then record its findings and (in a campaign) its log events'
 * storms (observe.c): *profile_id, *format and *nfind. */
int research_import_find(struct db *db, const struct research_import *in, struct research_opmap *map,
			 const struct research_table *tables, size_t n_tables, int64_t *profile_id,
			 const struct research_format **format, size_t *nfind, struct rt_sb *err);
/* The iteration an observation is recorded as. */
struct research_observation {
	int seq;             /* its seq in the campaign */
	int64_t parent;      /* the best configuration's iteration */
	const char *variant; /* its variant name: "observe" (by hand), "profile" (the runner) */
	const char *note;    /* its strategy note */
};
/* An iteration of in->campaign_id that changes nothing, the profile of
 * in->paths with its findings, finished 'observed' (in->iteration_id gets
 * it). No transaction of its own: the caller wraps it in one. */
int research_observe(struct db *db, struct research_import *in, const struct research_observation *o,
		     struct research_opmap *map, const struct research_table *tables, size_t n_tables,
		     int64_t *iter_id, int64_t *profile_id, size_t *nfind, struct rt_sb *err);

#endif
