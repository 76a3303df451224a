/*
 * Samples (see campaign_int.h): one measurement of one arm starts the engine
 * for that configuration (if the spec has one), proves its identity, runs
 * every benchmark of the spec once, proves the identity again, checks that
 * it still answers, stores the metrics and the log-event counts, and stops
 * it by process group. There is no limit on the number of benchmarks or log
 * events. Also the A/B schedule of slots (camp_slot).
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/bench/bench.h"

/* ---- series ---- */

struct series *camp_series_get(struct series **v, size_t *n, const char *bench, const char *metric,
			       const char *unit)
{
	struct series *s = camp_series_find(*v, *n, bench, metric);
	if (s)
		return s;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	s = &(*v)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->bench = xstrdup(bench);
	s->metric = xstrdup(metric);
	s->unit = xstrdup(unit);
	return s;
}

struct series *camp_series_find(struct series *v, size_t n, const char *bench, const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].bench, bench) && !strcmp(v[i].metric, metric))
			return &v[i];
	return NULL;
}

static void series_add(struct series *s, int arm, double x)
{
	if (s->n[arm] == s->alloc[arm]) {
		s->alloc[arm] = s->alloc[arm] ? 2 * s->alloc[arm] : 8;
		s->v[arm] = xrealloc(s->v[arm], s->alloc[arm] * sizeof(double));
	}
	s->v[arm][s->n[arm]++] = x;
}

void camp_series_free(struct series *v, size_t n)
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

/* ---- artifacts ---- */

void camp_store_artifact(struct camp *c, int64_t iter, const char *kind, const char *name,
			 const char *data, size_t len, bool truncated)
{
	struct rt_sb sb = RT_SB_INIT, why = RT_SB_INIT;
	rt_sb_add(&sb, data, len);
	rt_redact_secrets(&sb);
	/* A lost log is a pity, not a wrong state: warn and go on. */
	if (db_artifact_add(c->db, c->cid, iter, kind, name, sb.buf, sb.len, truncated, &why))
		camp_warn(c, name, &why);
	rt_sb_release(&sb);
	rt_sb_release(&why);
}

void camp_store_engine_log(struct camp *c, int64_t iter, struct run_engine *e, const char *name)
{
	size_t len;
	bool trunc;
	const char *log = run_engine_log(e, &len, &trunc);
	camp_store_artifact(c, iter, "engine-log", name, log, len, trunc);
}

/* ---- the engine ---- */

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

void camp_launch_release(struct camp_launch *l)
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
	free(l->ev_names);
	free(l->ev_regex);
	memset(l, 0, sizeof(*l));
}

/* argv, env and log-event counters of a launch, placeholders expanded. */
static void launch_prepare(struct camp *c, const struct var_config *cfg, struct camp_launch *l)
{
	const struct spec_engine *en = &c->s->engine;
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
	size_t ne = c->s->n_log_events;
	l->ev_names = xcalloc(ne + 1, sizeof(char *));
	l->ev_regex = xcalloc(ne + 1, sizeof(char *));
	for (size_t i = 0; i < ne; i++) {
		l->ev_names[i] = c->s->log_events[i].name;
		l->ev_regex[i] = c->s->log_events[i].regex;
	}
}

int camp_launch_engine(struct camp *c, int64_t iter, const struct var_config *cfg,
		       struct camp_launch *l, struct rt_sb *err)
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
	launch_prepare(c, cfg, l);
	struct run_engine_cfg ec = {
		.argv = l->argv, .env = l->env, .n_env = l->n_env, .cwd = c->s->workdir,
		.host = camp_exec_engine_host(c, en->host), .port = port, .ready_path = en->ready_http,
		.ready_timeout_s = en->ready_timeout_s, .identity_path = en->identity_http,
		.expected_model = en->model ? en->model : c->baseline_model,
		.nonce = en->nonce_check ? l->nonce : NULL, .stop_grace_s = en->stop_grace_s,
		.log_cap = en->log_cap_bytes, .event_names = l->ev_names, .event_regex = l->ev_regex,
		.n_events = c->s->n_log_events,
		.prove_owner = camp_exec_prove_engine(c), .prove_arg = c->exec,
	};
	if ((rc = run_engine_start(&ec, &l->eng, err)))
		return rc;
	/* --resume stops engines a killed runner left behind by this record. */
	char pg[32];
	snprintf(pg, sizeof(pg), "%d", (int)run_engine_pid(l->eng));
	bool not_ready = false;
	if ((rc = db_fact_add(c->db, c->cid, iter, "engine.pgid", pg, err)))
		rc = camp_fatal(c, rc);
	else if ((rc = run_engine_wait_ready(l->eng, err)))
		not_ready = true;
	if (rc) {
		/* Stopped here: the caller sees no engine. */
		camp_exec_engine_stopping(c);
		run_engine_stop(l->eng);
		if (not_ready)
			camp_store_engine_log(c, iter, l->eng, "engine-start-failure.log");
		run_engine_free(l->eng);
		l->eng = NULL;
	}
	return rc;
}

