/*
 * The patch kind: a unified diff applied with `git apply` in a source folder,
 * then the build. The plan asks git which files the diff touches
 * (`git apply --check`, then `--numstat -z` forwards and reversed, so both
 * names of a rename are planned) and records their current bytes; their
 * new bytes are only known after applying. A folder inside a larger work
 * tree is handled: git names paths from the top, ratchet from the folder.
 * A path that is a symbolic link is refused (restoring bytes would replace
 * the link with a regular file). Revert writes the
 * recorded bytes back (removing files the diff created) and rebuilds. Git is
 * run from argv through ctx->exec, never through a shell.
 */
#include "variants/var.h"

#include <stdlib.h>
#include <string.h>

/* Run git with args in dir; output in out. 0 only when git exits 0. */
static int git(const struct var_ctx *ctx, const char *dir, const char *const *args,
	       struct rt_sb *out, struct rt_sb *err)
{
	if (!ctx->exec)
		return rt_errf(err, RT_ESTATE, "git: no process runner");
	int status = 0;
	int rc = ctx->exec((char *const *)args, dir,
			   ctx->build_timeout_s > 0 ? ctx->build_timeout_s : 3600, out, &status, err);
	if (rc)
		return rc;
	return status ? RT_EPROC : 0;
}

static int patch_check(const struct var_def *v, const struct var_ctx *ctx, char **patch,
		       char **dir, struct rt_sb *err)
{
	if (!v->patch.file || !v->patch.dir)
		return rt_errf(err, RT_EINVAL, "%s: patch: file and dir are required", v->name);
	*patch = var_path(ctx, v->patch.file);
	*dir = var_path(ctx, v->patch.dir);
	if (!rt_file_exists(*patch))
		return rt_errf(err, RT_ENOENT, "%s: patch.file: patch file missing", v->patch.file);
	if (!rt_file_exists(*dir))
		return rt_errf(err, RT_ENOENT, "%s: patch.dir: folder missing", v->patch.dir);
	return 0;
}

/* Add each path named in `git apply --numstat -z` output to the plan.
 * Records are "added\tdeleted\tpath\0" (binary files: "-\t-\tpath"), or
 * for a rename in some git versions "added\tdeleted\t\0old\0new\0". The
 * paths are relative to the top of the work tree when dir is inside one:
 * prefix (`git rev-parse --show-prefix`, "" outside a repository) is taken
 * off, since git only applies paths under dir. */
static int plan_numstat(const struct var_def *v, const char *dir, const char *prefix,
			const struct rt_sb *o, struct var_plan *out, struct rt_sb *err)
{
	const char *p = o->buf, *end = o->buf + o->len;
	size_t np = strlen(prefix);
	while (p < end && *p) {
		const char *t1 = memchr(p, '\t', (size_t)(end - p));
		const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
		if (!t2)
			return rt_errf(err, RT_EPARSE, "%s: cannot read git apply --numstat output",
				       v->patch.file);
		const char *names[2] = { t2 + 1, NULL };
		size_t nn = 1;
		if (!*names[0]) {
			names[0] = t2 + 2;
			names[1] = names[0] + strlen(names[0]) + 1;
			nn = 2;
		}
		for (size_t k = 0; k < nn; k++) {
			if (strncmp(names[k], prefix, np))
				return rt_errf(err, RT_EPARSE, "%s: git names '%s', outside %s",
					       v->patch.file, names[k], v->patch.dir);
			const char *rel = names[k] + np;
			bool dup = false;
			for (size_t j = 0; j < out->n; j++)
				dup |= strcmp(out->files[j].rel, rel) == 0;
			if (dup)
				continue;
			char *abs = xasprintf("%s/%s", dir, rel);
			int rc = var_plan_add_nofollow(out, abs, rel, err);
			free(abs);
			if (rc)
				return rc;
		}
		p = names[nn - 1] + strlen(names[nn - 1]) + 1;
	}
	return 0;
}

/* dir's path below the top of its git work tree ("src/"), "" when dir is
 * the top or in no repository. Caller frees. */
static int work_tree_prefix(const struct var_ctx *ctx, const char *dir, char **prefix,
			    struct rt_sb *err)
{
	struct rt_sb o;
	rt_sb_init(&o, 1u << 16);
	const char *args[] = { "git", "rev-parse", "--show-prefix", NULL };
	int rc = git(ctx, dir, args, &o, err);
	if (rc == RT_EPROC) { /* not a repository: paths are relative to dir */
		rt_sb_reset(&o);
		rc = 0;
	}
	rt_sb_trim(&o);
	*prefix = rc ? NULL : rt_sb_detach(&o, NULL);
	rt_sb_release(&o);
	return rc;
}

/* git apply run below the top of a work tree skips, with exit 0, every
 * file whose path is outside that folder: a "diff --git" patch names its
 * paths from the top, so one written relative to patch.dir was skipped
 * whole, measured as a no-op and recorded "reverted -0.0%" (issue 22,
 * item 18). Any skipped file refuses the patch. o: `--check --verbose`. */
