/*
 * gate: (the GSM8K accuracy gate, with its defaults) and log_events: (regexes
 * over the engine log, counted per iteration as log.NAME).
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

/* gate.gsm8k, and `ratchet gate`'s options (FL_CLI, spec_cli.c). */
#define CLI FL_CLI
const struct spec_field spec_gate_fields[] = {
	{ "endpoint", SF_STR, SPEC_OFF(struct spec_gate, endpoint), 0, CLI | FL_TMPL | FL_OMIT0, .alias = 'e',
	  .arg = "URL", .help = "base URL, e.g. http://127.0.0.1:8000 (spec: default the engine's; command line: required)" },
	{ "model", SF_STR, SPEC_OFF(struct spec_gate, model), 0, CLI | FL_OMIT0, .alias = 'm', .arg = "NAME",
	  .help = "model name sent with each request (default: the engine's, or the first id of GET /v1/models)" },
	{ "api", SF_ENUM, SPEC_OFF(struct spec_gate, api), 0, CLI, .names = spec_api_names, .def = "completions",
	  .arg = "API", .help = "the API asked (chat with format chat)" },
	{ "format", SF_ENUM, SPEC_OFF(struct spec_gate, format), 0, CLI, .names = spec_gsm8k_format_names,
	  .def = "gsm8k", .alias = 'f', .arg = "FMT", .help = "lm-eval's task (chat with api chat)" },
	{ "extract", SF_ENUM, SPEC_OFF(struct spec_gate, extract), 0, CLI, .names = spec_extract_names,
	  .def = "flexible", .arg = "MODE", .help = "the extraction that decides" },
	{ "min_accuracy", SF_FRAC, SPEC_OFF(struct spec_gate, min_accuracy), 0, CLI | FL_HI, 0, 1, .def = "0",
	  .help = "lowest accuracy that passes" },
	{ "wilson_lower", SF_BOOL, SPEC_OFF(struct spec_gate, use_wilson_lower), 0, CLI,
	  .help = "compare the Wilson lower bound with min-accuracy" },
	{ "max_drop", SF_FRAC, SPEC_OFF(struct spec_gate, max_drop), 0, CLI | FL_HI, 0, 1, .def = "0.01",
	  .help = "largest drop vs the baseline that passes" },
	{ "alpha", SF_DBL, SPEC_OFF(struct spec_gate, alpha), 0, CLI | FL_LOX | FL_HIX, 0, 1, .def = "0.05",
	  .arg = "F", .help = "significance of the paired drop test; intervals at 1-alpha" },
	{ "min_identical", SF_FRAC, SPEC_OFF(struct spec_gate, min_identical), 0, CLI | FL_HI, 0, 1, .def = "0",
	  .help = "lowest identical-answer rate vs the baseline, 0: off" },
	{ "max_failed", SF_FRAC, SPEC_OFF(struct spec_gate, max_failed), 0, CLI | FL_HI, 0, 1, .def = "0.02",
	  .help = "failed-request fraction that makes the run an error" },
	{ "limit", SF_INT, SPEC_OFF(struct spec_gate, limit), 0, CLI | FL_LO, 0, .def = "0", .alias = 'n',
	  .help = "ask N questions, 0: all 1319" },
	{ "offset", SF_INT, SPEC_OFF(struct spec_gate, offset), 0, CLI | FL_LO, 0, .def = "0", .arg = "K",
	  .help = "start at question K" },
	{ "seed", SF_U64, SPEC_OFF(struct spec_gate, seed), 0, CLI, .def = "0", .arg = "S",
	  .help = "seeded random subset of limit questions, 0: consecutive" },
	{ "num_fewshot", SF_INT, SPEC_OFF(struct spec_gate, num_fewshot), 0, CLI | FL_LO, 0, .def = "5",
	  .help = "shots per prompt: lm-eval's seeded draws from train.jsonl (gsm8k), or the first N "
		  "exemplars (gsm8k_cot: 8 unless given)" },
	{ "concurrency", SF_INT, SPEC_OFF(struct spec_gate, concurrency), 0, CLI | FL_LO | FL_HI, 1, 4096,
	  .def = "32", .alias = 'c', .help = "requests in flight" },
	{ "max_tokens", SF_INT, SPEC_OFF(struct spec_gate, max_tokens), 0, CLI | FL_LO, 1, .def = "256",
	  .help = "max_tokens per request" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_gate, request_timeout_s), 0, CLI | FL_LOX | FL_HI, 0, 86400,
	  .def = "300", .help = "timeout per request attempt (seconds, or 5m)" },
	{ "dataset", SF_STR, SPEC_OFF(struct spec_gate, dataset), 0, CLI | FL_PATH | FL_OMIT0, .alias = 'd',
	  .arg = "PATH", .help = "GSM8K test.jsonl, or the folder holding it" },
	{ 0 }
};
#undef CLI

