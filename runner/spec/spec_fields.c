/*
 * The spec's field tables (one row per key: type, place, bounds, help) and
 * the parsers for the parts a table row cannot describe alone: benchmarks of
 * three kinds, metrics, SLOs, kernel arguments, the objective and
 * constraints, the gate, log events and variants. Defaults live in
 * spec_defaults() and the per-part default functions below; the same values
 * are listed in docs/spec.md.
 */
#include "runner/spec/spec_int.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define O(T, m) offsetof(T, m)

/* ---- enum names, by value ---- */
const char *const spec_format_names[] = { "none", "json", "llama-batched-bench",
					  "llama-batched-bench-jsonl", "llama-bench",
					  "vllm-bench-serve", NULL };
const char *const spec_api_names[] = { "completions", "chat", NULL };
const char *const spec_pattern_names[] = { "closed", "poisson", "gamma", "constant", "prefill", NULL };
const char *const spec_dtype_names[] = { "f32", "f16", "bf16", "f64", "i32", "i64", "u8", NULL };
const char *const spec_init_names[] = { "random", "zero", "value", "file", NULL };
const char *const spec_goal_names[] = { "max", "min", NULL };
const char *const spec_gsm8k_format_names[] = { "gsm8k", "gsm8k_cot", "chat", NULL };
const char *const spec_extract_names[] = { "flexible", "strict", NULL };
const char *const spec_tblfmt_names[] = { "auto", "json", "csv", "yaml", NULL };
const char *const spec_better_names[] = { "auto", "higher", "lower", NULL };
static const char *const backend_names[] = { "host", "cuda", "hip", "ze", NULL };

/* ---- metric names the built-in producers yield ---- */
static const char *const load_metric_names[] = {
	"request_throughput", "output_throughput", "total_token_throughput", "goodput",
	"completed", "failed",
	"ttft_mean", "ttft_median", "ttft_p90", "ttft_p95", "ttft_p99",
	"tpot_mean", "tpot_median", "tpot_p90", "tpot_p95", "tpot_p99",
	"itl_mean", "itl_median", "itl_p90", "itl_p95", "itl_p99",
	"e2el_mean", "e2el_median", "e2el_p90", "e2el_p95", "e2el_p99",
	"ttft_sched_mean", "ttft_sched_median", "ttft_sched_p90", "ttft_sched_p95", "ttft_sched_p99",
	"send_lag_mean", "send_lag_median", "send_lag_p90", "send_lag_p95", "send_lag_p99",
	"max_rate", /* last: only with rates: */
};
static const char *const kernel_metric_names[] = { "time", "time_min", "gbps", "gflops",
						   "pct_peak_bw", "pct_peak_flops", "rsd", "samples" };
static const char *const batched_metric_names[] = { "s_pp", "s_tg", "s", "t_pp", "t_tg", "t" };
static const char *const llama_bench_metric_names[] = { "pp_tps", "tg_tps", "pp_tps_stddev",
							"tg_tps_stddev" };
static const char *const vllm_metric_names[] = {
	"request_throughput", "output_throughput", "total_token_throughput",
	"ttft_mean", "ttft_median", "ttft_p99", "tpot_mean", "tpot_median", "tpot_p99",
	"itl_mean", "itl_median", "itl_p99", "e2el_mean", "e2el_median", "e2el_p99",
};

static void fmt_metrics(enum spec_cmd_format f, const char *const **names, size_t *n)
{
	switch (f) {
	case SPEC_FMT_LLAMA_BATCHED_BENCH:
	case SPEC_FMT_LLAMA_BATCHED_JSONL:
		*names = batched_metric_names;
		*n = RT_ARRAY_SIZE(batched_metric_names);
		return;
	case SPEC_FMT_LLAMA_BENCH_JSON:
		*names = llama_bench_metric_names;
		*n = RT_ARRAY_SIZE(llama_bench_metric_names);
		return;
	case SPEC_FMT_VLLM_BENCH_SERVE:
		*names = vllm_metric_names;
		*n = RT_ARRAY_SIZE(vllm_metric_names);
		return;
	default:
		*names = NULL;
		*n = 0;
	}
}

/* ---- small checks ---- */

static bool ident_ok(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && !strchr(extra, *p))
			return false;
	return true;
}

static bool check_regex(struct spec_ld *ld, yaml_node_t *at, const char *path, const char *re)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (c) {
		pcre2_code_free(c);
		return true;
	}
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(code, msg, sizeof(msg));
	struct rt_pos p = spec_node_pos(at);
	bool quoted = at->type == YAML_SCALAR_NODE && at->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	if (at->start_mark.line == at->end_mark.line)
		p.col += (int)off + (quoted ? 1 : 0);
	spec_lerr_at(ld, p, path, "bad regex at offset %zu: %s", (size_t)off, (const char *)msg);
	return false;
}

static size_t seq_len(yaml_node_t *v)
{
	return (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
}

static yaml_node_t *seq_item(struct spec_ld *ld, yaml_node_t *v, size_t i)
{
	return spec_node(ld, v->data.sequence.items.start[i]);
}

static bool want_seq(struct spec_ld *ld, yaml_node_t *v, const char *path)
{
	char buf[80];
	if (v->type == YAML_SEQUENCE_NODE)
		return true;
	spec_lerr(ld, v, path, "expected a list, got %s", spec_got(v, buf, sizeof(buf)));
	return false;
}

static bool want_map(struct spec_ld *ld, yaml_node_t *v, const char *path)
{
	char buf[80];
	if (v->type == YAML_MAPPING_NODE)
		return true;
	spec_lerr(ld, v, path, "expected a mapping, got %s", spec_got(v, buf, sizeof(buf)));
	return false;
}

/* ---- custom parsers and dumpers ---- */

static void noop_parse(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
}

static json_t *dump_workdir(const void *base, const struct spec_field *f)
{
	return json_string(((const struct spec *)base)->workdir);
}

/* SLOs: {ttft_p95: 4s, tpot: 50ms} */
static bool slo_name_ok(const char *k)
{
	static const char *const bases[] = { "ttft", "tpot", "itl", "e2el" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(bases); i++) {
		size_t n = strlen(bases[i]);
		if (strncmp(k, bases[i], n))
			continue;
		const char *r = k + n;
		if (!*r || !strcmp(r, "_mean") || !strcmp(r, "_median"))
			return true;
		if (r[0] == '_' && r[1] == 'p' && isdigit((unsigned char)r[2])) {
			r += 2;
			while (isdigit((unsigned char)*r))
				r++;
			if (*r == '.' && isdigit((unsigned char)r[1]))
				for (r++; isdigit((unsigned char)*r); r++)
					;
			return *r == '\0';
		}
	}
	return false;
}

static void parse_slo(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	struct spec_load *l = base;
	if (!want_map(ld, v, path))
		return;
	spec_check_keys(ld, v, path, NULL, NULL);
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	l->slo = xcalloc(n ? n : 1, sizeof(*l->slo));
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_scalar(kn);
		if (!k || spec_map_get(ld, v, k) != vn)
			continue;
		char *kp = spec_path_join(path, k);
		double lim;
		const char *s;
		if (!slo_name_ok(k)) {
			spec_lerr(ld, kn, path,
				  "unknown SLO metric '%s' (ttft, tpot, itl or e2el, optionally with _mean, _median or _pNN)",
				  k);
		} else if ((s = spec_want_scalar(ld, vn, kp, "a duration"))) {
			if (!spec_parse_duration(s, &lim) || lim <= 0)
				spec_lerr(ld, vn, kp, "expected a duration like 4s or 50ms, got '%s'", s);
			else {
				l->slo[l->n_slo].metric = xstrdup(k);
				l->slo[l->n_slo++].limit = lim;
			}
		}
		free(kp);
	}
}

