/*
 * A change, planned and fingerprinted, put in place or taken back (see
 * campaign_int.h). Files move only through the journal (journal.c); flag
 * and env changes live in the candidate's config; builds run after the
 * files moved. A failed build is the iteration's failure; a failed journal
 * write is the campaign's (camp_fatal).
 */
#include "runner/campaign/campaign_int.h"

#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"

void camp_var_ctx(const struct camp *c, struct var_config *cfg, struct var_ctx *x)
{
	memset(x, 0, sizeof(*x));
	x->workdir = c->s->workdir;
	x->cfg = cfg;
	x->base_argv = c->s->engine.present ? c->s->engine.command.v : NULL;
	x->base_env = c->s->engine.present ? &c->s->engine.env : NULL;
	x->flag_argv = x->base_argv;
	for (size_t i = 0; !x->flag_argv && i < c->s->n_benches; i++)
		if (c->s->benches[i].kind == SPEC_BENCH_COMMAND)
			x->flag_argv = c->s->benches[i].cmd.command.v;
	x->exec = run_bcmd_exec_simple; /* git and build commands */
}

bool camp_touches_files(const struct var_def *v)
{
	return v->kind != VAR_KIND_FLAG && v->kind != VAR_KIND_ENV;
}

void camp_cmdline(const struct camp *c, const struct var_config *cfg, struct camp_cmdline *out)
{
	struct var_ctx x;
	camp_var_ctx(c, NULL, &x);
	out->argv = var_config_argv(cfg, x.flag_argv);
	var_config_env(cfg, x.base_env, &out->env);
}

void camp_cmdline_release(struct camp_cmdline *l)
{
	rt_argv_free(l->argv);
	rt_envv_release(&l->env);
	l->argv = NULL;
}

/* Drop the overrides that change nothing: a variable the engine's env does
 * not set, given the value ratchet's own environment already holds (or
 * unset while unset), so `env: {X: 1}` under X=1 is the best's configuration. */
static void env_effective(const struct rt_envv *base, struct rt_envv *env)
{
	size_t m = 0;
	for (size_t i = 0; i < env->n; i++) {
		bool in_base = false;
		for (size_t k = 0; base && k < base->n && !in_base; k++)
			in_base = !strcmp(base->v[k].name, env->v[i].name);
		const char *now = getenv(env->v[i].name), *v = env->v[i].value;
		if (!in_base && (now && v ? !strcmp(now, v) : now == v)) {
			free(env->v[i].name);
			free(env->v[i].value);
			continue;
		}
		env->v[m++] = env->v[i];
	}
	env->n = m;
}

/* The configuration the candidate will be: every file the campaign touched
 * so far as it is now, the planned files with their after bytes (a patch's
 * are only known once applied: the change's fingerprint stands for them),
 * the argv and env of cand. as_now: the planned files with the bytes they
 * hold now instead (with the best's config: the best configuration, over
 * the same files, to compare with). */
static int config_fingerprint(struct camp *c, const struct var_plan *plan, const char *change_sha,
			      const struct var_config *cand, bool as_now, char out[65], struct rt_sb *err)
{
	struct db_original *orig = NULL;
	size_t no = 0;
	int rc = db_originals_list(c->db, c->cid, &orig, &no, err);
	if (rc)
		return rc;
	struct var_fp_file *files = xcalloc(plan->n + no + 1, sizeof(*files));
	char (*sha)[65] = xcalloc(plan->n + 1, sizeof(*sha));
	size_t n = 0;
	/* Planned files first: the first given of a path wins. */
	for (size_t k = 0; k < plan->n; k++) {
		if (plan->files[k].has_after)
			rt_sha256_hex(plan->files[k].after, plan->files[k].after_len, sha[k]);
		else
			snprintf(sha[k], sizeof(sha[k]), "%s", change_sha);
		files[n++] = (struct var_fp_file){ plan->files[k].path, as_now ? NULL : sha[k] };
	}
	for (size_t i = 0; i < no; i++)
		files[n++] = (struct var_fp_file){ orig[i].path, NULL };
	struct camp_cmdline cl;
	camp_cmdline(c, cand, &cl);
	env_effective(c->s->engine.present ? &c->s->engine.env : NULL, &cl.env);
	rc = var_config_fingerprint(files, n, cl.argv, &cl.env, out, err);
	camp_cmdline_release(&cl);
	free(sha);
	free(files);
	db_originals_free(orig, no);
	return rc;
}

