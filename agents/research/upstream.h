/*
 * Upstream changes (`ratchet research REPO --refs A,B,C`): a local git
 * checkout of a kernel library and refs the user fetched (pull requests,
 * branches, commits). Each ref is ranked by how much of a profile's kernel
 * time its diff touches: the ops its changed files are about (the paths
 * classified by the same op map as kernel names) and the ops of the profile's
 * kernels whose names its changed lines mention. Each becomes an `upstream`
 * finding with its diffstat; with a patch folder, its diff is written there
 * and the finding carries a `patch` variant.
 */
#ifndef RESEARCH_UPSTREAM_H
#define RESEARCH_UPSTREAM_H

#include "agents/research/findings.h"
#include "variants/var.h"

/* One ref, scored. */
struct research_ref {
	char *ref;       /* as given */
	double share;    /* of the profile's kernel time its diff touches */
	char *ops;       /* the ops it touches, "attention 43.1%, gemm 20.0%" */
	char *kernels;   /* the profile's kernels its changed lines name, or "" */
	char *diffstat;  /* "3 files, +40 -12: a.cu (+30 -2), ..." */
	long lines;      /* lines added and removed */
	char *patch;     /* the diff written for it, or NULL */
};

struct research_refs {
	struct research_ref *v; /* best first */
	size_t n;
};

/* What to compare. */
struct research_upstream {
	const char *repo;            /* the checkout */
	const char *base;            /* each ref is diffed from its merge base with this (default HEAD) */
	const char *const *refs;     /* the refs */
	size_t n_refs;
	const char *patch_dir;       /* write each diff there, or NULL */
	var_exec_fn exec;            /* runs git */
	int64_t campaign_id;         /* the findings' campaign, 0: none */
};

/* Rank the refs against stored profile profile_id and record one finding per
 * ref. Errors name the ref and git's message. */
int research_rank_refs(struct db *db, int64_t profile_id, struct research_opmap *map,
		       const struct research_upstream *u, struct research_refs *out, struct rt_sb *err);
void research_refs_release(struct research_refs *r);

#endif
