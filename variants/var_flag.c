/*
 * The flag kind: extra engine arguments. Apply pushes the variant's group of
 * arguments onto the config (replacing the value of an existing option when
 * the effective argv is built), revert pops it. No files are touched.
 */
#include "variants/var.h"

#include <stdlib.h>
#include <string.h>

static int flag_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		     struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	if (v->flag.n == 0)
		return rt_errf(err, RT_EINVAL, "%s: flag: empty argument list", v->name);
	return 0;
}

static int flag_apply(const struct var_def *v, const struct var_ctx *ctx,
		      const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	struct var_config *c = ctx->cfg;
	if (!c)
		return rt_errf(err, RT_ESTATE, "%s: flag: no engine config", v->name);
	c->flags = xrealloc(c->flags, (c->n_flags + 1) * sizeof(*c->flags));
	c->flag_owner = xrealloc(c->flag_owner, (c->n_flags + 1) * sizeof(char *));
	struct rt_strv *g = &c->flags[c->n_flags];
	g->n = v->flag.n;
	g->v = xcalloc(v->flag.n + 1, sizeof(char *));
	for (size_t i = 0; i < v->flag.n; i++)
		g->v[i] = xstrdup(v->flag.v[i]);
	c->flag_owner[c->n_flags] = xstrdup(v->name);
	c->n_flags++;
	return 0;
}

static int flag_revert(const struct var_def *v, const struct var_ctx *ctx,
		       const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	struct var_config *c = ctx->cfg;
	if (!c)
		return rt_errf(err, RT_ESTATE, "%s: flag: no engine config", v->name);
	for (size_t i = c->n_flags; i-- > 0;) {
		if (strcmp(c->flag_owner[i], v->name) != 0)
			continue;
		for (size_t j = 0; j < c->flags[i].n; j++)
			free(c->flags[i].v[j]);
		free(c->flags[i].v);
		free(c->flag_owner[i]);
		memmove(&c->flags[i], &c->flags[i + 1], (c->n_flags - i - 1) * sizeof(*c->flags));
		memmove(&c->flag_owner[i], &c->flag_owner[i + 1],
			(c->n_flags - i - 1) * sizeof(char *));
		c->n_flags--;
		return 0;
	}
	/* nothing to undo (e.g. revert after a crash before apply): not an error */
	return 0;
}

static int flag_fingerprint(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			    struct rt_sb *err)
{
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, "flag");
	for (size_t i = 0; i < v->flag.n; i++) {
		rt_sb_addc(&sb, 0);
		rt_sb_adds(&sb, v->flag.v[i]);
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	return 0;
}

/* Current value of option name in argv: "unset", "set" (no value) or the value. */
static const char *current(char **argv, const char *name, bool want_value)
{
	size_t n = 0;
	while (argv[n])
		n++;
	bool eq = false;
	long at = var_argv_find_opt(argv, n, name, &eq);
	if (at < 0)
		return NULL;
	if (eq)
		return strchr(argv[at], '=') + 1;
	if (want_value && (size_t)at + 1 < n && !var_argv_is_option(argv[at + 1]))
		return argv[at + 1];
	return "";
}

static int flag_describe(const struct var_def *v, const struct var_ctx *ctx,
			 const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	char **argv = var_config_argv(ctx->cfg, ctx->base_argv);
	bool first = true;
	for (size_t i = 0; i < v->flag.n;) {
		const char *name = v->flag.v[i];
		bool has_value = var_argv_is_option(name) && i + 1 < v->flag.n &&
				 !var_argv_is_option(v->flag.v[i + 1]);
		const char *old = current(argv, name, has_value);
		if (!first)
			rt_sb_adds(out, ", ");
		first = false;
		if (has_value)
			rt_sb_addf(out, "%s %s -> %s", name, old ? (*old ? old : "set") : "unset",
				   v->flag.v[i + 1]);
		else
			rt_sb_addf(out, "%s %s", old ? "=" : "+", name);
		i += has_value ? 2 : 1;
	}
	rt_argv_free(argv);
	return 0;
}

const struct var_ops var_flag_ops = {
	.name = "flag",
	.plan = flag_plan,
	.apply = flag_apply,
	.revert = flag_revert,
	.fingerprint = flag_fingerprint,
	.describe = flag_describe,
};
