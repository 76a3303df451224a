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
#include "runner/campaign/recipe.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/journal.h"
#include "runner/spec/spec_space.h"

bool recipe_kept(const struct recipe *r, const struct db_iteration *it)
{
	return it->state == DB_ITER_KEPT && !it->invalidated && it->seq <= r->best->seq;
}

void recipe_comment_text(struct rt_sb *sb, const char *s)
{
	for (; s && *s; s++)
		rt_sb_addc(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* path normalised, under the workdir ("tiles.json"), or "_root/abs/path"
 * outside it: never with a ".." part. */
static char *rel_of(const struct recipe *r, const char *path)
{
	char *norm = rt_path_normalize_abs(path);
	size_t n = strlen(r->cp.workdir);
	char *rel = !strncmp(norm, r->cp.workdir, n) && norm[n] == '/' ? xstrdup(norm + n + 1)
									 : xasprintf("_root%s", norm);
	free(norm);
	return rel;
}

/* The same path as apply.sh names it: "$W/rel", or the absolute path. */
static void add_target(struct rt_sb *sb, const struct recipe *r, const char *path)
{
	char *norm = rt_path_normalize_abs(path);
	if (!strcmp(norm, r->cp.workdir)) {
		rt_sb_adds(sb, "\"$W\"");
		free(norm);
		return;
	}
	char *rel = rel_of(r, norm);
	if (strncmp(rel, "_root/", 6)) {
		rt_sb_adds(sb, "\"$W\"/");
		rt_sb_add_shq(sb, rel);
	} else {
		rt_sb_add_shq(sb, norm);
	}
	free(rel);
	free(norm);
}

int recipe_write(const struct recipe *r, const char *rel, const void *data, size_t len, int mode,
		 struct rt_sb *err)
{
	bool dots = rel[0] == '/' || !rel[0];
	for (const char *p = rel; *p && !dots; p += strcspn(p, "/"), p += *p == '/')
		dots = !strncmp(p, "..", 2) && (p[2] == '/' || !p[2]);
	if (dots)
		return rt_errf(err, RT_EINVAL, "%s: refusing to write '%s': it is not a path inside the recipe",
			       r->dir, rel);
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
		if (recipe_kept(r, &r->its[i])) {
			rc = camp_proposer_of(r->s)->rebuild(&r->c, &r->its[i], err);
			r->res->kept++;
		}
	return rc;
}

/* Stored bytes are written only when they are what the store says they
 * are: a damaged store must not become a recipe. */
static int check_sha(const char *what, const char *path, const void *bytes, size_t len, const char *sha,
		     struct rt_sb *err)
{
	char got[65];
	if (!sha || !sha[0] || !bytes)
		return 0;
	rt_sha256_hex(bytes, len, got);
	if (strcmp(got, sha))
		return rt_errf(err, RT_EDB, "%s of %s: the stored bytes have sha256 %.12s, the store says %.12s "
			       "(the database is damaged; nothing is written from it)", what, path, got, sha);
	return 0;
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
		if (!rc)
			rc = check_sha("the best configuration's bytes", orig[i].path, b.bytes, b.len, b.sha256, err);
		if (!rc)
			rc = check_sha("the pre-campaign bytes", orig[i].path, orig[i].content, orig[i].len,
				       orig[i].sha256, err);
		bool ex = b.exists;
		bool same = !rc && ex == orig[i].existed &&
			    (!ex || (b.len == orig[i].len && !memcmp(b.bytes, orig[i].content, b.len)));
		char *rel = rel_of(r, orig[i].path);
		char *in = xasprintf("files/%s", rel);
		if (!rc && !same && ex) {
			rc = recipe_write(r, in, b.bytes, b.len, b.mode ? b.mode : 0644, err);
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

/* The definition of kept iteration it: the spec's variant, or (a space
 * point, an llm answer) the generated one read into *gen. NULL with err
 * filled when neither is found. */
static const struct var_def *kept_def(struct recipe *r, const struct db_iteration *it, struct var_def *gen,
				      bool *generated, struct rt_sb *err)
{
	*generated = false;
	for (size_t j = 0; j < r->s->n_variants; j++)
		if (!strcmp(r->s->variants[j].name, it->variant))
			return &r->s->variants[j];
	json_t *vj = camp_kept_variant(r->db, r->s, r->spec_json, r->cp.id, it, err);
	int rc = vj ? spec_variant_from_json(r->s, vj, gen, err) : RT_ENOENT;
	json_decref(vj);
	if (rc) {
		rt_errf(err, 0, " (kept change %s)", it->variant);
		return NULL;
	}
	*generated = true;
	return gen;
}

/* A kept patch into patches/, named in the README and remembered for
 * variants.yaml. */
static int write_patch(struct recipe *r, size_t i, const struct var_def *v, struct rt_sb *readme,
		       struct rt_sb *err)
{
	char *data = NULL, *name = xasprintf("patches/%02d-%s.diff", ++r->res->patches, v->name);
	size_t len = 0;
	int rc = rt_read_file(v->patch.file, &data, &len, err);
	if (rc)
		rt_errf(err, 0, " (the patch of kept change %s)", v->name);
	else if (!(rc = recipe_write(r, name, data, len, 0644, err))) {
		rt_sb_adds(readme, "  ");
		recipe_comment_text(readme, name);
		rt_sb_adds(readme, ": git apply in ");
		recipe_comment_text(readme, v->patch.dir);
		rt_sb_addc(readme, '\n');
		r->patch_names[i] = name;
		name = NULL;
	}
	free(data);
	free(name);
	return rc;
}

/* A kept change's build, as apply.sh runs it. */
static void add_build(struct recipe *r, const struct var_def *v, bool *builds)
{
	if (!*builds)
		rt_sb_adds(&r->apply, "# the builds of the kept changes, in the order they were kept\n");
	*builds = true;
	rt_sb_adds(&r->apply, "(cd ");
	add_target(&r->apply, r, v->kind == VAR_KIND_PATCH ? v->patch.dir : r->cp.workdir);
	rt_sb_adds(&r->apply, " &&");
	for (size_t k = 0; k < v->build.n; k++) {
		rt_sb_addc(&r->apply, ' ');
		rt_sb_add_shq(&r->apply, v->build.v[k]);
	}
	rt_sb_adds(&r->apply, ")\n");
}

/* patches/: the kept patches in the order they were kept; apply.sh then
 * runs the kept builds in that order. Generated changes (space points, llm
 * answers) count as the spec's own. */
static int write_patches_and_builds(struct recipe *r, struct rt_sb *readme, struct rt_sb *err)
{
	int rc = 0;
	bool builds = false;
	for (size_t i = 0; i < r->n && !rc; i++) {
		if (!recipe_kept(r, &r->its[i]))
			continue;
		struct var_def gen;
		memset(&gen, 0, sizeof(gen));
		bool generated;
		const struct var_def *v = kept_def(r, &r->its[i], &gen, &generated, err);
		if (!v)
			rc = RT_ENOENT;
		if (!rc && v->kind == VAR_KIND_PATCH)
			rc = write_patch(r, i, v, readme, err);
		if (!rc && v->build.n)
			add_build(r, v, &builds);
		if (generated)
			spec_variant_release(&gen);
	}
	return rc;
}

char **recipe_final_argv(const struct recipe *r, char *const *base)
{
	return var_config_argv(&r->c.cfg, base);
}

/* One argument for run.sh: placeholders filled, the workdir (by
 * {workdir} or written out) as "$W", everything else single-quoted. */
static void add_arg(struct rt_sb *sb, const struct recipe *r, const char *arg)
{
	struct spec_vars vars = { .port = r->s->engine.port ? r->s->engine.port : 8000,
				  .workdir = "\001", .nonce = "recipe", .iteration = 0 };
	char *a = spec_expand(arg, &vars);
	struct rt_sb t = RT_SB_INIT; /* a with the written-out workdir marked too */
	size_t n = strlen(r->cp.workdir);
	for (const char *p = a; *p;) {
		if (!strncmp(p, r->cp.workdir, n) && (p[n] == '/' || !p[n])) {
			rt_sb_addc(&t, '\001');
			p += n;
		} else {
			rt_sb_addc(&t, *p++);
		}
	}
	if (!t.len)
		rt_sb_adds(sb, "''");
	for (char *p = t.buf, *m; p && *p; p = m ? m + 1 : NULL) {
		if ((m = strchr(p, '\001')))
			*m = 0;
		if (*p)
			rt_sb_add_shq(sb, p);
		if (m)
			rt_sb_adds(sb, "\"$W\"");
	}
	rt_sb_release(&t);
	free(a);
}

/* One command line with the kept flags. */
static void add_command(struct rt_sb *sb, const struct recipe *r, char *const *base, const char *lead)
{
	char **argv = recipe_final_argv(r, base);
	rt_sb_adds(sb, lead);
	for (size_t i = 0; argv[i]; i++) {
		rt_sb_adds(sb, i ? " " : "");
		add_arg(sb, r, argv[i]);
	}
	rt_sb_addc(sb, '\n');
	rt_argv_free(argv);
}

/* A variable name a shell can set; anything else is refused, never written. */
static bool env_name_ok(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
		return false;
	return s[strspn(s, "_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")] == 0;
}

/* run.sh: the environment, then the engine (or each command benchmark),
 * in the workdir given (default: the current folder). */
static int write_run_sh(struct recipe *r, struct rt_sb *err)
{
	const struct spec *s = r->s;
	struct rt_sb sh = RT_SB_INIT;
	struct camp_cmdline cl; /* its environment: the spec's engine.env and the kept env changes */
	camp_cmdline(&r->c, &r->c.cfg, &cl);
	const struct rt_envv *env = &cl.env;
	rt_sb_addf(&sh, "#!/bin/sh\n# The best configuration of ratchet campaign %lld '", (long long)r->cp.id);
	recipe_comment_text(&sh, r->cp.name);
	rt_sb_addf(&sh, "' (iteration %lld:%d):\n"
		   "# the environment (the spec's engine.env and the kept env changes),\n# then %s,\n"
		   "# run in WORKDIR (default: the current folder) with the files apply.sh put there.\n"
		   "# usage: sh run.sh [WORKDIR]\n"
		   "# Placeholders are filled: {workdir} WORKDIR, {port} %d%s, {nonce} recipe.\nset -eu\n"
		   "W=$(cd \"${1:-.}\" && pwd)\n",
		   (long long)r->cp.id, r->best->seq,
		   s->engine.present ? "the engine command with the kept flags"
				     : "each command benchmark with the kept flags (there is no engine)",
		   s->engine.port ? s->engine.port : 8000,
		   s->engine.port ? "" : " (ratchet picked a free port per launch)");
	int rc = 0;
	for (size_t i = 0; i < env->n && !rc; i++) {
		if (!env_name_ok(env->v[i].name)) {
			rc = rt_errf(err, RT_EINVAL, "the kept environment names a variable no shell can set: '%s'",
				     env->v[i].name);
			break;
		}
		rt_sb_adds(&sh, env->v[i].value ? "export " : "unset ");
		rt_sb_adds(&sh, env->v[i].name);
		if (env->v[i].value) {
			rt_sb_addc(&sh, '=');
			rt_sb_add_shq(&sh, env->v[i].value);
		}
		rt_sb_addc(&sh, '\n');
	}
	rt_sb_adds(&sh, "cd \"$W\"\n");
	if (s->engine.present)
		add_command(&sh, r, s->engine.command.v, "exec ");
	for (size_t b = 0; !s->engine.present && b < s->n_benches; b++)
		if (s->benches[b].kind == SPEC_BENCH_COMMAND) {
			rt_sb_adds(&sh, "# benchmark ");
			recipe_comment_text(&sh, s->benches[b].name);
			rt_sb_addc(&sh, '\n');
			add_command(&sh, r, s->benches[b].cmd.command.v, "");
		}
	if (!rc)
		rc = recipe_write(r, "run.sh", sh.buf, sh.len, 0755, err);
	camp_cmdline_release(&cl);
	rt_sb_release(&sh);
	return rc;
}

static int write_readme(struct recipe *r, const struct rt_sb *patches, struct rt_sb *err)
{
	struct rt_sb t = RT_SB_INIT;
	int better = 0;
	double gain = rep_kept_compound(r->its, r->n, &better);
	rt_sb_addf(&t, "Recipe of ratchet campaign %lld '", (long long)r->cp.id);
	recipe_comment_text(&t, r->cp.name);
	rt_sb_adds(&t, "'\n  spec:    ");
	recipe_comment_text(&t, r->cp.spec_path);
	rt_sb_adds(&t, "\n  workdir: ");
	recipe_comment_text(&t, r->cp.workdir);
	rt_sb_addf(&t, "\n  best:    iteration %lld:%d, configuration fingerprint %s\n", (long long)r->cp.id,
		   r->best->seq, r->best->config_sha256 ? r->best->config_sha256 : "(not recorded)");
	if (r->res->kept && !isnan(gain)) {
		rt_sb_adds(&t, "  objective: ");
		rep_fmt_change(&t, gain, NAN, NAN, better);
		rt_sb_adds(&t, " vs the baseline\n");
	}
	rt_sb_addf(&t, "\nKept changes, in the order they were kept (%d):\n", r->res->kept);
	for (size_t i = 0; i < r->n; i++) {
		if (!recipe_kept(r, &r->its[i]))
			continue;
		rt_sb_addf(&t, "  %lld:%d ", (long long)r->cp.id, r->its[i].seq);
		recipe_comment_text(&t, r->its[i].variant);
		rt_sb_addc(&t, '\n');
		for (const char *p = r->its[i].change_text; p && *p;) {
			size_t k = strcspn(p, "\n");
			char *line = xasprintf("%.*s", (int)k, p);
			rt_sb_adds(&t, "      ");
			recipe_comment_text(&t, line);
			rt_sb_addc(&t, '\n');
			free(line);
			p += k + (p[k] == '\n');
		}
	}
	rt_sb_adds(&t, "\nWhat is here (every path is relative to this folder; run the scripts from anywhere):\n"
		   "  files/        the best configuration's bytes of every file the kept changes touched,\n"
		   "                by path under the workdir (_root/ holds paths outside it)\n"
		   "  patches/      the kept patches in order; their effect is already in files/, `git apply`\n"
		   "                carries them to another checkout\n"
		   "  apply.sh      sh apply.sh [WORKDIR]: copies files/ into WORKDIR (default: the current\n"
		   "                folder), removes the files the best removed, runs the kept builds, and\n"
		   "                installs spec.yaml there as ratchet-recipe.yaml\n"
		   "  run.sh        sh run.sh [WORKDIR]: the environment and the command line with the kept\n"
		   "                flags, started in WORKDIR (default: the current folder), so it serves\n"
		   "                WORKDIR's files\n"
		   "  spec.yaml     the campaign's benchmarks and gate on the best configuration (the kept\n"
		   "                flags and env in its command, no variants; workdir: the folder it is in):\n"
		   "                `ratchet run WORKDIR/ratchet-recipe.yaml` after apply.sh re-measures it\n"
		   "  variants.yaml the kept changes as spec variants with their lineage (campaign, iteration,\n"
		   "                gain then): `ratchet replay --from variants.yaml SPEC` measures them again\n"
		   "                on a new base (docs/replay.md)\n");
	if (r->res->dockerfile)
		rt_sb_adds(&t, "  Dockerfile    the engine's image by digest, files/ and patches/ copied in, the\n"
			   "                environment and the engine's command with the kept flags\n");
	if (patches->len) {
		rt_sb_adds(&t, "\nPatches:\n");
		rt_sb_add(&t, patches->buf, patches->len);
	}
	rt_sb_adds(&t, "\nTo reproduce without ratchet, on a copy of the workdir as it was before the campaign:\n"
		   "  cd /path/to/copy\n  sh /path/to/recipe/apply.sh\n  sh /path/to/recipe/run.sh\n"
		   "and to re-measure it with ratchet: ratchet run /path/to/copy/ratchet-recipe.yaml\n"
		   "\nThe store keeps the spec with secrets redacted: a value written [redacted] in run.sh\n"
		   "or spec.yaml must be filled in by hand.\n");
	int rc = recipe_write(r, "README.txt", t.buf, t.len, 0644, err);
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

/* -o DIR as an absolute path with no "." or ".." part: every file is
 * written below it, by recipe_write's relative paths. */
static char *out_dir(const char *dir)
{
	char cwd[4096];
	char *j = dir[0] == '/' || !getcwd(cwd, sizeof(cwd)) ? xstrdup(dir) : xasprintf("%s/%s", cwd, dir);
	char *norm = rt_path_normalize_abs(j);
	free(j);
	return norm;
}

/* apply.sh's first lines: where it is, and WORKDIR. */
static void apply_head(struct recipe *r)
{
	rt_sb_addf(&r->apply, "#!/bin/sh\n# Puts the best configuration of ratchet campaign %lld '", (long long)r->cp.id);
	recipe_comment_text(&r->apply, r->cp.name);
	rt_sb_adds(&r->apply, "' into a workdir.\n# usage: sh apply.sh [WORKDIR]   (default: the current folder)\n"
		   "set -eu\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nW=$(cd \"${1:-.}\" && pwd)\n");
}

static int write_all(struct recipe *r, struct rt_sb *err)
{
	struct rt_sb patches = RT_SB_INIT;
	apply_head(r);
	int rc = write_files(r, err);
	if (!rc)
		rc = write_patches_and_builds(r, &patches, err);
	rt_sb_adds(&r->apply, "# the re-measuring spec, its workdir the folder it is in\n"
		   "cp \"$here/spec.yaml\" \"$W/ratchet-recipe.yaml\"\n");
	if (!rc)
		rc = recipe_write(r, "apply.sh", r->apply.buf, r->apply.len, 0755, err);
	if (!rc)
		rc = write_run_sh(r, err);
	if (!rc)
		rc = recipe_write_spec(r, err);
	if (!rc)
		rc = recipe_write_variants(r, err);
	if (!rc)
		rc = recipe_write_dockerfile(r, err);
	if (!rc)
		rc = write_readme(r, &patches, err);
	rt_sb_release(&patches);
	return rc;
}

int run_campaign_recipe(struct db *db, int64_t id, const char *dir, struct run_recipe_result *res,
			struct rt_sb *err)
{
	struct recipe r;
	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.db = db;
	r.dir = out_dir(dir);
	r.res = res;
	var_config_init(&r.c.cfg);
	int rc = load(&r, id, err);
	if (!rc)
		rc = check_dir(r.dir, err);
	if (!rc) {
		res->campaign_id = r.cp.id;
		res->best_seq = r.best->seq;
		snprintf(res->config_sha256, sizeof(res->config_sha256), "%s",
			 r.best->config_sha256 ? r.best->config_sha256 : "");
		r.spec_json = spec_to_json(r.s);
		r.patch_names = xcalloc(r.n + 1, sizeof(char *));
		rc = write_all(&r, err);
	}
	for (size_t i = 0; r.patch_names && i < r.n; i++)
		free(r.patch_names[i]);
	free(r.patch_names);
	json_decref(r.spec_json);
	rt_sb_release(&r.apply);
	var_config_release(&r.c.cfg);
	free(r.c.kept);
	db_iterations_free(r.its, r.n);
	spec_free(r.s);
	db_campaign_release(&r.cp);
	free(r.dir);
	return rc;
}
