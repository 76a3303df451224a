/*
 * `ratchet recipe` (campaign.h, run_campaign_recipe): what a campaign kept,
 * written so that a reader can reproduce its best configuration without
 * ratchet. Everything comes from the store: the spec as the campaign ran it,
 * the kept iterations (replayed onto an empty configuration as --resume
 * replays them, so the flags and env are the ones the best was measured
 * with) and the best configuration's bytes of every touched file (the
 * journal's, db_best_bytes), so a recipe written after `ratchet restore`
 * or on another machine holds the same files.
 */
#include "runner/campaign/campaign_int.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/journal.h"

/* One recipe being written. */
struct recipe {
	struct db *db;                /* the store */
	const char *dir;              /* the output folder */
	struct db_campaign cp;        /* the campaign */
	struct spec *s;               /* its spec, from the stored text (owned) */
	struct db_iteration *its;     /* its iterations (owned) */
	size_t n;                     /* number of iterations */
	const struct db_iteration *best; /* the best iteration (baseline when nothing was kept) */
	struct camp c;                /* kept flags and env replayed onto c.cfg */
	struct rt_sb apply;           /* apply.sh's body */
	struct run_recipe_result *res; /* what was written */
};

/* A kept iteration that counts: kept, not invalidated, not after the best. */
static bool kept_row(const struct recipe *r, const struct db_iteration *it)
{
	return it->state == DB_ITER_KEPT && !it->invalidated && it->seq <= r->best->seq;
}

/* path under the workdir ("tiles.json"), or "_root/abs/path" outside it. */
static char *rel_of(const struct recipe *r, const char *path)
{
	size_t n = strlen(r->cp.workdir);
	if (!strncmp(path, r->cp.workdir, n) && path[n] == '/')
		return xstrdup(path + n + 1);
	return xasprintf("_root%s", path);
}

/* The same path as apply.sh names it: "$W/rel", or the absolute path. */
static void add_target(struct rt_sb *sb, const struct recipe *r, const char *path)
{
	if (!strcmp(path, r->cp.workdir)) {
		rt_sb_adds(sb, "\"$W\"");
		return;
	}
	char *rel = rel_of(r, path);
	if (strncmp(rel, "_root/", 6)) {
		rt_sb_adds(sb, "\"$W\"/");
		rt_sb_add_shq(sb, rel);
	} else {
		rt_sb_add_shq(sb, path);
	}
	free(rel);
}

static int write_out(const struct recipe *r, const char *rel, const void *data, size_t len, int mode,
		     struct rt_sb *err)
{
	char *path = xasprintf("%s/%s", r->dir, rel);
	char *slash = strrchr(path, '/');
	*slash = 0;
	int rc = rt_mkdirs(path, err);
	*slash = '/';
	if (!rc)
		rc = rt_write_file_atomic(path, data, len, mode, err);
	free(path);
	return rc;
}

int camp_stored_spec(const struct db_campaign *cp, struct spec **out, struct rt_sb *err)
{
	const char *text = cp->spec_text ? cp->spec_text : "";
	const char *base = strrchr(cp->spec_path, '/');
	char *in_wd = xasprintf("%s/%s", cp->workdir, base ? base + 1 : cp->spec_path);
	const char *names[] = { cp->spec_path, in_wd };
	int rc = 0;
	*out = NULL;
	for (size_t i = 0; i < 2; i++) {
		spec_free(*out);
		*out = NULL;
		struct rt_sb why = RT_SB_INIT;
		rc = spec_load_text(names[i], text, strlen(text), out, &why);
		if (rc)
			rt_errf(err, rc, "campaign %lld: its stored spec does not load: %s", (long long)cp->id,
				why.buf);
		rt_sb_release(&why);
		if (rc || !strcmp((*out)->workdir, cp->workdir))
			break;
		if (i == 1)
			rc = rt_errf(err, RT_EINVAL,
				     "campaign %lld: its spec %s names workdir %s, the campaign ran in %s; run "
				     "ratchet from the folder `ratchet run` ran in",
				     (long long)cp->id, cp->spec_path, (*out)->workdir, cp->workdir);
	}
	free(in_wd);
	return rc;
}

