/*
 * objective: and constraints:, and the cross references checked once the
 * whole spec is read: every bench.metric they name must exist (with
 * did-you-mean), the objective's goal follows the metric's direction when
 * not given, and repeats.min <= repeats.max.
 */
#include "runner/spec/spec_int.h"
#include "runner/base/rt_yaml.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void parse_objective_metric(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
				   const struct spec_field *f)
{
	struct spec_objective *o = base;
	const char *t = spec_want_scalar(ld, v, path, "benchmark.metric");
	if (!t)
		return;
	o->pos = spec_node_pos(v);
	const char *dot = strchr(t, '.');
	if (!dot && *t) { /* said once every benchmark's metrics are known: bare_metric() */
		free(ld->bare_metric);
		ld->bare_metric = xstrdup(t);
		ld->bare_pos = o->pos;
		return;
	}
	if (!dot || dot == t || !dot[1]) {
		spec_lerr(ld, v, path, "expected benchmark.metric, got '%s'", t);
		return;
	}
	o->bench = xstrndup(t, (size_t)(dot - t));
	o->metric = xstrdup(dot + 1);
}

static json_t *dump_objective_metric(const void *base, const struct spec_field *f)
{
	const struct spec_objective *o = base;
	if (!o->bench)
		return NULL;
	char *t = xasprintf("%s.%s", o->bench, o->metric);
	json_t *j = json_string(t);
	free(t);
	return j;
}

const struct spec_field spec_objective_fields[] = {
	{ "metric", SF_CUSTOM, 0, 0, FL_REQ, .parse = parse_objective_metric, .dump = dump_objective_metric,
	  .help = "benchmark.metric to improve" },
	{ "goal", SF_ENUM, SPEC_OFF(struct spec_objective, goal), .names = spec_goal_names,
	  .help = "max or min; default from the metric's direction" },
	{ "min_gain", SF_FRAC, SPEC_OFF(struct spec_objective, min_gain), .help = "smallest gain worth keeping" },
	{ 0 }
};

void spec_parse_objective(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f)
{
	struct spec *s = base;
	s->objective.min_gain = 0.01;
	s->objective.pos = spec_node_pos(v);
	spec_parse_fields(ld, v, path, &s->objective, spec_objective_fields, NULL);
	ld->goal_given = spec_map_get(ld, v, "goal") != NULL;
}

json_t *spec_dump_objective(const void *base, const struct spec_field *f)
{
	return spec_fields_json(&((const struct spec *)base)->objective, spec_objective_fields);
}

static const char *const op_names[] = { "<=", "<", ">=", ">" };

static bool constraint_value(const char *s, double *out)
{
	static const char *const rates[] = { "/s", "req/s", "tok/s", "tokens/s" };
	double v;
	const char *u;
	if (rt_split_unit(s, &v, &u))
		return false;
	if (!*u) {
		*out = v;
		return true;
	}
	if (!strcmp(u, "%")) {
		*out = v / 100;
		return true;
	}
	for (size_t i = 0; i < RT_ARRAY_SIZE(rates); i++)
		if (!strcmp(u, rates[i])) {
			*out = v;
			return true;
		}
	size_t bytes;
	if (strcmp(u, "K") && strcmp(u, "M") && strcmp(u, "G") && spec_parse_size(s, &bytes)) {
		*out = (double)bytes; /* engine.rss_peak <= 4GiB */
		return true;
	}
	return rt_parse_duration(s, out) == 0;
}

/* "bench.metric OP value" into its three parts (new strings); op -1 when
 * there is no operator. */
static void split_constraint(const char *t, char **ref, int *op, char **value)
{
	const char *p = t;
	while (isspace((unsigned char)*p))
		p++;
	const char *r0 = p;
	while (*p && !isspace((unsigned char)*p) && !strchr("<>=!", *p))
		p++;
	*ref = xstrndup(r0, (size_t)(p - r0));
	while (isspace((unsigned char)*p))
		p++;
	*op = -1;
	if (!strncmp(p, "<=", 2))
		*op = SPEC_OP_LE, p += 2;
	else if (!strncmp(p, ">=", 2))
		*op = SPEC_OP_GE, p += 2;
	else if (*p == '<' && p[1] != '>')
		*op = SPEC_OP_LT, p += 1;
	else if (*p == '>')
		*op = SPEC_OP_GT, p += 1;
	while (isspace((unsigned char)*p))
		p++;
	*value = xstrdup(p);
	size_t vl = strlen(*value);
	while (vl && isspace((unsigned char)(*value)[vl - 1]))
		(*value)[--vl] = '\0';
}

