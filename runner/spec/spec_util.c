/*
 * Small spec helpers other modules call: placeholder expansion, benchmark
 * and metric lookup, which way a metric is better, enum names, and
 * spec_free(), which releases everything spec_load() allocated.
 */
#include "runner/spec/spec_int.h"
#include "runner/spec/spec_space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bench_free(struct spec_bench *b)
{
	free(b->name);
	free(b->metric_names);
	struct spec_cmd_bench *c = &b->cmd;
	rt_strv_release(&c->command);
	rt_envv_release(&c->env);
	free(c->format_file);
	free(c->format_row);
	for (size_t i = 0; i < c->n_metrics; i++) {
		free(c->metrics[i].name);
		free(c->metrics[i].expr);
		free(c->metrics[i].file);
		free(c->metrics[i].unit);
	}
	free(c->metrics);
	struct spec_load *l = &b->load;
	free(l->endpoint);
	free(l->model);
	free(l->dataset);
	free(l->rates);
	free(l->seeds);
	for (size_t i = 0; i < l->n_slo; i++)
		free(l->slo[i].metric);
	free(l->slo);
	struct spec_kernel *k = &b->kernel;
	free(k->backend);
	free(k->module);
	free(k->name);
	for (size_t i = 0; i < k->n_args; i++) {
		free(k->args[i].name);
		free(k->args[i].init_file);
		free(k->args[i].reference_file);
	}
	free(k->args);
	free(k->launch_table);
	free(k->launch_key);
	free(k->ref_module);
	free(k->ref_name);
}

void spec_variant_release(struct var_def *v)
{
	free(v->name);
	free(v->description);
	free(v->table.file);
	free(v->table.key);
	json_decref(v->table.value);
	rt_strv_release(&v->table.key_columns);
	for (size_t i = 0; i < v->table.n_entries; i++) {
		free(v->table.entries[i].key);
		json_decref(v->table.entries[i].value);
	}
	free(v->table.entries);
	rt_strv_release(&v->flag);
	free(v->flag_key.name);
	free(v->flag_key.key);
	json_decref(v->flag_key.value);
	rt_envv_release(&v->env);
	free(v->patch.file);
	free(v->patch.dir);
	free(v->file.target);
	free(v->file.source);
	rt_strv_release(&v->build);
}

void spec_free(struct spec *s)
{
	if (!s)
		return;
	free(s->warnings);
	free(s->path);
	free(s->text);
	free(s->name);
	free(s->workdir);
	spec_exec_release(&s->exec);
	spec_llm_release(&s->llm);
	spec_telemetry_release(&s->telemetry);
	free(s->devices);
	struct spec_engine *e = &s->engine;
	rt_strv_release(&e->command);
	rt_envv_release(&e->env);
	free(e->host);
	free(e->ready_http);
	free(e->identity_http);
	free(e->model);
	rt_strv_release(&e->provenance);
	for (size_t i = 0; i < s->n_benches; i++)
		bench_free(&s->benches[i]);
	free(s->benches);
	free(s->objective.bench);
	free(s->objective.metric);
	for (size_t i = 0; i < s->n_constraints; i++) {
		free(s->constraints[i].text);
		free(s->constraints[i].bench);
		free(s->constraints[i].metric);
	}
	free(s->constraints);
	free(s->gate.dataset);
	free(s->gate.endpoint);
	free(s->gate.model);
	for (size_t i = 0; i < s->n_log_events; i++) {
		free(s->log_events[i].name);
		free(s->log_events[i].regex);
	}
	free(s->log_events);
	spec_profile_release(&s->profile);
	for (size_t i = 0; i < s->n_variants; i++)
		spec_variant_release(&s->variants[i]);
	free(s->variants);
	if (s->space)
		spec_space_free(s->space);
	free(s->space);
	free(s);
}

char *spec_expand(const char *s, const struct spec_vars *vars)
{
	struct rt_sb out = RT_SB_INIT;
	const char *p = s;
	while (*p) {
		const char *b = strchr(p, '{');
		if (!b) {
			rt_sb_adds(&out, p);
			break;
		}
		rt_sb_add(&out, p, (size_t)(b - p));
		const char *e = strchr(b, '}');
		size_t n = e ? (size_t)(e - b - 1) : 0;
		if (e && n == 4 && !strncmp(b + 1, "port", 4)) {
			rt_sb_addf(&out, "%d", vars ? vars->port : 0);
		} else if (e && n == 7 && !strncmp(b + 1, "workdir", 7)) {
			rt_sb_adds(&out, vars && vars->workdir ? vars->workdir : "");
		} else if (e && n == 5 && !strncmp(b + 1, "nonce", 5)) {
			rt_sb_adds(&out, vars && vars->nonce ? vars->nonce : "");
		} else if (e && n == 9 && !strncmp(b + 1, "iteration", 9)) {
			rt_sb_addf(&out, "%ld", vars ? vars->iteration : 0L);
		} else {
			rt_sb_addc(&out, '{');
			p = b + 1;
			continue;
		}
		p = e + 1;
	}
	char *r = rt_sb_detach(&out, NULL);
	return r ? r : xstrdup("");
}

const struct spec_bench *spec_bench_find(const struct spec *s, const char *name)
{
	for (size_t i = 0; s && name && i < s->n_benches; i++)
		if (s->benches[i].name && !strcmp(s->benches[i].name, name))
			return &s->benches[i];
	return NULL;
}

size_t spec_bench_metrics(const struct spec_bench *b, const char ***names)
{
	*names = b->metric_names;
	return b->n_metric_names;
}

/* Names that mean "lower is better". */
static bool lower_by_name(const char *m)
{
	static const char *const parts[] = { "ttft", "tpot", "itl", "e2el", "latency", "time",
					     "lag", "failed", "rsd", "stddev" };
	static const char *const exact[] = { "t_pp", "t_tg", "t" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(exact); i++)
		if (!strcmp(m, exact[i]))
			return true;
	if (strstr(m, "throughput"))
		return false;
	for (size_t i = 0; i < RT_ARRAY_SIZE(parts); i++)
		if (strstr(m, parts[i]))
			return true;
	return false;
}

enum spec_better spec_metric_better(const struct spec *s, const char *bench, const char *metric)
{
	if (bench && (!strcmp(bench, "log") || !strcmp(bench, "engine")))
		return SPEC_BETTER_LOWER; /* log event counts: recompiles, graph misses; the engine's cost */
	if (bench && !strcmp(bench, "telemetry")) /* clocks held are better high; heat, power, memory low */
		return strstr(metric, "clock") || strstr(metric, "cpu_mhz") ? SPEC_BETTER_HIGHER
									    : SPEC_BETTER_LOWER;
	const struct spec_bench *b = spec_bench_find(s, bench);
	if (b && b->kind == SPEC_BENCH_COMMAND)
		for (size_t i = 0; i < b->cmd.n_metrics; i++)
			if (!strcmp(b->cmd.metrics[i].name, metric) && b->cmd.metrics[i].better != SPEC_BETTER_AUTO)
				return b->cmd.metrics[i].better;
	return lower_by_name(metric) ? SPEC_BETTER_LOWER : SPEC_BETTER_HIGHER;
}