/* Campaign, spec, iterations, the best, and the kept flags and env. */
static int load(struct recipe *r, int64_t id, struct rt_sb *err)
{
	int rc = id ? db_campaign_get(r->db, id, &r->cp, err) : db_campaign_latest(r->db, NULL, &r->cp, err);
	if (rc == RT_ENOENT && !id)
		return rt_errf(err, rc, "%sno campaign in %s", err->len ? "; " : "", db_path(r->db));
	if (!rc)
		rc = camp_stored_spec(&r->cp, &r->s, err);
	if (!rc)
		rc = db_iterations_list(r->db, r->cp.id, &r->its, &r->n, err);
	for (size_t i = 0; i < r->n && !rc; i++) {
		bool base = !strcmp(r->its[i].kind, "baseline") && r->its[i].state == DB_ITER_BASELINE;
		if ((r->cp.best_iteration && r->its[i].id == r->cp.best_iteration) ||
		    (!r->cp.best_iteration && base))
			r->best = &r->its[i];
	}
	if (rc)
		return rc;
	if (!r->best)
		return rt_errf(err, RT_ENOENT, "campaign %lld has no measured baseline: nothing to write",
			       (long long)r->cp.id);
	r->c.db = r->db;
	r->c.s = r->s;
	r->c.cid = r->cp.id;
	r->c.kept = xcalloc(r->s->n_variants + 1, sizeof(bool));
	for (size_t i = 0; i < r->n && !rc; i++)
		if (kept_row(r, &r->its[i])) {
			rc = camp_rebuild_kept(&r->c, &r->its[i], err);
			r->res->kept++;
		}
	return rc;
}

/* files/: the best's bytes of every file that differs from its original;
 * apply.sh copies them (or removes what the best removed). */
static int write_files(struct recipe *r, struct rt_sb *err)
{
	struct db_original *orig = NULL;
	size_t no = 0;
	int rc = db_originals_list(r->db, r->cp.id, &orig, &no, err);
	for (size_t i = 0; i < no && !rc; i++) {
		struct db_best b = { 0 };
		rc = db_best_bytes(r->db, r->cp.id, orig[i].path, &b, err);
		bool ex = b.exists;
		bool same = !rc && ex == orig[i].existed &&
			    (!ex || (b.len == orig[i].len && !memcmp(b.bytes, orig[i].content, b.len)));
		char *rel = rel_of(r, orig[i].path);
		char *in = xasprintf("files/%s", rel);
		if (!rc && !same && ex) {
			rc = write_out(r, in, b.bytes, b.len, b.mode ? b.mode : 0644, err);
			rt_sb_adds(&r->apply, "mkdir -p \"$(dirname ");
			add_target(&r->apply, r, orig[i].path);
			rt_sb_adds(&r->apply, ")\" && cp \"$here\"/");
			rt_sb_add_shq(&r->apply, in);
			rt_sb_addc(&r->apply, ' ');
			add_target(&r->apply, r, orig[i].path);
			rt_sb_addc(&r->apply, '\n');
			r->res->files++;
		} else if (!rc && !same) {
			rt_sb_adds(&r->apply, "rm -f ");
			add_target(&r->apply, r, orig[i].path);
			rt_sb_addc(&r->apply, '\n');
		}
		free(in);
		free(rel);
		db_best_release(&b);
	}
	db_originals_free(orig, no);
	return rc;
}

/* patches/: the kept patches in the order they were kept; apply.sh then
 * runs the kept builds in that order. */
static int write_patches_and_builds(struct recipe *r, struct rt_sb *readme, struct rt_sb *err)
{
	int rc = 0;
	bool builds = false;
	for (size_t i = 0; i < r->n && !rc; i++) {
		if (!kept_row(r, &r->its[i]))
			continue;
		const struct var_def *v = NULL;
		for (size_t j = 0; j < r->s->n_variants; j++)
			if (!strcmp(r->s->variants[j].name, r->its[i].variant))
				v = &r->s->variants[j];
		if (v && v->kind == VAR_KIND_PATCH) {
			char *data = NULL, *name = xasprintf("patches/%02d-%s.diff", ++r->res->patches, v->name);
			size_t len = 0;
			rc = rt_read_file(v->patch.file, &data, &len, err);
			if (rc)
				rt_errf(err, 0, " (the patch of kept change %s)", v->name);
			else if (!(rc = write_out(r, name, data, len, 0644, err)))
				rt_sb_addf(readme, "  %s: git apply in %s\n", name, v->patch.dir);
			free(data);
			free(name);
		}
		if (!v || !v->build.n || rc)
			continue;
		if (!builds)
			rt_sb_adds(&r->apply, "# the builds of the kept changes, in the order they were kept\n");
		builds = true;
		rt_sb_adds(&r->apply, "(cd ");
		add_target(&r->apply, r, v->kind == VAR_KIND_PATCH ? v->patch.dir : r->cp.workdir);
		rt_sb_adds(&r->apply, " &&");
		for (size_t k = 0; k < v->build.n; k++) {
			rt_sb_addc(&r->apply, ' ');
			rt_sb_add_shq(&r->apply, v->build.v[k]);
		}
		rt_sb_adds(&r->apply, ")\n");
	}
	return rc;
}