static const struct spec_field gate_outer_fields[] = {
	{ "gsm8k", SF_CUSTOM, 0, 0, FL_REQ, .help = "GSM8K gate settings" },
	{ 0 }
};

void spec_parse_gate(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		     const struct spec_field *f)
{
	struct spec *s = base;
	struct spec_gate *g = &s->gate;
	if (!spec_want_map(ld, v, path))
		return;
	spec_parse_fields(ld, v, path, g, gate_outer_fields, NULL);
	yaml_node_t *gv = spec_map_get(ld, v, "gsm8k");
	if (!gv)
		return;
	spec_fields_defaults(g, spec_gate_fields);
	g->present = true;
	g->pos = spec_node_pos(gv);
	if (spec_is_null(gv))
		return;
	spec_parse_fields(ld, gv, "gate.gsm8k", g, spec_gate_fields, NULL);
	spec_gate_post(ld, gv, "gate.gsm8k", g);
	if (!s->engine.present && !g->endpoint)
		spec_lerr(ld, gv, "gate.gsm8k", "no endpoint, and the spec has no engine to gate");
}

void spec_gate_post(struct spec_ld *ld, yaml_node_t *gv, const char *path, struct spec_gate *g)
{
	if (!spec_map_get(ld, gv, "api") && g->format == SPEC_GSM8K_CHAT)
		g->api = SPEC_API_CHAT;
	if (!spec_map_get(ld, gv, "num_fewshot") && g->format == SPEC_GSM8K_COT)
		g->num_fewshot = 8;
}

void spec_gate_defaults(struct spec_gate *g)
{
	*g = (struct spec_gate){ .present = true };
	spec_fields_defaults(g, spec_gate_fields);
}

void spec_gate_release(struct spec_gate *g)
{
	free(g->dataset);
	free(g->endpoint);
	free(g->model);
	g->dataset = g->endpoint = g->model = NULL;
}

json_t *spec_dump_gate(const void *base, const struct spec_field *f)
{
	const struct spec_gate *g = &((const struct spec *)base)->gate;
	if (!g->present)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "gsm8k", spec_fields_json(g, spec_gate_fields));
	return o;
}

static void parse_one_event(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			    const char *path, const char *kp, void *arg)
{
	struct spec *s = arg;
	const char *re;
	if (!spec_ident_ok(k, "-")) {
		spec_lerr(ld, kn, path, "'%s': an event name may hold only letters, digits, _ and -", k);
	} else if ((re = spec_want_scalar(ld, vn, kp, "a regex")) && spec_check_regex(ld, vn, kp, re)) {
		struct spec_log_event *e = &s->log_events[s->n_log_events++];
		e->name = xstrdup(k);
		e->regex = xstrdup(re);
		e->pos = spec_node_pos(kn);
		e->timed = spec_event_timed(re);
	}
}

bool spec_event_timed(const char *re)
{
	static const char *const groups[] = { "(?<seconds>", "(?<s>", "(?<ms>", "(?<us>", "(?P<seconds>",
					      "(?P<s>", "(?P<ms>", "(?P<us>", NULL };
	for (const char *const *g = groups; *g; g++)
		if (strstr(re, *g))
			return true;
	return false;
}

/* log_events: {recompiles: "Compiling kernel"}; an event whose regex has a
 * named group seconds, s, ms or us ("compiled in (?<ms>[0-9.]+) ms") is
 * timed: the durations its lines carry are summed per sample, stored as
 * log.<name>.seconds. */
void spec_parse_log_events(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			   const struct spec_field *f)
{
	struct spec *s = base;
	if (!spec_want_map(ld, v, path))
		return;
	s->log_events = xcalloc(spec_map_len(v) + 1, sizeof(*s->log_events));
	spec_map_each(ld, v, path, parse_one_event, s);
}

json_t *spec_dump_log_events(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *o = json_object();
	for (size_t i = 0; i < s->n_log_events; i++)
		json_object_set_new(o, s->log_events[i].name, json_string(s->log_events[i].regex));
	return o;
}