static void parse_one_constraint(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct spec *s)
{
	const char *t = spec_want_scalar(ld, it, ip, "a constraint like 'bench.metric <= 4s'");
	if (!t)
		return;
	char *ref, *vs;
	int op;
	double val = 0;
	split_constraint(t, &ref, &op, &vs);
	const char *dot = strchr(ref, '.');
	if (!dot || dot == ref || !dot[1]) {
		spec_lerr(ld, it, ip, "expected 'benchmark.metric OP value', got '%s'", t);
	} else if (op < 0) {
		spec_lerr(ld, it, ip, "expected an operator (<=, <, >= or >) after '%s' in '%s'", ref, t);
	} else if (!*vs) {
		spec_lerr(ld, it, ip, "missing value after '%s' in '%s'", op_names[op], t);
	} else if (!constraint_value(vs, &val)) {
		spec_lerr(ld, it, ip, "bad value '%s' (a number, optionally with s, ms, us, %%, or /s)", vs);
	} else {
		struct spec_constraint *c = &s->constraints[s->n_constraints++];
		c->text = xstrdup(t);
		c->bench = xstrndup(ref, (size_t)(dot - ref));
		c->metric = xstrdup(dot + 1);
		c->op = (enum spec_op)op;
		c->value = val;
		double num;
		const char *unit = "";
		c->unitless = !rt_split_unit(vs, &num, &unit) && !*unit;
		c->pos = spec_node_pos(it);
	}
	free(vs);
	free(ref);
}

void spec_parse_constraints(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			    const struct spec_field *f)
{
	struct spec *s = base;
	if (!spec_want_seq(ld, v, path))
		return;
	size_t n = spec_seq_len(v);
	s->constraints = xcalloc(n + 1, sizeof(*s->constraints));
	for (size_t i = 0; i < n; i++) {
		char *ip = spec_path_index(path, i);
		parse_one_constraint(ld, spec_seq_item(ld, v, i), ip, s);
		free(ip);
	}
}

json_t *spec_dump_constraints(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_constraints; i++) {
		const struct spec_constraint *c = &s->constraints[i];
		char num[40];
		rt_yaml_real_text(c->value, num, sizeof(num));
		char *t = xasprintf("%s.%s %s %s", c->bench, c->metric, op_names[c->op], num);
		json_array_append_new(a, json_string(t));
		free(t);
	}
	return a;
}

/* A reference bench.metric (or log.EVENT) that must exist. */
static void check_ref(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *bench,
		      const char *metric)
{
	struct spec *s = ld->s;
	if (!strcmp(bench, "engine")) {
		if (!s->engine.present)
			spec_lerr_at(ld, pos, path, "engine.%s: the spec has no engine", metric);
		else if (spec_engine_metric_find(metric) < 0)
			spec_lerr_at(ld, pos, path, "no engine metric '%s' (ready_s, rss_peak, device_mem)", metric);
		return;
	}
	if (!strcmp(bench, "telemetry")) {
		if (!s->telemetry.enabled)
			spec_lerr_at(ld, pos, path, "telemetry.%s: telemetry is disabled (telemetry.enabled)", metric);
		else if (spec_telemetry_metric_find(metric) < 0)
			spec_lerr_at(ld, pos, path, "no telemetry metric '%s' (sm_clock_mhz, mem_clock_mhz, power_w, "
				     "temp_c, mem_used_bytes, cpu_mhz, engine_rss_bytes, throttled_frac, throttled, "
				     "throttle_mask)", metric);
		return;
	}
	if (!strcmp(bench, "log")) {
		for (size_t i = 0; i < s->n_log_events; i++)
			if (!strcmp(s->log_events[i].name, metric))
				return;
		spec_lerr_at(ld, pos, path, "no log event '%s'", metric);
		return;
	}
	const struct spec_bench *b = spec_bench_find(s, bench);
	if (!b) {
		const char **names = xcalloc(s->n_benches + 1, sizeof(char *));
		for (size_t i = 0; i < s->n_benches; i++)
			names[i] = s->benches[i].name;
		const char *dym = rt_did_you_mean(bench, names, s->n_benches);
		if (dym)
			spec_lerr_at(ld, pos, path, "no benchmark '%s' (did you mean '%s'?)", bench, dym);
		else
			spec_lerr_at(ld, pos, path, "no benchmark '%s'", bench);
		free(names);
		return;
	}
	if (!b->metric_names)
		return; /* the benchmark itself had errors */
	for (size_t i = 0; i < b->n_metric_names; i++)
		if (!strcmp(b->metric_names[i], metric))
			return;
	const char *dym = rt_did_you_mean(metric, b->metric_names, b->n_metric_names);
	if (dym)
		spec_lerr_at(ld, pos, path, "benchmark '%s' has no metric '%s' (did you mean '%s'?)", bench,
			     metric, dym);
	else
		spec_lerr_at(ld, pos, path, "benchmark '%s' has no metric '%s'", bench, metric);
}

