/*
 * `ratchet bench load` speaking vLLM's `vllm bench serve` (cmd_bench.h):
 * its flags, with their meaning and defaults, mapped onto the load
 * generator's configuration, and its result file written by
 * run_load_vllm_result. Followed: vllm/benchmarks/serve.py of vLLM's main
 * branch at commit 009e6d4a1cd6 and vllm/benchmarks/datasets/arg_utils.py at
 * 237145ea190a:
 *   --num-prompts 1000, --request-rate inf (every request at time 0;
 *   otherwise poisson, or gamma with shape --burstiness, inf: constant gaps),
 *   --max-concurrency none (a cap on requests in flight: the rest wait at the
 *   client), --dataset-name random with --random-input-len 1024 and
 *   --random-output-len 128 and ignore_eos (vLLM sets it for random data),
 *   sharegpt (the reply's length as max_tokens) and custom (JSONL prompts;
 *   vLLM's --custom-output-len 256), --percentile-metrics ttft,tpot,itl,
 *   --metric-percentiles 99, --goodput KEY:MS ... (ttft, tpot, e2el),
 *   --metadata KEY=VALUE ..., --save-result, --save-detailed,
 *   --append-result, --result-dir, --result-filename, --label; and the
 *   connection: --base-url, or --host 127.0.0.1 and --port 8000, joined with
 *   --endpoint PATH (default /v1/completions; ratchet's --endpoint is a base
 *   URL, so a value starting with / is vLLM's path), --backend (openai,
 *   vllm: completions; openai-chat: chat) and its older name --endpoint-type,
 *   --tokenizer (taken; ratchet counts tokens from the server's usage).
 * vLLM's defaults apply to a command line with vLLM's flags and none of
 * ratchet's loop flags (--rate, --concurrency, --prefill, --pattern,
 * --requests, --duration); otherwise ratchet's own defaults hold and vLLM's
 * flags set what they name. ratchet has no tokenizer: prompt lengths are
 * calibrated against the server's usage, ShareGPT replies are counted in
 * words, and datasets are read in file order (vLLM shuffles with its seed).
 */
#include "runner/cmd/cmd_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Is argv[i] an option (not a value)? "-" followed by a letter, as argparse
 * sees it: "-1" is a value. */
static bool is_opt(const char *s)
{
	return s[0] == '-' && s[1] && (s[1] == '-' || !(s[1] >= '0' && s[1] <= '9'));
}

void cmd_bench_take_multi(struct cmd_bload *a, int *argc, char **argv)
{
	static const char *const names[] = { "--goodput", "--metadata" };
	const char ***lists[] = { &a->goodput, &a->metadata };
	size_t *counts[] = { &a->n_goodput, &a->n_metadata };
	for (size_t k = 0; k < RT_ARRAY_SIZE(names); k++)
		*lists[k] = xcalloc((size_t)*argc + 1, sizeof(char *));
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		size_t k = 0, nl = 0;
		for (; k < RT_ARRAY_SIZE(names); k++) {
			nl = strlen(names[k]);
			if (!strncmp(argv[i], names[k], nl) && (!argv[i][nl] || argv[i][nl] == '='))
				break;
		}
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (k == RT_ARRAY_SIZE(names)) {
			argv[out++] = argv[i];
			continue;
		}
		size_t before = *counts[k];
		if (argv[i][nl] == '=')
			(*lists[k])[(*counts[k])++] = argv[i] + nl + 1;
		else
			while (i + 1 < *argc && !is_opt(argv[i + 1]))
				(*lists[k])[(*counts[k])++] = argv[++i];
		if (*counts[k] == before && k == 0)
			a->multi_empty = "--goodput";
	}
	argv[out] = NULL;
	*argc = out;
}

/* --goodput ttft:500 tpot:50 e2el:2000 -> per-request SLOs, added to the
 * slo option's (the goodput counts requests meeting all of them, as vLLM's). */