/* ---- one measurement ---- */

static const char *const arm_names[] = { "best", "cand" };

/* What one measurement produced. */
struct sample {
	struct run_bench_out *outs; /* one per benchmark run so far */
	size_t done;                /* benchmarks run (outs initialised) */
	double *ev;                 /* log-event counts, one per spec log event */
	size_t nev;                 /* counts taken (0 without an engine) */
};

static void sample_release(struct sample *sm)
{
	for (size_t b = 0; b < sm->done; b++)
		run_bench_out_release(&sm->outs[b]);
	free(sm->outs);
	free(sm->ev);
}

/* Every benchmark once. Without an engine, flag variants go to command
 * benchmarks and env variants to every benchmark. */
static int run_benches(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		       struct camp_launch *l, struct sample *sm, struct rt_sb *err)
{
	struct rt_envv venv = { 0 };
	if (!c->s->engine.present)
		var_config_env(cfg, NULL, &venv);
	struct rt_envmod *envm = xcalloc(venv.n + 1, sizeof(*envm));
	for (size_t i = 0; i < venv.n; i++) {
		envm[i].name = venv.v[i].name;
		envm[i].value = venv.v[i].value;
	}
	sm->outs = xcalloc(c->s->n_benches + 1, sizeof(*sm->outs));
	int rc = 0;
	for (size_t b = 0; b < c->s->n_benches && !rc; b++) {
		const struct spec_bench *sb = &c->s->benches[b];
		struct run_bench_ctx bc = {
			.db = c->db, .iteration_id = iter, .arm = arm_names[arm], .rep = rep,
			.vars = &l->vars, .engine_url = l->eng ? run_engine_url(l->eng) : NULL,
			.engine_model = l->eng ? run_engine_model(l->eng) : NULL,
			.env = envm, .n_env = venv.n,
			.seed = camp_hash_seed(c->s->seed, sb->name) + (uint64_t)rep,
			.api_key = c->o->api_key,
		};
		char **argv = NULL;
		if (!c->s->engine.present && sb->kind == SPEC_BENCH_COMMAND)
			argv = var_config_argv(cfg, sb->cmd.command.v);
		bc.argv = argv;
		struct run_bench_out *o = &sm->outs[b];
		run_bench_out_init(o);
		sm->done = b + 1;
		rc = run_bench_run(c->s, sb, &bc, o, err);
		rt_argv_free(argv);
		if (rc == RT_EDB)
			rc = camp_fatal(c, rc); /* its records could not be stored */
		if (rc) {
			rt_errf(err, 0, " (benchmark %s)", sb->name);
			if (o->output.len)
				camp_store_artifact(c, iter, "bench-output", sb->name, o->output.buf,
						    o->output.len, false);
		}
		if (!rc && l->eng && !run_engine_alive(l->eng))
			rc = rt_errf(err, RT_EPROC, "engine %s during benchmark %s",
				     run_engine_exit_text(l->eng), sb->name);
	}
	rt_envv_release(&venv);
	free(envm);
	return rc;
}

/* The device every kernel benchmark ran on must be the baseline's; the
 * first one seen is recorded (--resume compares against it). */
static int check_device(struct camp *c, int64_t iter, const struct sample *sm, struct rt_sb *err)
{
	for (size_t b = 0; b < sm->done; b++) {
		const char *dev = sm->outs[b].device_id;
		if (!dev)
			continue;
		if (!c->device_id) {
			int rc = db_fact_add(c->db, c->cid, iter, "device", dev, err);
			if (rc)
				return camp_fatal(c, rc);
			c->device_id = xstrdup(dev);
		} else if (strcmp(c->device_id, dev)) {
			return rt_errf(err, RT_EIDENTITY,
				       "device changed: measured on '%s', the campaign's baseline on '%s'", dev,
				       c->device_id);
		}
	}
	return 0;
}

/* Metrics, facts and log-event counts in one transaction; samples whose
 * provenance could not be proven (bad) are stored marked invalid. */
