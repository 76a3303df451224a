/*
 * Samples (see campaign_int.h): one measurement of one arm takes the engine
 * for that configuration from the pool (engine_pool.c: started, or kept up from an
 * earlier sample), proves its identity, runs every benchmark of the spec
 * once, proves the identity again, checks that it still answers, stores the
 * metrics, the engine's cost (benchmark "engine") and the log events counted
 * during the sample, and gives the engine back to the pool. There is no
 * limit on the number of benchmarks or log events. Also the A/B schedule of
 * slots (camp_slot).
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/base/cancel.h"
#include "runner/bench/bench.h"
#include "runner/device/dev.h"

/* ---- series ---- */

static void series_add(struct series *s, int arm, double x);

/* A new series at the end; the array's room doubles (it is a power of two
 * from 1 up: every series is added here). */
static struct series *series_new(struct series **v, size_t *n, const char *bench,
				 const char *metric, const char *unit)
{
	if (!(*n & (*n - 1)))
		*v = xrealloc(*v, (*n ? 2 * *n : 1) * sizeof(**v));
	struct series *s = &(*v)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->bench = xstrdup(bench);
	s->metric = xstrdup(metric);
	s->unit = xstrdup(unit);
	return s;
}

struct series *camp_series_get(struct series **v, size_t *n, const char *bench, const char *metric,
			       const char *unit)
{
	struct series *s = camp_series_find(*v, *n, bench, metric);
	return s ? s : series_new(v, n, bench, metric, unit);
}

void camp_series_add_events(struct series **v, size_t *n, const struct spec_log_event *ev,
			    const double *counts, size_t nev, int arm)
{
	/* Only this function makes the events' series, in spec order, so event i
	 * comes after event i - 1: first look right after it (always there but
	 * where a later sample had more events than an earlier one), then after
	 * it, and at the end it is new. */
	for (size_t i = 0, next = 0; i < nev; i++) {
		struct series *s = next < *n ? &(*v)[next] : NULL;
		if (s && (strcmp(s->bench, "log") || strcmp(s->metric, ev[i].name)))
			s = camp_series_find(*v + next, *n - next, "log", ev[i].name);
		if (!s)
			s = series_new(v, n, "log", ev[i].name, "count");
		series_add(s, arm, counts[i]);
		next = (size_t)(s - *v) + 1;
	}
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
	free(l->ready_path);
	free(l->identity_path);
	free(l->model);
	free(l->ev_counted);
	free(l->ev_secs);
	memset(l, 0, sizeof(*l));
}

/* argv, env, identity fields and log-event counters of a launch,
 * placeholders expanded. */
static void launch_prepare(struct camp *c, const struct var_config *cfg, struct camp_launch *l)
{
	const struct spec_engine *en = &c->s->engine;
	struct camp_cmdline cl;
	camp_cmdline(c, cfg, &cl);
	size_t n = 0;
	while (cl.argv[n])
		n++;
	l->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		l->argv[i] = spec_expand(cl.argv[i], &l->vars);
	l->env = xcalloc(cl.env.n + 1, sizeof(*l->env));
	for (size_t i = 0; i < cl.env.n; i++, l->n_env++) {
		l->env[l->n_env].name = xstrdup(cl.env.v[i].name);
		l->env[l->n_env].value = cl.env.v[i].value ? spec_expand(cl.env.v[i].value, &l->vars) : NULL;
	}
	camp_cmdline_release(&cl);
	l->ready_path = spec_expand(en->ready_http, &l->vars);
	l->identity_path = en->identity_http ? spec_expand(en->identity_http, &l->vars) : NULL;
	l->model = en->model ? spec_expand(en->model, &l->vars) : NULL;
	size_t ne = c->s->n_log_events;
	l->ev_names = xcalloc(ne + 1, sizeof(char *));
	l->ev_regex = xcalloc(ne + 1, sizeof(char *));
	l->ev_counted = xcalloc(ne + 1, sizeof(long));
	l->ev_secs = xcalloc(ne + 1, sizeof(double));
	for (size_t i = 0; i < ne; i++) {
		l->ev_names[i] = c->s->log_events[i].name;
		l->ev_regex[i] = c->s->log_events[i].regex;
	}
}

