/*
 * One benchmark run, whatever its kind (see bench.h): command benchmarks go
 * to bench_cmd.c, load benchmarks to the load generator, kernel benchmarks
 * to bench_kernel.c. Each yields named metrics.
 */
#include "runner/bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/cancel.h"
#include "runner/bench/bench_cmd.h"
#include "runner/bench/bench_kernel.h"
#include "db/requests.h"
#include "runner/load/load.h"

void run_bench_out_init(struct run_bench_out *o)
{
	memset(o, 0, sizeof(*o));
	rt_sb_init(&o->output, 16u << 20);
}

void run_bench_out_release(struct run_bench_out *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->m[i].name);
		free(o->m[i].unit);
	}
	free(o->m);
	for (size_t i = 0; i < o->n_facts; i++) {
		free(o->fact_keys[i]);
		free(o->fact_values[i]);
	}
	free(o->fact_keys);
	free(o->fact_values);
	free(o->device_id);
	rt_sb_release(&o->output);
	run_bench_out_init(o);
}

void run_bench_out_add(struct run_bench_out *o, const char *name, double value, const char *unit)
{
	o->m = xrealloc(o->m, (o->n + 1) * sizeof(*o->m));
	o->m[o->n].name = xstrdup(name);
	o->m[o->n].value = value;
	o->m[o->n].unit = xstrdup(unit);
	o->n++;
}

void run_bench_out_fact(struct run_bench_out *o, const char *key, const char *value)
{
	o->fact_keys = xrealloc(o->fact_keys, (o->n_facts + 1) * sizeof(char *));
	o->fact_values = xrealloc(o->fact_values, (o->n_facts + 1) * sizeof(char *));
	o->fact_keys[o->n_facts] = xstrdup(key);
	o->fact_values[o->n_facts] = xstrdup(value);
	o->n_facts++;
}

/* The per-request records of a load benchmark, which the reports read. A
 * failure fails the benchmark with RT_EDB: the campaign stops and
 * --resume measures it again. */
static int store_requests(const struct run_bench_ctx *c, const char *bench, const char *label,
			  const struct run_load_result *r, struct rt_sb *err)
{
	if (!c->db)
		return 0;
	int n = load_store_requests(c->db, c->iteration_id, bench, c->arm, c->rep, label, r, err);
	return n < 0 ? n : 0;
}

/* A run's metrics (max_rate from cap when a search ran), NANs skipped. */
static void add_load_metrics(const struct run_load_result *r, const struct run_load_capacity *cap,
			     struct run_bench_out *out)
{
	const char *names[RUN_LOAD_MAX_METRICS];
	const char *units[RUN_LOAD_MAX_METRICS];
	double values[RUN_LOAD_MAX_METRICS];
	size_t n = run_load_metrics(r, cap, names, values, units, RUN_LOAD_MAX_METRICS);
	for (size_t i = 0; i < n; i++)
		if (!isnan(values[i]))
			run_bench_out_add(out, names[i], values[i], units[i]);
}

/* An SLO capacity search: max_rate is the arm's own capacity; latencies
 * and throughputs come from a run at c->capacity_rate (the best's
 * capacity, so both arms are compared at one offered load), or at the
 * arm's own capacity when that is not known yet. */
static int bench_capacity(const struct spec_bench *b, const struct spec_load *cfg, const char *url,
			  const char *model, const struct run_load_opts *lo,
			  const struct run_bench_ctx *c, struct run_bench_out *out, struct rt_sb *err)
{
	struct run_load_capacity cap;
	int rc = run_load_capacity(cfg, url, model, lo, NULL, NULL, &cap, err);
	if (rc)
		return rc;
	const struct run_load_result *r = NULL;
	struct run_load_result own;
	memset(&own, 0, sizeof(own));
	double rate = c->capacity_rate > 0 ? c->capacity_rate : cap.max_rate;
	if (rate > 0)
		rc = run_load_capacity_at(cfg, url, model, lo, &cap, rate, &r, &own, err);
	else if (cap.n_points && cap.points[0].runs)
		r = &cap.points[0].runs[0]; /* even the lowest rate failed */
	if (!rc && r) {
		add_load_metrics(r, &cap, out);
		char label[64];
		snprintf(label, sizeof(label), "rate=%.3g", rate > 0 ? rate : r->offered_rate);
		rc = store_requests(c, b->name, label, r, err);
	}
	run_load_result_release(&own);
	run_load_capacity_release(&cap);
	return rc;
}