static int refuse_skips(const struct var_def *v, const char *prefix, const struct rt_sb *o,
			struct rt_sb *err)
{
	static const char mark[] = "Skipped patch '";
	const char *at = o->buf ? strstr(o->buf, mark) : NULL;
	if (!at)
		return 0;
	const char *name = at + strlen(mark), *end = strchr(name, '\'');
	return rt_errf(err, RT_EINVAL, "%s: git apply skips '%.*s': the patch names it from the top of "
		       "the repository, which is outside patch.dir %s (%s below the top); write the "
		       "patch's paths from the top with the folder (%s...), or set patch.dir to the top",
		       v->patch.file, end ? (int)(end - name) : (int)strlen(name), name, v->patch.dir,
		       *prefix ? prefix : "./", prefix);
}

/* Every path the patch touches, with its current bytes: `--numstat` names
 * the new path of a rename or copy, `-R --numstat` (the patch reversed) the
 * old one, which a rename deletes. Deletions, mode changes and binary
 * files are named by both. */
static int patch_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		      struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	char *patch = NULL, *dir = NULL, *prefix = NULL;
	int rc = patch_check(v, ctx, &patch, &dir, err);
	struct rt_sb o;
	rt_sb_init(&o, 1u << 20);
	if (rc)
		goto done;
	const char *check[] = { "git", "apply", "--check", "--verbose", patch, NULL };
	rc = git(ctx, dir, check, &o, err);
	if (rc) {
		rt_sb_trim(&o);
		rc = rt_errf(err, RT_EPROC, "%s: patch does not apply in %s: %s", v->patch.file,
			     v->patch.dir, o.buf);
		goto done;
	}
	if ((rc = work_tree_prefix(ctx, dir, &prefix, err)))
		goto done;
	if ((rc = refuse_skips(v, prefix, &o, err)))
		goto done;
	for (int reverse = 0; reverse < 2 && !rc; reverse++) {
		const char *fwd[] = { "git", "apply", "--numstat", "-z", patch, NULL };
		const char *rev[] = { "git", "apply", "-R", "--numstat", "-z", patch, NULL };
		rt_sb_reset(&o);
		rc = git(ctx, dir, reverse ? rev : fwd, &o, err);
		if (rc)
			rc = rt_errf(err, RT_EPROC, "%s: git apply%s --numstat failed: %s",
				     v->patch.file, reverse ? " -R" : "", o.buf);
		else
			rc = plan_numstat(v, dir, prefix, &o, out, err);
	}
	if (!rc && !out->n)
		rc = rt_errf(err, RT_EINVAL, "%s: the patch changes no file in %s (git names none)",
			     v->patch.file, v->patch.dir);
done:
	if (rc)
		var_plan_release(out);
	rt_sb_release(&o);
	free(prefix);
	free(patch);
	free(dir);
	return rc;
}

static int patch_apply(const struct var_def *v, const struct var_ctx *ctx,
		       const struct var_plan *pl, struct rt_sb *log, struct rt_sb *err)
{
	char *patch = NULL, *dir = NULL;
	int rc = patch_check(v, ctx, &patch, &dir, err);
	if (!rc) {
		struct rt_sb o;
		rt_sb_init(&o, 1u << 20);
		const char *args[] = { "git", "apply", patch, NULL };
		rc = git(ctx, dir, args, &o, err);
		if (rc) {
			rt_sb_trim(&o);
			rc = rt_errf(err, RT_EPROC, "%s: git apply failed in %s: %s", v->patch.file,
				     v->patch.dir, o.buf);
		}
		rt_sb_release(&o);
	}
	free(patch);
	free(dir);
	return rc ? rc : var_run_build(v, ctx, log, err);
}

static int patch_fingerprint(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			     struct rt_sb *err)
{
	return var_fingerprint_file(v, ctx, "patch", v->patch.dir, v->patch.file, "patch.file", out,
				    err);
}

static int patch_describe(const struct var_def *v, const struct var_ctx *ctx,
			  const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	char *patch = NULL, *dir = NULL;
	int rc = patch_check(v, ctx, &patch, &dir, err);
	if (!rc) {
		struct rt_sb o;
		rt_sb_init(&o, 1u << 20);
		const char *args[] = { "git", "apply", "--stat", patch, NULL };
		rc = git(ctx, dir, args, &o, err);
		if (rc)
			rc = rt_errf(err, RT_EPROC, "%s: git apply --stat failed: %s", v->patch.file,
				     o.buf);
		else {
			rt_sb_trim(&o);
			rt_sb_addf(out, "%s:\n%s", v->patch.file, o.buf);
		}
		rt_sb_release(&o);
	}
	free(patch);
	free(dir);
	return rc;
}

const struct var_ops var_patch_ops = {
	.name = "patch",
	.plan = patch_plan,
	.apply = patch_apply,
	.revert = var_revert_files,
	.fingerprint = patch_fingerprint,
	.describe = patch_describe,
};
