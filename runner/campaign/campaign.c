/*
 * The campaign loop (see campaign.h).
 *
 * Crash safety: before a file is written, its pre-campaign bytes (first
 * touch) and an intent holding the bytes before and after are committed in
 * one transaction; the write is atomic (temp, fsync, rename); then the intent
 * is closed. Recovery undoes open intents and puts every touched file back to
 * the best configuration's bytes, which are derived from the kept
 * iterations' intents, so nothing about the run needs to be remembered
 * outside the database. Unfinished iterations become `interrupted` and their
 * variant is tried again, so a resumed campaign decides exactly what an
 * uninterrupted one would.
 */
#include "runner/campaign/campaign.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agents/agent.h"
#include "runner/bench/bench.h"
#include "runner/bench/bench_cmd.h"
#include "db/journal.h"
#include "runner/engine/engine.h"
#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"
#include "reports/rep.h"
#include "runner/stats/stats.h"
#include "variants/var.h"

/* Said, in its reason, of a greedy trial that passed (the passed column is what
 * the strategy reads). */
#define RUN_TRIAL_PASSED "greedy trial passed: the round's best is applied again at its end"

/* Set by SIGINT/SIGTERM: stop at the next safe point. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Samples of one metric in both arms. */
struct series {
	char *bench;     /* benchmark name ('log' for log events) */
	char *metric;    /* metric name */
	char *unit;      /* unit, may be NULL */
	double *v[2];    /* samples: [0] best, [1] cand */
	size_t n[2];
	size_t alloc[2];
};

/* The state of one running campaign. */
struct camp {
	struct db *db;                    /* the store */
	const struct spec *s;             /* the spec */
	const struct run_campaign_opts *o;/* options */
	int64_t cid;                      /* campaign id */
	int64_t best_iter;                /* iteration id of the current best */
	int64_t baseline_gate;            /* gate run of the baseline, 0 if none */
	char *baseline_model;             /* model id the baseline engine reported */
	char *device_id;                  /* device of the baseline's kernel benchmarks */
	bool *kept;                       /* per variant: kept in the current best */
	struct var_config cfg;            /* effective flags and env of the current best */
	struct rep_progress prog;         /* progress output */
	int seq;                          /* next iteration sequence number */
	const char *variant;              /* name of the change being measured, for progress */
	int total;                        /* planned iterations, for the progress line */
};

/* ---- small helpers ---- */

static uint64_t hash_seed(uint64_t seed, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ seed;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct series *series_get(struct series **v, size_t *n, const char *bench,
				 const char *metric, const char *unit)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].bench, bench) && !strcmp((*v)[i].metric, metric))
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	struct series *s = &(*v)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->bench = xstrdup(bench);
	s->metric = xstrdup(metric);
	s->unit = xstrdup(unit);
	return s;
}

static void series_add(struct series *s, int arm, double x)
{
	if (s->n[arm] == s->alloc[arm]) {
		s->alloc[arm] = s->alloc[arm] ? 2 * s->alloc[arm] : 8;
		s->v[arm] = xrealloc(s->v[arm], s->alloc[arm] * sizeof(double));
	}
	s->v[arm][s->n[arm]++] = x;
}

static void series_free(struct series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].bench);
		free(v[i].metric);
		free(v[i].unit);
		free(v[i].v[0]);
		free(v[i].v[1]);
	}
	free(v);
}

static void random_nonce(char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	FILE *f = fopen("/dev/urandom", "rb");
	if (!f || fread(b, 1, sizeof(b), f) != sizeof(b)) {
		uint64_t t = (uint64_t)rt_now_ns() ^ (uint64_t)getpid();
		for (int i = 0; i < 16; i++)
			b[i] = (unsigned char)(t >> (8 * (i % 8))) ^ (unsigned char)i;
	}
	if (f)
		fclose(f);
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[32] = 0;
}

/* ---- journaled file writes ---- */

/* Write bytes to path (or remove it) atomically. */
static int put_bytes(const char *path, bool exists, const void *bytes, size_t len,
		     struct rt_sb *err)
{
	if (!exists) {
		if (unlink(path) && errno != ENOENT)
			return rt_errf(err, RT_EIO, "%s: cannot remove: %s", path, strerror(errno));
		return 0;
	}
	return rt_write_file_atomic(path, bytes, len, 0644, err);
}

/* Remove temp files a killed atomic write may have left next to path. */
static void sweep_temps(const char *path)
{
	char *pat = xasprintf("%s.ratchet-tmp.*", path);
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	free(pat);
}

/*
 * Move every file of a planned change to one side ("apply": after bytes,
 * "revert": before bytes), journaled. Files already there are left alone.
 */
static int journal_switch(struct camp *c, int64_t iter, struct var_plan *plan, bool to_cand,
			  struct rt_sb *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		struct var_file *f = &plan->files[i];
		if (to_cand && !f->has_after)
			continue; /* patches: see patch_apply() */
		bool want_exists = to_cand ? true : f->existed;
		const void *want = to_cand ? f->after : f->before;
		size_t want_len = to_cand ? f->after_len : f->before_len;
		char *cur = NULL;
		size_t cur_len = 0;
		struct rt_sb ignore = RT_SB_INIT;
		bool cur_exists = rt_read_file(f->path, &cur, &cur_len, &ignore) == 0;
		rt_sb_release(&ignore);
		bool same = cur_exists == want_exists &&
			    (!want_exists || (cur_len == want_len && !memcmp(cur, want, want_len)));
		int64_t intent = 0;
		int rc = 0;
		if (same)
			goto next;
		if ((rc = db_begin(c->db, err)))
			goto next;
		rc = db_original_record(c->db, c->cid, f->path, f->existed, f->before, f->before_len,
					0644, err);
		if (!rc)
			rc = db_intent_open(c->db, iter, to_cand ? "apply" : "revert", f->path, cur_exists,
					    cur, cur_len, want_exists, want, want_len, &intent, err);
		if (rc) {
			db_rollback(c->db);
			goto next;
		}
		if ((rc = db_commit(c->db, err)))
			goto next;
		if ((rc = put_bytes(f->path, want_exists, want, want_len, err)))
			goto next;
		rc = db_intent_close(c->db, intent, "done", err);
	next:
		free(cur);
		if (rc)
			return rc;
	}
	return 0;
}

static void var_ctx_of(const struct camp *c, struct var_config *cfg, struct var_ctx *x)
{
	memset(x, 0, sizeof(*x));
	x->workdir = c->s->workdir;
	x->cfg = cfg;
	x->base_argv = c->s->engine.present ? c->s->engine.command.v : NULL;
	x->base_env = c->s->engine.present ? &c->s->engine.env : NULL;
	x->exec = run_bcmd_exec_simple; /* git and build commands */
}

static bool touches_files(const struct var_def *v)
{
	return v->kind != VAR_KIND_FLAG && v->kind != VAR_KIND_ENV;
}

/* A patch: after bytes are only known once git applied it. The intents are
 * opened (with the before bytes) first, then completed with what it wrote. */