static int take_goodput(struct cmd_bload *a, struct rt_sb *err)
{
	static const char *const keys[] = { "ttft", "tpot", "e2el" };
	if (a->multi_empty)
		return rt_errf(err, RT_EUSAGE, "%s needs at least one KEY:MS value", a->multi_empty);
	struct rt_sb slo = RT_SB_INIT;
	rt_sb_adds(&slo, spec_cli_get(&a->cli, "slo") ? spec_cli_get(&a->cli, "slo") : "");
	int rc = 0;
	for (size_t i = 0; i < a->n_goodput && !rc; i++) {
		const char *g = a->goodput[i], *colon = strchr(g, ':');
		char *key = colon ? xstrndup(g, (size_t)(colon - g)) : NULL;
		double ms;
		int known = -1;
		for (size_t k = 0; key && k < RT_ARRAY_SIZE(keys); k++)
			if (!strcmp(key, keys[k]))
				known = (int)k;
		if (!colon || rt_parse_number(colon + 1, &ms))
			rc = rt_errf(err, RT_EUSAGE, "--goodput: '%s' is not KEY:VALUE (a metric name "
				     "and a number in milliseconds)", g);
		else if (known < 0)
			rc = rt_errf(err, RT_EUSAGE, "--goodput: invalid metric name '%s' (ttft, tpot, e2el)",
				     key);
		else if (ms < 0)
			rc = rt_errf(err, RT_EUSAGE, "--goodput %s: the value must not be negative", key);
		else /* a bare name: every request's own bound */
			rt_sb_addf(&slo, "%s%s=%sms", slo.len ? "," : "", key, colon + 1);
		free(key);
	}
	if (!rc && a->n_goodput)
		spec_cli_set(&a->cli, "slo", slo.buf);
	rt_sb_release(&slo);
	return rc;
}

/* --metric-percentiles 25,50,99.9 and --percentile-metrics, checked. */
static int take_percentiles(struct cmd_bload *a, struct rt_sb *err)
{
	if (a->pct_metrics && run_load_vllm_check_metrics(a->pct_metrics, err))
		return RT_EUSAGE;
	for (size_t i = 0; i < a->n_metadata; i++)
		if (!strchr(a->metadata[i], '='))
			return rt_errf(err, RT_EUSAGE, "--metadata: '%s' is not KEY=VALUE", a->metadata[i]);
	if (!a->metric_pcts)
		return 0;
	char *dup = xstrdup(a->metric_pcts), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		double p;
		if (rt_parse_number(t, &p) || p < 0 || p > 100) {
			rc = rt_errf(err, RT_EUSAGE, "--metric-percentiles: '%s' is not a percentile "
				     "(0 to 100)", t);
			break;
		}
		a->pcts = xrealloc(a->pcts, (a->n_pcts + 1) * sizeof(*a->pcts));
		a->pcts[a->n_pcts++] = p;
	}
	free(dup);
	if (!rc && !a->n_pcts)
		rc = rt_errf(err, RT_EUSAGE, "--metric-percentiles: empty list");
	return rc;
}

static bool given(const struct cmd_bload *a, const char *key)
{
	return spec_cli_get(&a->cli, key) != NULL;
}

/* key given as the number v, as if typed. */
static void set_num(struct cmd_bload *a, const char *key, double v)
{
	char num[40];
	if (isinf(v))
		snprintf(num, sizeof(num), "inf");
	else
		snprintf(num, sizeof(num), "%.17g", v);
	spec_cli_set(&a->cli, key, num);
}