static int bench_load(const struct spec_bench *b, const struct run_bench_ctx *c,
		      struct run_bench_out *out, struct rt_sb *err)
{
	char *url = b->load.endpoint ? spec_expand(b->load.endpoint, c->vars) : xstrdup(c->engine_url);
	if (!url)
		return rt_errf(err, RT_EINVAL, "benchmarks.%s.load: no endpoint and no engine", b->name);
	const char *model = b->load.model ? b->load.model : c->engine_model;
	struct spec_load cfg = b->load; /* its dataset's placeholders expanded */
	cfg.dataset = b->load.dataset ? spec_expand(b->load.dataset, c->vars) : NULL;
	struct run_load_opts lo = { .api_key = c->api_key };
	int rc;
	if (cfg.n_rates && cfg.n_slo) {
		rc = bench_capacity(b, &cfg, url, model, &lo, c, out, err);
	} else {
		struct run_load_result r;
		memset(&r, 0, sizeof(r));
		rc = run_load_run(&cfg, url, model, c->seed, &lo, &r, err);
		if (!rc && rt_cancelled()) /* cut short: the sample is abandoned */
			rc = rt_errf(err, RT_EINTR, "load: stopped by a signal");
		if (!rc) {
			add_load_metrics(&r, NULL, out);
			if (r.completed == 0)
				rc = rt_errf(err, RT_EHTTP, "load: every request failed (%d failed)%s%s",
					     r.failed, r.n_reqs && r.reqs[r.n_reqs - 1].error ? ": " : "",
					     r.n_reqs && r.reqs[r.n_reqs - 1].error ? r.reqs[r.n_reqs - 1].error : "");
			char label[64];
			snprintf(label, sizeof(label), "seed=%llu", (unsigned long long)c->seed);
			int src = store_requests(c, b->name, label, &r, err); /* failed requests too */
			if (!rc)
				rc = src;
		}
		run_load_result_release(&r);
	}
	free(cfg.dataset);
	free(url);
	return rc;
}

static const char *metric_unit(const struct spec_cmd_bench *cb, const char *name)
{
	for (size_t i = 0; i < cb->n_metrics; i++)
		if (!strcmp(cb->metrics[i].name, name))
			return cb->metrics[i].unit;
	return NULL;
}

/* The file the format reads, placeholders expanded: format_file, or where
 * `vllm bench serve --save-result` puts its result; NULL: stdout. */
static char *format_file(const struct spec_cmd_bench *cb, char *const *argv, const struct spec_vars *vars)
{
	if (cb->format_file)
		return spec_expand(cb->format_file, vars);
	if (cb->format == SPEC_FMT_VLLM_BENCH_SERVE)
		return run_bcmd_vllm_result_path(argv);
	return NULL;
}

/* The metrics of the run: from stdout, the file the run wrote (ff) and the
 * metrics' files, their placeholders expanded. */
static int extract(const struct spec_cmd_bench *cb, const struct run_bench_ctx *c, const char *cwd,
		   const struct run_bcmd_outputs *ff, const struct run_bcmd_result *r,
		   struct run_bench_out *out, struct rt_sb *err)
{
	struct spec_cmd_bench eb = *cb;
	eb.format_file = NULL;
	eb.metrics = xcalloc(cb->n_metrics + 1, sizeof(*eb.metrics));
	for (size_t i = 0; i < cb->n_metrics; i++) {
		eb.metrics[i] = cb->metrics[i];
		eb.metrics[i].file = cb->metrics[i].file ? spec_expand(cb->metrics[i].file, c->vars) : NULL;
	}
	int rc = ff->pattern ? run_bcmd_outputs_pick(ff, &eb.format_file, err) : 0;
	struct run_bcmd_metrics m = { 0 };
	if (!rc)
		rc = run_bcmd_extract(&eb, cwd, r, &m, err);
	for (size_t i = 0; !rc && i < m.n; i++)
		run_bench_out_add(out, m.v[i].name, m.v[i].value, metric_unit(cb, m.v[i].name));
	run_bcmd_metrics_release(&m);
	for (size_t i = 0; i < cb->n_metrics; i++)
		free(eb.metrics[i].file);
	free(eb.metrics);
	free(eb.format_file);
	return rc;
}