static int patch_apply(struct camp *c, int64_t iter, const struct var_def *v,
		       struct var_plan *plan, struct var_config *cfg, struct rt_sb *log,
		       struct rt_sb *err)
{
	int64_t *ids = xcalloc(plan->n + 1, sizeof(*ids));
	int rc = db_begin(c->db, err);
	for (size_t i = 0; i < plan->n && !rc; i++) {
		struct var_file *f = &plan->files[i];
		rc = db_original_record(c->db, c->cid, f->path, f->existed, f->before, f->before_len,
					0644, err);
		if (!rc)
			rc = db_intent_open(c->db, iter, "apply", f->path, f->existed, f->before,
					    f->before_len, false, NULL, 0, &ids[i], err);
	}
	if (rc) {
		db_rollback(c->db);
		free(ids);
		return rc;
	}
	if ((rc = db_commit(c->db, err))) {
		free(ids);
		return rc;
	}
	struct var_ctx x;
	var_ctx_of(c, cfg, &x);
	rc = var_ops_for(v->kind)->apply(v, &x, plan, log, err);
	for (size_t i = 0; i < plan->n; i++) {
		if (rc) {
			var_files_restore(plan, NULL);
			db_intent_close(c->db, ids[i], "undone", NULL);
			continue;
		}
		char *now = NULL;
		size_t len = 0;
		bool ex = rt_read_file(plan->files[i].path, &now, &len, NULL) == 0;
		db_intent_set_after(c->db, ids[i], ex, now, len, NULL);
		db_intent_close(c->db, ids[i], "done", NULL);
		free(now);
	}
	free(ids);
	return rc;
}

/* Put the candidate's change in place (files journaled, build run). */
static int to_cand(struct camp *c, int64_t iter, const struct var_def *v,
		   struct var_plan *plan, struct var_config *cfg, struct rt_sb *log,
		   struct rt_sb *err)
{
	if (!touches_files(v))
		return 0; /* flag and env live in the candidate's config */
	if (v->kind == VAR_KIND_PATCH)
		return patch_apply(c, iter, v, plan, cfg, log, err);
	int rc = journal_switch(c, iter, plan, true, err);
	if (!rc && v->build.n) {
		struct var_ctx x;
		var_ctx_of(c, cfg, &x);
		rc = var_run_build(v, &x, log, err);
	}
	return rc;
}

/* Put the best configuration back (files journaled, build run). */
static int to_best(struct camp *c, int64_t iter, const struct var_def *v,
		   struct var_plan *plan, struct rt_sb *log, struct rt_sb *err)
{
	if (!touches_files(v))
		return 0;
	int rc = journal_switch(c, iter, plan, false, err);
	if (!rc && v->build.n) {
		struct var_ctx x;
		var_ctx_of(c, &c->cfg, &x);
		rc = var_run_build(v, &x, log, err);
	}
	return rc;
}

/* sha256 of a configuration: the bytes every touched file will hold, the
 * engine argv and env. Two iterations that reach the same configuration
 * by different routes get the same fingerprint. */
static void config_fingerprint(struct camp *c, const struct var_plan *plan,
			       const char *change_sha, const struct var_config *cfg, char out[65])
{
	struct rt_sb sb = RT_SB_INIT;
	struct db_original *orig = NULL;
	size_t no = 0;
	db_originals_list(c->db, c->cid, &orig, &no, NULL);
	for (size_t i = 0; i < no; i++) {
		bool planned = false;
		for (size_t k = 0; k < plan->n; k++)
			planned |= !strcmp(plan->files[k].path, orig[i].path);
		char sha[65] = "absent";
		if (!planned && rt_sha256_file(orig[i].path, sha, NULL))
			strcpy(sha, "absent");
		if (!planned)
			rt_sb_addf(&sb, "file %s %s\n", orig[i].path, sha);
	}
	db_originals_free(orig, no);
	for (size_t k = 0; k < plan->n; k++) {
		char sha[65];
		if (plan->files[k].has_after)
			rt_sha256_hex(plan->files[k].after, plan->files[k].after_len, sha);
		else
			snprintf(sha, sizeof(sha), "%s", change_sha);
		rt_sb_addf(&sb, "file %s %s\n", plan->files[k].path, sha);
	}
	char **argv = var_config_argv(cfg, c->s->engine.present ? c->s->engine.command.v : NULL);
	for (size_t i = 0; argv && argv[i]; i++)
		rt_sb_addf(&sb, "arg %s\n", argv[i]);
	rt_argv_free(argv);
	struct rt_envv env = { 0 };
	var_config_env(cfg, c->s->engine.present ? &c->s->engine.env : NULL, &env);
	for (size_t i = 0; i < env.n; i++)
		rt_sb_addf(&sb, "env %s=%s\n", env.v[i].name, env.v[i].value ? env.v[i].value : "(unset)");
	rt_envv_release(&env);
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
}

/* ---- environment facts ---- */

static void record_host_facts(struct camp *c)
{
	struct utsname u;
	if (uname(&u) == 0) {
		db_fact_add(c->db, c->cid, 0, "host", u.nodename, NULL);
		char *k = xasprintf("%s %s %s", u.sysname, u.release, u.machine);
		db_fact_add(c->db, c->cid, 0, "kernel", k, NULL);
		free(k);
	}
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "model name", 10)) {
				char *v = strchr(line, ':');
				if (v) {
					v += 2;
					v[strcspn(v, "\n")] = 0;
					db_fact_add(c->db, c->cid, 0, "cpu", v, NULL);
				}
				break;
			}
		}
		fclose(f);
	}
	char n[32];
	snprintf(n, sizeof(n), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	db_fact_add(c->db, c->cid, 0, "cpus", n, NULL);
	db_fact_add(c->db, c->cid, 0, "ratchet.version", RATCHET_VERSION, NULL);
	/* The git revision of the workdir, when it is a repository. */
	char *argv[] = { "git", "-C", c->s->workdir, "rev-parse", "HEAD", NULL };
	struct rt_sb out = RT_SB_INIT;
	int status = -1;
	if (run_bcmd_exec_simple(argv, NULL, 10, &out, &status, NULL) == 0 && status == 0) {
		rt_sb_trim(&out);
		db_fact_add(c->db, c->cid, 0, "git.workdir", out.buf, NULL);
	}
	rt_sb_release(&out);
}

/* ---- one measurement: (start engine), run every benchmark, (stop) ---- */

struct launch {
	struct run_engine *eng; /* running engine, or NULL */
	struct spec_vars vars;  /* placeholder values of this launch */
	char nonce[33];         /* per-launch nonce */
	char **argv;            /* expanded engine argv (owned) */
	struct rt_envmod *env;  /* engine env (owned strings) */
	size_t n_env;
};

static void launch_release(struct launch *l)
{
	if (l->eng)
		run_engine_free(l->eng);
	for (size_t i = 0; l->argv && l->argv[i]; i++)
		free(l->argv[i]);
	free(l->argv);
	for (size_t i = 0; i < l->n_env; i++) {
		free((char *)l->env[i].name);
		free((char *)l->env[i].value);
	}
	free(l->env);
	memset(l, 0, sizeof(*l));
}

/* Logs and outputs are stored with secrets from the environment redacted. */
static void store_artifact(struct camp *c, int64_t iter, const char *kind, const char *name,
			   const char *data, size_t len, bool truncated)
{
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_add(&sb, data, len);
	rt_redact_secrets(&sb);
	db_artifact_add(c->db, c->cid, iter, kind, name, sb.buf, sb.len, truncated, NULL);
	rt_sb_release(&sb);
}

static void store_engine_log(struct camp *c, int64_t iter, struct run_engine *e, const char *name)
{
	size_t len;
	bool trunc;
	const char *log = run_engine_log(e, &len, &trunc);
	store_artifact(c, iter, "engine-log", name, log, len, trunc);
}

