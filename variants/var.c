/*
 * The variant registry and what the kinds share: plans (files with before
 * and after bytes), atomic restore, the build step, the effective engine
 * configuration (argv + environment overrides) and its fingerprint.
 */
#include "variants/var_table_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/base/rt_json.h"

const struct var_ops *var_ops_for(enum var_kind kind)
{
	switch (kind) {
	case VAR_KIND_TABLE:
		return &var_table_ops;
	case VAR_KIND_FLAG:
		return &var_flag_ops;
	case VAR_KIND_ENV:
		return &var_env_ops;
	case VAR_KIND_PATCH:
		return &var_patch_ops;
	case VAR_KIND_FILE:
		return &var_file_ops;
	}
	return NULL;
}

/* ---- plans ---- */
void var_plan_release(struct var_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->files[i].path);
		free(p->files[i].rel);
		free(p->files[i].before);
		free(p->files[i].after);
	}
	free(p->files);
	p->files = NULL;
	p->n = 0;
}

char *var_path(const struct var_ctx *ctx, const char *rel)
{
	if (rel[0] == '/' || !ctx->workdir || !ctx->workdir[0])
		return xstrdup(rel);
	return xasprintf("%s/%s", ctx->workdir, rel);
}

/* Add abs to the plan as it is now; a symlink was resolved by the caller. */
static int plan_add_path(struct var_plan *p, const char *abs, const char *rel, struct rt_sb *err)
{
	struct var_file f = { 0 };
	int rc = rt_read_file(abs, &f.before, &f.before_len, NULL);
	if (rc == RT_ENOENT) {
		f.existed = false;
	} else if (rc) {
		return rt_errf(err, rc, "%s: cannot read", rel);
	} else {
		f.existed = true;
	}
	f.path = xstrdup(abs);
	f.rel = xstrdup(rel);
	p->files = xrealloc(p->files, (p->n + 1) * sizeof(*p->files));
	p->files[p->n++] = f;
	return 0;
}

int var_plan_add(struct var_plan *p, const char *abs, const char *rel, struct rt_sb *err)
{
	struct stat st;
	if (lstat(abs, &st) || !S_ISLNK(st.st_mode))
		return plan_add_path(p, abs, rel, err);
	/* Written through: the target is planned, written and restored, so the
	 * link stays a link. */
	char *target = realpath(abs, NULL);
	if (!target)
		return rt_errf(err, RT_ENOENT, "%s: a symbolic link whose target is missing (%s)", rel,
			       strerror(errno));
	int rc = plan_add_path(p, target, rel, err);
	free(target);
	return rc;
}

int var_plan_add_nofollow(struct var_plan *p, const char *abs, const char *rel, struct rt_sb *err)
{
	struct stat st;
	if (!lstat(abs, &st) && S_ISLNK(st.st_mode))
		return rt_errf(err, RT_EINVAL, "%s: a symbolic link; a change that replaces links is not supported",
			       rel);
	return plan_add_path(p, abs, rel, err);
}

int var_files_restore(const struct var_plan *p, struct rt_sb *err)
{
	int first = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct var_file *f = &p->files[i];
		int rc = 0;
		if (f->existed) {
			rc = rt_write_file_atomic(f->path, f->before, f->before_len, 0644, err);
		} else if (unlink(f->path) && errno != ENOENT) {
			rc = rt_errf(err, RT_EIO, "%s: cannot remove: %s", f->rel, strerror(errno));
		}
		/* keep going: restore as much as possible, report the first error */
		if (rc && !first)
			first = rc;
	}
	return first;
}

int var_files_write_after(const struct var_plan *p, struct rt_sb *err)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct var_file *f = &p->files[i];
		if (!f->has_after)
			continue;
		int rc = rt_write_file_atomic(f->path, f->after, f->after_len, 0644, err);
		if (rc)
			return rc;
	}
	return 0;
}