static int store_sample(struct camp *c, int64_t iter, int arm, int rep, const struct sample *sm,
			bool bad, const char *bad_reason, struct rt_sb *err)
{
	const char *an = arm_names[arm];
	int rc = db_begin(c->db, err);
	for (size_t b = 0; b < sm->done && !rc; b++) {
		const char *bn = c->s->benches[b].name;
		const struct run_bench_out *o = &sm->outs[b];
		for (size_t k = 0; k < o->n && !rc; k++)
			rc = db_measure_add(c->db, iter, an, bn, o->m[k].name, rep, o->m[k].value,
					    o->m[k].unit, err);
		for (size_t k = 0; k < o->n_facts && !rc && rep == 0 && !bad; k++)
			rc = db_fact_add(c->db, c->cid, iter, o->fact_keys[k], o->fact_values[k], err);
	}
	for (size_t i = 0; i < sm->nev && !rc; i++)
		rc = db_measure_add(c->db, iter, an, "log", c->s->log_events[i].name, rep, sm->ev[i],
				    "count", err);
	if (!rc && bad)
		rc = db_measure_invalidate(c->db, iter, an, rep, bad_reason, err);
	if (rc)
		db_rollback(c->db);
	else
		rc = db_commit(c->db, err);
	return rc ? camp_fatal(c, rc) : 0;
}

/* Only stored, valid samples enter the statistics. */
static void add_series(struct camp *c, int arm, const struct sample *sm, struct series **ser,
		       size_t *nser)
{
	for (size_t b = 0; b < sm->done; b++)
		for (size_t k = 0; k < sm->outs[b].n; k++)
			series_add(camp_series_get(ser, nser, c->s->benches[b].name, sm->outs[b].m[k].name,
						   sm->outs[b].m[k].unit),
				   arm, sm->outs[b].m[k].value);
	for (size_t i = 0; i < sm->nev; i++)
		series_add(camp_series_get(ser, nser, "log", c->s->log_events[i].name, "count"), arm,
			   sm->ev[i]);
}

/* After the benchmarks: a hung engine fails the measurement; then its
 * identity is proven again. */
static int engine_after(struct run_engine *e, struct rt_sb *err)
{
	int rc = run_engine_probe(e, 5, err);
	if (!rc && (rc = run_engine_verify(e, err)) == RT_EIDENTITY)
		rt_errf(err, 0, " (after the benchmark)");
	return rc;
}

int camp_measure_once(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		      struct series **ser, size_t *nser, struct rt_sb *err)
{
	struct camp_launch l = { 0 };
	struct sample sm = { 0 };
	const char *log_name = arm ? "engine-cand.log" : "engine-best.log";
	int rc = 0;
	l.vars.workdir = c->s->workdir;
	l.vars.iteration = c->seq;
	l.vars.nonce = "";
	if (c->s->engine.present) {
		rep_progress_phase(&c->prog, c->seq, c->variant, "start");
		rc = camp_launch_engine(c, iter, cfg, &l, err);
		if (!rc && (rc = run_engine_verify(l.eng, err)))
			log_name = "engine-identity-failure.log";
		if (!rc && !c->baseline_model && run_engine_model(l.eng))
			c->baseline_model = xstrdup(run_engine_model(l.eng));
	}
	if (!rc) {
		rep_progress_phase(&c->prog, c->seq, c->variant, "bench");
		rep_progress_sample(&c->prog, arm, rep + 1);
		rc = run_benches(c, iter, arm, rep, cfg, &l, &sm, err);
		if (!rc && l.eng)
			rc = engine_after(l.eng, err);
		if (!rc)
			rc = check_device(c, iter, &sm, err);
		/* Samples of an unproven endpoint or device are stored invalid. */
		bool bad = rc == RT_EIDENTITY;
		sm.nev = l.eng ? c->s->n_log_events : 0;
		sm.ev = xcalloc(sm.nev + 1, sizeof(double));
		for (size_t i = 0; i < sm.nev; i++)
			sm.ev[i] = (double)run_engine_event_count(l.eng, i);
		if (!rc || bad) {
			char *reason = xstrdup(err->buf); /* err may grow while it is stored */
			int src = store_sample(c, iter, arm, rep, &sm, bad, reason, err);
			free(reason);
			if (src)
				rc = src;
			else if (!bad)
				add_series(c, arm, &sm, ser, nser);
		}
	}
	if (l.eng) {
		camp_exec_engine_stopping(c);
		run_engine_stop(l.eng);
		if (rc || arm == 1)
			camp_store_engine_log(c, iter, l.eng, log_name);
	}
	sample_release(&sm);
	camp_launch_release(&l);
	return rc;
}

/* ---- the schedule ---- */

void camp_slot(int j, int min, bool interleave, int *arm, int *rep, bool *decide_now)
{
	if (interleave || j >= 2 * min) {
		*arm = j % 2;
		*rep = j / 2;
		*decide_now = *arm == 1 && *rep + 1 >= min;
	} else {
		*arm = j < min ? 0 : 1;
		*rep = j < min ? j : j - min;
		*decide_now = j == 2 * min - 1;
	}
}