/* Start the engine for a configuration; on failure the log is stored. */
static int launch_engine(struct camp *c, int64_t iter, const struct var_config *cfg,
			 struct launch *l, struct rt_sb *err)
{
	const struct spec_engine *en = &c->s->engine;
	int port = en->port;
	int rc;
	if (!port && (rc = run_engine_pick_port(en->host, &port, err)))
		return rc;
	if ((rc = run_engine_port_check(en->host, port, en->identity_http ? en->identity_http : en->ready_http, err)))
		return rc;
	random_nonce(l->nonce);
	l->vars.port = port;
	l->vars.workdir = c->s->workdir;
	l->vars.nonce = l->nonce;
	l->vars.iteration = c->seq;
	char **base = var_config_argv(cfg, en->command.v);
	size_t n = 0;
	while (base[n])
		n++;
	l->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		l->argv[i] = spec_expand(base[i], &l->vars);
	rt_argv_free(base);
	struct rt_envv env = { 0 };
	var_config_env(cfg, &en->env, &env);
	l->env = xcalloc(env.n + 1, sizeof(*l->env));
	for (size_t i = 0; i < env.n; i++, l->n_env++) {
		l->env[l->n_env].name = xstrdup(env.v[i].name);
		l->env[l->n_env].value = env.v[i].value ? spec_expand(env.v[i].value, &l->vars) : NULL;
	}
	rt_envv_release(&env);
	const char *names[64], *regex[64];
	size_t ne = c->s->n_log_events < 64 ? c->s->n_log_events : 64;
	for (size_t i = 0; i < ne; i++) {
		names[i] = c->s->log_events[i].name;
		regex[i] = c->s->log_events[i].regex;
	}
	struct run_engine_cfg ec = {
		.argv = l->argv, .env = l->env, .n_env = l->n_env, .cwd = c->s->workdir,
		.host = en->host, .port = port, .ready_path = en->ready_http,
		.ready_timeout_s = en->ready_timeout_s, .identity_path = en->identity_http,
		.expected_model = en->model ? en->model : c->baseline_model,
		.nonce = en->nonce_check ? l->nonce : NULL, .stop_grace_s = en->stop_grace_s,
		.log_cap = en->log_cap_bytes, .event_names = names, .event_regex = regex,
		.n_events = ne,
	};
	if ((rc = run_engine_start(&ec, &l->eng, err)))
		return rc;
	char pg[32];
	snprintf(pg, sizeof(pg), "%d", (int)run_engine_pid(l->eng));
	db_fact_add(c->db, c->cid, iter, "engine.pgid", pg, NULL);
	if ((rc = run_engine_wait_ready(l->eng, err))) {
		run_engine_stop(l->eng);
		store_engine_log(c, iter, l->eng, "engine-start-failure.log");
		return rc;
	}
	return 0;
}

/*
 * One measurement of one arm: every benchmark once. Metrics go to the store
 * and into the series. Returns 0; RT_EIDENTITY when the endpoint could not be
 * proven (the samples are stored invalid and not used); RT_EPROC / others
 * when the engine or a benchmark failed (the iteration fails).
 */
static int measure(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		   struct series **ser, size_t *nser, struct rt_sb *err)
{
	static const char *const arm_names[] = { "best", "cand" };
	struct launch l = { 0 };
	int rc = 0;
	l.vars.workdir = c->s->workdir;
	l.vars.iteration = c->seq;
	l.vars.nonce = "";
	if (c->s->engine.present) {
		rep_progress_phase(&c->prog, c->seq, c->variant, "start");
		if ((rc = launch_engine(c, iter, cfg, &l, err)))
			goto out;
		if ((rc = run_engine_verify(l.eng, err)))
			goto identity;
		if (!c->baseline_model && run_engine_model(l.eng))
			c->baseline_model = xstrdup(run_engine_model(l.eng));
	}
	rep_progress_phase(&c->prog, c->seq, c->variant, "bench");
	/* Without an engine, flag variants go to command benchmarks and env
	 * variants to every benchmark. */
	struct rt_envv venv = { 0 };
	struct rt_envmod *envm = NULL;
	size_t nv = 0;
	if (!c->s->engine.present) {
		var_config_env(cfg, NULL, &venv);
		nv = venv.n;
		envm = xcalloc(nv + 1, sizeof(*envm));
		for (size_t i = 0; i < nv; i++) {
			envm[i].name = venv.v[i].name;
			envm[i].value = venv.v[i].value;
		}
	}
	struct run_bench_out outs[16];
	size_t nb = c->s->n_benches < 16 ? c->s->n_benches : 16;
	size_t done = 0;
	for (size_t b = 0; b < nb && !rc; b++) {
		const struct spec_bench *sb = &c->s->benches[b];
		struct run_bench_ctx bc = {
			.db = c->db, .iteration_id = iter, .arm = arm_names[arm], .rep = rep,
			.vars = &l.vars, .engine_url = l.eng ? run_engine_url(l.eng) : NULL,
			.engine_model = l.eng ? run_engine_model(l.eng) : NULL,
			.env = envm, .n_env = nv,
			.seed = hash_seed(c->s->seed, sb->name) + (uint64_t)rep,
			.api_key = c->o->api_key,
		};
		char **argv = NULL;
		if (!c->s->engine.present && sb->kind == SPEC_BENCH_COMMAND)
			argv = var_config_argv(cfg, sb->cmd.command.v);
		bc.argv = argv;
		run_bench_out_init(&outs[b]);
		done = b + 1;
		rc = run_bench_run(c->s, sb, &bc, &outs[b], err);
		rt_argv_free(argv);
		if (rc) {
			rt_errf(err, 0, " (benchmark %s)", sb->name);
			if (outs[b].output.len)
				store_artifact(c, iter, "bench-output", sb->name, outs[b].output.buf,
					       outs[b].output.len, false);
		}
		if (!rc && l.eng && !run_engine_alive(l.eng))
			rc = rt_errf(err, RT_EPROC, "engine %s during benchmark %s",
				     run_engine_exit_text(l.eng), sb->name);
	}
	rt_envv_release(&venv);
	free(envm);
	/* A hung engine fails the measurement; then prove identity again. */
	if (!rc && l.eng)
		rc = run_engine_probe(l.eng, 5, err);
	if (!rc && l.eng) {
		rc = run_engine_verify(l.eng, err);
		if (rc == RT_EIDENTITY)
			rt_errf(err, 0, " (after the benchmark)");
	}
	/* Samples whose provenance could not be proven (the endpoint after the
	 * benchmark, or the device) are stored marked invalid, never used. */
	int bad = rc == RT_EIDENTITY ? rc : 0;
	if (bad)
		rc = 0;
	for (size_t b = 0; b < done && !rc && !bad; b++) {
		if (!outs[b].device_id)
			continue;
		if (!c->device_id) {
			c->device_id = xstrdup(outs[b].device_id);
			db_fact_add(c->db, c->cid, iter, "device", c->device_id, NULL);
		} else if (strcmp(c->device_id, outs[b].device_id)) {
			bad = rt_errf(err, RT_EIDENTITY,
				      "device changed: measured on '%s', the campaign's baseline on '%s'",
				      outs[b].device_id, c->device_id);
		}
	}
	double ev[64];
	size_t nev = l.eng ? (c->s->n_log_events < 64 ? c->s->n_log_events : 64) : 0;
	for (size_t i = 0; i < nev; i++)
		ev[i] = (double)run_engine_event_count(l.eng, i);
	if (!rc) {
		rc = db_begin(c->db, err);
		for (size_t b = 0; b < done && !rc; b++) {
			const char *bn = c->s->benches[b].name;
			for (size_t k = 0; k < outs[b].n && !rc; k++)
				rc = db_measure_add(c->db, iter, arm_names[arm], bn, outs[b].m[k].name, rep,
						    outs[b].m[k].value, outs[b].m[k].unit, err);
			for (size_t k = 0; k < outs[b].n_facts && !rc && rep == 0 && !bad; k++)
				rc = db_fact_add(c->db, c->cid, iter, outs[b].fact_keys[k],
						 outs[b].fact_values[k], err);
		}
		for (size_t i = 0; i < nev && !rc; i++)
			rc = db_measure_add(c->db, iter, arm_names[arm], "log", c->s->log_events[i].name, rep,
					    ev[i], "count", err);
		if (!rc && bad)
			rc = db_measure_invalidate(c->db, iter, arm_names[arm], rep, err->buf, err);
		if (rc)
			db_rollback(c->db);
		else
			rc = db_commit(c->db, err);
	}
	/* Only stored, valid samples enter the statistics. */
	for (size_t b = 0; b < done && !rc && !bad; b++)
		for (size_t k = 0; k < outs[b].n; k++)
			series_add(series_get(ser, nser, c->s->benches[b].name, outs[b].m[k].name,
					      outs[b].m[k].unit), arm, outs[b].m[k].value);
	for (size_t i = 0; i < nev && !rc && !bad; i++)
		series_add(series_get(ser, nser, "log", c->s->log_events[i].name, "count"), arm, ev[i]);
	if (!rc)
		rc = bad;
	for (size_t b = 0; b < done; b++)
		run_bench_out_release(&outs[b]);
	if (l.eng) {
		run_engine_stop(l.eng);
		if (rc || arm == 1)
			store_engine_log(c, iter, l.eng, arm ? "engine-cand.log" : "engine-best.log");
	}
	goto out;
identity:
	if (l.eng) {
		run_engine_stop(l.eng);
		store_engine_log(c, iter, l.eng, "engine-identity-failure.log");
	}
out:
	launch_release(&l);
	return rc;
}

