/*
 * What the research commands share (cmd_profile.c): the op map and the tuned
 * tables of a campaign's spec (or a spec given with --spec), and the printing
 * of ranked findings. `profile import`, `observe`, `findings`, `propose` and
 * `research` use it.
 */
#ifndef RT_CMD_PROFILE_H
#define RT_CMD_PROFILE_H

#include "agents/research/findings.h"
#include "runner/cmd/cmd.h"
#include "runner/spec/spec.h"

#include <jansson.h>

/* A spec's research settings, loaded. */
struct cmd_research_env {
	struct spec *spec;               /* the spec, or NULL: defaults, no tables */
	struct research_opmap *map;      /* compiled op map */
	struct research_table *tables;   /* the files its table variants edit, once each */
	size_t n_tables;
	char **paths;                    /* each table's absolute path (owned) */
};

/* Load from campaign_id's recorded spec (0: none), else from spec_path (NULL:
 * none). Errors are printed as "CMD: ..." and the exit code returned. */
int cmd_research_env_load(const struct rt_ctx *ctx, const char *cmd, int64_t campaign_id,
			  const char *spec_path, struct cmd_research_env *env);
void cmd_research_env_release(struct cmd_research_env *env);

/* Import in->path, then record its findings (and, in a campaign, its log
 * events' storms): *profile_id and *nfind. Errors printed as "CMD: ...",
 * the exit code returned. */
int cmd_profile_import_as(struct rt_ctx *ctx, const char *cmd, const struct research_import *in,
			  const struct cmd_research_env *env, int64_t *profile_id, size_t *nfind);
/* Print a stored profile: its ops and hottest kernels (ctx->json: all). */
void cmd_profile_print(const struct rt_ctx *ctx, struct db *db, int64_t id, size_t nfind);
/* Print findings, ranked, with their bound (top <= 0: all). */
void cmd_findings_print(const struct rt_ctx *ctx, const struct db_finding *f, size_t n, long top);
/* Print v as indented JSON on stdout, and release it. */
void cmd_print_json(json_t *v);
/* The exit code of a library error: 2 for what the user gave, else 3. */
int cmd_research_exit(int rc);

#endif