int camp_plan(struct camp *c, const struct var_def *v, struct var_config *cand, struct var_plan *plan,
	      struct rt_sb *desc, char change_sha[65], char config_sha[65], bool *unchanged,
	      struct rt_sb *log, struct rt_sb *err)
{
	char best_sha[65] = "";
	*unchanged = false;
	const struct var_ops *ops = var_ops_for(v->kind);
	struct var_ctx x;
	camp_var_ctx(c, cand, &x);
	int rc = ops->plan(v, &x, plan, err);
	if (!rc)
		rc = ops->describe(v, &x, plan, desc, err);
	if (!rc) /* stored and printed: an env variant may set HF_TOKEN */
		rt_redact_secrets(desc);
	if (!rc)
		rc = ops->fingerprint(v, &x, change_sha, err);
	if (!rc && !camp_touches_files(v))
		rc = ops->apply(v, &x, plan, log, err); /* edits the candidate's config only */
	if (!rc)
		rc = config_fingerprint(c, plan, change_sha, cand, false, config_sha, err);
	/* A patch's after bytes are unknown before it is applied: never the same. */
	bool known = true;
	for (size_t k = 0; k < plan->n; k++)
		known &= plan->files[k].has_after;
	if (!rc && known && !config_fingerprint(c, plan, change_sha, &c->cfg, true, best_sha, err))
		*unchanged = !strcmp(best_sha, config_sha);
	if (rc && !desc->len)
		rt_sb_addf(desc, "%s %s", var_kind_name(v->kind), v->name);
	return rc;
}

/* A patch: after bytes are only known once git applied it. */
static int patch_apply(struct camp *c, int64_t iter, const struct var_def *v, struct var_plan *plan,
		       struct var_config *cfg, struct rt_sb *log, struct rt_sb *err)
{
	int64_t *ids = xcalloc(plan->n + 1, sizeof(*ids));
	int rc = camp_journal_patch_open(c->db, c->cid, iter, plan, ids, err);
	if (rc) {
		free(ids);
		return camp_fatal(c, rc);
	}
	struct var_ctx x;
	camp_var_ctx(c, cfg, &x);
	rc = var_ops_for(v->kind)->apply(v, &x, plan, log, err);
	struct rt_sb jerr = RT_SB_INIT;
	int jrc = camp_journal_patch_close(c->db, plan, ids, rc == 0, &jerr);
	if (jrc) {
		rt_sb_reset(err);
		rc = camp_fatal(c, rt_errf(err, jrc, "%s", jerr.buf));
	}
	rt_sb_release(&jerr);
	free(ids);
	return rc;
}

static int run_build(struct camp *c, const struct var_def *v, struct var_config *cfg,
		     struct rt_sb *log, struct rt_sb *err)
{
	if (!v->build.n)
		return 0;
	struct var_ctx x;
	camp_var_ctx(c, cfg, &x);
	return var_run_build(v, &x, log, err);
}

int camp_to_cand(struct camp *c, int64_t iter, const struct var_def *v, struct var_plan *plan,
		 struct var_config *cand, struct rt_sb *log, struct rt_sb *err)
{
	if (!camp_touches_files(v))
		return 0; /* flag and env live in the candidate's config */
	if (v->kind == VAR_KIND_PATCH)
		return patch_apply(c, iter, v, plan, cand, log, err);
	size_t moved;
	int rc = camp_journal_move(c->db, c->cid, iter, plan, true, &moved, err);
	if (rc)
		return camp_fatal(c, rc);
	return run_build(c, v, cand, log, err);
}

int camp_to_best(struct camp *c, int64_t iter, const struct var_def *v, struct var_plan *plan,
		 struct rt_sb *log, struct rt_sb *err)
{
	if (!camp_touches_files(v))
		return 0;
	size_t moved;
	int rc = camp_journal_move(c->db, c->cid, iter, plan, false, &moved, err);
	if (rc)
		return camp_fatal(c, rc);
	return moved ? run_build(c, v, &c->cfg, log, err) : 0;
}