static json_t *dump_slo(const void *base, const struct spec_field *f)
{
	const struct spec_load *l = base;
	if (!l->n_slo)
		return NULL;
	json_t *o = json_object();
	for (size_t i = 0; i < l->n_slo; i++)
		json_object_set_new(o, l->slo[i].metric,
				    l->slo[i].limit == floor(l->slo[i].limit) && l->slo[i].limit < 1e15
					    ? json_integer((json_int_t)l->slo[i].limit)
					    : json_real(l->slo[i].limit));
	return o;
}

/* metrics: {gflops: /gflops, tps: 'tok/s: ([0-9.]+)', t: {pointer: /t, file: out.json}} */
static const struct spec_field metric_fields[] = {
	{ "pointer", SF_CUSTOM, .help = "JSON pointer (RFC 6901) into the output" },
	{ "regex", SF_CUSTOM, .help = "PCRE2 regex; the first capture group (or the match) is the value" },
	{ "file", SF_STR, O(struct spec_metric, file), 0, FL_PATH | FL_OMIT0,
	  .help = "read this file instead of stdout" },
	{ "unit", SF_STR, O(struct spec_metric, unit), 0, FL_OMIT0, .help = "free text unit" },
	{ "better", SF_ENUM, O(struct spec_metric, better), 0, FL_OMIT0, .names = spec_better_names,
	  .help = "higher or lower; default guessed from the name" },
	{ 0 }
};

static void parse_metrics(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f)
{
	struct spec_cmd_bench *c = base;
	if (!want_map(ld, v, path))
		return;
	spec_check_keys(ld, v, path, NULL, NULL);
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	c->metrics = xcalloc(n ? n : 1, sizeof(*c->metrics));
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_scalar(kn);
		if (!k || spec_map_get(ld, v, k) != vn)
			continue;
		char *kp = spec_path_join(path, k);
		struct spec_metric m = { 0 };
		m.pos = spec_node_pos(kn);
		bool ok = true;
		if (!ident_ok(k, "")) {
			spec_lerr(ld, kn, path, "metric name '%s' may hold only letters, digits and _", k);
			ok = false;
		} else if (vn->type == YAML_MAPPING_NODE) {
			spec_parse_fields(ld, vn, kp, &m, metric_fields, NULL);
			yaml_node_t *pn = spec_map_get(ld, vn, "pointer"), *rn = spec_map_get(ld, vn, "regex");
			if (pn && rn) {
				spec_lerr(ld, vn, kp, "give pointer or regex, not both");
				ok = false;
			} else if (!pn && !rn) {
				spec_lerr(ld, vn, kp, "missing key 'pointer' or 'regex'");
				ok = false;
			} else {
				yaml_node_t *en = pn ? pn : rn;
				const char *e = spec_want_scalar(ld, en, kp, "a string");
				m.kind = pn ? SPEC_EXTRACT_POINTER : SPEC_EXTRACT_REGEX;
				if (!e)
					ok = false;
				else if (pn && *e && *e != '/') {
					spec_lerr(ld, en, kp, "a JSON pointer starts with '/', got '%s'", e);
					ok = false;
				} else if (rn && !check_regex(ld, en, kp, e))
					ok = false;
				else
					m.expr = xstrdup(e);
			}
		} else {
			const char *e = spec_want_scalar(ld, vn, kp, "a JSON pointer, a regex or a mapping");
			if (!e)
				ok = false;
			else if (*e == '/') {
				m.kind = SPEC_EXTRACT_POINTER;
				m.expr = xstrdup(e);
			} else if (check_regex(ld, vn, kp, e)) {
				m.kind = SPEC_EXTRACT_REGEX;
				m.expr = xstrdup(e);
			} else
				ok = false;
		}
		if (ok) {
			m.name = xstrdup(k);
			c->metrics[c->n_metrics++] = m;
		} else {
			free(m.expr);
			free(m.file);
			free(m.unit);
		}
		free(kp);
	}
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

/* ---- the field tables ---- */

static const struct spec_field ready_fields[] = {
	{ "http", SF_STR, O(struct spec_engine, ready_http), .help = "readiness path, polled until 200" },
	{ "timeout", SF_DUR, O(struct spec_engine, ready_timeout_s), 0, FL_LOX, 0,
	  .help = "how long to wait for readiness (seconds)" },
	{ 0 }
};

static const struct spec_field identity_fields[] = {
	{ "http", SF_STR, O(struct spec_engine, identity_http), 0, FL_NULLOK,
	  .help = "path listing the served model; null disables the model check" },
	{ "model", SF_STR, O(struct spec_engine, model), 0, FL_OMIT0,
	  .help = "expected model id; default: the one seen at baseline" },
	{ "nonce", SF_BOOL, O(struct spec_engine, nonce_check),
	  .help = "the identity response must echo {nonce}; default: when the command passes {nonce}" },
	{ 0 }
};

const struct spec_field spec_engine_fields[] = {
	{ "command", SF_STRV, O(struct spec_engine, command), 0, FL_REQ | FL_TMPL,
	  .help = "argv of the server; placeholders allowed" },
	{ "env", SF_ENVV, O(struct spec_engine, env), 0, FL_TMPL,
	  .help = "environment added to the inherited one; null unsets" },
	{ "host", SF_STR, O(struct spec_engine, host), .help = "address the engine listens on" },
	{ "port", SF_INT, O(struct spec_engine, port), 0, FL_LO | FL_HI, 0, 65535,
	  .help = "0: a free port per launch, passed as {port}" },
	{ "ready", SF_SUB, .sub = ready_fields, .help = "readiness probe" },
	{ "identity", SF_SUB, .sub = identity_fields, .help = "identity proof" },
	{ "stop_grace", SF_DUR, O(struct spec_engine, stop_grace_s), .help = "SIGTERM to SIGKILL grace (seconds)" },
	{ "log_cap", SF_SIZE, O(struct spec_engine, log_cap_bytes), .help = "engine log cap (bytes)" },
	{ 0 }
};

const struct spec_field spec_cmd_fields[] = {
	{ "command", SF_STRV, O(struct spec_cmd_bench, command), 0, FL_REQ | FL_TMPL,
	  .help = "argv; placeholders allowed" },
	{ "env", SF_ENVV, O(struct spec_cmd_bench, env), 0, FL_TMPL, .help = "extra environment" },
	{ "timeout", SF_DUR, O(struct spec_cmd_bench, timeout_s), 0, FL_LOX, 0, .help = "seconds" },
	{ "format", SF_ENUM, O(struct spec_cmd_bench, format), 0, 0, .names = spec_format_names,
	  .help = "built-in output format" },
	{ "format_file", SF_STR, O(struct spec_cmd_bench, format_file), 0, FL_PATH | FL_OMIT0,
	  .help = "file the format reads instead of stdout" },
	{ "format_row", SF_STR, O(struct spec_cmd_bench, format_row), 0, FL_OMIT0,
	  .help = "llama-batched-bench row PP,TG,B; default the last" },
	{ "metrics", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_metrics, .dump = dump_metrics,
	  .help = "name: /pointer, name: regex, or name: {pointer|regex, file, unit, better}" },
	{ 0 }
};