/* --dataset-name and what goes with it. vllm_defaults: no ratchet loop flag. */
static int take_dataset(struct cmd_bload *a, bool vllm_defaults, struct rt_sb *err)
{
	static const char *const names[] = { "random", "sharegpt", "custom" };
	const char *name = a->dataset_name;
	if (a->dataset_path && given(a, "dataset"))
		return rt_errf(err, RT_EUSAGE, "give --dataset or --dataset-path, not both");
	if (a->dataset_path)
		spec_cli_set(&a->cli, "dataset", a->dataset_path);
	const char *dataset = spec_cli_get(&a->cli, "dataset");
	if (!name && !dataset && vllm_defaults)
		name = "random";
	if (!name)
		return 0;
	size_t k = 0;
	while (k < RT_ARRAY_SIZE(names) && strcmp(name, names[k]))
		k++;
	if (k == RT_ARRAY_SIZE(names)) {
		const char *dym = rt_did_you_mean(name, names, RT_ARRAY_SIZE(names));
		return rt_errf(err, RT_EUSAGE, "--dataset-name: '%s' is not random, sharegpt or custom%s%s%s",
			       name, dym ? " (did you mean '" : "", dym ? dym : "", dym ? "'?)" : "");
	}
	if (k == 0) {
		if (dataset)
			return rt_errf(err, RT_EUSAGE, "cannot use the 'random' dataset with a dataset "
				       "file (%s): give --dataset-name sharegpt or custom", dataset);
		spec_cli_set(&a->cli, "ignore_eos", "true"); /* vLLM does for random data */
		if (!given(a, "prompt_tokens"))
			spec_cli_set(&a->cli, "prompt_tokens", "1024");
		if (!given(a, "output_tokens"))
			spec_cli_set(&a->cli, "output_tokens", "128");
	} else if (!dataset) {
		return rt_errf(err, RT_EUSAGE, "--dataset-name %s needs --dataset-path FILE", name);
	} else if (k == 2) {
		a->default_max_tokens = 256; /* vLLM's --custom-output-len */
	}
	return 0;
}

/* A ratchet option and its vLLM twin both given? */
static int both(bool mine, bool theirs, const char *m, const char *t, struct rt_sb *err)
{
	return mine && theirs ? rt_errf(err, RT_EUSAGE, "give %s or %s, not both", m, t) : 0;
}

/* The API a --backend (or --endpoint-type) names; -1 with err when ratchet does not speak it. */
static int backend_api(const char *b, struct rt_sb *err)
{
	if (!strcmp(b, "vllm") || !strcmp(b, "openai"))
		return SPEC_API_COMPLETIONS;
	if (!strcmp(b, "openai-chat"))
		return SPEC_API_CHAT;
	rt_errf(err, RT_EUSAGE, "--backend %s: ratchet's load generator speaks vllm and openai "
		"(/v1/completions) and openai-chat (/v1/chat/completions)", b);
	return -1;
}

/* The API a vLLM --endpoint PATH asks, and its part before /completions or
 * /chat/completions (*prefix_len); -1 with err for any other path. */
static int path_api(const char *path, size_t *prefix_len, struct rt_sb *err)
{
	static const struct {
		const char *tail; /* the path's end */
		int api;          /* the API it is */
	} tails[] = { { "/chat/completions", SPEC_API_CHAT }, { "/completions", SPEC_API_COMPLETIONS } };
	size_t n = strlen(path);
	for (size_t i = 0; i < RT_ARRAY_SIZE(tails); i++) {
		size_t t = strlen(tails[i].tail);
		if (n >= t && !strcmp(path + n - t, tails[i].tail)) {
			*prefix_len = n - t;
			return tails[i].api;
		}
	}
	rt_errf(err, RT_EUSAGE, "--endpoint %s: a path ends in /completions or /chat/completions "
		"(ratchet asks those two APIs)", path);
	return -1;
}

/* vLLM's connection flags: --base-url, or --host and --port (vLLM's
 * defaults 127.0.0.1 and 8000), with --endpoint PATH joined to them (a
 * path, in vLLM: ratchet's --endpoint is the base URL), and --backend or
 * --endpoint-type for the API. */