/* ---- the decision ---- */

static bool better_higher(const struct camp *c, const char *bench, const char *metric)
{
	if (!strcmp(bench, "log"))
		return false;
	return spec_metric_better(c->s, bench, metric) != SPEC_BETTER_LOWER;
}

static bool constraint_holds(const struct spec_constraint *k, double v)
{
	switch (k->op) {
	case SPEC_OP_LE: return v <= k->value;
	case SPEC_OP_LT: return v < k->value;
	case SPEC_OP_GE: return v >= k->value;
	case SPEC_OP_GT: return v > k->value;
	}
	return false;
}

/* Write metric_stats and regressions for every tracked metric. */
static void record_stats(struct camp *c, int64_t iter, struct series *ser, size_t nser, bool kept)
{
	for (size_t i = 0; i < nser; i++) {
		struct series *s = &ser[i];
		if (!s->n[0] || !s->n[1])
			continue;
		bool hib = better_higher(c, s->bench, s->metric);
		struct run_stats_summary sb, sc;
		run_stats_summarize(s->v[0], s->n[0], &sb);
		run_stats_summarize(s->v[1], s->n[1], &sc);
		double ratio = NAN, lo = NAN, hi = NAN;
		uint64_t seed = hash_seed(c->s->seed, s->metric);
		if (sb.median > 0)
			run_stats_boot_ratio(s->v[0], s->n[0], s->v[1], s->n[1], c->s->repeats.confidence, 0,
					     seed, &ratio, &lo, &hi);
		double p = run_stats_mann_whitney(s->v[0], s->n[0], s->v[1], s->n[1], NULL);
		struct db_metric_stat ms = {
			.benchmark = s->bench, .metric = s->metric, .unit = s->unit,
			.better = hib ? "higher" : "lower", .best_median = sb.median,
			.cand_median = sc.median, .best_mad = sb.mad, .cand_mad = sc.mad,
			.ratio = ratio, .ci_lo = lo, .ci_hi = hi, .p_value = p,
			.n_best = (int)s->n[0], .n_cand = (int)s->n[1],
		};
		db_metric_stat_add(c->db, iter, &ms, NULL);
		/* The client's own send lag says nothing about the change. */
		if (!strncmp(s->metric, "send_lag", 8))
			continue;
		struct run_stats_regression r;
		if (sb.median > 0 &&
		    run_stats_regression(s->v[0], s->n[0], s->v[1], s->n[1], hib,
					 c->s->repeats.confidence, 0.01, seed, &r) == 0 &&
		    r.regressed) {
			/* Stored signed so that negative is worse, the interval with it. */
			double d = hib ? r.delta : -r.delta;
			double lo = hib ? r.lo : -r.hi, hi = hib ? r.hi : -r.lo;
			db_regression_add(c->db, iter, s->bench, s->metric, s->unit, sb.median, sc.median,
					  d, lo, hi, kept, NULL);
		}
	}
}

/* Medians of the candidate arm for constraints. */
static double cand_median(struct series *ser, size_t nser, const char *bench, const char *metric)
{
	for (size_t i = 0; i < nser; i++)
		if (!strcmp(ser[i].bench, bench) && !strcmp(ser[i].metric, metric) && ser[i].n[1])
			return run_stats_median(ser[i].v[1], ser[i].n[1]);
	return NAN;
}

/* Run the GSM8K gate on a configuration. */
static int run_gate_on(struct camp *c, int64_t iter, const struct var_config *cfg,
		       struct run_gate_result *gr, struct rt_sb *err)
{
	struct launch l = { 0 };
	int rc = 0;
	const char *url = c->s->gate.endpoint;
	const char *model = c->s->gate.model;
	if (c->s->engine.present && !url) {
		if ((rc = launch_engine(c, iter, cfg, &l, err)))
			goto out;
		if ((rc = run_engine_verify(l.eng, err)))
			goto out;
		url = run_engine_url(l.eng);
		if (!model)
			model = run_engine_model(l.eng);
	}
	if (!url) {
		rc = rt_errf(err, RT_EINVAL, "gate: no endpoint (the spec has no engine and no gate.gsm8k.endpoint)");
		goto out;
	}
	rc = run_gate_run(c->db, &c->s->gate, url, model, c->o->api_key, iter, c->baseline_gate, gr, err);
	if (rc > 0)
		rc = 0; /* the run id: a pass or a fail, gr->passed says which */
	if (!rc && l.eng && (rc = run_engine_verify(l.eng, err)))
		rt_errf(err, 0, " (after the gate)");
out:
	if (l.eng) {
		run_engine_stop(l.eng);
		if (rc)
			store_engine_log(c, iter, l.eng, "engine-gate.log");
	}
	launch_release(&l);
	return rc;
}

/* ---- iterations ---- */

/* Record an iteration's end. passed follows from the state unless the
 * caller set it (a greedy trial that passed is reverted with passed = 1). */
