/*
 * benchmarks: the list, each benchmark's name and kind (command, load or
 * kernel, exactly one), and command benchmarks: argv, built-in output
 * format, explicit metrics (JSON pointer or regex). Load and kernel
 * benchmarks have their own files.
 */
#include "runner/spec/spec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct spec_field metric_fields[] = {
	{ "pointer", SF_CUSTOM, .help = "JSON pointer (RFC 6901) into the output" },
	{ "regex", SF_CUSTOM, .help = "PCRE2 regex; the first capture group (or the match) is the value" },
	{ "file", SF_STR, SPEC_OFF(struct spec_metric, file), 0, FL_PATH | FL_OMIT0,
	  .help = "read this file instead of stdout" },
	{ "unit", SF_STR, SPEC_OFF(struct spec_metric, unit), 0, FL_OMIT0, .help = "free text unit" },
	{ "better", SF_ENUM, SPEC_OFF(struct spec_metric, better), 0, FL_OMIT0, .names = spec_better_names,
	  .help = "higher or lower: which way the metric is better (required)" },
	{ 0 }
};

/* metric: {pointer|regex: ..., file, unit, better}; false after reporting */
static bool metric_from_map(struct spec_ld *ld, yaml_node_t *vn, const char *kp, struct spec_metric *m)
{
	spec_parse_fields(ld, vn, kp, m, metric_fields, NULL);
	yaml_node_t *pn = spec_map_get(ld, vn, "pointer"), *rn = spec_map_get(ld, vn, "regex");
	if (pn && rn) {
		spec_lerr(ld, vn, kp, "give pointer or regex, not both");
		return false;
	}
	if (!pn && !rn) {
		spec_lerr(ld, vn, kp, "missing key 'pointer' or 'regex'");
		return false;
	}
	yaml_node_t *en = pn ? pn : rn;
	const char *e = spec_want_scalar(ld, en, kp, "a string");
	m->kind = pn ? SPEC_EXTRACT_POINTER : SPEC_EXTRACT_REGEX;
	if (!e)
		return false;
	if (pn && *e && *e != '/') {
		spec_lerr(ld, en, kp, "a JSON pointer starts with '/', got '%s'", e);
		return false;
	}
	if (rn && !spec_check_regex(ld, en, kp, e))
		return false;
	m->expr = xstrdup(e);
	return true;
}

/* metric: /pointer or metric: regex; false after reporting */
static bool metric_from_scalar(struct spec_ld *ld, yaml_node_t *vn, const char *kp,
			       struct spec_metric *m)
{
	const char *e = spec_want_scalar(ld, vn, kp, "a JSON pointer, a regex or a mapping");
	if (!e)
		return false;
	m->kind = *e == '/' ? SPEC_EXTRACT_POINTER : SPEC_EXTRACT_REGEX;
	if (m->kind == SPEC_EXTRACT_REGEX && !spec_check_regex(ld, vn, kp, e))
		return false;
	m->expr = xstrdup(e);
	return true;
}

static void parse_one_metric(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			     const char *path, const char *kp, void *arg)
{
	struct spec_cmd_bench *c = arg;
	struct spec_metric m = { .pos = spec_node_pos(kn) };
	bool ok;
	if (!spec_ident_ok(k, "")) {
		spec_lerr(ld, kn, path, "metric name '%s' may hold only letters, digits and _", k);
		return;
	}
	if (vn->type == YAML_MAPPING_NODE)
		ok = metric_from_map(ld, vn, kp, &m);
	else
		ok = metric_from_scalar(ld, vn, kp, &m);
	if (ok) {
		m.name = xstrdup(k);
		c->metrics[c->n_metrics++] = m;
	} else {
		free(m.expr);
		free(m.file);
		free(m.unit);
	}
}

/* metrics: {gflops: /gflops, tps: 'tok/s: ([0-9.]+)', t: {pointer: /t, file: out.json}} */
static void parse_metrics(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f)
{
	struct spec_cmd_bench *c = base;
	if (!spec_want_map(ld, v, path))
		return;
	c->metrics = xcalloc(spec_map_len(v) + 1, sizeof(*c->metrics));
	spec_map_each(ld, v, path, parse_one_metric, c);
}