int var_run_build(const struct var_def *v, const struct var_ctx *ctx, struct rt_sb *log,
		  struct rt_sb *err)
{
	if (v->build.n == 0)
		return 0;
	if (!ctx->exec)
		return rt_errf(err, RT_ESTATE, "%s: build: no process runner", v->name);
	struct rt_sb out;
	rt_sb_init(&out, ctx->build_log_cap ? ctx->build_log_cap : 4u << 20);
	int status = 0;
	/* a patch's build runs in the patched source folder, others in workdir */
	char *cwd = v->kind == VAR_KIND_PATCH && v->patch.dir ? var_path(ctx, v->patch.dir)
							       : xstrdup(ctx->workdir);
	int rc = ctx->exec(v->build.v, cwd, ctx->build_timeout_s > 0 ? ctx->build_timeout_s : 3600,
			   &out, &status, err);
	if (log)
		rt_sb_add(log, out.buf, out.len);
	if (rc == 0 && status != 0)
		rc = rt_errf(err, RT_EPROC, "%s: build: %s exited with status %d", v->name, v->build.v[0],
			     status);
	else if (rc)
		rt_errf(err, rc, "%s: build: %s failed", v->name, v->build.v[0]);
	rt_sb_release(&out);
	free(cwd);
	return rc;
}

/* ---- the effective configuration ---- */
void var_config_init(struct var_config *c)
{
	memset(c, 0, sizeof(*c));
}

static void strv_copy(struct rt_strv *dst, const struct rt_strv *src)
{
	dst->n = src->n;
	dst->v = xcalloc(src->n + 1, sizeof(char *));
	for (size_t i = 0; i < src->n; i++)
		dst->v[i] = xstrdup(src->v[i]);
}

void var_config_release(struct var_config *c)
{
	for (size_t i = 0; i < c->n_flags; i++) {
		for (size_t j = 0; j < c->flags[i].n; j++)
			free(c->flags[i].v[j]);
		free(c->flags[i].v);
		free(c->flag_owner[i]);
		free(c->flag_key[i]);
	}
	free(c->flags);
	free(c->flag_owner);
	free(c->flag_key);
	for (size_t i = 0; i < c->n_env; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
		free(c->env_owner[i]);
	}
	free(c->env);
	free(c->env_owner);
	var_config_init(c);
}

void var_config_copy(struct var_config *dst, const struct var_config *src)
{
	var_config_init(dst);
	dst->n_flags = src->n_flags;
	dst->flags = xcalloc(src->n_flags + 1, sizeof(*dst->flags));
	dst->flag_owner = xcalloc(src->n_flags + 1, sizeof(char *));
	dst->flag_key = xcalloc(src->n_flags + 1, sizeof(char *));
	for (size_t i = 0; i < src->n_flags; i++) {
		strv_copy(&dst->flags[i], &src->flags[i]);
		dst->flag_owner[i] = xstrdup(src->flag_owner[i]);
		dst->flag_key[i] = src->flag_key[i] ? xstrdup(src->flag_key[i]) : NULL;
	}
	dst->n_env = src->n_env;
	dst->env = xcalloc(src->n_env + 1, sizeof(*dst->env));
	dst->env_owner = xcalloc(src->n_env + 1, sizeof(char *));
	for (size_t i = 0; i < src->n_env; i++) {
		dst->env[i].name = xstrdup(src->env[i].name);
		dst->env[i].value = xstrdup(src->env[i].value);
		dst->env_owner[i] = xstrdup(src->env_owner[i]);
	}
}

/* Index of option `name` in argv as "--x" or "--x=v", or -1. */
long var_argv_find_opt(char **v, size_t n, const char *name, bool *eq_form)
{
	size_t ln = strlen(name);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i], name) == 0) {
			*eq_form = false;
			return (long)i;
		}
		if (strncmp(v[i], name, ln) == 0 && v[i][ln] == '=') {
			*eq_form = true;
			return (long)i;
		}
	}
	return -1;
}

bool var_argv_is_option(const char *s)
{
	/* "-1" or "-0.5" is a value, not an option */
	return s[0] == '-' && s[1] != 0 && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.';
}