const struct spec_field spec_load_fields[] = {
	{ "api", SF_ENUM, O(struct spec_load, api), .names = spec_api_names, .help = "completions or chat" },
	{ "endpoint", SF_STR, O(struct spec_load, endpoint), 0, FL_TMPL | FL_OMIT0,
	  .help = "base URL; default the engine" },
	{ "model", SF_STR, O(struct spec_load, model), 0, FL_OMIT0, .help = "model name sent" },
	{ "pattern", SF_ENUM, O(struct spec_load, pattern), .names = spec_pattern_names,
	  .help = "closed, poisson, gamma, constant or prefill" },
	{ "concurrency", SF_INT, O(struct spec_load, concurrency), 0, FL_LO | FL_OMIT0, 1,
	  .help = "requests in flight" },
	{ "rate", SF_DBL, O(struct spec_load, rate), 0, FL_LOX | FL_OMIT0, 0, .help = "requests per second" },
	{ "burstiness", SF_DBL, O(struct spec_load, burstiness), 0, FL_LOX, 0, .help = "gamma shape" },
	{ "requests", SF_INT, O(struct spec_load, requests), 0, FL_LO | FL_OMIT0, 1,
	  .help = "measured requests" },
	{ "duration", SF_DUR, O(struct spec_load, duration_s), 0, FL_LOX | FL_OMIT0, 0,
	  .help = "measured duration (seconds)" },
	{ "warmup", SF_INT, O(struct spec_load, warmup), 0, FL_LO, 0, .help = "warm-up requests" },
	{ "prompt_tokens", SF_INT, O(struct spec_load, prompt_tokens), 0, FL_LO | FL_OMIT0, 1,
	  .help = "random prompt length" },
	{ "output_tokens", SF_INT, O(struct spec_load, output_tokens), 0, FL_LO, 1, .help = "max_tokens" },
	{ "dataset", SF_STR, O(struct spec_load, dataset), 0, FL_PATH | FL_OMIT0, .help = "JSONL prompts" },
	{ "rates", SF_DBLV, O(struct spec_load, rates), O(struct spec_load, n_rates), FL_LOX | FL_OMIT0, 0,
	  .help = "capacity search bracket (req/s)" },
	{ "seeds", SF_U64V, O(struct spec_load, seeds), O(struct spec_load, n_seeds), .help = "seeds per rate" },
	{ "slo", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_slo, .dump = dump_slo,
	  .help = "per-request SLOs, e.g. {ttft_p95: 4s}" },
	{ "timeout", SF_DUR, O(struct spec_load, request_timeout_s), 0, FL_LOX, 0,
	  .help = "per request (seconds)" },
	{ "ignore_eos", SF_BOOL, O(struct spec_load, ignore_eos), .help = "send ignore_eos: true" },
	{ 0 }
};

const struct spec_field spec_karg_buf_fields[] = {
	{ "buffer", SF_STR, O(struct spec_karg, name), 0, FL_REQ, .help = "argument name" },
	{ "dtype", SF_ENUM, O(struct spec_karg, dtype), .names = spec_dtype_names, .help = "element type" },
	{ "count", SF_U64, O(struct spec_karg, count), 0, FL_REQ | FL_LO, 1, .help = "elements" },
	{ "output", SF_BOOL, O(struct spec_karg, output), .help = "written by the kernel and checked" },
	{ "init", SF_ENUM, O(struct spec_karg, init), .names = spec_init_names,
	  .help = "random, zero, value or file" },
	{ "value", SF_DBL, O(struct spec_karg, value), 0, FL_OMIT0, .help = "fill value (init: value)" },
	{ "file", SF_STR, O(struct spec_karg, init_file), 0, FL_PATH | FL_OMIT0,
	  .help = "initial bytes (init: file)" },
	{ "reference", SF_STR, O(struct spec_karg, reference_file), 0, FL_PATH | FL_OMIT0,
	  .help = "expected output bytes" },
	{ 0 }
};

const struct spec_field spec_karg_scalar_fields[] = {
	{ "scalar", SF_STR, O(struct spec_karg, name), 0, FL_REQ, .help = "argument name" },
	{ "dtype", SF_ENUM, O(struct spec_karg, dtype), 0, FL_REQ, .names = spec_dtype_names,
	  .help = "scalar type" },
	{ "value", SF_DBL, O(struct spec_karg, value), 0, FL_REQ, .help = "the value" },
	{ 0 }
};

static void parse_kargs(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	struct spec_kernel *k = base;
	if (!want_seq(ld, v, path))
		return;
	size_t n = seq_len(v);
	k->args = xcalloc(n ? n : 1, sizeof(*k->args));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq_item(ld, v, i);
		char *ip = spec_path_index(path, i);
		if (!want_map(ld, it, ip)) {
			free(ip);
			continue;
		}
		struct spec_karg *a = &k->args[k->n_args++];
		yaml_node_t *bn = spec_map_get(ld, it, "buffer"), *sn = spec_map_get(ld, it, "scalar");
		if (bn && sn) {
			spec_lerr(ld, it, ip, "an argument is a buffer or a scalar, not both");
		} else if (!bn && !sn) {
			spec_lerr(ld, it, ip, "missing key 'buffer' or 'scalar'");
		} else if (bn) {
			a->kind = SPEC_KARG_BUFFER;
			a->dtype = SPEC_DT_F32;
			spec_parse_fields(ld, it, ip, a, spec_karg_buf_fields, NULL);
			if (!spec_map_get(ld, it, "init"))
				a->init = a->init_file ? SPEC_INIT_FILE
					  : spec_map_get(ld, it, "value") ? SPEC_INIT_VALUE
									  : SPEC_INIT_RANDOM;
			if (a->init == SPEC_INIT_FILE && !a->init_file)
				spec_lerr(ld, it, ip, "init: file needs key 'file'");
			else if (a->init != SPEC_INIT_FILE && a->init_file)
				spec_lerr(ld, it, ip, "'file' needs init: file");
		} else {
			a->kind = SPEC_KARG_SCALAR;
			spec_parse_fields(ld, it, ip, a, spec_karg_scalar_fields, NULL);
		}
		for (size_t j = 0; a->name && j + 1 < k->n_args; j++)
			if (k->args[j].name && !strcmp(k->args[j].name, a->name))
				spec_lerr(ld, it, ip, "duplicate argument name '%s'", a->name);
		free(ip);
	}
}

static json_t *dump_kargs(const void *base, const struct spec_field *f)
{
	const struct spec_kernel *k = base;
	json_t *a = json_array();
	for (size_t i = 0; i < k->n_args; i++)
		json_array_append_new(a, spec_fields_json(&k->args[i], k->args[i].kind == SPEC_KARG_BUFFER
									    ? spec_karg_buf_fields
									    : spec_karg_scalar_fields));
	return a;
}

static const struct spec_field launch_table_fields[] = {
	{ "file", SF_STR, O(struct spec_kernel, launch_table), 0, FL_PATH | FL_OMIT0,
	  .help = "JSON file of launch entries" },
	{ "key", SF_STR, O(struct spec_kernel, launch_key), 0, FL_OMIT0, .help = "entry key" },
	{ 0 }
};

static const struct spec_field launch_fields[] = {
	{ "grid", SF_DIM3U, O(struct spec_kernel, grid), 0, FL_OMIT0, .help = "blocks; a number or [x, y, z]" },
	{ "block", SF_DIM3U, O(struct spec_kernel, block), .help = "threads per block" },
	{ "items", SF_DIM3L, O(struct spec_kernel, items), 0, FL_OMIT0,
	  .help = "work items; grid = ceil(items / block)" },
	{ "shared", SF_UINT, O(struct spec_kernel, shared_bytes), .help = "dynamic shared memory (bytes)" },
	{ "table", SF_SUB, .sub = launch_table_fields, .help = "{file, key}: launch geometry from a table" },
	{ 0 }
};

static const struct spec_field reference_fields[] = {
	{ "module", SF_STR, O(struct spec_kernel, ref_module), 0, FL_PATH | FL_OMIT0,
	  .help = "reference module; default the kernel's" },
	{ "name", SF_STR, O(struct spec_kernel, ref_name), 0, FL_OMIT0, .help = "reference kernel name" },
	{ 0 }
};

