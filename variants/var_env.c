/*
 * The env kind: environment overrides for the engine (set, or unset when the
 * value is NULL). Apply pushes the overrides onto the config, revert removes
 * the ones this variant added. No files are touched.
 */
#include "variants/var.h"

#include <stdlib.h>
#include <string.h>

static int env_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		    struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	if (v->env.n == 0)
		return rt_errf(err, RT_EINVAL, "%s: env: no variables", v->name);
	for (size_t i = 0; i < v->env.n; i++)
		if (!v->env.v[i].name || !v->env.v[i].name[0] || strchr(v->env.v[i].name, '='))
			return rt_errf(err, RT_EINVAL, "%s: env: invalid variable name '%s'", v->name,
				       v->env.v[i].name ? v->env.v[i].name : "");
	return 0;
}

static int env_apply(const struct var_def *v, const struct var_ctx *ctx,
		     const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	struct var_config *c = ctx->cfg;
	if (!c)
		return rt_errf(err, RT_ESTATE, "%s: env: no engine config", v->name);
	c->env = xrealloc(c->env, (c->n_env + v->env.n) * sizeof(*c->env));
	c->env_owner = xrealloc(c->env_owner, (c->n_env + v->env.n) * sizeof(char *));
	for (size_t i = 0; i < v->env.n; i++) {
		c->env[c->n_env].name = xstrdup(v->env.v[i].name);
		c->env[c->n_env].value = xstrdup(v->env.v[i].value);
		c->env_owner[c->n_env] = xstrdup(v->name);
		c->n_env++;
	}
	return 0;
}

static int env_revert(const struct var_def *v, const struct var_ctx *ctx,
		      const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	struct var_config *c = ctx->cfg;
	if (!c)
		return rt_errf(err, RT_ESTATE, "%s: env: no engine config", v->name);
	size_t w = 0;
	for (size_t i = 0; i < c->n_env; i++) {
		if (strcmp(c->env_owner[i], v->name) == 0) {
			free(c->env[i].name);
			free(c->env[i].value);
			free(c->env_owner[i]);
			continue;
		}
		c->env[w] = c->env[i];
		c->env_owner[w] = c->env_owner[i];
		w++;
	}
	c->n_env = w;
	return 0;
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp(((const struct rt_env *)a)->name, ((const struct rt_env *)b)->name);
}

static int env_fingerprint(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			   struct rt_sb *err)
{
	struct rt_env *e = xcalloc(v->env.n + 1, sizeof(*e));
	memcpy(e, v->env.v, v->env.n * sizeof(*e));
	qsort(e, v->env.n, sizeof(*e), cmp_env);
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, "env");
	for (size_t i = 0; i < v->env.n; i++) {
		rt_sb_addc(&sb, 0);
		rt_sb_adds(&sb, e[i].name);
		/* unset and set-to-empty must differ */
		rt_sb_adds(&sb, e[i].value ? "=" : "!");
		if (e[i].value)
			rt_sb_adds(&sb, e[i].value);
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	free(e);
	return 0;
}

static int env_describe(const struct var_def *v, const struct var_ctx *ctx,
			const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	for (size_t i = 0; i < v->env.n; i++) {
		const char *name = v->env.v[i].name;
		/* what the engine sees now: the inherited environment, then the
		 * spec's engine.env, then the overrides of kept variants */
		const char *old = getenv(name);
		bool found = false;
		for (size_t j = 0; ctx->base_env && j < ctx->base_env->n; j++)
			if (strcmp(ctx->base_env->v[j].name, name) == 0) {
				old = ctx->base_env->v[j].value;
				found = true;
			}
		for (size_t j = 0; ctx->cfg && j < ctx->cfg->n_env; j++)
			if (strcmp(ctx->cfg->env[j].name, name) == 0) {
				old = ctx->cfg->env[j].value;
				found = true;
			}
		(void)found;
		const char *new = v->env.v[i].value;
		rt_sb_addf(out, "%s%s %s -> %s", i ? ", " : "", name, old ? old : "unset",
			   new ? new : "unset");
	}
	return 0;
}

const struct var_ops var_env_ops = {
	.name = "env",
	.plan = env_plan,
	.apply = env_apply,
	.revert = env_revert,
	.fingerprint = env_fingerprint,
	.describe = env_describe,
};
