/*
 * What recipe.c (files, patches, apply.sh, run.sh, README.txt) and
 * recipe_rerun.c (spec.yaml, variants.yaml, Dockerfile: what re-measures or
 * replays the recipe) share: the recipe being written. Private to
 * runner/campaign/.
 */
#ifndef RT_CAMPAIGN_RECIPE_H
#define RT_CAMPAIGN_RECIPE_H

#include "runner/campaign/campaign_int.h"

/* One recipe being written. */
struct recipe {
	struct db *db;                /* the store */
	char *dir;                    /* the output folder, normalised (owned) */
	struct db_campaign cp;        /* the campaign */
	struct spec *s;               /* its spec, from the stored text (owned) */
	json_t *spec_json;            /* s as JSON (owned) */
	struct db_iteration *its;     /* its iterations (owned) */
	size_t n;                     /* number of iterations */
	const struct db_iteration *best; /* the best iteration (baseline when nothing was kept) */
	struct camp c;                /* kept flags and env replayed onto c.cfg */
	struct rt_sb apply;           /* apply.sh's body */
	struct run_recipe_result *res; /* what was written */
	char **patch_names;           /* per iteration: its patch under patches/, NULL when none (owned) */
	int sources;                  /* file changes' sources copied under sources/ */
};

/* A kept iteration that counts: kept, not invalidated, not after the best. */
bool recipe_kept(const struct recipe *r, const struct db_iteration *it);
/* Write data as dir/rel. rel must stay inside dir: no absolute path and no
 * ".." part (RT_EINVAL otherwise), so a recipe never writes outside it. */
int recipe_write(const struct recipe *r, const char *rel, const void *data, size_t len, int mode,
		 struct rt_sb *err);
/* Text for a comment or a plain-text line: control bytes (a newline that
 * would end a shell comment) become '?'. */
void recipe_comment_text(struct rt_sb *sb, const char *s);
/* argv with the kept flags (a NULL-terminated copy, rt_argv_free it). */
char **recipe_final_argv(const struct recipe *r, char *const *base);

/* recipe_rerun.c: spec.yaml (the benchmarks and gate on the best
 * configuration, workdir "." once apply.sh installs it), variants.yaml
 * (the kept changes with their lineage: `ratchet replay --from` reads it)
 * and, when the engine ran from a container image, a Dockerfile. */
int recipe_write_spec(struct recipe *r, struct rt_sb *err);
int recipe_write_variants(struct recipe *r, struct rt_sb *err);
int recipe_write_dockerfile(struct recipe *r, struct rt_sb *err);

#endif