/* objective.metric written without its benchmark ("output_throughput"):
 * the error names the benchmark that has it, or the nearest metric of
 * any benchmark ("decode.output_throughput"). */
static void bare_metric(struct spec_ld *ld)
{
	struct spec *s = ld->s;
	const char *m = ld->bare_metric;
	char *dym = NULL;
	for (size_t i = 0; i < s->n_benches && !dym; i++)
		for (size_t k = 0; k < s->benches[i].n_metric_names && !dym; k++)
			if (!strcmp(s->benches[i].metric_names[k], m))
				dym = xasprintf("%s.%s", s->benches[i].name, m);
	for (size_t i = 0; i < s->n_benches && !dym; i++) {
		const struct spec_bench *b = &s->benches[i];
		const char *near = b->metric_names ? rt_did_you_mean(m, b->metric_names, b->n_metric_names) : NULL;
		if (near)
			dym = xasprintf("%s.%s", b->name, near);
	}
	if (dym)
		spec_lerr_at(ld, ld->bare_pos, "objective.metric",
			     "expected benchmark.metric, got '%s' (did you mean '%s'?)", m, dym);
	else
		spec_lerr_at(ld, ld->bare_pos, "objective.metric", "expected benchmark.metric, got '%s'", m);
	free(dym);
}

/* A bare number bounding a latency means seconds: `ttft_p95 <= 500` is
 * 500 s, not 500 ms. Said, so the author writes the unit. */
static void unitless_latency(struct spec_ld *ld, const struct spec_constraint *c, const char *path)
{
	const struct spec_bench *b = spec_bench_find(ld->s, c->bench);
	if (!c->unitless || !b || b->kind != SPEC_BENCH_LOAD)
		return;
	for (size_t m = 0; m < SPEC_LM_N; m++)
		if (!strcmp(spec_load_metric_name(m), c->metric) && !strcmp(spec_load_metric_unit(m), "s")) {
			spec_lwarn_at(ld, c->pos, path, "'%s' has no unit: %s is in seconds, so this bound is %g s; "
				      "write the unit (%gs, %gms)", c->text, c->metric, c->value, c->value,
				      c->value);
			return;
		}
}

void spec_post_validate(struct spec_ld *ld, yaml_node_t *root)
{
	struct spec *s = ld->s;
	if (ld->bare_metric)
		bare_metric(ld);
	if (s->objective.bench) {
		check_ref(ld, s->objective.pos, "objective.metric", s->objective.bench, s->objective.metric);
		if (!ld->goal_given)
			s->objective.goal = spec_metric_better(s, s->objective.bench, s->objective.metric) ==
							    SPEC_BETTER_LOWER
						    ? SPEC_GOAL_MIN
						    : SPEC_GOAL_MAX;
	}
	for (size_t i = 0; i < s->n_constraints; i++) {
		char *p = xasprintf("constraints[%zu]", i);
		check_ref(ld, s->constraints[i].pos, p, s->constraints[i].bench, s->constraints[i].metric);
		unitless_latency(ld, &s->constraints[i], p);
		free(p);
	}
	if (s->repeats.min > s->repeats.max) {
		yaml_node_t *rv = spec_map_get(ld, root, "repeats");
		spec_lerr(ld, rv ? rv : root, "repeats", "min (%d) is above max (%d)", s->repeats.min,
			  s->repeats.max);
	}
	spec_space_post(ld, root);
	spec_llm_post(ld, root);
}

