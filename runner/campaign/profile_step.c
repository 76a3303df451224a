/*
 * The runner's profile step (spec profile: command, when): the best
 * configuration profiled with no person in the loop. When a profile is due
 * (profile_due), the engine is started on the best configuration with the
 * section's engine_flags and engine_env added, the command runs (with {port}
 * of that engine, and RATCHET_PROFILE_DIR: {workdir}/.ratchet-profile,
 * emptied first), the engine stops, and every file the folder then holds is
 * imported as one profile: an iteration of kind observe, variant "profile",
 * in the final state observed, with its findings, in one transaction
 * (agents/research research_observe). The tuning agent's prompt (llm.c) and
 * `ratchet propose` read the findings from the store, so they see them from
 * the next iteration on.
 *
 * Whether a profile is due is read from the store, never remembered: a
 * runner killed during the step recorded nothing (the transaction comes
 * last), so the resumed run finds the profile still due and runs it again
 * (reap_orphans stops the engine the killed one left, by its engine.pgid
 * fact, recorded under the best iteration).
 */
#include "runner/campaign/campaign_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/bench/bench_cmd.h"
#include "runner/engine/engine.h"
#include "runner/campaign/exec.h"

/* Due: when baseline, no profile yet; when keep, a keep after the last
 * profile; when every, profile.every changes since it (or the baseline). */
static int profile_due(struct camp *c, bool *due, struct rt_sb *err)
{
	const struct spec_profile *sp = &c->s->profile;
	struct db_iteration *its = NULL;
	size_t n = 0;
	int rc = db_iterations_list(c->db, c->cid, &its, &n, err);
	int last_observe = -1, last_keep = -1, changes = 0;
	bool baseline = false;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct db_iteration *it = &its[i];
		if (!strcmp(it->kind, "observe")) {
			last_observe = it->seq;
			changes = 0;
		} else if (!strcmp(it->kind, "baseline")) {
			baseline = it->state == DB_ITER_BASELINE;
		} else {
			changes++;
			if (it->state == DB_ITER_KEPT && !it->invalidated)
				last_keep = it->seq;
		}
	}
	db_iterations_free(its, n);
	*due = baseline && ((sp->when == SPEC_PROFILE_BASELINE && last_observe < 0) ||
			    (sp->when == SPEC_PROFILE_KEEP && last_keep > last_observe) ||
			    (sp->when == SPEC_PROFILE_EVERY && changes >= sp->every));
	return rc;
}

/* dir emptied (its plain files; it holds nothing else), or made. */
static int fresh_dir(const char *dir, struct rt_sb *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return mkdir(dir, 0777) && errno != EEXIST ? rt_errf(err, RT_EIO, "%s: %s", dir, strerror(errno)) : 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
			char *p = xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
	closedir(d);
	return 0;
}

/* The plain files of dir, sorted (owned). */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **dir_files(const char *dir, size_t *n)
{
	char **v = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *p = xasprintf("%s/%s", dir, e->d_name);
		struct stat st;
		if (e->d_name[0] != '.' && !stat(p, &st) && S_ISREG(st.st_mode)) {
			v = xrealloc(v, (*n + 1) * sizeof(char *));
			v[(*n)++] = p;
		} else {
			free(p);
		}
	}
	if (d)
		closedir(d);
	if (*n)
		qsort(v, *n, sizeof(char *), by_name);
	return v;
}

/* The best configuration, the profile's engine flags and env added. */
static void profile_config(struct camp *c, const char *dir, struct var_config *cfg)
{
	const struct spec_profile *sp = &c->s->profile;
	var_config_copy(cfg, &c->cfg);
	if (sp->engine_flags.n) {
		size_t k = cfg->n_flags++;
		cfg->flags = xrealloc(cfg->flags, cfg->n_flags * sizeof(*cfg->flags));
		cfg->flag_owner = xrealloc(cfg->flag_owner, cfg->n_flags * sizeof(char *));
		cfg->flag_key = xrealloc(cfg->flag_key, cfg->n_flags * sizeof(char *));
		cfg->flags[k].n = sp->engine_flags.n;
		cfg->flags[k].v = xcalloc(sp->engine_flags.n + 1, sizeof(char *));
		for (size_t i = 0; i < sp->engine_flags.n; i++)
			cfg->flags[k].v[i] = xstrdup(sp->engine_flags.v[i]);
		cfg->flag_owner[k] = xstrdup("profile");
		cfg->flag_key[k] = NULL;
	}
	size_t add = sp->engine_env.n + 1;
	cfg->env = xrealloc(cfg->env, (cfg->n_env + add) * sizeof(*cfg->env));
	cfg->env_owner = xrealloc(cfg->env_owner, (cfg->n_env + add) * sizeof(char *));
	for (size_t i = 0; i < add; i++, cfg->n_env++) {
		bool mine = i == sp->engine_env.n;
		const char *v = mine ? dir : sp->engine_env.v[i].value;
		cfg->env[cfg->n_env].name = xstrdup(mine ? "RATCHET_PROFILE_DIR" : sp->engine_env.v[i].name);
		cfg->env[cfg->n_env].value = v ? xstrdup(v) : NULL;
		cfg->env_owner[cfg->n_env] = xstrdup("profile");
	}
}

