/*
 * gate: (the GSM8K accuracy gate, with its defaults) and log_events: (regexes
 * over the engine log, counted per iteration as log.NAME).
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

const struct spec_field spec_gate_fields[] = {
	{ "min_accuracy", SF_FRAC, SPEC_OFF(struct spec_gate, min_accuracy), .help = "absolute accuracy bound" },
	{ "wilson_lower", SF_BOOL, SPEC_OFF(struct spec_gate, use_wilson_lower),
	  .help = "compare the Wilson lower bound" },
	{ "max_drop", SF_FRAC, SPEC_OFF(struct spec_gate, max_drop), .help = "largest drop vs baseline" },
	{ "alpha", SF_DBL, SPEC_OFF(struct spec_gate, alpha), 0, FL_LOX | FL_HIX, 0, 1,
	  .help = "significance of the paired test" },
	{ "min_identical", SF_FRAC, SPEC_OFF(struct spec_gate, min_identical), .help = "identical-answer rate bound" },
	{ "max_failed", SF_FRAC, SPEC_OFF(struct spec_gate, max_failed), .help = "failed-request fraction that errors" },
	{ "format", SF_ENUM, SPEC_OFF(struct spec_gate, format), .names = spec_gsm8k_format_names,
	  .help = "gsm8k, gsm8k_cot or chat" },
	{ "extract", SF_ENUM, SPEC_OFF(struct spec_gate, extract), .names = spec_extract_names,
	  .help = "flexible or strict" },
	{ "api", SF_ENUM, SPEC_OFF(struct spec_gate, api), .names = spec_api_names, .help = "completions or chat" },
	{ "concurrency", SF_INT, SPEC_OFF(struct spec_gate, concurrency), 0, FL_LO, 1, .help = "requests in flight" },
	{ "limit", SF_INT, SPEC_OFF(struct spec_gate, limit), 0, FL_LO, 0, .help = "questions; 0 = all 1319" },
	{ "offset", SF_INT, SPEC_OFF(struct spec_gate, offset), 0, FL_LO, 0, .help = "first question" },
	{ "seed", SF_U64, SPEC_OFF(struct spec_gate, seed), .help = "subset seed; 0 = in order" },
	{ "num_fewshot", SF_INT, SPEC_OFF(struct spec_gate, num_fewshot), 0, FL_LO, 0, .help = "few-shot examples" },
	{ "max_tokens", SF_INT, SPEC_OFF(struct spec_gate, max_tokens), 0, FL_LO, 1, .help = "per answer" },
	{ "dataset", SF_STR, SPEC_OFF(struct spec_gate, dataset), 0, FL_PATH | FL_OMIT0, .help = "GSM8K test JSONL" },
	{ "endpoint", SF_STR, SPEC_OFF(struct spec_gate, endpoint), 0, FL_TMPL | FL_OMIT0,
	  .help = "base URL; default the engine" },
	{ "model", SF_STR, SPEC_OFF(struct spec_gate, model), 0, FL_OMIT0, .help = "model name sent" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_gate, request_timeout_s), 0, FL_LOX, 0,
	  .help = "per request (seconds)" },
	{ 0 }
};

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
	g->present = true;
	g->pos = spec_node_pos(gv);
	g->max_drop = 0.01;
	g->alpha = 0.05;
	g->max_failed = 0.02;
	g->concurrency = 32;
	g->num_fewshot = 5;
	g->max_tokens = 256;
	g->request_timeout_s = 300;
	if (spec_is_null(gv))
		return;
	spec_parse_fields(ld, gv, "gate.gsm8k", g, spec_gate_fields, NULL);
	if (!spec_map_get(ld, gv, "api") && g->format == SPEC_GSM8K_CHAT)
		g->api = SPEC_API_CHAT;
	if (!spec_map_get(ld, gv, "num_fewshot") && g->format == SPEC_GSM8K_COT)
		g->num_fewshot = 8;
	if (!s->engine.present && !g->endpoint)
		spec_lerr(ld, gv, "gate.gsm8k", "no endpoint, and the spec has no engine to gate");
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