const char *var_argv_value(char **argv, size_t n, const char *name, bool want_value)
{
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

int var_flag_key_value(char **argv, const char *name, const char *key, const char *value,
		       json_t **old, char **out, struct rt_sb *err)
{
	size_t n = 0;
	while (argv && argv[n])
		n++;
	*old = NULL;
	*out = NULL;
	const char *cur = var_argv_value(argv, n, name, true);
	json_error_t je;
	json_t *doc = cur && *cur ? json_loads(cur, 0, &je) : json_object();
	json_t *val = json_loads(value, JSON_DECODE_ANY, NULL);
	struct rt_strv path = { 0 };
	int rc = rt_json_path_split(key, &path, err);
	if (!rc && !json_is_object(doc))
		rc = rt_errf(err, RT_EINVAL, "%s: its value is not a JSON object (%.80s)", name, cur);
	if (!rc && !val)
		rc = rt_errf(err, RT_EINVAL, "%s: the value for %s is not JSON (%.80s)", name, key, value);
	json_t *was = NULL;
	for (size_t i = 0; !rc && i < path.n; i++)
		was = rt_json_step(i ? was : doc, path.v[i]);
	json_incref(was); /* the set below drops the document's reference */
	if (!rc && !(rc = rt_json_set_path(doc, &path, val, err))) {
		*old = was;
		*out = var_json_text(doc, 0, false);
	} else {
		json_decref(was);
	}
	json_decref(val);
	json_decref(doc);
	rt_strv_release(&path);
	return rc;
}

static void apply_group(char ***pv, size_t *pn, const struct rt_strv *g, const char *key);

/* A group that sets one key inside the JSON value of its option. */
static void apply_key_group(char ***pv, size_t *pn, const struct rt_strv *g, const char *key)
{
	char *text = NULL;
	json_t *old = NULL;
	if (g->n != 2 || var_flag_key_value(*pv, g->v[0], key, g->v[1], &old, &text, NULL))
		return; /* refused when planned */
	json_decref(old);
	struct rt_strv set = { .v = (char *[]){ g->v[0], text, NULL }, .n = 2 };
	apply_group(pv, pn, &set, NULL);
	free(text);
}

/* Apply one flag group to a growable argv (v, n). */
static void apply_group(char ***pv, size_t *pn, const struct rt_strv *g, const char *key)
{
	if (key) {
		apply_key_group(pv, pn, g, key);
		return;
	}
	char **v = *pv;
	size_t n = *pn;
	for (size_t i = 0; i < g->n;) {
		const char *name = g->v[i];
		bool has_value = var_argv_is_option(name) && i + 1 < g->n && !var_argv_is_option(g->v[i + 1]);
		const char *value = has_value ? g->v[i + 1] : NULL;
		bool eq = false;
		long at = var_argv_is_option(name) ? var_argv_find_opt(v, n, name, &eq) : -1;
		v = xrealloc(v, (n + 3) * sizeof(char *));
		if (at >= 0 && value) {
			if (eq) {
				free(v[at]);
				v[at] = xasprintf("%s=%s", name, value);
			} else if ((size_t)at + 1 < n && !var_argv_is_option(v[at + 1])) {
				free(v[at + 1]);
				v[at + 1] = xstrdup(value);
			} else {
				/* "--x" present without a value: give it one */
				memmove(&v[at + 2], &v[at + 1], (n - (size_t)at - 1) * sizeof(char *));
				v[at + 1] = xstrdup(value);
				n++;
			}
		} else if (at < 0) {
			v[n++] = xstrdup(name);
			if (value)
				v[n++] = xstrdup(value);
		}
		i += value ? 2 : 1;
	}
	v[n] = NULL;
	*pv = v;
	*pn = n;
}

char **var_config_argv(const struct var_config *c, char *const *base_argv)
{
	size_t n = 0;
	while (base_argv && base_argv[n])
		n++;
	char **v = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(base_argv[i]);
	for (size_t i = 0; c && i < c->n_flags; i++)
		apply_group(&v, &n, &c->flags[i], c->flag_key ? c->flag_key[i] : NULL);
	return v;
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp(((const struct rt_env *)a)->name, ((const struct rt_env *)b)->name);
}

static void env_put(struct rt_envv *out, const char *name, const char *value)
{
	for (size_t i = 0; i < out->n; i++)
		if (strcmp(out->v[i].name, name) == 0) {
			free(out->v[i].value);
			out->v[i].value = xstrdup(value);
			return;
		}
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n].name = xstrdup(name);
	out->v[out->n].value = xstrdup(value);
	out->n++;
}

void var_config_env(const struct var_config *c, const struct rt_envv *base, struct rt_envv *out)
{
	out->v = NULL;
	out->n = 0;
	for (size_t i = 0; base && i < base->n; i++)
		env_put(out, base->v[i].name, base->v[i].value);
	for (size_t i = 0; c && i < c->n_env; i++)
		env_put(out, c->env[i].name, c->env[i].value);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_env);
}