int camp_launch_engine(struct camp *c, int64_t iter, int arm, const struct var_config *cfg,
		       struct camp_launch *l, struct rt_sb *err)
{
	const struct spec_engine *en = &c->s->engine;
	int port = en->port;
	int rc;
	if (!port && (rc = run_engine_pick_port(en->host, &port, err)))
		return rc;
	random_nonce(l->nonce);
	l->vars.port = port;
	l->vars.workdir = c->s->workdir;
	l->vars.nonce = l->nonce;
	l->vars.iteration = c->seq;
	launch_prepare(c, cfg, l);
	if ((rc = run_engine_port_check(en->host, port, l->identity_path ? l->identity_path : l->ready_path, err)))
		return rc;
	struct run_engine_cfg ec = {
		.argv = l->argv, .env = l->env, .n_env = l->n_env, .cwd = c->s->workdir,
		.host = camp_exec_engine_host(c, en->host), .port = port, .ready_path = l->ready_path,
		.ready_timeout_s = en->ready_timeout_s, .identity_path = l->identity_path,
		.expected_model = l->model ? l->model : c->baseline_model,
		.nonce = en->nonce_check ? l->nonce : NULL, .no_port_owner = !en->port_owner,
		.stop_grace_s = en->stop_grace_s,
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
	if (!rc) {
		run_engine_fetch_version(l->eng);
		camp_prov_record(c, iter, arm, l);
	}
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
	double *ev;                 /* log-event counts during the sample, one per spec log event */
	double *evs;                /* and the seconds their lines carried (timed events) */
	size_t nev;                 /* counts taken (0 without an engine) */
	double em[SPEC_EM_N];       /* the engine's cost (spec.h SPEC_ENGINE_METRICS), NAN: not measured */
	size_t nem;                 /* SPEC_EM_N with an engine, else 0 */
	struct run_bench_out tel;   /* the telemetry sampler's medians (benchmark "telemetry") */
};

static void sample_release(struct sample *sm)
{
	for (size_t b = 0; b < sm->done; b++)
		run_bench_out_release(&sm->outs[b]);
	free(sm->outs);
	free(sm->ev);
	free(sm->evs);
	run_bench_out_release(&sm->tel);
}

/* The offered rate at which an SLO capacity search compares latencies and
 * throughputs: the best's capacity in this iteration's first best sample,
 * so every later sample of either arm is measured at one load (the first
 * is measured at its own capacity, which is that rate); 0 before it. */
static double capacity_rate(const struct spec_bench *sb, struct series *ser, size_t nser)
{
	if (sb->kind != SPEC_BENCH_LOAD || !sb->load.n_rates || !sb->load.n_slo)
		return 0;
	const struct series *s = camp_series_find(ser, nser, sb->name, "max_rate");
	return s && s->n[0] ? s->v[0][0] : 0;
}

/* Every benchmark once. Without an engine, flag variants go to command
 * benchmarks and env variants to every benchmark. ser: the iteration's
 * samples so far. */
static int run_benches(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		       struct camp_launch *l, struct series *ser, size_t nser, struct sample *sm,
		       struct rt_sb *err)
{
	/* Without an engine the configuration's environment is every benchmark's. */
	struct camp_cmdline cl = { 0 };
	if (!c->s->engine.present)
		camp_cmdline(c, cfg, &cl);
	struct rt_envv venv = cl.env;
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
			.api_key = c->o->api_key, .capacity_rate = capacity_rate(sb, ser, nser),
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
	camp_cmdline_release(&cl);
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
			/* A pool's worker records its own device (workers.c). */
			int rc = db_fact_add(c->db, c->cid, iter, c->worker.device_fact ? c->worker.device_fact : "device", dev, err);
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
	for (size_t i = 0; i < sm->nev && !rc; i++) {
		rc = db_measure_add(c->db, iter, an, "log", c->s->log_events[i].name, rep, sm->ev[i],
				    "count", err);
		if (!rc && c->s->log_events[i].timed) {
			char *m = xasprintf("%s.seconds", c->s->log_events[i].name);
			rc = db_measure_add(c->db, iter, an, "log", m, rep, sm->evs[i], "s", err);
			free(m);
		}
	}
	for (size_t k = 0; k < sm->tel.n && !rc; k++)
		rc = db_measure_add(c->db, iter, an, "telemetry", sm->tel.m[k].name, rep, sm->tel.m[k].value,
				    sm->tel.m[k].unit, err);
	for (size_t i = 0; i < sm->nem && !rc; i++)
		if (!isnan(sm->em[i]))
			rc = db_measure_add(c->db, iter, an, "engine", spec_engine_metric_name(i), rep, sm->em[i],
					    spec_engine_metric_unit(i), err);
	if (!rc && bad)
		rc = db_measure_invalidate(c->db, iter, an, rep, bad_reason, err);
	if (rc)
		db_rollback(c->db);
	else
		rc = db_commit(c->db, err);
	return rc ? camp_fatal(c, rc) : 0;
}

/* A failed sample's log-event counts: what explains the failure (a
 * ctx_exceeded counter, say) is often counted in exactly that sample. They
 * are stored (benchmark "log") and never enter the statistics; an error
 * storing them is a warning, the sample's own error stays the one reported. */
static void store_failed_events(struct camp *c, int64_t iter, int arm, int rep, const struct sample *sm)
{
	struct rt_sb err = RT_SB_INIT;
	int rc = db_begin(c->db, &err);
	for (size_t i = 0; i < sm->nev && !rc; i++)
		rc = db_measure_add(c->db, iter, arm_names[arm], "log", c->s->log_events[i].name, rep, sm->ev[i],
				    "count", &err);
	if (rc) {
		db_rollback(c->db);
		camp_warn(c, "the failed sample's log events", &err);
	} else if ((rc = db_commit(c->db, &err))) {
		camp_warn(c, "the failed sample's log events", &err);
	}
	rt_sb_release(&err);
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
	camp_series_add_events(ser, nser, c->s->log_events, sm->ev, sm->nev, arm);
	for (size_t i = 0; i < sm->nev; i++)
		if (c->s->log_events[i].timed) {
			char *m = xasprintf("%s.seconds", c->s->log_events[i].name);
			series_add(camp_series_get(ser, nser, "log", m, "s"), arm, sm->evs[i]);
			free(m);
		}
	for (size_t k = 0; k < sm->tel.n; k++)
		series_add(camp_series_get(ser, nser, "telemetry", sm->tel.m[k].name, sm->tel.m[k].unit), arm,
			   sm->tel.m[k].value);
	for (size_t i = 0; i < sm->nem; i++)
		if (!isnan(sm->em[i]))
			series_add(camp_series_get(ser, nser, "engine", spec_engine_metric_name(i),
						   spec_engine_metric_unit(i)),
				   arm, sm->em[i]);
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

/* Device memory of the engine's processes, through the device backends;
 * NAN when none can tell (why recorded once as fact engine.device_mem). */
static double device_mem(struct camp *c, int64_t iter, struct run_engine *e)
{
	pid_t *pids;
	size_t n = run_engine_pids(e, &pids);
	uint64_t bytes = 0;
	struct rt_sb why = RT_SB_INIT, ferr = RT_SB_INIT;
	int answered = dev_proc_mem(pids, n, &bytes, &why);
	if (!answered && !c->devmem_said) {
		c->devmem_said = true;
		char *v = xasprintf("unavailable: %s", why.buf);
		if (db_fact_add(c->db, c->cid, iter, "engine.device_mem", v, &ferr))
			camp_warn(c, "engine.device_mem", &ferr);
		free(v);
	}
	free(pids);
	rt_sb_release(&why);
	rt_sb_release(&ferr);
	return answered ? (double)bytes : NAN;
}

/* The engine's side of a sample: the log events counted since its last
 * sample (since its start for the first: start-up lines count there), and
 * what it cost. */
static void engine_readings(struct camp *c, int64_t iter, struct camp_launch *l, struct sample *sm)
{
	struct run_engine *e = l->eng;
	sm->nev = c->s->n_log_events;
	sm->ev = xcalloc(sm->nev + 1, sizeof(double));
	sm->evs = xcalloc(sm->nev + 1, sizeof(double));
	for (size_t i = 0; i < sm->nev; i++) {
		long now = run_engine_event_count(e, i);
		double secs = run_engine_event_seconds(e, i);
		sm->ev[i] = (double)(now - l->ev_counted[i]);
		sm->evs[i] = secs - l->ev_secs[i];
		l->ev_counted[i] = now;
		l->ev_secs[i] = secs;
	}
	sm->nem = SPEC_EM_N;
	sm->em[SPEC_EM_READY_S] = run_engine_ready_s(e);
	sm->em[SPEC_EM_RSS_PEAK] = (double)run_engine_rss_peak(e);
	sm->em[SPEC_EM_DEVICE_MEM] = device_mem(c, iter, e);
}

/* The engine of a sample, proven before its benchmarks, with a new window
 * for its peak RSS. */
static int engine_before(struct camp *c, int64_t iter, int arm, const struct var_config *cfg,
			 struct camp_launch **l, struct rt_sb *err)
{
	rep_progress_phase(&c->prog, c->seq, c->variant, "start");
	int rc = camp_engine_get(c, iter, arm, cfg, l, err);
	if (rc)
		return rc;
	struct run_engine *e = (*l)->eng;
	(*l)->vars.iteration = c->seq; /* a kept engine serves a later iteration */
	if ((rc = run_engine_verify(e, err)))
		return rc;
	if (!c->baseline_model && run_engine_model(e))
		c->baseline_model = xstrdup(run_engine_model(e));
	run_engine_rss_reset(e);
	return 0;
}

int camp_measure_once(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		      struct series **ser, size_t *nser, struct rt_sb *err)
{
	struct camp_launch none = { 0 }, *l = &none;
	struct sample sm = { 0 };
	struct dev_sampler *tel = NULL;
	run_bench_out_init(&sm.tel);
	const char *log_name = arm ? "engine-cand.log" : "engine-best.log";
	int rc = 0;
	none.vars.workdir = c->s->workdir;
	none.vars.iteration = c->seq;
	none.vars.nonce = "";
	if (c->s->engine.present && (rc = engine_before(c, iter, arm, cfg, &l, err)) == RT_EIDENTITY)
		log_name = "engine-identity-failure.log";
	if (!rc) {
		rep_progress_phase(&c->prog, c->seq, c->variant, "bench");
		rep_progress_sample(&c->prog, arm, rep + 1);
		camp_tel_start(c, iter, l, &tel);
		rc = run_benches(c, iter, arm, rep, cfg, l, *ser, *nser, &sm, err);
		camp_tel_finish(c, iter, arm, rep, tel, &sm.tel, sm.outs, sm.done);
		if (!rc && l->eng)
			rc = engine_after(l->eng, err);
		if (!rc)
			rc = check_device(c, iter, &sm, err);
		/* Samples of an unproven endpoint or device are stored invalid. */
		bool bad = rc == RT_EIDENTITY;
		if (l->eng)
			engine_readings(c, iter, l, &sm);
		if (!rc || bad) {
			char *reason = xstrdup(err->buf); /* err may grow while it is stored */
			int src = store_sample(c, iter, arm, rep, &sm, bad, reason, err);
			free(reason);
			if (src)
				rc = src;
			else if (!bad)
				add_series(c, arm, &sm, ser, nser);
		} else if (sm.nev && !c->fatal) {
			store_failed_events(c, iter, arm, rep, &sm);
		}
	}
	if (rc && rt_cancelled() && !c->fatal) /* the second Ctrl-C: the sample is abandoned */
		rc = rt_errf(err, RT_EINTR, " (the sample in progress was abandoned)");
	if (l->eng)
		camp_engine_put(c, l, rc != 0, rc || arm == 1 ? log_name : NULL);
	sample_release(&sm);
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
