/*
 * Load benchmarks: the load generator's settings, their defaults and the
 * rules between them (open or closed loop, rate or rates, requests or
 * duration), and the SLOs, whose names spec_slo_parse() reads.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

/* One SLO, e.g. ttft_p95: 4s; the name must be one spec_slo_parse() reads. */
static void parse_one_slo(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			  const char *path, const char *kp, void *arg)
{
	struct spec_load *l = arg;
	enum spec_load_q q;
	enum spec_load_stat st;
	struct rt_sb why = RT_SB_INIT;
	double lim;
	const char *s;
	if (spec_slo_parse(k, &q, &st, &why)) {
		spec_lerr(ld, kn, path, "%s", why.buf);
	} else if ((s = spec_want_scalar(ld, vn, kp, "a duration"))) {
		if (rt_parse_duration(s, &lim) || lim <= 0) {
			spec_lerr(ld, vn, kp, "expected a duration like 4s or 50ms, got '%s'", s);
		} else {
			l->slo[l->n_slo].metric = xstrdup(k);
			l->slo[l->n_slo++].limit = lim;
		}
	}
	rt_sb_release(&why);
}

/* slo: {ttft_p95: 4s, tpot: 50ms} */
static void parse_slo(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	struct spec_load *l = base;
	if (!spec_want_map(ld, v, path))
		return;
	l->slo = xcalloc(spec_map_len(v) + 1, sizeof(*l->slo));
	spec_map_each(ld, v, path, parse_one_slo, l);
}

static json_t *dump_slo(const void *base, const struct spec_field *f)
{
	const struct spec_load *l = base;
	if (!l->n_slo)
		return NULL;
	json_t *o = json_object();
	for (size_t i = 0; i < l->n_slo; i++)
		json_object_set_new(o, l->slo[i].metric, spec_json_num(l->slo[i].limit));
	return o;
}

const struct spec_field spec_load_fields[] = {
	{ "api", SF_ENUM, SPEC_OFF(struct spec_load, api), .names = spec_api_names, .help = "completions or chat" },
	{ "endpoint", SF_STR, SPEC_OFF(struct spec_load, endpoint), 0, FL_TMPL | FL_OMIT0,
	  .help = "base URL; default the engine" },
	{ "model", SF_STR, SPEC_OFF(struct spec_load, model), 0, FL_OMIT0, .help = "model name sent" },
	{ "pattern", SF_ENUM, SPEC_OFF(struct spec_load, pattern), .names = spec_pattern_names,
	  .help = "closed, poisson, gamma, constant or prefill" },
	{ "concurrency", SF_INT, SPEC_OFF(struct spec_load, concurrency), 0, FL_LO | FL_OMIT0, 1,
	  .help = "requests in flight" },
	{ "rate", SF_DBL, SPEC_OFF(struct spec_load, rate), 0, FL_LOX | FL_OMIT0, 0, .help = "requests per second" },
	{ "burstiness", SF_DBL, SPEC_OFF(struct spec_load, burstiness), 0, FL_LOX, 0, .help = "gamma shape" },
	{ "requests", SF_INT, SPEC_OFF(struct spec_load, requests), 0, FL_LO | FL_OMIT0, 1,
	  .help = "measured requests" },
	{ "duration", SF_DUR, SPEC_OFF(struct spec_load, duration_s), 0, FL_LOX | FL_OMIT0, 0,
	  .help = "measured duration (seconds)" },
	{ "warmup", SF_INT, SPEC_OFF(struct spec_load, warmup), 0, FL_LO, 0, .help = "warm-up requests" },
	{ "prompt_tokens", SF_INT, SPEC_OFF(struct spec_load, prompt_tokens), 0, FL_LO | FL_OMIT0, 1,
	  .help = "random prompt length" },
	{ "output_tokens", SF_INT, SPEC_OFF(struct spec_load, output_tokens), 0, FL_LO, 0, .help = "max_tokens (0: each dataset record's own)" },
	{ "dataset", SF_STR, SPEC_OFF(struct spec_load, dataset), 0, FL_PATH | FL_OMIT0, .help = "JSONL prompts" },
	{ "rates", SF_DBLV, SPEC_OFF(struct spec_load, rates), SPEC_OFF(struct spec_load, n_rates), FL_LOX | FL_OMIT0, 0,
	  .help = "capacity search bracket (req/s)" },
	{ "seeds", SF_U64V, SPEC_OFF(struct spec_load, seeds), SPEC_OFF(struct spec_load, n_seeds), .help = "seeds per rate" },
	{ "slo", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_slo, .dump = dump_slo,
	  .help = "per-request SLOs, e.g. {ttft_p95: 4s}" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_load, request_timeout_s), 0, FL_LOX, 0,
	  .help = "per request (seconds)" },
	{ "ignore_eos", SF_BOOL, SPEC_OFF(struct spec_load, ignore_eos), .help = "send ignore_eos: true" },
	{ 0 }
};