const struct spec_field spec_kernel_fields[] = {
	{ "backend", SF_STR, O(struct spec_kernel, backend), 0, FL_REQ, .help = "host, cuda, hip or ze" },
	{ "device", SF_INT, O(struct spec_kernel, device), 0, FL_LO, 0, .help = "device index" },
	{ "module", SF_STR, O(struct spec_kernel, module), 0, FL_REQ | FL_PATH,
	  .help = ".so, .cubin, .ptx, .fatbin, code object or .spv" },
	{ "name", SF_STR, O(struct spec_kernel, name), 0, FL_REQ, .help = "kernel function name" },
	{ "args", SF_CUSTOM, 0, 0, 0, .parse = parse_kargs, .dump = dump_kargs,
	  .help = "arguments in launch order" },
	{ "launch", SF_SUB, .sub = launch_fields, .help = "launch geometry" },
	{ "bytes", SF_DBL, O(struct spec_kernel, bytes), 0, FL_LO, 0, .help = "bytes moved per launch" },
	{ "flops", SF_DBL, O(struct spec_kernel, flops), 0, FL_LO, 0, .help = "FLOPs per launch" },
	{ "reference", SF_SUB, .sub = reference_fields, .help = "reference kernel {module, name}" },
	{ "max_rel_l2", SF_DBL, O(struct spec_kernel, max_rel_l2), 0, FL_LO, 0,
	  .help = "correctness bound on relative L2 error" },
	{ "warmup", SF_INT, O(struct spec_kernel, warmup), 0, FL_LO, 0, .help = "warm-up launches" },
	{ "target_rsd", SF_FRAC, O(struct spec_kernel, target_rsd), 0, FL_LOX, 0,
	  .help = "stop when the relative std dev is below this" },
	{ "max_time", SF_DUR, O(struct spec_kernel, max_time_s), 0, FL_LOX, 0,
	  .help = "time budget per measurement (seconds)" },
	{ "min_samples", SF_INT, O(struct spec_kernel, min_samples), 0, FL_LO, 1, .help = "samples at least" },
	{ "rotate", SF_INT, O(struct spec_kernel, rotate), 0, FL_LO, 0, .help = "input copies to rotate" },
	{ "flush_l2", SF_BOOL, O(struct spec_kernel, flush_l2), .help = "flush L2 between launches" },
	{ 0 }
};

/* ---- benchmarks ---- */

static void cmd_defaults(struct spec_cmd_bench *c)
{
	c->timeout_s = 600;
}

static void load_defaults(struct spec_load *l)
{
	l->api = SPEC_API_COMPLETIONS;
	l->burstiness = 1;
	l->request_timeout_s = 600;
	l->output_tokens = 128;
}

static void kernel_defaults(struct spec_kernel *k)
{
	k->max_rel_l2 = 1e-5;
	k->warmup = 3;
	k->target_rsd = 0.005;
	k->max_time_s = 5;
	k->min_samples = 10;
}

static void load_post(struct spec_ld *ld, yaml_node_t *lv, const char *path, struct spec_load *l)
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
	if (l->n_rates && !l->n_slo)
		spec_lerr(ld, lv, path, "rates asks for a capacity search, which needs slo");
	if (!ld->s->engine.present && !l->endpoint)
		spec_lerr(ld, lv, path, "no endpoint, and the spec has no engine to measure");
	if (!spec_map_get(ld, lv, "prompt_tokens") && !l->dataset)
		l->prompt_tokens = 128;
	if (!spec_map_get(ld, lv, "output_tokens") && l->pattern == SPEC_LOAD_PREFILL)
		l->output_tokens = 1;
	if (!spec_map_get(ld, lv, "seeds")) {
		free(l->seeds);
		l->seeds = xcalloc(1, sizeof(*l->seeds));
		l->seeds[0] = 1;
		l->n_seeds = 1;
	} else if (!l->n_seeds) {
		spec_lerr(ld, spec_map_get(ld, lv, "seeds"), path, "seeds: needs at least one seed");
	}
}

static void kernel_post(struct spec_ld *ld, yaml_node_t *kv, const char *path, struct spec_kernel *k)
{
	if (k->backend) {
		size_t n = 0;
		bool ok = false;
		for (; backend_names[n]; n++)
			ok |= !strcmp(backend_names[n], k->backend);
		if (!ok) {
			const char *dym = rt_did_you_mean(k->backend, backend_names, n);
			char *bp = spec_path_join(path, "backend");
			if (dym)
				spec_lerr(ld, spec_map_get(ld, kv, "backend"), bp,
					  "unknown backend '%s' (did you mean '%s'?)", k->backend, dym);
			else
				spec_lerr(ld, spec_map_get(ld, kv, "backend"), bp,
					  "unknown backend '%s' (expected host, cuda, hip or ze)", k->backend);
			free(bp);
		}
	}
	yaml_node_t *lv = spec_map_get(ld, kv, "launch");
	if (!spec_map_get(ld, lv, "block")) {
		bool host = k->backend && !strcmp(k->backend, "host");
		k->block[0] = host ? 1 : 256;
		k->block[1] = k->block[2] = 1;
	}
	if (k->block[0] == 0 || k->block[1] == 0 || k->block[2] == 0)
		spec_lerr(ld, lv ? lv : kv, path, "launch.block cannot have a 0");
	if (!spec_map_get(ld, lv, "grid"))
		memset(k->grid, 0, sizeof(k->grid));
	if (!spec_map_get(ld, lv, "items"))
		memset(k->items, 0, sizeof(k->items));
	if (k->grid[0] == 0 && k->items[0] == 0 && !k->launch_table)
		spec_lerr(ld, lv ? lv : kv, path, "launch: give grid, items or table");
	if (k->launch_table && !k->launch_key)
		spec_lerr(ld, lv, path, "launch.table needs key");
	if (k->launch_key && !k->launch_table)
		spec_lerr(ld, lv, path, "launch.table.key needs file");
	if (k->ref_module && !k->ref_name)
		spec_lerr(ld, spec_map_get(ld, kv, "reference"), path, "reference needs name");
}

static void compute_metric_names(struct spec_bench *b)
{
	const char *const *fixed = NULL;
	size_t nf = 0;
	if (b->kind == SPEC_BENCH_LOAD) {
		fixed = load_metric_names;
		nf = RT_ARRAY_SIZE(load_metric_names) - (b->load.n_rates ? 0 : 1);
	} else if (b->kind == SPEC_BENCH_KERNEL) {
		fixed = kernel_metric_names;
		nf = RT_ARRAY_SIZE(kernel_metric_names);
	} else {
		fmt_metrics(b->cmd.format, &fixed, &nf);
	}
	size_t ne = b->kind == SPEC_BENCH_COMMAND ? b->cmd.n_metrics : 0;
	b->metric_names = xcalloc(nf + ne + 1, sizeof(char *));
	for (size_t i = 0; i < nf; i++)
		b->metric_names[b->n_metric_names++] = fixed[i];
	for (size_t i = 0; i < ne; i++)
		b->metric_names[b->n_metric_names++] = b->cmd.metrics[i].name;
}

static const char *const bench_kinds[] = { "command", "load", "kernel" };