/* ---- config fingerprint ---- */
static int cmp_fp_file(const void *a, const void *b)
{
	const struct var_fp_file *x = a, *y = b;
	return strcmp(x->path, y->path);
}

/* Append s with its length, so ("ab","c") and ("a","bc") differ; NULL (an
 * unset variable) is "-" with no length, which no string can spell. */
static void add_field(struct rt_sb *sb, const char *s)
{
	if (!s) {
		rt_sb_adds(sb, "-\n");
		return;
	}
	rt_sb_addf(sb, "%zu:", strlen(s));
	rt_sb_adds(sb, s);
	rt_sb_addc(sb, '\n');
}

int var_config_fingerprint(const struct var_fp_file *files, size_t n, char *const *argv,
			   const struct rt_envv *env, char out[65], struct rt_sb *err)
{
	struct var_fp_file *sorted = xcalloc(n + 1, sizeof(*sorted));
	if (n)
		memcpy(sorted, files, n * sizeof(*sorted));
	/* qsort is not stable: the first given of a path is found by scanning. */
	qsort(sorted, n, sizeof(*sorted), cmp_fp_file);
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, "ratchet-config-v1\nfiles\n");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (i && !strcmp(sorted[i].path, sorted[i - 1].path))
			continue;
		const char *given = NULL;
		for (size_t k = 0; k < n && !given; k++)
			if (!strcmp(files[k].path, sorted[i].path))
				given = files[k].sha256 ? files[k].sha256 : "";
		char h[65];
		if (*given) {
			snprintf(h, sizeof(h), "%s", given);
		} else {
			int r = rt_sha256_file(sorted[i].path, h, NULL);
			if (r == RT_ENOENT)
				strcpy(h, "absent");
			else if (r)
				rc = rt_errf(err, r, "%s: cannot read for the config fingerprint",
					     sorted[i].path);
		}
		add_field(&sb, sorted[i].path);
		add_field(&sb, h);
	}
	rt_sb_adds(&sb, "argv\n");
	for (size_t i = 0; argv && argv[i]; i++)
		add_field(&sb, argv[i]);
	rt_sb_adds(&sb, "env\n");
	if (env && env->n) {
		struct rt_env *e = xmalloc(env->n * sizeof(*e));
		memcpy(e, env->v, env->n * sizeof(*e));
		qsort(e, env->n, sizeof(*e), cmp_env);
		for (size_t i = 0; i < env->n; i++) {
			add_field(&sb, e[i].name);
			add_field(&sb, e[i].value);
		}
		free(e);
	}
	if (!rc)
		rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	free(sorted);
	return rc;
}

const char *var_display_path(const struct var_ctx *ctx, const char *path)
{
	size_t n = ctx && ctx->workdir ? strlen(ctx->workdir) : 0;
	if (n && !strncmp(path, ctx->workdir, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

int var_fingerprint_file(const struct var_def *v, const struct var_ctx *ctx, const char *kind,
			 const char *where, const char *file, const char *key, char out[65],
			 struct rt_sb *err)
{
	char *abs = var_path(ctx, file);
	char h[65];
	int rc = rt_sha256_file(abs, h, NULL);
	free(abs);
	if (rc)
		return rt_errf(err, rc, "%s: %s: file missing", file, key);
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, kind);
	rt_sb_add(&sb, "", 1);
	rt_sb_adds(&sb, where);
	rt_sb_add(&sb, "", 1);
	rt_sb_adds(&sb, h);
	for (size_t i = 0; i < v->build.n; i++) {
		rt_sb_add(&sb, "", 1);
		rt_sb_adds(&sb, v->build.v[i]);
	}
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
	return 0;
}

int var_revert_files(const struct var_def *v, const struct var_ctx *ctx,
		     const struct var_plan *p, struct rt_sb *log, struct rt_sb *err)
{
	int rc = var_files_restore(p, err);
	return rc ? rc : var_run_build(v, ctx, log, err);
}

const char *var_kind_name(enum var_kind k)
{
	static const char *const names[] = { "table", "flag", "env", "patch", "file" };
	return (unsigned)k < RT_ARRAY_SIZE(names) ? names[k] : "unknown";
}
