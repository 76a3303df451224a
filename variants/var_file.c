/*
 * The file kind: swap one file (a kernel binary, a shared library) for the
 * variant's copy. The plan knows both byte strings up front, so apply and
 * revert are single atomic writes, followed by the build if one is given.
 */
#include "variants/var.h"

#include <stdlib.h>
#include <string.h>

static int file_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		     struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	if (!v->file.target || !v->file.source)
		return rt_errf(err, RT_EINVAL, "%s: file: target and source are required", v->name);
	char *src = var_path(ctx, v->file.source);
	char *data = NULL;
	size_t len = 0;
	int rc = rt_read_file(src, &data, &len, NULL);
	free(src);
	if (rc == RT_ENOENT)
		return rt_errf(err, rc, "%s: file.source: source file missing", v->file.source);
	if (rc)
		return rt_errf(err, rc, "%s: file.source: cannot read", v->file.source);
	char *dst = var_path(ctx, v->file.target);
	rc = var_plan_add(out, dst, v->file.target, err);
	free(dst);
	if (rc) {
		free(data);
		return rc;
	}
	out->files[0].has_after = true;
	out->files[0].after = data;
	out->files[0].after_len = len;
	return 0;
}

static int file_apply(const struct var_def *v, const struct var_ctx *ctx,
		      const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	int rc = var_files_write_after(p, err);
	return rc ? rc : var_run_build(v, ctx, log, err);
}

static int file_fingerprint(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			    struct rt_sb *err)
{
	return var_fingerprint_file(v, ctx, "file", v->file.target, v->file.source, "file.source",
				    out, err);
}

static int file_describe(const struct var_def *v, const struct var_ctx *ctx,
			 const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	if (p->n != 1)
		return rt_errf(err, RT_ESTATE, "%s: file: describe needs the plan", v->name);
	const struct var_file *f = &p->files[0];
	char a[65], b[65];
	if (f->existed)
		rt_sha256_hex(f->before, f->before_len, a);
	rt_sha256_hex(f->after, f->after_len, b);
	rt_sb_addf(out, "%s: sha256 %.8s%s -> %.8s..", f->rel, f->existed ? a : "absent",
		   f->existed ? ".." : "", b);
	return 0;
}

const struct var_ops var_file_ops = {
	.name = "file",
	.plan = file_plan,
	.apply = file_apply,
	.revert = var_revert_files,
	.fingerprint = file_fingerprint,
	.describe = file_describe,
};