static int finish(struct camp *c, struct db_iteration *it, enum db_iter_state state,
		  const char *decision, struct rt_sb *err)
{
	it->state = state;
	if (state == DB_ITER_KEPT)
		it->passed = 1;
	else if ((state == DB_ITER_REVERTED || state == DB_ITER_GATED) && it->passed < 0)
		it->passed = 0;
	free(it->decision);
	it->decision = xstrdup(decision);
	free(it->phase);
	it->phase = xstrdup("decide");
	if (it->reason) {
		/* A reason may quote a benchmark's or engine's output. */
		struct rt_sb sb = RT_SB_INIT;
		rt_sb_adds(&sb, it->reason);
		if (rt_redact_secrets(&sb)) {
			free(it->reason);
			it->reason = rt_sb_detach(&sb, NULL);
		}
		rt_sb_release(&sb);
	}
	return db_iteration_finish(c->db, it, err);
}

static void set_reason(struct db_iteration *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct db_iteration *it, const char *fmt, ...)
{
	struct rt_sb sb = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(it->reason);
	it->reason = rt_sb_detach(&sb, NULL);
}

/* The baseline: measure the unchanged configuration, gate it (reference). */
static int run_baseline(struct camp *c, struct rt_sb *err)
{
	int64_t iter;
	/* seq 0, unless an earlier baseline attempt was interrupted */
	int rc = db_iteration_create(c->db, c->cid, c->seq, 0, "baseline", "baseline", "", NULL, NULL,
				     "baseline", DB_ROLE_CHANGE, &iter, err);
	if (rc)
		return rc;
	c->variant = "baseline";
	rep_progress_phase(&c->prog, c->seq, "baseline", "bench");
	db_iteration_set_state(c->db, iter, DB_ITER_MEASURING, "bench", NULL);
	struct series *ser = NULL;
	size_t nser = 0;
	int reps = c->s->repeats.min;
	struct rt_sb why = RT_SB_INIT;
	for (int r = 0; r < reps && !rc; r++)
		rc = measure(c, iter, 0, r, &c->cfg, &ser, &nser, &why);
	struct db_iteration it;
	db_iteration_get(c->db, iter, &it, NULL);
	if (rc) {
		set_reason(&it, "%s: %s", rc == RT_EBUSY ? "refused to measure" : "baseline failed", why.buf);
		finish(c, &it, DB_ITER_FAILED, "revert", NULL);
		rt_errf(err, rc, "%s", it.reason);
		goto out;
	}
	/* Objective median of the baseline, for the summary. */
	for (size_t i = 0; i < nser; i++) {
		if (!strcmp(ser[i].bench, c->s->objective.bench) &&
		    !strcmp(ser[i].metric, c->s->objective.metric)) {
			/* The baseline measured one configuration: it is both arms' value. */
			it.obj_best = it.obj_cand = run_stats_median(ser[i].v[0], ser[i].n[0]);
			it.n_best = (int)ser[i].n[0];
		}
	}
	free(it.objective);
	it.objective = xasprintf("%s.%s", c->s->objective.bench, c->s->objective.metric);
	if (c->s->gate.present) {
		rep_progress_phase(&c->prog, c->seq, "baseline", "gate");
		struct run_gate_result gr;
		memset(&gr, 0, sizeof(gr));
		rc = run_gate_on(c, iter, &c->cfg, &gr, &why);
		if (rc) {
			set_reason(&it, "baseline gate failed to run: %s", why.buf);
			finish(c, &it, DB_ITER_FAILED, "revert", NULL);
			rt_errf(err, rc, "%s", it.reason);
			run_gate_result_release(&gr);
			goto out;
		}
		c->baseline_gate = gr.run_id;
		it.gate_run_id = gr.run_id;
		if (!gr.passed) {
			set_reason(&it, "baseline does not pass the gate: %s", gr.verdict);
			finish(c, &it, DB_ITER_GATED, "revert", NULL);
			rc = rt_errf(err, RT_ECHECK, "%s; fix the engine or the thresholds first", it.reason);
			run_gate_result_release(&gr);
			goto out;
		}
		run_gate_result_release(&gr);
	}
	set_reason(&it, "baseline: %s.%s median %.6g over %d runs", c->s->objective.bench,
		   c->s->objective.metric, it.obj_best, it.n_best);
	rc = finish(c, &it, DB_ITER_BASELINE, "keep", err);
	if (!rc)
		rc = db_campaign_set_best(c->db, c->cid, iter, err);
	c->best_iter = iter;
out:
	rep_progress_done(&c->prog, c->seq, it.state, it.reason ? it.reason : "");
	db_iteration_release(&it);
	series_free(ser, nser);
	rt_sb_release(&why);
	return rc;
}

/*
 * One change: plan, measure best and candidate interleaved with sequential
 * stopping, gate, decide, and leave the files in the best configuration.
 */