/* The command, on the engine started for it (if the spec has one). */
static int run_command(struct camp *c, const char *dir, struct rt_sb *err)
{
	const struct spec_profile *sp = &c->s->profile;
	struct camp_launch l = { 0 };
	struct var_config cfg;
	int rc = 0;
	if (c->s->engine.present) {
		camp_engines_stop(c);
		profile_config(c, dir, &cfg);
		rc = camp_launch_engine(c, c->best_iter, 0, &cfg, &l, err);
		var_config_release(&cfg);
	} else {
		l.vars = (struct spec_vars){ .workdir = c->s->workdir, .iteration = c->seq };
	}
	char **argv = xcalloc(sp->command.n + 1, sizeof(char *));
	for (size_t i = 0; i < sp->command.n; i++)
		argv[i] = spec_expand(sp->command.v[i], &l.vars);
	struct rt_env env[] = { { "RATCHET_PROFILE_DIR", (char *)dir } };
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 1 << 20);
	if (!rc && !(rc = run_bcmd_exec(argv, env, 1, c->s->workdir, sp->timeout_s, &r, err)) &&
	    (r.status || r.timed_out))
		rc = rt_errf(err, RT_EPROC, "profile.command %s after %.1f s: %s", r.timed_out ? "timed out" :
			     "failed", r.wall_s, r.err.len ? r.err.buf : r.out.buf ? r.out.buf : "");
	run_bcmd_result_release(&r);
	rt_argv_free(argv);
	if (l.eng) {
		camp_exec_engine_stopping(c);
		run_engine_stop(l.eng);
	}
	camp_launch_release(&l);
	return rc;
}

/* Import what the command wrote, as an observed iteration, in one transaction. */
static int record(struct camp *c, const char *dir, size_t *nfind, struct rt_sb *err)
{
	size_t nf = 0;
	char **files = dir_files(dir, &nf);
	struct research_opmap_def def;
	struct research_opmap *map = NULL;
	struct research_table *tables = NULL;
	char **paths = NULL;
	size_t nt = spec_research_tables(c->s, &tables, &paths);
	spec_profile_def(c->s, &def);
	int rc = nf ? research_opmap_new(&def, &map, err) :
		      rt_errf(err, RT_ENOENT, "profile.command wrote no file into %s", dir);
	struct research_import in = { (const char *const *)files, nf, c->s->profile.format, 0, c->cid, 0 };
	char *note = xasprintf("profile: %s of the best configuration", files ? files[0] : dir);
	struct research_observation o = { c->seq, c->best_iter, "profile", note };
	int64_t iter = 0, profile = 0;
	if (!rc && !(rc = db_begin(c->db, err))) {
		rc = research_observe(c->db, &in, &o, map, tables, nt, &iter, &profile, nfind, err);
		if (!rc)
			rc = db_commit(c->db, err);
		else
			db_rollback(c->db);
	}
	free(note);
	research_opmap_free(map);
	for (size_t i = 0; i < nt; i++)
		free(paths[i]);
	free(paths);
	free(tables);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	return rc;
}

int camp_profile_step(struct camp *c, struct rt_sb *err)
{
	bool due = false;
	int rc = 0;
	if (!c->s->profile.command.n || c->profile_failed || (rc = profile_due(c, &due, err)) || !due)
		return rc;
	char *dir = xasprintf("%s/.ratchet-profile", c->s->workdir);
	size_t nfind = 0;
	if (!c->o->quiet)
		rep_progress_msg(&c->prog, "profiling the best configuration (profile.command)");
	if (!(rc = fresh_dir(dir, err)) && !(rc = run_command(c, dir, err)))
		rc = record(c, dir, &nfind, err);
	if (!rc) {
		char *msg = xasprintf("iteration %d observed: a profile of the best, %zu finding%s", c->seq,
				      nfind, nfind == 1 ? "" : "s");
		if (!c->o->quiet)
			rep_progress_msg(&c->prog, msg);
		free(msg);
		c->seq++;
	} else if (rc != RT_EDB) {
		camp_warn(c, "the profile step (it is not tried again in this run)", err);
		rt_sb_reset(err);
		c->profile_failed = true;
		rc = 0;
	}
	free(dir);
	return rc;
}