static json_t *dump_metrics(const void *base, const struct spec_field *f)
{
	const struct spec_cmd_bench *c = base;
	if (!c->n_metrics)
		return NULL;
	json_t *o = json_object();
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct spec_metric *m = &c->metrics[i];
		json_t *e = json_object();
		json_object_set_new(e, m->kind == SPEC_EXTRACT_POINTER ? "pointer" : "regex",
				    json_string(m->expr));
		json_t *rest = spec_fields_json(m, metric_fields);
		json_object_update(e, rest);
		json_decref(rest);
		json_object_set_new(o, m->name, e);
	}
	return o;
}

const struct spec_field spec_cmd_fields[] = {
	{ "command", SF_STRV, SPEC_OFF(struct spec_cmd_bench, command), 0, FL_REQ | FL_TMPL,
	  .help = "argv; placeholders allowed" },
	{ "env", SF_ENVV, SPEC_OFF(struct spec_cmd_bench, env), 0, FL_TMPL, .help = "extra environment" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_cmd_bench, timeout_s), 0, FL_LOX, 0, .help = "seconds" },
	{ "format", SF_ENUM, SPEC_OFF(struct spec_cmd_bench, format), 0, 0, .names = spec_format_names,
	  .help = "built-in output format" },
	{ "format_file", SF_STR, SPEC_OFF(struct spec_cmd_bench, format_file), 0, FL_PATH | FL_OMIT0,
	  .help = "file the format reads instead of stdout" },
	{ "format_row", SF_STR, SPEC_OFF(struct spec_cmd_bench, format_row), 0, FL_OMIT0,
	  .help = "llama-batched-bench row PP,TG,B; default the last" },
	{ "metrics", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_metrics, .dump = dump_metrics,
	  .help = "name: /pointer, name: regex, or name: {pointer|regex, file, unit, better}" },
	{ 0 }
};


/* Checks between the keys of a command benchmark. */
static void cmd_post(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct spec_cmd_bench *c)
{
	yaml_node_t *cn = spec_map_get(ld, it, "command");
	if (c->command.n == 0 && cn && cn->type == YAML_SEQUENCE_NODE)
		spec_lerr(ld, cn, ip, "command: an empty argv");
	if ((c->format == SPEC_FMT_NONE || c->format == SPEC_FMT_JSON) && !c->n_metrics &&
	    !spec_map_get(ld, it, "metrics"))
		spec_lerr(ld, it, ip, "the benchmark yields no metric: give metrics or a format");
	if (c->format_file && c->format == SPEC_FMT_NONE)
		spec_lerr(ld, spec_map_get(ld, it, "format_file"), ip, "format_file needs a format");
	if (c->format_row) {
		unsigned a, b, d;
		char tail;
		yaml_node_t *rn = spec_map_get(ld, it, "format_row");
		if (c->format != SPEC_FMT_LLAMA_BATCHED_BENCH && c->format != SPEC_FMT_LLAMA_BATCHED_JSONL)
			spec_lerr(ld, rn, ip, "format_row applies to llama-batched-bench formats");
		else if (sscanf(c->format_row, "%u,%u,%u%c", &a, &b, &d, &tail) != 3)
			spec_lerr(ld, rn, ip, "format_row: expected PP,TG,B, got '%s'", c->format_row);
	}
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct spec_metric *m = &c->metrics[i];
		if (spec_format_has_metric(c->format, m->name))
			spec_lerr_at(ld, m->pos, ip, "metric '%s' is also produced by format '%s'", m->name,
				     spec_format_names[c->format]);
		else if (m->better == SPEC_BETTER_AUTO) /* never guessed from the name */
			spec_lerr_at(ld, m->pos, ip,
				     "metric '%s' needs better: higher or better: lower (the name is not "
				     "guessed; the short form becomes {regex: ..., better: lower})", m->name);
	}
}

static void parse_cmd_bench(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct spec_cmd_bench *c)
{
	static const char *const extra[] = { "name", NULL };
	c->timeout_s = 600;
	spec_parse_fields(ld, it, ip, c, spec_cmd_fields, extra);
	cmd_post(ld, it, ip, c);
}

