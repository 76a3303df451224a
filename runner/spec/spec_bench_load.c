/*
 * Load benchmarks: the load generator's settings, their defaults and the
 * rules between them (open or closed loop, rate or rates, requests or
 * duration), and the SLOs, whose names spec_slo_parse() reads.
 */
#include "runner/spec/spec_int.h"

#include <math.h>
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
			spec_lerr(ld, vn, kp, "'%s' is not a duration like 4s or 50ms", s);
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

/* A load benchmark's keys, and `ratchet bench load`'s options (FL_CLI, spec_cli.c). */
#define CLI FL_CLI
const struct spec_field spec_load_fields[] = {
	{ "endpoint", SF_STR, SPEC_OFF(struct spec_load, endpoint), 0, CLI | FL_TMPL | FL_OMIT0, .alias = 'e',
	  .arg = "URL", .help = "base URL, e.g. http://127.0.0.1:8000 (spec: default the engine's; command line: required)" },
	{ "api", SF_ENUM, SPEC_OFF(struct spec_load, api), 0, CLI, .names = spec_api_names, .def = "completions",
	  .arg = "API", .help = "the API asked" },
	{ "model", SF_STR, SPEC_OFF(struct spec_load, model), 0, CLI | FL_OMIT0, .alias = 'm', .arg = "NAME",
	  .help = "model name sent (default: the engine's, or \"default\")" },
	{ "pattern", SF_ENUM, SPEC_OFF(struct spec_load, pattern), 0, CLI, .names = spec_pattern_names, .arg = "P",
	  .help = "arrivals (default: closed, or poisson with a rate; gamma when burstiness is not 1, "
		  "constant when it is inf)" },
	{ "concurrency", SF_INT, SPEC_OFF(struct spec_load, concurrency), 0, CLI | FL_LO | FL_OMIT0, 1,
	  .alias = 'c', .help = "closed loop with N in flight (prefill: wave width; open loop: cap)" },
	{ "rate", SF_DBL, SPEC_OFF(struct spec_load, rate), 0, CLI | FL_LOX | FL_INF | FL_OMIT0, 0, .alias = 'r',
	  .arg = "R", .help = "open loop at R requests/s (inf: all at once)" },
	{ "burstiness", SF_DBL, SPEC_OFF(struct spec_load, burstiness), 0, CLI | FL_LOX | FL_INF, 0, .def = "1",
	  .arg = "B", .help = "gamma shape (1 = poisson, < 1 burstier, inf: constant gaps)" },
	{ "requests", SF_INT, SPEC_OFF(struct spec_load, requests), 0, CLI | FL_LO | FL_OMIT0, 1, .alias = 'n',
	  .help = "measured requests (command line: 100 when no duration is given)" },
	{ "duration", SF_DUR, SPEC_OFF(struct spec_load, duration_s), 0, CLI | FL_LOX | FL_OMIT0, 0, .alias = 'd',
	  .help = "measured duration instead (e.g. 60s, 5m)" },
	{ "warmup", SF_INT, SPEC_OFF(struct spec_load, warmup), 0, CLI | FL_LO, 0, .help = "warm-up requests, excluded from metrics" },
	{ "prompt_tokens", SF_INT, SPEC_OFF(struct spec_load, prompt_tokens), 0, CLI | FL_LO | FL_OMIT0, 1, .arg = "L",
	  .help = "random prompt length in tokens (default 128)" },
	{ "output_tokens", SF_INT, SPEC_OFF(struct spec_load, output_tokens), 0, CLI | FL_LO, 0, .def = "128",
	  .arg = "T", .help = "max_tokens of every request, 0: each dataset record's own (with a dataset, "
			      "its records' own unless given)" },
	{ "dataset", SF_STR, SPEC_OFF(struct spec_load, dataset), 0, CLI | FL_PATH | FL_OMIT0, .arg = "FILE",
	  .help = "JSONL prompts: ShareGPT or {\"prompt\",\"max_tokens\"}" },
	{ "rates", SF_DBLV, SPEC_OFF(struct spec_load, rates), SPEC_OFF(struct spec_load, n_rates),
	  CLI | FL_LOX | FL_OMIT0, 0, .arg = "LO,HI", .help = "SLO capacity search between these rates (req/s)" },
	{ "seeds", SF_U64V, SPEC_OFF(struct spec_load, seeds), SPEC_OFF(struct spec_load, n_seeds), CLI,
	  .arg = "S1,S2", .help = "seeds per rate (default 1; command line: --seed)" },
	{ "slo", SF_CUSTOM, 0, 0, CLI | FL_CLI_MULTI | FL_OMIT0, .parse = parse_slo, .dump = dump_slo, .arg = "M=DUR",
	  .help = "per-request SLOs, e.g. {ttft_p95: 4s}; command line: ttft_p95=4s, repeatable or comma-separated" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_load, request_timeout_s), 0, CLI | FL_LOX, 0, .def = "600",
	  .help = "per-request timeout (seconds, or 10m)" },
	{ "ignore_eos", SF_BOOL, SPEC_OFF(struct spec_load, ignore_eos), 0, CLI, .help = "send ignore_eos: true (vLLM)" },
	{ 0 }
};
#undef CLI

void spec_load_defaults(struct spec_load *l)
{
	spec_fields_defaults(l, spec_load_fields);
}

void spec_load_release(struct spec_load *l)
{
	free(l->endpoint);
	free(l->model);
	free(l->dataset);
	free(l->rates);
	free(l->seeds);
	for (size_t i = 0; i < l->n_slo; i++)
		free(l->slo[i].metric);
	free(l->slo);
	*l = (struct spec_load){ 0 };
}

void spec_load_post(struct spec_ld *ld, yaml_node_t *lv, const char *path, struct spec_load *l)
{
	bool open;
	if (spec_map_get(ld, lv, "rate") && spec_map_get(ld, lv, "rates"))
		spec_lerr(ld, lv, path, "give rate or rates, not both");
	if (!spec_map_get(ld, lv, "pattern")) {
		if (l->rate > 0 || l->n_rates) /* as vLLM: inf burstiness is constant gaps */
			l->pattern = isinf(l->burstiness) ? SPEC_LOAD_CONSTANT
				     : l->burstiness != 1 ? SPEC_LOAD_GAMMA : SPEC_LOAD_POISSON;
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