static int run_one(struct camp *c, const struct agent_proposal *p, struct rt_sb *err)
{
	const struct var_def *v = &c->s->variants[p->variant];
	const struct var_ops *ops = var_ops_for(v->kind);
	c->variant = v->name;
	struct var_plan plan;
	struct var_config cand;
	struct rt_sb why = RT_SB_INIT;
	struct rt_sb desc = RT_SB_INIT;
	struct rt_sb log = RT_SB_INIT;
	struct series *ser = NULL;
	size_t nser = 0;
	struct db_iteration it;
	struct var_ctx x;
	int64_t iter = 0;
	bool applied = false;
	int rc;

	memset(&it, 0, sizeof(it));
	memset(&plan, 0, sizeof(plan));
	rt_sb_init(&log, 4u << 20);
	var_config_copy(&cand, &c->cfg);
	var_ctx_of(c, &cand, &x);

	/* Plan (touching nothing), describe and fingerprint the change. */
	char change_sha[65] = "", config_sha[65] = "";
	int prc = ops->plan(v, &x, &plan, &why);
	if (!prc)
		prc = ops->describe(v, &x, &plan, &desc, &why);
	if (!prc)
		prc = ops->fingerprint(v, &x, change_sha, &why);
	if (!prc && !touches_files(v))
		prc = ops->apply(v, &x, &plan, &log, &why); /* edits the candidate's config only */
	if (!prc)
		config_fingerprint(c, &plan, change_sha, &cand, config_sha);
	if (prc && !desc.len)
		rt_sb_addf(&desc, "%s %s", var_kind_name(v->kind), v->name);
	rc = db_iteration_create(c->db, c->cid, c->seq, c->best_iter, v->name,
				 var_kind_name(v->kind), desc.buf, change_sha[0] ? change_sha : NULL,
				 config_sha[0] ? config_sha : NULL, p->note, p->role, &iter, err);
	if (rc)
		goto out;
	db_iteration_get(c->db, iter, &it, NULL);
	free(it.objective);
	it.objective = xasprintf("%s.%s", c->s->objective.bench, c->s->objective.metric);
	rep_progress_phase(&c->prog, c->seq, v->name, "apply");
	if (prc) {
		set_reason(&it, "cannot apply: %s", why.buf);
		rc = finish(c, &it, DB_ITER_FAILED, "revert", err);
		goto out;
	}

	/* Measure best and candidate, interleaved, until the question is settled. */
	struct run_stats_decide_opts dopt = {
		.minimize = c->s->objective.goal == SPEC_GOAL_MIN,
		.min_gain = c->s->objective.min_gain,
		.confidence = c->s->repeats.confidence,
		.min_repeats = c->s->repeats.min,
		.max_repeats = c->s->repeats.max,
		.seed = hash_seed(c->s->seed, v->name),
	};
	struct run_stats_decision d;
	memset(&d, 0, sizeof(d));
	d.verdict = RUN_STATS_CONTINUE;
	int invalid = 0;
	bool interleave = c->s->repeats.interleave;
	int min = c->s->repeats.min, max = c->s->repeats.max;
	for (int j = 0; j < 2 * max && d.verdict == RUN_STATS_CONTINUE; j++) {
		/* The schedule: interleaved pairs (best r, candidate r); or, when
		 * restarts are too costly to alternate, the best's first `min` runs,
		 * then the candidate's, then pairs. Decide after every pair from
		 * `min` samples on. */
		int arm, r;
		bool decide_now;
		if (interleave || j >= 2 * min) {
			arm = j % 2;
			r = j / 2;
			decide_now = arm == 1 && r + 1 >= min;
		} else {
			arm = j < min ? 0 : 1;
			r = j < min ? j : j - min;
			decide_now = j == 2 * min - 1;
		}
		if (stop_requested) {
			rc = RT_EINTR;
			goto interrupted;
		}
		if (arm == 1 && !applied) {
			rep_progress_phase(&c->prog, c->seq, v->name, v->build.n ? "build" : "apply");
			db_iteration_set_state(c->db, iter, DB_ITER_APPLYING, "apply", NULL);
			rt_sb_reset(&why);
			rc = to_cand(c, iter, v, &plan, &cand, &log, &why);
			if (rc) {
				set_reason(&it, "apply failed: %s", why.buf);
				goto fail;
			}
			applied = true;
			db_iteration_set_state(c->db, iter, DB_ITER_MEASURING, "bench", NULL);
		} else if (arm == 0 && applied) {
			rep_progress_phase(&c->prog, c->seq, v->name, "revert");
			rt_sb_reset(&why);
			if ((rc = to_best(c, iter, v, &plan, &log, &why))) {
				set_reason(&it, "revert failed: %s", why.buf);
				goto fail;
			}
			applied = false;
		}
		if (arm == 0)
			db_iteration_set_state(c->db, iter, DB_ITER_MEASURING, "bench", NULL);
		rt_sb_reset(&why);
		rc = measure(c, iter, arm, r, arm ? &cand : &c->cfg, &ser, &nser, &why);
		if (rc == RT_EIDENTITY) {
			/* Not the engine we started: the samples do not count. */
			db_fact_add(c->db, c->cid, iter, "invalid-measurement", why.buf, NULL);
			if (++invalid >= 2) {
				set_reason(&it, "measurement invalid: %s", why.buf);
				rc = 0;
				goto invalid;
			}
			j--; /* the same slot again */
			continue;
		}
		if (rc == RT_EBUSY) {
			set_reason(&it, "refused to measure: %s", why.buf);
			rt_errf(err, rc, "%s", why.buf);
			if (applied)
				to_best(c, iter, v, &plan, &log, NULL);
			finish(c, &it, DB_ITER_FAILED, "revert", NULL);
			goto out;
		}
		if (rc == RT_ECHECK && arm == 1) {
			/* The candidate's output is wrong: the correctness gate said no. */
			set_reason(&it, "correctness check failed: %s", why.buf);
			rc = 0;
			if (applied) {
				rt_sb_reset(&why);
				if ((rc = to_best(c, iter, v, &plan, &log, &why))) {
					set_reason(&it, "revert failed: %s", why.buf);
					goto fail;
				}
			}
			record_stats(c, iter, ser, nser, false);
			rc = finish(c, &it, DB_ITER_GATED, "revert", err);
			goto out;
		}
		if (rc) {
			set_reason(&it, "%s measurement failed: %s", arm ? "candidate" : "best", why.buf);
			goto fail;
		}
		if (!decide_now)
			continue;
		/* Sequential stopping on the objective. */
		struct series *obj = NULL;
		for (size_t i = 0; i < nser; i++)
			if (!strcmp(ser[i].bench, c->s->objective.bench) &&
			    !strcmp(ser[i].metric, c->s->objective.metric))
				obj = &ser[i];
		if (!obj || !obj->n[0] || !obj->n[1]) {
			set_reason(&it, "objective %s.%s was not measured", c->s->objective.bench,
				   c->s->objective.metric);
			rc = RT_EINVAL;
			goto fail;
		}
		rep_progress_phase(&c->prog, c->seq, v->name, "decide");
		if (run_stats_decide(obj->v[0], obj->n[0], obj->v[1], obj->n[1], &dopt, &d)) {
			set_reason(&it, "cannot compare: the objective's median is not positive");
			rc = RT_EINVAL;
			goto fail;
		}
	}
	it.obj_best = d.median_best;
	it.obj_cand = d.median_cand;
	it.obj_delta = d.effect;
	it.obj_ci_lo = d.lo;
	it.obj_ci_hi = d.hi;
	it.confidence = c->s->repeats.confidence;
	free(it.test);
	it.test = xstrdup(d.test ? d.test : "");
	it.p_value = d.p_value;
	it.n_best = (int)d.n_best;
	it.n_cand = (int)d.n_cand;
	it.paired = interleave;

	bool keep = d.verdict == RUN_STATS_KEEP;
	enum db_iter_state state = keep ? DB_ITER_KEPT : DB_ITER_REVERTED;
	set_reason(&it, "%s", d.reason);
	for (size_t k = 0; keep && k < c->s->n_constraints; k++) {
		const struct spec_constraint *ct = &c->s->constraints[k];
		double m = cand_median(ser, nser, ct->bench, ct->metric);
		if (isnan(m) || !constraint_holds(ct, m)) {
			keep = false;
			state = DB_ITER_REVERTED;
			set_reason(&it, "%s; constraint %s violated (candidate median %.6g)", d.reason,
				   ct->text, m);
		}
	}
	/* A greedy trial is decided but never kept: the round's best is applied
	 * again (and gated) at the end of the round. */
	if (keep && p->role == DB_ROLE_TRIAL) {
		keep = false;
		it.passed = 1;
		state = DB_ITER_REVERTED;
		set_reason(&it, "%s; %s", d.reason, RUN_TRIAL_PASSED);
	}
	/* A change that is to be kept (and gated) must be in place. */
	if (keep && !applied) {
		rt_sb_reset(&why);
		if ((rc = to_cand(c, iter, v, &plan, &cand, &log, &why))) {
			set_reason(&it, "apply failed: %s", why.buf);
			goto fail;
		}
		applied = true;
	}
	/* The gate runs on the candidate, only when everything else says keep. */
	if (keep && c->s->gate.present) {
		rep_progress_phase(&c->prog, c->seq, v->name, "gate");
		struct run_gate_result gr;
		memset(&gr, 0, sizeof(gr));
		rt_sb_reset(&why);
		rc = run_gate_on(c, iter, &cand, &gr, &why);
		if (gr.run_id)
			it.gate_run_id = gr.run_id;
		if (rc) {
			set_reason(&it, "%s; gate could not run: %s", d.reason, why.buf);
			run_gate_result_release(&gr);
			goto fail;
		}
		if (!gr.passed) {
			keep = false;
			state = DB_ITER_GATED;
		}
		set_reason(&it, "%s; gate: %s", d.reason, gr.verdict ? gr.verdict : "");
		run_gate_result_release(&gr);
	}
	record_stats(c, iter, ser, nser, keep);
	if (keep) {
		if ((rc = finish(c, &it, DB_ITER_KEPT, "keep", err)))
			goto out;
		db_campaign_set_best(c->db, c->cid, iter, NULL);
		c->best_iter = iter;
		c->kept[p->variant] = true;
		var_config_release(&c->cfg);
		var_config_copy(&c->cfg, &cand);
		goto out;
	}
	if (applied) {
		rep_progress_phase(&c->prog, c->seq, v->name, "revert");
		rt_sb_reset(&why);
		if ((rc = to_best(c, iter, v, &plan, &log, &why))) {
			set_reason(&it, "revert failed: %s", why.buf);
			finish(c, &it, DB_ITER_FAILED, "revert", NULL);
			rt_errf(err, rc, "%s", it.reason);
			goto out;
		}
	}
	rc = finish(c, &it, state, "revert", err);
	goto out;

invalid:
	if (applied)
		to_best(c, iter, v, &plan, &log, NULL);
	rc = finish(c, &it, DB_ITER_INVALID, "revert", err);
	goto out;
fail:
	/* A failed change is recorded and reverted, and the campaign goes on. */
	if (log.len)
		store_artifact(c, iter, "build-log", "build.log", log.buf, log.len, log.len >= log.cap);
	if (applied) {
		struct rt_sb rerr = RT_SB_INIT;
		if (to_best(c, iter, v, &plan, &log, &rerr)) {
			set_reason(&it, "%s; and the revert failed: %s", it.reason, rerr.buf);
			finish(c, &it, DB_ITER_FAILED, "revert", NULL);
			rc = rt_errf(err, RT_EIO, "%s", it.reason);
			rt_sb_release(&rerr);
			goto out;
		}
		rt_sb_release(&rerr);
	}
	record_stats(c, iter, ser, nser, false);
	rc = finish(c, &it, DB_ITER_FAILED, "revert", err);
	goto out;
interrupted:
	if (applied)
		to_best(c, iter, v, &plan, &log, NULL);
	set_reason(&it, "interrupted by a signal; `ratchet run --resume` tries it again");
	finish(c, &it, DB_ITER_INTERRUPTED, "revert", NULL);
	rc = RT_EINTR;
out:
	if (iter)
		rep_progress_done(&c->prog, c->seq, it.id ? it.state : DB_ITER_FAILED,
				  it.reason ? it.reason : "");
	db_iteration_release(&it);
	var_config_release(&cand);
	var_plan_release(&plan);
	series_free(ser, nser);
	rt_sb_release(&why);
	rt_sb_release(&desc);
	rt_sb_release(&log);
	return rc;
}