/* A load or kernel benchmark: its own mapping under its kind's key; the
 * command benchmark's keys beside it are refused. */
static void parse_other_bench(struct spec_ld *ld, yaml_node_t *it, const char *ip, yaml_node_t *kv,
			      struct spec_bench *b)
{
	const char *kind = spec_bench_kind_names[b->kind];
	const char *extra[] = { "name", kind, NULL };
	spec_check_keys(ld, it, ip, spec_cmd_fields, extra);
	for (yaml_node_pair_t *p = it->data.mapping.pairs.start; p < it->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key);
		const char *k = spec_scalar(kn);
		if (k && spec_in_table(spec_cmd_fields, k))
			spec_lerr(ld, kn, ip, "'%s' applies to command benchmarks, not %s ones", k, kind);
	}
	char *kp = spec_path_join(ip, kind);
	bool map = kv->type == YAML_MAPPING_NODE;
	if (b->kind == SPEC_BENCH_LOAD) {
		spec_load_defaults(&b->load);
		spec_parse_fields(ld, kv, kp, &b->load, spec_load_fields, NULL);
		if (map)
			spec_load_post(ld, kv, kp, &b->load);
	} else {
		spec_kernel_defaults(&b->kernel);
		spec_parse_fields(ld, kv, kp, &b->kernel, spec_kernel_fields, NULL);
		if (map)
			spec_kernel_post(ld, kv, kp, &b->kernel);
	}
	free(kp);
}

static void parse_one_bench(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg)
{
	struct spec *s = arg;
	struct spec_bench *b = &s->benches[s->n_benches++];
	b->pos = spec_node_pos(it);
	b->name = spec_item_name(ld, it, ip, "benchmark", "-", &ld->bench_names);
	if (b->name && (!strcmp(b->name, "log") || !strcmp(b->name, "engine") ||
			!strcmp(b->name, "telemetry"))) {
		char *np = spec_path_join(ip, "name");
		spec_lerr(ld, spec_map_get(ld, it, "name"), np, "'%s' is reserved for %s", b->name,
			  b->name[0] == 'l' ? "log event counts"
			  : b->name[0] == 'e' ? "the engine's metrics" : "the telemetry sampler's metrics");
		free(np);
		free(b->name);
		b->name = NULL;
	}
	yaml_node_t *kinds[3];
	int which, second;
	int nk = spec_which_keys(ld, it, spec_bench_kind_names, 3, kinds, &which, &second);
	if (nk > 1) {
		spec_lerr(ld, it, ip, "a benchmark has one kind, got '%s' and '%s'",
			  spec_bench_kind_names[which], spec_bench_kind_names[second]);
		return;
	}
	if (nk == 0) {
		spec_lerr(ld, it, ip, "missing one of 'command', 'load', 'kernel'");
		return;
	}
	b->kind = (enum spec_bench_kind)which;
	if (b->kind == SPEC_BENCH_COMMAND)
		parse_cmd_bench(ld, it, ip, &b->cmd);
	else
		parse_other_bench(ld, it, ip, kinds[which], b);
	spec_bench_metric_names(b);
}

void spec_parse_benches(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	struct spec *s = base;
	if (!spec_want_seq(ld, v, path))
		return;
	size_t n = spec_seq_len(v);
	if (!n) {
		spec_lerr(ld, v, path, "needs at least one benchmark");
		return;
	}
	s->benches = xcalloc(n, sizeof(*s->benches));
	spec_seq_each(ld, v, path, parse_one_bench, s);
}

json_t *spec_dump_benches(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_benches; i++) {
		const struct spec_bench *b = &s->benches[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(b->name));
		if (b->kind == SPEC_BENCH_COMMAND) {
			json_t *c = spec_fields_json(&b->cmd, spec_cmd_fields);
			json_object_update(o, c);
			json_decref(c);
		} else if (b->kind == SPEC_BENCH_LOAD) {
			json_object_set_new(o, "load", spec_fields_json(&b->load, spec_load_fields));
		} else {
			json_object_set_new(o, "kernel", spec_fields_json(&b->kernel, spec_kernel_fields));
		}
		json_array_append_new(a, o);
	}
	return a;
}