static void parse_one_bench(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct spec_bench *b)
{
	struct spec *s = ld->s;
	b->pos = spec_node_pos(it);
	yaml_node_t *nn = spec_map_get(ld, it, "name");
	if (!nn) {
		spec_lerr(ld, it, ip, "missing key 'name'");
	} else {
		char *np = spec_path_join(ip, "name");
		const char *name = spec_want_scalar(ld, nn, np, "a name");
		if (name && !ident_ok(name, "-")) {
			spec_lerr(ld, nn, np, "'%s': a benchmark name may hold only letters, digits, _ and -", name);
		} else if (name && !strcmp(name, "log")) {
			spec_lerr(ld, nn, np, "'log' is reserved for log event counts");
		} else if (name) {
			for (struct spec_bench *o = s->benches; o < b; o++)
				if (o->name && !strcmp(o->name, name)) {
					spec_lerr(ld, nn, np, "duplicate benchmark name '%s' (first at %d:%d)", name,
						  o->pos.line, o->pos.col);
					break;
				}
			b->name = xstrdup(name);
		}
		free(np);
	}
	yaml_node_t *kinds[3];
	int nk = 0, which = -1, second = -1;
	for (int k = 0; k < 3; k++) {
		kinds[k] = spec_map_get(ld, it, bench_kinds[k]);
		if (kinds[k]) {
			nk++;
			if (which < 0)
				which = k;
			else if (second < 0)
				second = k;
		}
	}
	if (nk > 1) {
		spec_lerr(ld, it, ip, "a benchmark has one kind, got '%s' and '%s'", bench_kinds[which],
			  bench_kinds[second]);
		return;
	}
	if (nk == 0) {
		spec_lerr(ld, it, ip, "missing one of 'command', 'load', 'kernel'");
		return;
	}
	b->kind = (enum spec_bench_kind)which;
	if (b->kind == SPEC_BENCH_COMMAND) {
		static const char *const extra[] = { "name", NULL };
		cmd_defaults(&b->cmd);
		spec_parse_fields(ld, it, ip, &b->cmd, spec_cmd_fields, extra);
		if (b->cmd.command.n == 0 && kinds[0] && kinds[0]->type == YAML_SEQUENCE_NODE)
			spec_lerr(ld, kinds[0], ip, "command: an empty argv");
		if ((b->cmd.format == SPEC_FMT_NONE || b->cmd.format == SPEC_FMT_JSON) && !b->cmd.n_metrics &&
		    !spec_map_get(ld, it, "metrics"))
			spec_lerr(ld, it, ip, "the benchmark yields no metric: give metrics or a format");
		if (b->cmd.format_file && b->cmd.format == SPEC_FMT_NONE)
			spec_lerr(ld, spec_map_get(ld, it, "format_file"), ip, "format_file needs a format");
		if (b->cmd.format_row) {
			unsigned a, c, d;
			char tail;
			yaml_node_t *rn = spec_map_get(ld, it, "format_row");
			if (b->cmd.format != SPEC_FMT_LLAMA_BATCHED_BENCH && b->cmd.format != SPEC_FMT_LLAMA_BATCHED_JSONL)
				spec_lerr(ld, rn, ip, "format_row applies to llama-batched-bench formats");
			else if (sscanf(b->cmd.format_row, "%u,%u,%u%c", &a, &c, &d, &tail) != 3)
				spec_lerr(ld, rn, ip, "format_row: expected PP,TG,B, got '%s'", b->cmd.format_row);
		}
		const char *const *fixed;
		size_t nf;
		fmt_metrics(b->cmd.format, &fixed, &nf);
		for (size_t i = 0; i < b->cmd.n_metrics; i++)
			for (size_t j = 0; j < nf; j++)
				if (!strcmp(fixed[j], b->cmd.metrics[i].name))
					spec_lerr_at(ld, b->cmd.metrics[i].pos, ip,
						     "metric '%s' is also produced by format '%s'", fixed[j],
						     spec_format_names[b->cmd.format]);
	} else {
		const char *extra[] = { "name", bench_kinds[which], NULL };
		spec_check_keys(ld, it, ip, spec_cmd_fields, extra);
		for (const struct spec_field *f = spec_cmd_fields; f->key; f++) {
			yaml_node_t *kn = NULL;
			for (yaml_node_pair_t *p = it->data.mapping.pairs.start; p < it->data.mapping.pairs.top; p++) {
				const char *k = spec_scalar(spec_node(ld, p->key));
				if (k && !strcmp(k, f->key))
					kn = spec_node(ld, p->key);
			}
			if (kn)
				spec_lerr(ld, kn, ip, "'%s' applies to command benchmarks, not %s ones", f->key,
					  bench_kinds[which]);
		}
		char *kp = spec_path_join(ip, bench_kinds[which]);
		if (b->kind == SPEC_BENCH_LOAD) {
			load_defaults(&b->load);
			spec_parse_fields(ld, kinds[1], kp, &b->load, spec_load_fields, NULL);
			if (kinds[1]->type == YAML_MAPPING_NODE)
				load_post(ld, kinds[1], kp, &b->load);
		} else {
			kernel_defaults(&b->kernel);
			spec_parse_fields(ld, kinds[2], kp, &b->kernel, spec_kernel_fields, NULL);
			if (kinds[2]->type == YAML_MAPPING_NODE)
				kernel_post(ld, kinds[2], kp, &b->kernel);
		}
		free(kp);
	}
	compute_metric_names(b);
}

static void parse_benches(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f)
{
	struct spec *s = base;
	if (!want_seq(ld, v, path))
		return;
	size_t n = seq_len(v);
	if (!n) {
		spec_lerr(ld, v, path, "needs at least one benchmark");
		return;
	}
	s->benches = xcalloc(n, sizeof(*s->benches));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq_item(ld, v, i);
		char *ip = spec_path_index(path, i);
		if (want_map(ld, it, ip))
			parse_one_bench(ld, it, ip, &s->benches[s->n_benches++]);
		free(ip);
	}
}

static json_t *dump_benches(const void *base, const struct spec_field *f)
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

/* ---- engine ---- */

static bool strv_has(const struct rt_strv *v, const char *needle)
{
	for (size_t i = 0; i < v->n; i++)
		if (strstr(v->v[i], needle))
			return true;
	return false;
}

static void parse_engine(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			 const struct spec_field *f)
{
	struct spec_engine *e = &((struct spec *)base)->engine;
	if (!want_map(ld, v, path))
		return;
	e->present = true;
	e->pos = spec_node_pos(v);
	e->host = xstrdup("127.0.0.1");
	e->ready_http = xstrdup("/health");
	e->ready_timeout_s = 300;
	e->identity_http = xstrdup("/v1/models");
	e->stop_grace_s = 10;
	e->log_cap_bytes = (size_t)64 << 20;
	spec_parse_fields(ld, v, path, e, spec_engine_fields, NULL);
	yaml_node_t *cn = spec_map_get(ld, v, "command");
	if (cn && cn->type == YAML_SEQUENCE_NODE && e->command.n == 0)
		spec_lerr(ld, cn, "engine.command", "an empty argv");
	bool uses = strv_has(&e->command, "{nonce}");
	for (size_t i = 0; i < e->env.n; i++)
		uses |= e->env.v[i].value && strstr(e->env.v[i].value, "{nonce}");
	yaml_node_t *nn = spec_map_get(ld, spec_map_get(ld, v, "identity"), "nonce");
	if (!nn)
		e->nonce_check = uses;
	else if (e->nonce_check && !uses)
		spec_lerr(ld, nn, "engine.identity.nonce",
			  "true, but engine.command and engine.env never pass {nonce}");
}

static json_t *dump_engine(const void *base, const struct spec_field *f)
{
	const struct spec_engine *e = &((const struct spec *)base)->engine;
	return e->present ? spec_fields_json(e, spec_engine_fields) : NULL;
}

/* ---- objective and constraints ---- */

static void parse_objective_metric(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
				   const struct spec_field *f)
{
	struct spec_objective *o = base;
	const char *t = spec_want_scalar(ld, v, path, "benchmark.metric");
	if (!t)
		return;
	o->pos = spec_node_pos(v);
	const char *dot = strchr(t, '.');
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
	{ "goal", SF_ENUM, O(struct spec_objective, goal), .names = spec_goal_names,
	  .help = "max or min; default from the metric's direction" },
	{ "min_gain", SF_FRAC, O(struct spec_objective, min_gain), .help = "smallest gain worth keeping" },
	{ 0 }
};

static void parse_objective(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			    const struct spec_field *f)
{
	struct spec *s = base;
	s->objective.min_gain = 0.01;
	s->objective.pos = spec_node_pos(v);
	spec_parse_fields(ld, v, path, &s->objective, spec_objective_fields, NULL);
	ld->goal_given = spec_map_get(ld, v, "goal") != NULL;
}

static json_t *dump_objective(const void *base, const struct spec_field *f)
{
	return spec_fields_json(&((const struct spec *)base)->objective, spec_objective_fields);
}