void spec_load_defaults(struct spec_load *l)
{
	l->api = SPEC_API_COMPLETIONS;
	l->burstiness = 1;
	l->request_timeout_s = 600;
	l->output_tokens = 128;
}

void spec_load_post(struct spec_ld *ld, yaml_node_t *lv, const char *path, struct spec_load *l)
{
	bool open;
	if (spec_map_get(ld, lv, "rate") && spec_map_get(ld, lv, "rates"))
		spec_lerr(ld, lv, path, "give rate or rates, not both");
	if (!spec_map_get(ld, lv, "pattern")) {
		if (l->rate > 0 || l->n_rates)
			l->pattern = l->burstiness != 1 ? SPEC_LOAD_GAMMA : SPEC_LOAD_POISSON;
		else
			l->pattern = SPEC_LOAD_CLOSED;
	}
	open = l->pattern == SPEC_LOAD_POISSON || l->pattern == SPEC_LOAD_GAMMA ||
	       l->pattern == SPEC_LOAD_CONSTANT;
	if (open && l->rate <= 0 && !l->n_rates)
		spec_lerr(ld, lv, path, "pattern '%s' needs rate or rates", spec_pattern_names[l->pattern]);
	if (!open && (l->rate > 0 || l->n_rates))
		spec_lerr(ld, lv, path, "rate and rates apply to open-loop patterns (poisson, gamma, constant), not '%s'",
			  spec_pattern_names[l->pattern]);
	if (l->requests == 0 && l->duration_s == 0)
		spec_lerr(ld, lv, path, "give requests or duration");
	if (l->pattern == SPEC_LOAD_CLOSED && l->concurrency == 0)
		l->concurrency = 1;
	if (l->pattern == SPEC_LOAD_PREFILL && l->concurrency == 0) {
		if (l->requests == 0)
			spec_lerr(ld, lv, path, "pattern 'prefill' needs requests or concurrency");
		l->concurrency = l->requests;
	}
	if (l->n_rates && !l->n_slo && !spec_map_get(ld, lv, "slo")) /* else: reported there */
		spec_lerr(ld, lv, path, "rates asks for a capacity search, which needs slo");
	if (!ld->s->engine.present && !l->endpoint)
		spec_lerr(ld, lv, path, "no endpoint, and the spec has no engine to measure");
	if (!spec_map_get(ld, lv, "prompt_tokens") && !l->dataset)
		l->prompt_tokens = 128;
	if (!spec_map_get(ld, lv, "output_tokens") && l->pattern == SPEC_LOAD_PREFILL)
		l->output_tokens = 1;
	else if (!spec_map_get(ld, lv, "output_tokens") && l->dataset)
		l->output_tokens = 0; /* each record's own length (128 where it has none) */
	if (!spec_map_get(ld, lv, "seeds")) {
		free(l->seeds);
		l->seeds = xcalloc(1, sizeof(*l->seeds));
		l->seeds[0] = 1;
		l->n_seeds = 1;
	} else if (!l->n_seeds) {
		spec_lerr(ld, spec_map_get(ld, lv, "seeds"), path, "seeds: needs at least one seed");
	}
}