/* ---- recovery and restore ---- */

int run_campaign_recover(struct db *db, int64_t campaign_id, int *undone, int *interrupted,
			 struct rt_sb *err)
{
	*undone = 0;
	*interrupted = 0;
	struct db_intent *in = NULL;
	size_t n = 0;
	int rc = db_intents_open_list(db, campaign_id, &in, &n, err);
	if (rc)
		return rc;
	/* Undo open intents, newest first. */
	for (size_t i = n; i-- > 0 && !rc;) {
		sweep_temps(in[i].path);
		rc = put_bytes(in[i].path, in[i].before_exists, in[i].before, in[i].before_len, err);
		if (!rc)
			rc = db_intent_close(db, in[i].id, "undone", err);
		if (!rc)
			(*undone)++;
	}
	db_intents_free(in, n);
	if (rc)
		return rc;
	rc = db_iterations_interrupt(db, campaign_id, "interrupted: the runner stopped mid-iteration", err);
	if (rc < 0)
		return rc;
	*interrupted = rc;
	/* Every touched file back to the best configuration's bytes. */
	struct db_original *orig = NULL;
	size_t no = 0;
	if ((rc = db_originals_list(db, campaign_id, &orig, &no, err)))
		return rc;
	for (size_t i = 0; i < no && !rc; i++) {
		bool ex;
		void *bytes;
		size_t len;
		sweep_temps(orig[i].path);
		if ((rc = db_best_bytes(db, campaign_id, orig[i].path, &ex, &bytes, &len, err)))
			break;
		char *cur = NULL;
		size_t cl = 0;
		bool cur_ex = rt_read_file(orig[i].path, &cur, &cl, NULL) == 0;
		if (cur_ex != ex || (ex && (cl != len || memcmp(cur, bytes, len))))
			rc = put_bytes(orig[i].path, ex, bytes, len, err);
		free(cur);
		free(bytes);
	}
	db_originals_free(orig, no);
	return rc;
}

int run_campaign_restore(struct db *db, int64_t id, int *n, struct rt_sb *err)
{
	*n = 0;
	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	int rc = id ? db_campaign_get(db, id, &cp, err) : db_campaign_latest(db, NULL, &cp, err);
	if (rc)
		return rc;
	int undone, interrupted;
	rc = run_campaign_recover(db, cp.id, &undone, &interrupted, err);
	struct db_original *orig = NULL;
	size_t no = 0;
	if (!rc)
		rc = db_originals_list(db, cp.id, &orig, &no, err);
	for (size_t i = 0; i < no && !rc; i++) {
		rc = put_bytes(orig[i].path, orig[i].existed, orig[i].content, orig[i].len, err);
		if (!rc)
			(*n)++;
	}
	db_originals_free(orig, no);
	if (!rc && strcmp(cp.state, "finished"))
		rc = db_campaign_set_state(db, cp.id, "aborted", err);
	db_campaign_release(&cp);
	return rc;
}

/*
 * Engines a killed runner left behind: every launch records the engine's
 * process group. A group whose leader still runs the engine's program is
 * ours and is stopped, so the resumed campaign does not find its own old
 * engine squatting on the port (or wasting the GPU).
 */
static int reap_orphans(struct db *db, const struct spec *s, int64_t campaign_id)
{
	if (!s->engine.present || !s->engine.command.n)
		return 0;
	char **pids = NULL;
	size_t n = 0;
	if (db_fact_values(db, campaign_id, "engine.pgid", &pids, &n, NULL))
		return 0;
	const char *prog = strrchr(s->engine.command.v[0], '/');
	prog = prog ? prog + 1 : s->engine.command.v[0];
	int reaped = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t pid = (pid_t)atoi(pids[i]);
		free(pids[i]);
		if (pid <= 1 || getpgid(pid) != pid)
			continue;
		char path[64], cmd[4096];
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t len = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[len] = 0;
		const char *base = strrchr(cmd, '/');
		base = base ? base + 1 : cmd;
		if (len && !strcmp(base, prog)) {
			kill(-pid, SIGKILL);
			reaped++;
		}
	}
	free(pids);
	return reaped;
}

/* ---- the loop ---- */

static int load_history(struct camp *c, struct agent_attempt **out, size_t *n,
			struct db_iteration **its, size_t *nits, struct rt_sb *err)
{
	int rc = db_iterations_list(c->db, c->cid, its, nits, err);
	if (rc)
		return rc;
	struct agent_attempt *h = xcalloc(*nits + 1, sizeof(*h));
	size_t k = 0;
	for (size_t i = 0; i < *nits; i++) {
		struct db_iteration *it = &(*its)[i];
		if (!strcmp(it->kind, "baseline"))
			continue;
		size_t vi = (size_t)-1;
		for (size_t j = 0; j < c->s->n_variants; j++)
			if (!strcmp(c->s->variants[j].name, it->variant))
				vi = j;
		if (vi == (size_t)-1)
			continue;
		h[k].variant = vi;
		h[k].state = it->state;
		h[k].role = it->role;
		h[k].effect = it->obj_delta;
		h[k].passed = it->passed == 1;
		k++;
	}
	*out = h;
	*n = k;
	return 0;
}