static const char *const op_names[] = { "<=", "<", ">=", ">" };

static bool constraint_value(const char *s, double *out)
{
	double v;
	const char *u;
	if (!spec_split_num(s, &v, &u))
		return false;
	if (!*u) {
		*out = v;
		return true;
	}
	if (!strcmp(u, "%")) {
		*out = v / 100;
		return true;
	}
	static const char *const rates[] = { "/s", "req/s", "tok/s", "tokens/s" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(rates); i++)
		if (!strcmp(u, rates[i])) {
			*out = v;
			return true;
		}
	return spec_parse_duration(s, out);
}

static void parse_constraints(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			      const struct spec_field *f)
{
	struct spec *s = base;
	if (!want_seq(ld, v, path))
		return;
	size_t n = seq_len(v);
	s->constraints = xcalloc(n ? n : 1, sizeof(*s->constraints));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq_item(ld, v, i);
		char *ip = spec_path_index(path, i);
		const char *t = spec_want_scalar(ld, it, ip, "a constraint like 'bench.metric <= 4s'");
		if (!t) {
			free(ip);
			continue;
		}
		const char *p = t;
		while (isspace((unsigned char)*p))
			p++;
		const char *r0 = p;
		while (*p && !isspace((unsigned char)*p) && !strchr("<>=!", *p))
			p++;
		char *ref = xstrndup(r0, (size_t)(p - r0));
		while (isspace((unsigned char)*p))
			p++;
		int op = -1;
		if (!strncmp(p, "<=", 2))
			op = SPEC_OP_LE, p += 2;
		else if (!strncmp(p, ">=", 2))
			op = SPEC_OP_GE, p += 2;
		else if (*p == '<' && p[1] != '>')
			op = SPEC_OP_LT, p += 1;
		else if (*p == '>')
			op = SPEC_OP_GT, p += 1;
		const char *dot = strchr(ref, '.');
		double val = 0;
		while (isspace((unsigned char)*p))
			p++;
		char *vs = xstrdup(p);
		size_t vl = strlen(vs);
		while (vl && isspace((unsigned char)vs[vl - 1]))
			vs[--vl] = '\0';
		if (!dot || dot == ref || !dot[1])
			spec_lerr(ld, it, ip, "expected 'benchmark.metric OP value', got '%s'", t);
		else if (op < 0)
			spec_lerr(ld, it, ip, "expected an operator (<=, <, >= or >) after '%s' in '%s'", ref, t);
		else if (!*vs)
			spec_lerr(ld, it, ip, "missing value after '%s' in '%s'", op_names[op], t);
		else if (!constraint_value(vs, &val))
			spec_lerr(ld, it, ip, "bad value '%s' (a number, optionally with s, ms, us, %%, or /s)", vs);
		else {
			struct spec_constraint *c = &s->constraints[s->n_constraints++];
			c->text = xstrdup(t);
			c->bench = xstrndup(ref, (size_t)(dot - ref));
			c->metric = xstrdup(dot + 1);
			c->op = (enum spec_op)op;
			c->value = val;
			c->pos = spec_node_pos(it);
		}
		free(vs);
		free(ref);
		free(ip);
	}
}

static json_t *dump_constraints(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_constraints; i++) {
		const struct spec_constraint *c = &s->constraints[i];
		char num[40];
		spec_shortest(c->value, num, sizeof(num));
		char *t = xasprintf("%s.%s %s %s", c->bench, c->metric, op_names[c->op], num);
		json_array_append_new(a, json_string(t));
		free(t);
	}
	return a;
}

/* ---- repeats, gate, log events ---- */

const struct spec_field spec_repeats_fields[] = {
	{ "min", SF_INT, O(struct spec, repeats.min), 0, FL_LO, 1, .help = "samples per arm at least" },
	{ "max", SF_INT, O(struct spec, repeats.max), 0, FL_LO, 1, .help = "samples per arm at most" },
	{ "confidence", SF_DBL, O(struct spec, repeats.confidence), 0, FL_LOX | FL_HIX, 0, 1,
	  .help = "confidence of the interval that decides" },
	{ "warmup", SF_INT, O(struct spec, repeats.warmup), 0, FL_LO, 0, .help = "warm-up runs per arm" },
	{ "interleave", SF_BOOL, O(struct spec, repeats.interleave), .help = "alternate A and B runs" },
	{ 0 }
};

const struct spec_field spec_gate_fields[] = {
	{ "min_accuracy", SF_FRAC, O(struct spec_gate, min_accuracy), .help = "absolute accuracy bound" },
	{ "wilson_lower", SF_BOOL, O(struct spec_gate, use_wilson_lower),
	  .help = "compare the Wilson lower bound" },
	{ "max_drop", SF_FRAC, O(struct spec_gate, max_drop), .help = "largest drop vs baseline" },
	{ "alpha", SF_DBL, O(struct spec_gate, alpha), 0, FL_LOX | FL_HIX, 0, 1,
	  .help = "significance of the paired test" },
	{ "min_identical", SF_FRAC, O(struct spec_gate, min_identical), .help = "identical-answer rate bound" },
	{ "max_failed", SF_FRAC, O(struct spec_gate, max_failed), .help = "failed-request fraction that errors" },
	{ "format", SF_ENUM, O(struct spec_gate, format), .names = spec_gsm8k_format_names,
	  .help = "gsm8k, gsm8k_cot or chat" },
	{ "extract", SF_ENUM, O(struct spec_gate, extract), .names = spec_extract_names,
	  .help = "flexible or strict" },
	{ "api", SF_ENUM, O(struct spec_gate, api), .names = spec_api_names, .help = "completions or chat" },
	{ "concurrency", SF_INT, O(struct spec_gate, concurrency), 0, FL_LO, 1, .help = "requests in flight" },
	{ "limit", SF_INT, O(struct spec_gate, limit), 0, FL_LO, 0, .help = "questions; 0 = all 1319" },
	{ "offset", SF_INT, O(struct spec_gate, offset), 0, FL_LO, 0, .help = "first question" },
	{ "seed", SF_U64, O(struct spec_gate, seed), .help = "subset seed; 0 = in order" },
	{ "num_fewshot", SF_INT, O(struct spec_gate, num_fewshot), 0, FL_LO, 0, .help = "few-shot examples" },
	{ "max_tokens", SF_INT, O(struct spec_gate, max_tokens), 0, FL_LO, 1, .help = "per answer" },
	{ "dataset", SF_STR, O(struct spec_gate, dataset), 0, FL_PATH | FL_OMIT0, .help = "GSM8K test JSONL" },
	{ "endpoint", SF_STR, O(struct spec_gate, endpoint), 0, FL_TMPL | FL_OMIT0,
	  .help = "base URL; default the engine" },
	{ "model", SF_STR, O(struct spec_gate, model), 0, FL_OMIT0, .help = "model name sent" },
	{ "timeout", SF_DUR, O(struct spec_gate, request_timeout_s), 0, FL_LOX, 0,
	  .help = "per request (seconds)" },
	{ 0 }
};

static const struct spec_field gate_outer_fields[] = {
	{ "gsm8k", SF_CUSTOM, 0, 0, FL_REQ, .help = "GSM8K gate settings" },
	{ 0 }
};

static void parse_gate(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	struct spec *s = base;
	struct spec_gate *g = &s->gate;
	if (!want_map(ld, v, path))
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

static json_t *dump_gate(const void *base, const struct spec_field *f)
{
	const struct spec_gate *g = &((const struct spec *)base)->gate;
	if (!g->present)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "gsm8k", spec_fields_json(g, spec_gate_fields));
	return o;
}

