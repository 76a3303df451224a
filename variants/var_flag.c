/*
 * The flag kind: extra engine arguments. Apply pushes the variant's group of
 * arguments onto the config (replacing the value of an existing option when
 * the effective argv is built), revert pops it. No files are touched.
 *
 * The key form ({name, key, value}) sets one key inside the JSON object a
 * flag holds (vLLM's --compilation-config): its group is [name, value] with
 * the key beside it, and the effective argv sets the key in whatever value
 * the option has at that point (var_config_argv), so every other key stays.
 */
#include "variants/var_table_int.h"

#include <stdlib.h>
#include <string.h>

/* The key form against the best's command line: *old the key's value
 * there (NULL: absent), *text the value set, as JSON (both may be NULL). */
static int key_check(const struct var_def *v, const struct var_ctx *ctx, json_t **old, char **text,
		     struct rt_sb *err)
{
	const struct var_def_flag_key *k = &v->flag_key;
	char *value = var_json_text(k->value, 0, false);
	char **argv = var_config_argv(ctx->cfg, ctx->flag_argv ? ctx->flag_argv : ctx->base_argv);
	char *out = NULL;
	json_t *was = NULL;
	int rc = var_flag_key_value(argv, k->name, k->key, value, &was, &out, err);
	if (rc)
		rt_errf(err, 0, " (variant %s, flag.key %s)", v->name, k->key);
	rt_argv_free(argv);
	free(out);
	if (old)
		*old = was;
	else
		json_decref(was);
	if (text && !rc)
		*text = value;
	else
		free(value);
	return rc;
}

static int flag_plan(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		     struct rt_sb *err)
{
	out->files = NULL;
	out->n = 0;
	if (v->flag_key.name)
		return key_check(v, ctx, NULL, NULL, err);
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
	c->flag_key = xrealloc(c->flag_key, (c->n_flags + 1) * sizeof(char *));
	struct rt_strv *g = &c->flags[c->n_flags];
	c->flag_key[c->n_flags] = NULL;
	if (v->flag_key.name) {
		g->n = 2;
		g->v = xcalloc(3, sizeof(char *));
		g->v[0] = xstrdup(v->flag_key.name);
		g->v[1] = var_json_text(v->flag_key.value, 0, false);
		c->flag_key[c->n_flags] = xstrdup(v->flag_key.key);
	} else {
		g->n = v->flag.n;
		g->v = xcalloc(v->flag.n + 1, sizeof(char *));
		for (size_t i = 0; i < v->flag.n; i++)
			g->v[i] = xstrdup(v->flag.v[i]);
	}
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
		free(c->flag_key[i]);
		memmove(&c->flags[i], &c->flags[i + 1], (c->n_flags - i - 1) * sizeof(*c->flags));
		memmove(&c->flag_owner[i], &c->flag_owner[i + 1],
			(c->n_flags - i - 1) * sizeof(char *));
		memmove(&c->flag_key[i], &c->flag_key[i + 1], (c->n_flags - i - 1) * sizeof(char *));
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
	if (v->flag_key.name) {
		char *s = json_dumps(v->flag_key.value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		rt_sb_addf(&sb, "%ckey%c%s%c%s%c%s", 0, 0, v->flag_key.name, 0, v->flag_key.key, 0, s);
		free(s);
	}
	for (size_t i = 0; i < v->flag.n; i++) {
		rt_sb_addc(&sb, 0);
		rt_sb_adds(&sb, v->flag.v[i]);
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	return 0;
}

/* "--compilation-config .cudagraph_capture_sizes: [1,2,4] -> [1,2,4,8]" */
static int key_describe(const struct var_def *v, const struct var_ctx *ctx, struct rt_sb *out,
			struct rt_sb *err)
{
	json_t *old = NULL;
	char *text = NULL;
	int rc = key_check(v, ctx, &old, &text, err);
	if (rc)
		return rc;
	char *was = old ? var_json_text(old, 0, false) : xstrdup("unset");
	const char *k = v->flag_key.key;
	rt_sb_addf(out, "%s %s%s: %s -> %s", v->flag_key.name, k[0] == '/' ? "" : ".", k, was, text);
	free(was);
	free(text);
	json_decref(old);
	return 0;
}

static int flag_describe(const struct var_def *v, const struct var_ctx *ctx,
			 const struct var_plan *p, struct rt_sb *out, struct rt_sb *err)
{
	if (v->flag_key.name)
		return key_describe(v, ctx, out, err);
	/* The command the flags go to: the engine's, else the first command
	 * benchmark's (llama-bench without a server), as key_check reads it. */
	char **argv = var_config_argv(ctx->cfg, ctx->flag_argv ? ctx->flag_argv : ctx->base_argv);
	size_t argc = 0;
	while (argv[argc])
		argc++;
	bool first = true;
	for (size_t i = 0; i < v->flag.n;) {
		const char *name = v->flag.v[i];
		bool has_value = var_argv_is_option(name) && i + 1 < v->flag.n &&
				 !var_argv_is_option(v->flag.v[i + 1]);
		const char *old = var_argv_value(argv, argc, name, has_value);
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