/* One command line with the kept flags, placeholders filled. */
static void add_command(struct rt_sb *sb, const struct recipe *r, char *const *base, const char *lead)
{
	struct spec_vars vars = { .port = r->s->engine.port ? r->s->engine.port : 8000,
				  .workdir = r->cp.workdir, .nonce = "recipe", .iteration = 0 };
	char **argv = var_config_argv(&r->c.cfg, base);
	rt_sb_adds(sb, lead);
	for (size_t i = 0; argv[i]; i++) {
		char *a = spec_expand(argv[i], &vars);
		rt_sb_adds(sb, i ? " " : "");
		rt_sb_add_shq(sb, a);
		free(a);
	}
	rt_sb_addc(sb, '\n');
	rt_argv_free(argv);
}

/* run.sh: the environment, then the engine (or each command benchmark). */
static int write_run_sh(struct recipe *r, struct rt_sb *err)
{
	const struct spec *s = r->s;
	struct rt_sb sh = RT_SB_INIT;
	struct rt_envv env = { 0 };
	var_config_env(&r->c.cfg, s->engine.present ? &s->engine.env : NULL, &env);
	rt_sb_addf(&sh, "#!/bin/sh\n# The best configuration of ratchet campaign %lld '%s' (iteration %lld:%d):\n"
		   "# the environment (the spec's engine.env and the kept env changes),\n# then %s.\n"
		   "# Placeholders are filled: {workdir} the campaign's workdir, {port} %d%s, {nonce} recipe.\n",
		   (long long)r->cp.id, r->cp.name, (long long)r->cp.id, r->best->seq,
		   s->engine.present ? "the engine command with the kept flags"
				     : "each command benchmark with the kept flags (there is no engine)",
		   s->engine.port ? s->engine.port : 8000,
		   s->engine.port ? "" : " (ratchet picked a free port per launch)");
	for (size_t i = 0; i < env.n; i++) {
		rt_sb_adds(&sh, env.v[i].value ? "export " : "unset ");
		rt_sb_adds(&sh, env.v[i].name);
		if (env.v[i].value) {
			rt_sb_addc(&sh, '=');
			rt_sb_add_shq(&sh, env.v[i].value);
		}
		rt_sb_addc(&sh, '\n');
	}
	rt_sb_adds(&sh, "cd ");
	rt_sb_add_shq(&sh, r->cp.workdir);
	rt_sb_addc(&sh, '\n');
	if (s->engine.present)
		add_command(&sh, r, s->engine.command.v, "exec ");
	for (size_t b = 0; !s->engine.present && b < s->n_benches; b++)
		if (s->benches[b].kind == SPEC_BENCH_COMMAND) {
			rt_sb_addf(&sh, "# benchmark %s\n", s->benches[b].name);
			add_command(&sh, r, s->benches[b].cmd.command.v, "");
		}
	int rc = write_out(r, "run.sh", sh.buf, sh.len, 0755, err);
	rt_envv_release(&env);
	rt_sb_release(&sh);
	return rc;
}