static void parse_log_events(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			     const struct spec_field *f)
{
	struct spec *s = base;
	if (!want_map(ld, v, path))
		return;
	spec_check_keys(ld, v, path, NULL, NULL);
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	s->log_events = xcalloc(n ? n : 1, sizeof(*s->log_events));
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
		const char *k = spec_scalar(kn);
		if (!k || spec_map_get(ld, v, k) != vn)
			continue;
		char *kp = spec_path_join(path, k);
		const char *re;
		if (!ident_ok(k, "-"))
			spec_lerr(ld, kn, path, "'%s': an event name may hold only letters, digits, _ and -", k);
		else if ((re = spec_want_scalar(ld, vn, kp, "a regex")) && check_regex(ld, vn, kp, re)) {
			struct spec_log_event *e = &s->log_events[s->n_log_events++];
			e->name = xstrdup(k);
			e->regex = xstrdup(re);
			e->pos = spec_node_pos(kn);
		}
		free(kp);
	}
}

static json_t *dump_log_events(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *o = json_object();
	for (size_t i = 0; i < s->n_log_events; i++)
		json_object_set_new(o, s->log_events[i].name, json_string(s->log_events[i].regex));
	return o;
}

/* ---- variants ---- */

const struct spec_field spec_table_fields[] = {
	{ "file", SF_STR, O(struct var_def_table, file), 0, FL_REQ | FL_PATH, .help = "the table file" },
	{ "format", SF_ENUM, O(struct var_def_table, format), .names = spec_tblfmt_names,
	  .help = "auto (from the extension), json, csv or yaml" },
	{ "key_columns", SF_STRV, O(struct var_def_table, key_columns), 0, FL_OMIT0,
	  .help = "CSV: the columns that form the key" },
	{ 0 }
};

const struct spec_field spec_patch_fields[] = {
	{ "file", SF_STR, O(struct var_def_patch, file), 0, FL_REQ | FL_PATH, .help = "unified diff" },
	{ "dir", SF_STR, O(struct var_def_patch, dir), 0, FL_REQ | FL_PATH, .help = "folder it applies to" },
	{ 0 }
};

const struct spec_field spec_file_fields[] = {
	{ "target", SF_STR, O(struct var_def_file, target), 0, FL_REQ | FL_PATH, .help = "file to replace" },
	{ "source", SF_STR, O(struct var_def_file, source), 0, FL_REQ | FL_PATH, .help = "the variant's copy" },
	{ 0 }
};

static const struct spec_field variant_keys[] = {
	{ "name", SF_CUSTOM }, { "description", SF_CUSTOM }, { "build", SF_CUSTOM },
	{ "table", SF_CUSTOM }, { "flag", SF_CUSTOM }, { "env", SF_CUSTOM },
	{ "patch", SF_CUSTOM }, { "file", SF_CUSTOM }, { 0 }
};
static const char *const var_kinds[] = { "table", "flag", "env", "patch", "file" };
static const char *const tbl_ops[] = { "set", "replace", "delete" };

static void parse_var_table(struct spec_ld *ld, yaml_node_t *tv, const char *tp, struct var_def_table *t)
{
	if (!want_map(ld, tv, tp))
		return;
	spec_parse_fields(ld, tv, tp, t, spec_table_fields, tbl_ops);
	yaml_node_t *ops[3];
	int nops = 0, first = -1, second = -1;
	for (int i = 0; i < 3; i++) {
		ops[i] = spec_map_get(ld, tv, tbl_ops[i]);
		if (ops[i]) {
			nops++;
			if (first < 0)
				first = i;
			else if (second < 0)
				second = i;
		}
	}
	if (nops > 1) {
		spec_lerr(ld, ops[second], tp, "two changes in one variant ('%s' and '%s'); split them",
			  tbl_ops[first], tbl_ops[second]);
		return;
	}
	if (nops == 0) {
		spec_lerr(ld, tv, tp, "missing one of 'set', 'replace', 'delete'");
		return;
	}
	t->op = (enum var_table_op)first;
	yaml_node_t *on = ops[first];
	char *op = spec_path_join(tp, tbl_ops[first]);
	char buf[80];
	if (t->op == VAR_TBL_DELETE) {
		const char *k = spec_want_scalar(ld, on, op, "an entry key");
		if (k)
			t->key = xstrdup(k);
	} else if (on->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, on, op, "expected KEY: {fields}, got %s", spec_got(on, buf, sizeof(buf)));
	} else {
		size_t n = (size_t)(on->data.mapping.pairs.top - on->data.mapping.pairs.start);
		if (n == 0) {
			spec_lerr(ld, on, op, "expected one entry KEY: {fields}");
		} else if (n > 1) {
			yaml_node_pair_t *p = on->data.mapping.pairs.start;
			const char *k0 = spec_scalar(spec_node(ld, p[0].key));
			const char *k1 = spec_scalar(spec_node(ld, p[1].key));
			spec_lerr(ld, spec_node(ld, p[1].key), op,
				  "two changes in one variant ('%s' and '%s'); split them",
				  k0 ? k0 : "?", k1 ? k1 : "?");
		} else {
			yaml_node_pair_t *p = on->data.mapping.pairs.start;
			yaml_node_t *kn = spec_node(ld, p->key), *vn = spec_node(ld, p->value);
			const char *k = spec_want_scalar(ld, kn, op, "an entry key");
			char *kp = k ? spec_path_join(op, k) : NULL;
			if (k && vn->type != YAML_MAPPING_NODE)
				spec_lerr(ld, vn, kp, "expected a mapping of fields, got %s",
					  spec_got(vn, buf, sizeof(buf)));
			else if (k) {
				t->key = xstrdup(k);
				t->value = spec_node_json(ld, vn, kp, 0);
			}
			free(kp);
		}
	}
	free(op);
	if (t->format == VAR_TBL_AUTO && t->file) {
		const char *dot = strrchr(t->file, '.');
		if (dot && !strcmp(dot, ".json"))
			t->format = VAR_TBL_JSON;
		else if (dot && !strcmp(dot, ".csv"))
			t->format = VAR_TBL_CSV;
		else if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
			t->format = VAR_TBL_YAML;
		else
			spec_lerr(ld, spec_map_get(ld, tv, "file"), tp,
				  "cannot tell the format of '%s' from its name; give format: json, csv or yaml",
				  t->file);
	}
	if (t->format == VAR_TBL_CSV) {
		if (!t->key_columns.n)
			spec_lerr(ld, tv, tp, "a CSV table needs key_columns");
		else if (t->key) {
			size_t parts = 1;
			for (const char *c = t->key; *c; c++)
				parts += *c == ',';
			if (parts != t->key_columns.n)
				spec_lerr(ld, ops[first], tp, "key '%s' has %zu values but key_columns has %zu",
					  t->key, parts, t->key_columns.n);
		}
	} else if (t->key_columns.n) {
		spec_lerr(ld, spec_map_get(ld, tv, "key_columns"), tp, "key_columns applies to CSV tables only");
	}
}