static int take_connection(struct cmd_bload *a, struct rt_sb *err)
{
	const char *ep = spec_cli_get(&a->cli, "endpoint");
	bool path = ep && ep[0] == '/', server = a->base_url || a->host || a->port != CMD_BLOAD_UNSET;
	const char *backend = a->backend ? a->backend : a->endpoint_type;
	if (a->tokenizer)
		a->note = "--tokenizer is not used: ratchet counts tokens from the server's usage";
	if (a->backend && a->endpoint_type && strcmp(a->backend, a->endpoint_type))
		return rt_errf(err, RT_EUSAGE, "--backend %s and --endpoint-type %s disagree", a->backend,
			       a->endpoint_type);
	if (a->base_url && (a->host || a->port != CMD_BLOAD_UNSET))
		return rt_errf(err, RT_EUSAGE, "give --base-url or --host/--port, not both");
	if (ep && !path && server)
		return rt_errf(err, RT_EUSAGE, "--endpoint %s is a URL: give it alone, or --base-url "
			       "(or --host and --port) with --endpoint PATH", ep);
	if (a->port != CMD_BLOAD_UNSET && (a->port < 1 || a->port > 65535))
		return rt_errf(err, RT_EUSAGE, "--port %ld is not a port (1 to 65535)", a->port);
	int api = backend ? backend_api(backend, err) : -1;
	if (backend && api < 0)
		return RT_EUSAGE;
	if (path || server) {
		size_t prefix = 0;
		int papi = path ? path_api(ep, &prefix, err) : -1;
		if (path && papi < 0)
			return RT_EUSAGE;
		if (papi >= 0 && api >= 0 && papi != api)
			return rt_errf(err, RT_EUSAGE, "--endpoint %s is not the API of --backend %s", ep, backend);
		api = papi >= 0 ? papi : api;
		char *base = a->base_url ? xstrdup(a->base_url)
					 : xasprintf("http://%s:%ld", a->host ? a->host : "127.0.0.1",
						     a->port != CMD_BLOAD_UNSET ? a->port : 8000L);
		size_t bl = strlen(base);
		while (bl && base[bl - 1] == '/')
			bl--;
		char *url = xasprintf("%.*s%.*s", (int)bl, base, (int)prefix, path ? ep : "");
		spec_cli_set(&a->cli, "endpoint", url);
		free(url);
		free(base);
	}
	const char *given_api = spec_cli_get(&a->cli, "api");
	if (api >= 0 && given_api && strcmp(given_api, api == SPEC_API_CHAT ? "chat" : "completions"))
		return rt_errf(err, RT_EUSAGE, "--api %s is not the API of the vLLM flags (%s)", given_api,
			       api == SPEC_API_CHAT ? "chat" : "completions");
	if (api >= 0)
		spec_cli_set(&a->cli, "api", api == SPEC_API_CHAT ? "chat" : "completions");
	a->vllm |= path || server || backend || a->tokenizer;
	return 0;
}

int cmd_bench_vllm_config(struct cmd_bload *a, struct rt_sb *err)
{
	int crc = take_connection(a, err);
	if (crc)
		return crc;
	a->vllm |= a->num_prompts != CMD_BLOAD_UNSET || !isnan(a->request_rate) ||
		  a->max_concurrency != CMD_BLOAD_UNSET || a->dataset_name || a->dataset_path ||
		  a->random_input_len != CMD_BLOAD_UNSET || a->random_output_len != CMD_BLOAD_UNSET ||
		  a->pct_metrics || a->metric_pcts || a->n_goodput || a->multi_empty ||
		  a->n_metadata || a->save_result || a->save_detailed || a->append_result ||
		  a->result_dir || a->result_file || a->label;
	bool rate_given = !isnan(a->request_rate);
	if (!rate_given)
		a->request_rate = INFINITY; /* vLLM's default */
	if (!a->vllm)
		return 0;
	bool own_loop = given(a, "rate") || given(a, "concurrency") || a->prefill || given(a, "pattern") ||
			given(a, "requests") || given(a, "duration");
	int rc = both(given(a, "requests") || given(a, "duration"), a->num_prompts != CMD_BLOAD_UNSET,
		      "--requests/--duration", "--num-prompts", err);
	rc = rc ? rc : both(given(a, "rate") || a->prefill, rate_given, "--rate/--prefill", "--request-rate", err);
	rc = rc ? rc : both(given(a, "concurrency"), a->max_concurrency != CMD_BLOAD_UNSET, "--concurrency",
			    "--max-concurrency", err);
	rc = rc ? rc : both(given(a, "prompt_tokens"), a->random_input_len != CMD_BLOAD_UNSET,
			    "--prompt-tokens", "--random-input-len", err);
	if (rc)
		return rc;
	if (a->num_prompts != CMD_BLOAD_UNSET && a->num_prompts < 1)
		return rt_errf(err, RT_EUSAGE, "--num-prompts must be at least 1");
	if (!(a->request_rate > 0))
		return rt_errf(err, RT_EUSAGE, "--request-rate must be positive (inf: all at once)");
	if (a->max_concurrency != CMD_BLOAD_UNSET && a->max_concurrency < 1)
		return rt_errf(err, RT_EUSAGE, "--max-concurrency must be greater than 0");
	if (a->num_prompts != CMD_BLOAD_UNSET)
		set_num(a, "requests", (double)a->num_prompts);
	else if (!own_loop)
		set_num(a, "requests", 1000);
	if (rate_given || !own_loop)
		set_num(a, "rate", a->request_rate);
	if (a->max_concurrency != CMD_BLOAD_UNSET)
		set_num(a, "concurrency", (double)a->max_concurrency);
	if (a->random_input_len != CMD_BLOAD_UNSET)
		set_num(a, "prompt_tokens", (double)a->random_input_len);
	if (a->random_output_len != CMD_BLOAD_UNSET && !given(a, "output_tokens") &&
	    !given(a, "dataset") && !a->dataset_path)
		set_num(a, "output_tokens", (double)a->random_output_len);
	if ((rc = take_dataset(a, !own_loop, err)) || (rc = take_goodput(a, err)))
		return rc;
	return take_percentiles(a, err);
}