int run_bench_command(const struct spec_bench *b, const struct run_bench_ctx *c,
		      struct run_bench_out *out, struct rt_sb *err)
{
	const struct spec_cmd_bench *cb = &b->cmd;
	char *const *src = c->argv ? c->argv : cb->command.v;
	size_t na = 0;
	while (src[na])
		na++;
	char **argv = xcalloc(na + 1, sizeof(char *));
	for (size_t i = 0; i < na; i++)
		argv[i] = spec_expand(src[i], c->vars);
	/* The benchmark's env, the variants' env, and where it is in the campaign. */
	size_t ne = cb->env.n + c->n_env + 4;
	struct rt_env *env = xcalloc(ne, sizeof(*env));
	size_t k = 0;
	for (size_t i = 0; i < cb->env.n; i++, k++) {
		env[k].name = xstrdup(cb->env.v[i].name);
		env[k].value = cb->env.v[i].value ? spec_expand(cb->env.v[i].value, c->vars) : NULL;
	}
	for (size_t i = 0; i < c->n_env; i++, k++) {
		env[k].name = xstrdup(c->env[i].name);
		env[k].value = c->env[i].value ? spec_expand(c->env[i].value, c->vars) : NULL;
	}
	env[k].name = xstrdup("RATCHET_ARM");
	env[k++].value = xstrdup(c->arm ? c->arm : "");
	env[k].name = xstrdup("RATCHET_REP");
	env[k++].value = xasprintf("%d", c->rep);
	env[k].name = xstrdup("RATCHET_ITERATION");
	env[k++].value = xasprintf("%ld", c->vars ? c->vars->iteration : 0L);
	env[k].name = xstrdup("RATCHET_SEED");
	env[k++].value = xasprintf("%llu", (unsigned long long)c->seed);
	const char *cwd = c->vars ? c->vars->workdir : NULL;
	struct run_bcmd_outputs ff = { 0 };
	char *fpath = format_file(cb, argv, c->vars);
	if (fpath)
		run_bcmd_outputs_init(&ff, fpath, cwd); /* before the run: what is there already */
	free(fpath);
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 16u << 20);
	int rc = run_bcmd_exec_cancellable(argv, env, k, cwd, cb->timeout_s, &r, err);
	if (!rc) {
		rt_sb_add(&out->output, r.out.buf, r.out.len);
		if (r.err.len) {
			rt_sb_adds(&out->output, "\n--- stderr ---\n");
			rt_sb_add(&out->output, r.err.buf, r.err.len);
		}
		if (r.cancelled) {
			rc = rt_errf(err, RT_EINTR, "%s: stopped by a signal", argv[0]);
		} else if (r.timed_out) {
			rc = rt_errf(err, RT_ETIMEDOUT, "%s: timed out after %.0fs", argv[0], cb->timeout_s);
		} else if (r.status != 0) {
			const struct rt_sb *t = r.err.len ? &r.err : &r.out;
			rc = rt_errf(err, RT_EPROC, "%s: exited with status %d: %.200s", argv[0], r.status,
				     t->buf);
		} else {
			rc = extract(cb, c, cwd, &ff, &r, out, err);
		}
	}
	run_bcmd_outputs_release(&ff);
	run_bcmd_result_release(&r);
	for (size_t i = 0; i < k; i++) {
		free(env[i].name);
		free(env[i].value);
	}
	free(env);
	rt_argv_free(argv);
	return rc;
}

int run_bench_run(const struct spec *s, const struct spec_bench *b, const struct run_bench_ctx *c,
		  struct run_bench_out *out, struct rt_sb *err)
{
	(void)s;
	switch (b->kind) {
	case SPEC_BENCH_LOAD:
		return bench_load(b, c, out, err);
	case SPEC_BENCH_COMMAND:
		return run_bench_command(b, c, out, err);
	case SPEC_BENCH_KERNEL:
		return run_bench_kernel(b, c, out, err);
	}
	return rt_errf(err, RT_EINVAL, "benchmark %s: unknown kind", b->name);
}

/* Kernel benchmarks run in this process: env variants are set around the
 * run (a host kernel reads them when its module loads) and put back after. */
int run_bench_kernel(const struct spec_bench *b, const struct run_bench_ctx *c,
		     struct run_bench_out *out, struct rt_sb *err)
{
	char **saved = xcalloc(c->n_env + 1, sizeof(char *));
	for (size_t i = 0; i < c->n_env; i++) {
		const char *old = getenv(c->env[i].name);
		saved[i] = old ? xstrdup(old) : NULL;
		if (c->env[i].value)
			setenv(c->env[i].name, c->env[i].value, 1);
		else
			unsetenv(c->env[i].name);
	}
	struct run_bkernel_result r;
	memset(&r, 0, sizeof(r));
	int rc = run_bkernel_run(&b->kernel, c->vars, c->db, &r, err);
	for (size_t i = c->n_env; i-- > 0;) {
		if (saved[i])
			setenv(c->env[i].name, saved[i], 1);
		else
			unsetenv(c->env[i].name);
		free(saved[i]);
	}
	free(saved);
	if (!rc) {
		struct run_bkernel_metric m[8];
		size_t n = run_bkernel_metrics(&r, m);
		for (size_t i = 0; i < n; i++)
			run_bench_out_add(out, m[i].name, m[i].value, m[i].unit);
		out->device_id = xstrdup(r.identity);
		for (size_t i = 0; i < r.n_facts; i++)
			run_bench_out_fact(out, r.facts[i].key, r.facts[i].value);
	}
	run_bkernel_result_release(&r);
	return rc;
}