static void parse_one_variant(struct spec_ld *ld, yaml_node_t *it, const char *ip, struct var_def *var)
{
	struct spec *s = ld->s;
	var->pos = spec_node_pos(it);
	spec_check_keys(ld, it, ip, variant_keys, NULL);
	yaml_node_t *nn = spec_map_get(ld, it, "name");
	if (!nn) {
		spec_lerr(ld, it, ip, "missing key 'name'");
	} else {
		char *np = spec_path_join(ip, "name");
		const char *name = spec_want_scalar(ld, nn, np, "a name");
		if (name && !ident_ok(name, "-.+:")) {
			spec_lerr(ld, nn, np, "'%s': a variant name may hold only letters, digits and _ - . + :",
				  name);
		} else if (name) {
			for (struct var_def *o = s->variants; o < var; o++)
				if (o->name && !strcmp(o->name, name)) {
					spec_lerr(ld, nn, np, "duplicate variant name '%s' (first at %d:%d)", name,
						  o->pos.line, o->pos.col);
					break;
				}
			var->name = xstrdup(name);
		}
		free(np);
	}
	yaml_node_t *dn = spec_map_get(ld, it, "description");
	if (dn && !spec_is_null(dn)) {
		char *dp = spec_path_join(ip, "description");
		const char *d = spec_want_scalar(ld, dn, dp, "a string");
		if (d)
			var->description = xstrdup(d);
		free(dp);
	}
	yaml_node_t *bn = spec_map_get(ld, it, "build");
	if (bn) {
		char *bp = spec_path_join(ip, "build");
		spec_parse_strv(ld, bn, bp, FL_TMPL, &var->build);
		free(bp);
	}
	yaml_node_t *kinds[5];
	int nk = 0, first = -1, second = -1;
	for (int k = 0; k < 5; k++) {
		kinds[k] = spec_map_get(ld, it, var_kinds[k]);
		if (kinds[k]) {
			nk++;
			if (first < 0)
				first = k;
			else if (second < 0)
				second = k;
		}
	}
	if (nk > 1) {
		spec_lerr(ld, it, ip, "two changes in one variant ('%s' and '%s'); split them into two variants",
			  var_kinds[first], var_kinds[second]);
		return;
	}
	if (nk == 0) {
		spec_lerr(ld, it, ip, "no change: give one of table, flag, env, patch, file");
		return;
	}
	var->kind = (enum var_kind)first;
	yaml_node_t *kv = kinds[first];
	char *kp = spec_path_join(ip, var_kinds[first]);
	switch (var->kind) {
	case VAR_KIND_TABLE:
		parse_var_table(ld, kv, kp, &var->table);
		break;
	case VAR_KIND_FLAG:
		spec_parse_strv(ld, kv, kp, FL_TMPL, &var->flag);
		if (kv->type == YAML_SEQUENCE_NODE && !var->flag.n)
			spec_lerr(ld, kv, kp, "an empty flag list changes nothing");
		if (!s->engine.present) {
			/* without an engine, flags go to the command benchmarks' argv */
			bool cmd = false;
			for (size_t i = 0; i < s->n_benches; i++)
				cmd |= s->benches[i].kind == SPEC_BENCH_COMMAND;
			if (!cmd)
				spec_lerr(ld, kv, kp,
					  "a flag variant changes a command line, and the spec has no engine and no command benchmark");
		}
		break;
	case VAR_KIND_ENV:
		spec_parse_envv(ld, kv, kp, FL_TMPL, &var->env);
		if (kv->type == YAML_MAPPING_NODE && kv->data.mapping.pairs.top == kv->data.mapping.pairs.start)
			spec_lerr(ld, kv, kp, "an empty env mapping changes nothing");
		break;
	case VAR_KIND_PATCH:
		if (want_map(ld, kv, kp))
			spec_parse_fields(ld, kv, kp, &var->patch, spec_patch_fields, NULL);
		break;
	case VAR_KIND_FILE:
		if (want_map(ld, kv, kp))
			spec_parse_fields(ld, kv, kp, &var->file, spec_file_fields, NULL);
		break;
	}
	free(kp);
}

static void parse_variants(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			   const struct spec_field *f)
{
	struct spec *s = base;
	if (spec_is_null(v))
		return;
	if (!want_seq(ld, v, path))
		return;
	size_t n = seq_len(v);
	s->variants = xcalloc(n ? n : 1, sizeof(*s->variants));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq_item(ld, v, i);
		char *ip = spec_path_index(path, i);
		if (want_map(ld, it, ip))
			parse_one_variant(ld, it, ip, &s->variants[s->n_variants++]);
		free(ip);
	}
}

static json_t *dump_variants(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_variants; i++) {
		const struct var_def *v = &s->variants[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(v->name));
		if (v->description)
			json_object_set_new(o, "description", json_string(v->description));
		json_t *k = NULL;
		switch (v->kind) {
		case VAR_KIND_TABLE: {
			k = spec_fields_json(&v->table, spec_table_fields);
			if (v->table.op == VAR_TBL_DELETE) {
				json_object_set_new(k, "delete", json_string(v->table.key));
			} else {
				json_t *e = json_object();
				json_object_set(e, v->table.key, v->table.value ? v->table.value : json_object());
				json_object_set_new(k, tbl_ops[v->table.op], e);
			}
			break;
		}
		case VAR_KIND_FLAG: {
			k = json_array();
			for (size_t j = 0; j < v->flag.n; j++)
				json_array_append_new(k, json_string(v->flag.v[j]));
			break;
		}
		case VAR_KIND_ENV: {
			k = json_object();
			for (size_t j = 0; j < v->env.n; j++)
				json_object_set_new(k, v->env.v[j].name,
						    v->env.v[j].value ? json_string(v->env.v[j].value) : json_null());
			break;
		}
		case VAR_KIND_PATCH:
			k = spec_fields_json(&v->patch, spec_patch_fields);
			break;
		case VAR_KIND_FILE:
			k = spec_fields_json(&v->file, spec_file_fields);
			break;
		}
		json_object_set_new(o, var_kinds[v->kind], k);
		if (v->build.n) {
			json_t *b = json_array();
			for (size_t j = 0; j < v->build.n; j++)
				json_array_append_new(b, json_string(v->build.v[j]));
			json_object_set_new(o, "build", b);
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- the top ---- */

const struct spec_field spec_top_fields[] = {
	{ "name", SF_STR, O(struct spec, name), 0, FL_REQ, .help = "campaign name" },
	{ "workdir", SF_CUSTOM, 0, 0, 0, .parse = noop_parse, .dump = dump_workdir,
	  .help = "folder relative paths resolve against; default the spec's folder" },
	{ "seed", SF_U64, O(struct spec, seed), .help = "seed for everything random" },
	{ "engine", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_engine, .dump = dump_engine,
	  .help = "a server started for every measurement" },
	{ "benchmarks", SF_CUSTOM, 0, 0, FL_REQ, .parse = parse_benches, .dump = dump_benches,
	  .help = "what is measured" },
	{ "objective", SF_CUSTOM, 0, 0, FL_REQ, .parse = parse_objective, .dump = dump_objective,
	  .help = "the metric to improve" },
	{ "constraints", SF_CUSTOM, 0, 0, 0, .parse = parse_constraints, .dump = dump_constraints,
	  .help = "bounds every kept change must respect" },
	{ "repeats", SF_SUB, .sub = spec_repeats_fields, .help = "sampling and decisions" },
	{ "gate", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = parse_gate, .dump = dump_gate,
	  .help = "accuracy gate" },
	{ "log_events", SF_CUSTOM, 0, 0, 0, .parse = parse_log_events, .dump = dump_log_events,
	  .help = "engine log regexes counted per iteration" },
	{ "variants", SF_CUSTOM, 0, 0, 0, .parse = parse_variants, .dump = dump_variants,
	  .help = "the changes to try, one each" },
	{ "strategy", SF_ENUM, O(struct spec, strategy), .names = agent_strategy_names,
	  .help = "list, greedy, coordinate, halving or llm" },
	{ "max_iterations", SF_INT, O(struct spec, max_iterations), 0, FL_LO, 0, .help = "0: no cap" },
	{ 0 }
};

void spec_defaults(struct spec *s)
{
	s->seed = 1;
	s->repeats.min = 3;
	s->repeats.max = 10;
	s->repeats.confidence = 0.95;
	s->repeats.interleave = true;
	s->strategy = AGENT_STRAT_LIST;
}

/* A reference bench.metric that must exist. */
static void check_ref(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *bench,
		      const char *metric)
{
	struct spec *s = ld->s;
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

void spec_post_validate(struct spec_ld *ld, yaml_node_t *root)
{
	struct spec *s = ld->s;
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
		free(p);
	}
	if (s->repeats.min > s->repeats.max) {
		yaml_node_t *rv = spec_map_get(ld, root, "repeats");
		spec_lerr(ld, rv ? rv : root, "repeats", "min (%d) is above max (%d)", s->repeats.min,
			  s->repeats.max);
	}
}