/* The run's description for the result file. */
static struct run_load_vllm_run vllm_run(const struct cmd_bload *a, const struct run_load_result *r,
					 char *date, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, n, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	bool open = a->cfg.pattern != SPEC_LOAD_CLOSED && a->cfg.pattern != SPEC_LOAD_PREFILL;
	size_t measured = 0;
	for (size_t i = 0; i < r->n_reqs; i++)
		measured += !r->reqs[i].warmup;
	return (struct run_load_vllm_run){
		.date = date,
		.backend = a->cfg.api == SPEC_API_CHAT ? "openai-chat" : "openai",
		.label = a->label,
		.model_id = a->cfg.model ? a->cfg.model : "default",
		.num_prompts = a->cfg.requests ? a->cfg.requests : (long)measured,
		.request_rate = open ? a->cfg.rate : INFINITY,
		.burstiness = a->cfg.burstiness,
		.max_concurrency = a->cfg.concurrency,
		.metadata = a->metadata,
		.n_metadata = a->n_metadata,
		.percentile_metrics = a->pct_metrics,
		.percentiles = a->pcts,
		.n_percentiles = a->n_pcts,
		.goodput = a->cfg.n_slo > 0,
		.detailed = a->save_detailed,
	};
}

int cmd_bench_vllm_save(const struct cmd_bload *a, const struct run_load_result *r, char **path,
		    struct rt_sb *err)
{
	*path = NULL;
	if (!a->save_result && !a->append_result)
		return 0;
	char date[32];
	struct run_load_vllm_run v = vllm_run(a, r, date, sizeof(date));
	char *name = a->result_file ? xstrdup(a->result_file) : run_load_vllm_filename(&v);
	int rc = a->result_dir ? rt_mkdirs(a->result_dir, err) : 0;
	*path = a->result_dir ? xasprintf("%s/%s", a->result_dir, name) : xstrdup(name);
	free(name);
	if (rc)
		return rc;
	json_t *o = run_load_vllm_result(r, &v);
	char *text = json_dumps(o, JSON_REAL_PRECISION(17)); /* json.dump's ", " and ": " */
	json_decref(o);
	if (a->append_result) {
		FILE *f = fopen(*path, "a");
		if (!f || fseek(f, 0, SEEK_END) || (ftell(f) > 0 && fputc('\n', f) == EOF) ||
		    fputs(text, f) == EOF)
			rc = rt_errf(err, RT_EIO, "%s: cannot append the result", *path);
		if (f && fclose(f) && !rc)
			rc = rt_errf(err, RT_EIO, "%s: cannot append the result", *path);
	} else {
		rc = rt_write_file_atomic(*path, text, strlen(text), 0644, err);
	}
	free(text);
	return rc;
}

void cmd_bench_vllm_release(struct cmd_bload *a)
{
	free(a->goodput);
	free(a->metadata);
	free(a->pcts);
}
