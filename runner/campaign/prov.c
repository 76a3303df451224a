/*
 * Each launch's provenance (see campaign_int.h): collected by the engine
 * module (engine_prov.c) with the command benchmark's runner, stored in
 * `launches` with the engine's version and ready time, and compared with
 * the campaign's first launch. A difference that the change under test
 * does not explain (the configuration's rebuilt engine, when a kept or
 * candidate change has build steps, patches or replaces files) is written
 * to the row's `differs`, which `show` flags, and said on the run's output.
 */
#include "runner/campaign/campaign_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/launches.h"
#include "runner/bench/bench_cmd.h"

/* Does variant v rebuild or replace what the engine runs? */
static bool rebuilds(const struct var_def *v)
{
	return v->build.n || v->kind == VAR_KIND_PATCH || v->kind == VAR_KIND_FILE;
}

/* Whether the configuration of this launch includes such a change: a kept
 * one, or the candidate's. */
static bool config_rebuilt(const struct camp *c, int arm)
{
	for (size_t i = 0; i < c->s->n_variants; i++)
		if ((c->kept[i] || (arm == 1 && c->variant && !strcmp(c->s->variants[i].name, c->variant))) &&
		    rebuilds(&c->s->variants[i]))
			return true;
	return false;
}

/* The workdir and every patch folder, once each. */
static size_t touched_repos(const struct camp *c, const char ***out)
{
	size_t n = 0;
	*out = xcalloc(c->s->n_variants + 2, sizeof(char *));
	if (c->s->workdir)
		(*out)[n++] = c->s->workdir;
	for (size_t i = 0; i < c->s->n_variants; i++) {
		const char *d = c->s->variants[i].kind == VAR_KIND_PATCH ? c->s->variants[i].patch.dir : NULL;
		bool seen = !d;
		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp((*out)[k], d);
		if (!seen)
			(*out)[n++] = d;
	}
	return n;
}

/* How p differs from the campaign's first launch (none yet: this is it). */
static void compare_first(struct camp *c, int arm, const struct run_engine_prov *p, const char *version,
			  struct rt_sb *differs)
{
	struct db_launch f;
	memset(&f, 0, sizeof(f));
	struct rt_sb err = RT_SB_INIT;
	int rc = db_launch_first(c->db, c->cid, &f, &err);
	if (!rc) {
		struct run_engine_prov first = {
			.exe_path = f.exe_path, .image_ref = f.image_ref, .image_digest = f.image_digest,
			.repos = f.repos, .extra = f.extra, .libs = f.libs,
		};
		snprintf(first.exe_sha256, sizeof(first.exe_sha256), "%s", f.exe_sha256 ? f.exe_sha256 : "");
		run_engine_prov_diff(&first, f.version, p, version, config_rebuilt(c, arm), differs);
		db_launch_release(&f);
	} else if (rc != RT_ENOENT) {
		camp_warn(c, "launch provenance", &err);
	}
	rt_sb_release(&err);
}

void camp_prov_record(struct camp *c, int64_t iter, int arm, struct camp_launch *l)
{
	const char **repos;
	size_t nrepos = touched_repos(c, &repos);
	const struct spec_engine *en = &c->s->engine;
	char **cmd = NULL;
	if (en->provenance.n) {
		cmd = xcalloc(en->provenance.n + 1, sizeof(char *));
		for (size_t i = 0; i < en->provenance.n; i++)
			cmd[i] = spec_expand(en->provenance.v[i], &l->vars);
	}
	pid_t *pids = NULL;
	size_t npids = run_engine_pids(l->eng, &pids);
	struct run_engine_prov_in in = {
		.argv = l->argv, .env = l->env, .n_env = l->n_env, .cwd = c->s->workdir, .repos = repos,
		.n_repos = nrepos, .command = cmd, .exec = run_bcmd_exec_simple, .pids = pids, .n_pids = npids,
	};
	struct run_engine_prov p;
	run_engine_prov_collect(&in, &p);
	free(pids);
	const char *version = run_engine_version(l->eng);
	struct rt_sb differs = RT_SB_INIT, err = RT_SB_INIT;
	compare_first(c, arm, &p, version, &differs);
	struct db_launch row = {
		.campaign_id = c->cid, .iteration_id = iter, .arm = arm ? "cand" : "best",
		.pgid = run_engine_pid(l->eng), .port = l->vars.port, .ready_s = run_engine_ready_s(l->eng),
		.version = (char *)version, .exe_path = p.exe_path, .exe_sha256 = p.exe_sha256[0] ? p.exe_sha256 : NULL,
		.image_ref = p.image_ref, .image_digest = p.image_digest, .repos = p.repos, .extra = p.extra, .libs = p.libs,
		.note = p.note.len ? p.note.buf : NULL, .differs = differs.len ? differs.buf : NULL,
	};
	if (db_launch_add(c->db, &row, NULL, &err))
		camp_warn(c, "launch provenance", &err);
	if (differs.len) {
		char *msg = xasprintf("warning: this launch differs from the campaign's first: %s", differs.buf);
		if (c->o->quiet)
			fprintf(stderr, "ratchet: %s\n", msg);
		else
			rep_progress_msg(&c->prog, msg);
		free(msg);
	}
	rt_sb_release(&differs);
	rt_sb_release(&err);
	run_engine_prov_release(&p);
	rt_argv_free(cmd);
	free(repos);
}