static int write_readme(struct recipe *r, const struct rt_sb *patches, struct rt_sb *err)
{
	struct rt_sb t = RT_SB_INIT;
	int better = 0;
	double gain = rep_kept_compound(r->its, r->n, &better);
	rt_sb_addf(&t, "Recipe of ratchet campaign %lld '%s'\n  spec:    %s\n  workdir: %s\n"
		   "  best:    iteration %lld:%d, configuration fingerprint %s\n",
		   (long long)r->cp.id, r->cp.name, r->cp.spec_path, r->cp.workdir, (long long)r->cp.id,
		   r->best->seq, r->best->config_sha256 ? r->best->config_sha256 : "(not recorded)");
	if (r->res->kept && !isnan(gain)) {
		rt_sb_adds(&t, "  objective: ");
		rep_fmt_change(&t, gain, NAN, NAN, better);
		rt_sb_adds(&t, " vs the baseline\n");
	}
	rt_sb_addf(&t, "\nKept changes, in the order they were kept (%d):\n", r->res->kept);
	for (size_t i = 0; i < r->n; i++) {
		if (!kept_row(r, &r->its[i]))
			continue;
		rt_sb_addf(&t, "  %lld:%d %s\n", (long long)r->cp.id, r->its[i].seq, r->its[i].variant);
		for (const char *p = r->its[i].change_text; p && *p;) {
			size_t k = strcspn(p, "\n");
			rt_sb_addf(&t, "      %.*s\n", (int)k, p);
			p += k + (p[k] == '\n');
		}
	}
	rt_sb_adds(&t, "\nWhat is here:\n"
		   "  files/     the best configuration's bytes of every file the kept changes touched,\n"
		   "             by path under the workdir (_root/ holds paths outside it)\n"
		   "  patches/   the kept patches in order; their effect is already in files/, `git apply`\n"
		   "             carries them to another checkout\n"
		   "  apply.sh   copies files/ into a workdir (default the campaign's), removes the files\n"
		   "             the best removed, and runs the kept builds\n"
		   "  run.sh     the environment and the command line with the kept flags\n");
	if (patches->len) {
		rt_sb_adds(&t, "\nPatches:\n");
		rt_sb_add(&t, patches->buf, patches->len);
	}
	rt_sb_adds(&t, "\nTo reproduce without ratchet, on a copy of the workdir as it was before the campaign:\n"
		   "  sh apply.sh /path/to/workdir\n  sh run.sh\n"
		   "\nThe store keeps the spec with secrets redacted: a value written [redacted] in run.sh\n"
		   "must be filled in by hand.\n");
	int rc = write_out(r, "README.txt", t.buf, t.len, 0644, err);
	rt_sb_release(&t);
	return rc;
}

/* DIR is new or empty: a recipe never mixes with another one's files. */
static int check_dir(const char *dir, struct rt_sb *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return rt_mkdirs(dir, err);
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = rt_errf(err, RT_EUSAGE, "%s: not empty (a recipe goes into a new or empty folder)", dir);
	closedir(d);
	return rc;
}

int run_campaign_recipe(struct db *db, int64_t id, const char *dir, struct run_recipe_result *res,
			struct rt_sb *err)
{
	struct recipe r;
	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.db = db;
	r.dir = dir;
	r.res = res;
	var_config_init(&r.c.cfg);
	struct rt_sb patches = RT_SB_INIT;
	int rc = load(&r, id, err);
	if (!rc)
		rc = check_dir(dir, err);
	if (!rc) {
		res->campaign_id = r.cp.id;
		res->best_seq = r.best->seq;
		snprintf(res->config_sha256, sizeof(res->config_sha256), "%s",
			 r.best->config_sha256 ? r.best->config_sha256 : "");
		rt_sb_addf(&r.apply, "#!/bin/sh\n# Puts the best configuration of ratchet campaign %lld '%s' into a "
			   "workdir.\n# usage: sh apply.sh [WORKDIR]   (default: the campaign's)\nset -eu\n"
			   "here=$(cd \"$(dirname \"$0\")\" && pwd)\nW=${1:-", (long long)r.cp.id, r.cp.name);
		rt_sb_add_shq(&r.apply, r.cp.workdir);
		rt_sb_adds(&r.apply, "}\n");
		rc = write_files(&r, err);
	}
	if (!rc)
		rc = write_patches_and_builds(&r, &patches, err);
	if (!rc)
		rc = write_out(&r, "apply.sh", r.apply.buf, r.apply.len, 0755, err);
	if (!rc)
		rc = write_run_sh(&r, err);
	if (!rc)
		rc = write_readme(&r, &patches, err);
	rt_sb_release(&patches);
	rt_sb_release(&r.apply);
	var_config_release(&r.c.cfg);
	free(r.c.kept);
	db_iterations_free(r.its, r.n);
	spec_free(r.s);
	db_campaign_release(&r.cp);
	return rc;
}