int run_campaign(struct db *db, const struct spec *s, const struct run_campaign_opts *o,
		 struct run_campaign_result *res, struct rt_sb *err)
{
	struct camp c;
	memset(&c, 0, sizeof(c));
	c.db = db;
	c.s = s;
	c.o = o;
	c.kept = xcalloc(s->n_variants + 1, sizeof(bool));
	var_config_init(&c.cfg);
	memset(res, 0, sizeof(*res));
	res->gain = NAN;
	int rc = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	struct sigaction old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_requested = 0;

	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	if (s->strategy != AGENT_STRAT_LIST && s->strategy != AGENT_STRAT_GREEDY) {
		rc = rt_errf(err, RT_EUSAGE, "%s: strategy '%s' is not implemented yet (use list or greedy)",
			     s->path, agent_strategy_name(s->strategy));
		goto out;
	}
	if (s->gate.present) {
		/* The gate's data must be there before anything is measured. */
		struct gsm8k_set set;
		memset(&set, 0, sizeof(set));
		if ((rc = gsm8k_find("test", s->gate.dataset, &set, err))) {
			rt_errf(err, 0, " (gate.gsm8k.dataset in %s)", s->path);
			goto out;
		}
		gsm8k_set_release(&set);
	}
	int found = db_campaign_latest(db, s->name, &cp, NULL);
	bool running = found == 0 && !strcmp(cp.state, "running");
	if (o->resume) {
		if (!running) {
			rc = rt_errf(err, RT_EUSAGE, "--resume: no interrupted campaign named '%s' in %s",
				     s->name, db_path(db));
			goto out;
		}
		if (strcmp(cp.spec_sha256, s->sha256)) {
			rc = rt_errf(err, RT_EUSAGE,
				     "--resume: %s changed since campaign %lld started (sha256 %.12s, now %.12s); "
				     "start a new campaign or restore the spec",
				     s->path, (long long)cp.id, cp.spec_sha256, s->sha256);
			goto out;
		}
		c.cid = cp.id;
		int undone, interrupted;
		if ((rc = run_campaign_recover(db, c.cid, &undone, &interrupted, err)))
			goto out;
		int orphans = reap_orphans(db, s, c.cid);
		if (orphans)
			rt_sleep_ns(200000000); /* let the kernel release their ports */
		if (!o->quiet)
			fprintf(o->out, "resuming campaign %lld '%s': %d half-applied change%s undone, "
				"%d iteration%s marked interrupted, %d orphaned engine%s stopped\n",
				(long long)c.cid, s->name, undone, undone == 1 ? "" : "s", interrupted,
				interrupted == 1 ? "" : "s", orphans, orphans == 1 ? "" : "s");
	} else {
		if (running) {
			rc = rt_errf(err, RT_EUSAGE,
				     "campaign %lld '%s' in %s did not finish; continue it with `ratchet run --resume %s` "
				     "or put its files back with `ratchet restore`",
				     (long long)cp.id, s->name, db_path(db), s->path);
			goto out;
		}
		if ((rc = db_campaign_create(db, s->name, s->path, s->text, s->sha256, s->workdir,
					     (int64_t)s->seed, &c.cid, err)))
			goto out;
	}
	res->campaign_id = c.cid;
	record_host_facts(&c);

	/* Rebuild the current best from the store. */
	struct agent_attempt *hist = NULL;
	size_t nh = 0;
	struct db_iteration *its = NULL;
	size_t nits = 0;
	if ((rc = load_history(&c, &hist, &nh, &its, &nits, err)))
		goto out;
	bool have_baseline = false;
	for (size_t i = 0; i < nits; i++) {
		if (its[i].seq >= c.seq)
			c.seq = its[i].seq + 1;
		if (!strcmp(its[i].kind, "baseline") && its[i].state == DB_ITER_BASELINE) {
			have_baseline = true;
			c.best_iter = its[i].id;
			c.baseline_gate = its[i].gate_run_id;
		}
		if (its[i].state == DB_ITER_KEPT && !its[i].invalidated) {
			for (size_t j = 0; j < s->n_variants; j++) {
				if (!strcmp(s->variants[j].name, its[i].variant)) {
					c.kept[j] = true;
					/* flag and env changes live in the config */
					if (!touches_files(&s->variants[j])) {
						struct var_ctx x;
						struct var_plan pl = { 0 };
						var_ctx_of(&c, &c.cfg, &x);
						var_ops_for(s->variants[j].kind)->apply(&s->variants[j], &x, &pl, NULL, NULL);
					}
				}
			}
			c.best_iter = its[i].id;
		}
	}
	/* The device of the baseline's kernel benchmarks, if any: a resumed
	 * campaign must not compare measurements from another device. */
	c.device_id = db_fact_first(db, c.cid, "device");
	c.total = s->strategy == AGENT_STRAT_LIST ? (int)s->n_variants + 1 : 0; /* greedy: unknown */
	rep_progress_init(&c.prog, o->out, o->tty, o->quiet, c.total);
	if (!have_baseline) {
		/* An interrupted baseline is simply measured again, under the next seq. */
		rc = run_baseline(&c, err);
		res->iterations++;
		if (rc)
			goto out_hist;
		c.seq++;
	}
	for (;;) {
		if (stop_requested) {
			rc = rt_errf(err, RT_EINTR, "stopped by a signal; `ratchet run --resume %s` continues", s->path);
			break;
		}
		if (o->max_iterations && res->iterations >= o->max_iterations)
			break;
		if (s->max_iterations && c.seq > s->max_iterations)
			break;
		free(hist);
		db_iterations_free(its, nits);
		hist = NULL;
		its = NULL;
		if ((rc = load_history(&c, &hist, &nh, &its, &nits, err)))
			break;
		struct agent_proposal p;
		memset(&p, 0, sizeof(p));
		int r = agent_next(s->strategy, s->n_variants, hist, nh, &p, err);
		if (r < 0) {
			rc = r;
			break;
		}
		if (r == 0) {
			res->finished = true;
			break;
		}
		rc = run_one(&c, &p, err);
		res->iterations++;
		c.seq++;
		if (rc == RT_EINTR) {
			rt_errf(err, 0, "stopped by a signal; `ratchet run --resume %s` continues", s->path);
			break;
		}
		if (rc)
			break;
	}
	if (res->finished) {
		db_campaign_set_state(db, c.cid, "finished", NULL);
		rep_progress_finish(&c.prog);
	}
out_hist:
	/* Summary figures. */
	free(hist);
	db_iterations_free(its, nits);
	its = NULL;
	nits = 0;
	if (db_iterations_list(db, c.cid, &its, &nits, NULL) == 0) {
		double base = NAN;
		double prod = 1;
		for (size_t i = 0; i < nits; i++) {
			if (!strcmp(its[i].kind, "baseline") && its[i].state == DB_ITER_BASELINE)
				base = its[i].obj_best;
			if (its[i].state == DB_ITER_KEPT && !its[i].invalidated) {
				res->kept++;
				if (!isnan(its[i].obj_delta))
					prod *= 1 + its[i].obj_delta;
			}
		}
		if (!isnan(base))
			res->gain = prod - 1;
		db_iterations_free(its, nits);
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	db_campaign_release(&cp);
	var_config_release(&c.cfg);
	free(c.kept);
	free(c.baseline_model);
	free(c.device_id);
	return rc;
}
