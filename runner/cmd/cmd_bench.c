/*
 * `ratchet bench SUBCOMMAND`: run one benchmark by hand. `ratchet bench load`
 * drives an OpenAI-compatible endpoint with the built-in load generator
 * (runner/load.h), prints a vLLM-like summary (or JSON with --json), and
 * stores every request record in the database (iteration_id NULL).
 */
#include "runner/cmd/cmd.h"
#include "db/requests.h"
#include "runner/load/load.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every --slo VALUE (the option table keeps only the last one). */
static size_t collect_slos(int argc, char **argv, const char **out, size_t max)
{
	size_t n = 0;
	for (int i = 1; i < argc && n < max; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--slo") && i + 1 < argc)
			out[n++] = argv[++i];
		else if (!strncmp(argv[i], "--slo=", 6))
			out[n++] = argv[i] + 6;
	}
	return n;
}

/* "ttft_p95=4s,tpot_p99=50ms" -> slo entries appended to cfg. */
static int parse_slos(const char *text, struct spec_load *cfg, struct rt_sb *err)
{
	char *dup = xstrdup(text), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			rc = rt_errf(err, RT_EUSAGE, "--slo: '%s' is not METRIC=DURATION", tok);
			break;
		}
		*eq = 0;
		double lim;
		if (run_load_parse_duration(eq + 1, &lim)) {
			rc = rt_errf(err, RT_EUSAGE, "--slo %s: '%s' is not a duration (4s, 250ms)",
				     tok, eq + 1);
			break;
		}
		struct spec_slo probe = { tok, lim };
		struct run_load_result empty = { 0 };
		double v;
		if (run_load_slo_value(&empty, tok, &v)) {
			rc = rt_errf(err, RT_EUSAGE,
				     "--slo: unknown metric '%s' (use ttft, tpot, itl, e2el, ttft_sched "
				     "with _mean, _median, _p90, _p95, _p99 or nothing for every request)",
				     tok);
			break;
		}
		(void)probe;
		cfg->slo = xrealloc(cfg->slo, (cfg->n_slo + 1) * sizeof(*cfg->slo));
		cfg->slo[cfg->n_slo].metric = xstrdup(tok);
		cfg->slo[cfg->n_slo].limit = lim;
		cfg->n_slo++;
	}
	free(dup);
	return rc;
}

/* "1,3" or "1,2,3" -> a list of numbers. */
static int parse_list(const char *opt, const char *text, double **out, size_t *n,
		      struct rt_sb *err)
{
	char *dup = xstrdup(text), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(tok, &end);
		if (end == tok || *end || !(v > 0)) {
			rc = rt_errf(err, RT_EUSAGE, "--%s: '%s' is not a positive number", opt, tok);
			break;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = v;
	}
	free(dup);
	if (!rc && !*n)
		rc = rt_errf(err, RT_EUSAGE, "--%s: empty list", opt);
	return rc;
}

static void ms(char *out, size_t n, double s)
{
	if (isnan(s))
		snprintf(out, n, "%10s", "-");
	else
		snprintf(out, n, "%10.2f", s * 1e3);
}

static void print_summary(const struct run_load_result *r, const struct run_load_capacity *cap,
			  const char *endpoint)
{
	const char *names[RUN_LOAD_MAX_METRICS], *units[RUN_LOAD_MAX_METRICS];
	double v[RUN_LOAD_MAX_METRICS];
	run_load_metrics(r, cap, names, v, units, RUN_LOAD_MAX_METRICS);
	printf("============ Serving Benchmark Result ============\n");
	printf("%-40s %s\n", "Endpoint:", endpoint);
	printf("%-40s %d\n", "Successful requests:", r->completed);
	printf("%-40s %d\n", "Failed requests:", r->failed);
	printf("%-40s %.2f\n", "Benchmark duration (s):", r->duration_s);
	printf("%-40s %lld\n", "Total input tokens:", r->prompt_tokens_total);
	printf("%-40s %lld\n", "Total generated tokens:", r->output_tokens_total);
	printf("%-40s %.2f\n", "Request throughput (req/s):", v[0]);
	printf("%-40s %.2f\n", "Output token throughput (tok/s):", v[1]);
	printf("%-40s %.2f\n", "Total token throughput (tok/s):", v[2]);
	if (r->n_slo)
		printf("%-40s %.2f\n", "Request goodput (req/s):", v[3]);
	if (r->offered_rate > 0)
		printf("%-40s %.2f\n", "Offered rate (req/s):", r->offered_rate);
	if (r->deadline_hit)
		printf("%-40s %s\n", "Run deadline:", "reached (unfinished requests failed)");
	printf("---------------- Latencies (ms) ------------------\n");
	printf("%-12s %10s %10s %10s %10s %10s %10s\n", "metric", "mean", "median", "p90", "p95",
	       "p99", "max");
	static const char *const which[] = { "ttft", "tpot", "itl", "e2el", "ttft_sched",
					     "send_lag" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(which); i++) {
		struct run_load_dist d;
		run_load_dist(r, which[i], &d);
		char c[6][16];
		ms(c[0], 16, d.mean);
		ms(c[1], 16, d.median);
		ms(c[2], 16, d.p90);
		ms(c[3], 16, d.p95);
		ms(c[4], 16, d.p99);
		ms(c[5], 16, d.max);
		printf("%-12s %s %s %s %s %s %s\n", which[i], c[0], c[1], c[2], c[3], c[4], c[5]);
	}
	if (cap) {
		printf("---------------- Capacity search -----------------\n");
		for (size_t i = 0; i < cap->n_points; i++)
			printf("rate %8.3f req/s: %d/%d seeds pass, achieved %.3f req/s%s\n",
			       cap->points[i].rate, cap->points[i].n_pass, cap->points[i].n_seeds,
			       cap->points[i].achieved, cap->points[i].saturated ? " (saturated)" : "");
		printf("%-40s %.3f\n", "Max rate meeting every SLO (req/s):", cap->max_rate);
		printf("%-40s %.0f%% of seeds pass\n", "Confidence at the bound:",
		       cap->conf_bound * 100);
		if (cap->bracketed)
			printf("%-40s %.3f req/s, %.0f%% of seeds pass\n", "Next step:", cap->next_rate,
			       cap->conf_next * 100);
		else
			printf("%-40s %s\n", "Next step:", "none failed: the bound is only a lower bound");
		if (cap->saturation_rate > 0)
			printf("%-40s %.3f req/s\n", "Saturated from:", cap->saturation_rate);
	}
	int shown = 0;
	for (size_t i = 0; i < r->n_reqs && shown < 3; i++) {
		if (!r->reqs[i].warmup && !r->reqs[i].ok) {
			printf("failed request %d: %s\n", r->reqs[i].seq, r->reqs[i].error);
			shown++;
		}
	}
	for (size_t i = 0; i < r->n_reqs; i++) {
		if (r->reqs[i].usage_missing) {
			printf("note: the server sent no usage; output tokens counted from chunks\n");
			break;
		}
	}
	printf("==================================================\n");
}

static json_t *num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static void print_json(const struct run_load_result *r, const struct run_load_capacity *cap,
		       const char *endpoint, int stored)
{
	const char *names[RUN_LOAD_MAX_METRICS], *units[RUN_LOAD_MAX_METRICS];
	double v[RUN_LOAD_MAX_METRICS];
	size_t n = run_load_metrics(r, cap, names, v, units, RUN_LOAD_MAX_METRICS);
	json_t *o = json_object();
	json_object_set_new(o, "endpoint", json_string(endpoint));
	json_t *m = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(m, names[i], num(v[i]));
	json_object_set_new(o, "metrics", m);
	json_object_set_new(o, "duration_s", num(r->duration_s));
	json_object_set_new(o, "prompt_tokens", json_integer(r->prompt_tokens_total));
	json_object_set_new(o, "output_tokens", json_integer(r->output_tokens_total));
	struct run_load_dist d;
	run_load_dist(r, "send_lag", &d);
	json_object_set_new(o, "send_lag_max", num(d.max));
	json_object_set_new(o, "deadline_hit", json_boolean(r->deadline_hit));
	json_object_set_new(o, "stored_records", json_integer(stored));
	json_t *errs = json_array();
	for (size_t i = 0; i < r->n_reqs && json_array_size(errs) < 10; i++)
		if (!r->reqs[i].warmup && !r->reqs[i].ok)
			json_array_append_new(errs, json_string(r->reqs[i].error));
	json_object_set_new(o, "errors", errs);
	if (cap) {
		json_t *c = json_object();
		json_object_set_new(c, "max_rate", json_real(cap->max_rate));
		json_object_set_new(c, "next_rate", json_real(cap->next_rate));
		json_object_set_new(c, "conf_bound", json_real(cap->conf_bound));
		json_object_set_new(c, "conf_next", json_real(cap->conf_next));
		json_object_set_new(c, "bracketed", json_boolean(cap->bracketed));
		json_object_set_new(c, "saturation_rate", json_real(cap->saturation_rate));
		json_t *pts = json_array();
		for (size_t i = 0; i < cap->n_points; i++) {
			json_t *p = json_object();
			json_object_set_new(p, "rate", json_real(cap->points[i].rate));
			json_object_set_new(p, "n_seeds", json_integer(cap->points[i].n_seeds));
			json_object_set_new(p, "n_pass", json_integer(cap->points[i].n_pass));
			json_object_set_new(p, "achieved", json_real(cap->points[i].achieved));
			json_object_set_new(p, "saturated", json_boolean(cap->points[i].saturated));
			json_array_append_new(pts, p);
		}
		json_object_set_new(c, "points", pts);
		json_object_set_new(o, "capacity", c);
	}
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
	puts(s);
	free(s);
	json_decref(o);
}

static void on_progress(void *arg, double rate, uint64_t seed, const struct run_load_result *r,
			bool pass)
{
	const struct rt_ctx *ctx = arg;
	if (ctx->quiet)
		return;
	double v;
	run_load_slo_value(r, "ttft_p95", &v);
	fprintf(stderr, "ratchet: rate %.3f seed %llu: %d ok, %d failed, ttft_p95 %.1f ms: %s\n",
		rate, (unsigned long long)seed, r->completed, r->failed, v * 1e3,
		pass ? "pass" : "fail");
}

static int bench_load(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *endpoint = NULL, *api = "completions", *model = NULL, *pattern = NULL;
	const char *duration = NULL, *dataset = NULL, *slo_opt = NULL, *rates = NULL;
	const char *seeds = NULL, *timeout = NULL;
	long concurrency = 0, requests = 0, warmup = 0, prompt_tokens = 128, output_tokens = 128;
	long seed = 1;
	double rate = 0, burstiness = 1;
	bool prefill = false, ignore_eos = false, no_store = false;
	const struct rt_opt opts[] = {
		{ "endpoint", 'e', RT_OPT_STR, &endpoint, "URL", "base URL, e.g. http://127.0.0.1:8000 (required)" },
		{ "api", 0, RT_OPT_STR, &api, "API", "completions (default) or chat" },
		{ "model", 'm', RT_OPT_STR, &model, "NAME", "model name sent (default: \"default\")" },
		{ "concurrency", 'c', RT_OPT_INT, &concurrency, "N", "closed loop with N in flight (prefill: wave width; open loop: cap)" },
		{ "rate", 'r', RT_OPT_DBL, &rate, "R", "open loop at R requests/s" },
		{ "pattern", 0, RT_OPT_STR, &pattern, "P", "open-loop arrivals: poisson (default), gamma, constant" },
		{ "burstiness", 0, RT_OPT_DBL, &burstiness, "B", "gamma shape (1 = poisson, < 1 burstier)" },
		{ "prefill", 0, RT_OPT_FLAG, &prefill, NULL, "waves of --concurrency prompts released together, max_tokens 1" },
		{ "requests", 'n', RT_OPT_INT, &requests, "N", "measured requests" },
		{ "duration", 'd', RT_OPT_STR, &duration, "DUR", "measured duration instead (e.g. 60s, 5m)" },
		{ "warmup", 0, RT_OPT_INT, &warmup, "N", "warm-up requests, excluded from metrics" },
		{ "prompt-tokens", 0, RT_OPT_INT, &prompt_tokens, "L", "random prompt length in tokens (default 128)" },
		{ "output-tokens", 0, RT_OPT_INT, &output_tokens, "T", "max_tokens per request (default 128)" },
		{ "dataset", 0, RT_OPT_STR, &dataset, "FILE", "JSONL prompts: ShareGPT or {\"prompt\",\"max_tokens\"}" },
		{ "seed", 0, RT_OPT_INT, &seed, "S", "seed for prompts and the schedule (default 1)" },
		{ "slo", 0, RT_OPT_STR, &slo_opt, "M=DUR", "SLO, repeatable or comma-separated: ttft_p95=4s" },
		{ "rates", 0, RT_OPT_STR, &rates, "LO,HI", "SLO capacity search between these rates" },
		{ "seeds", 0, RT_OPT_STR, &seeds, "S1,S2", "capacity search: seeds per rate (default: --seed)" },
		{ "timeout", 0, RT_OPT_STR, &timeout, "DUR", "per-request timeout (default 600s)" },
		{ "ignore-eos", 0, RT_OPT_FLAG, &ignore_eos, NULL, "send ignore_eos: true (vLLM)" },
		{ "no-store", 0, RT_OPT_FLAG, &no_store, NULL, "do not store request records" },
		{ 0 },
	};
	static const struct rt_cmd_help help = {
		"ratchet bench load --endpoint URL [options]",
		"drive an OpenAI-compatible endpoint with streamed requests and report vLLM's serving metrics",
		"Without --rate it runs a closed loop (default --concurrency 1). Metrics follow vLLM's\n"
		"bench serve: ttft, tpot, itl, e2el (mean, median, p90, p95, p99; linear interpolation),\n"
		"plus ttft_sched (TTFT from the intended send time) and send_lag. Tokens come from the\n"
		"server's usage. With --rates and --slo it searches for the highest rate meeting every\n"
		"SLO. Every request record is stored in the database (table requests).\n"
		"exit codes: 0 ok, 2 usage error, 3 runtime error (including: no request succeeded)",
	};
	const char *slo_vals[64];
	size_t n_slo_vals = collect_slos(argc, argv, slo_vals, RT_ARRAY_SIZE(slo_vals));
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	(void)slo_opt;
	struct rt_sb err = RT_SB_INIT;
	struct spec_load cfg = { 0 };
	double *rate_list = NULL, *seed_list = NULL;
	size_t n_rates = 0, n_seeds = 0;
	code = RT_EXIT_USAGE;
	if (npos > 0) {
		rt_errf(&err, 0, "unexpected argument '%s'", argv[1]);
		goto usage;
	}
	if (!endpoint) {
		rt_errf(&err, 0, "--endpoint is required");
		goto usage;
	}
	if (!strcmp(api, "completions")) {
		cfg.api = SPEC_API_COMPLETIONS;
	} else if (!strcmp(api, "chat")) {
		cfg.api = SPEC_API_CHAT;
	} else {
		rt_errf(&err, 0, "--api: '%s' is not completions or chat", api);
		goto usage;
	}
	if (rate < 0 || concurrency < 0 || requests < 0 || warmup < 0 || prompt_tokens < 1 ||
	    output_tokens < 1 || !(burstiness > 0)) {
		rt_errf(&err, 0, "numbers must be positive");
		goto usage;
	}
	for (size_t i = 0; i < n_slo_vals; i++)
		if (parse_slos(slo_vals[i], &cfg, &err))
			goto usage;
	if (rates && parse_list("rates", rates, &rate_list, &n_rates, &err))
		goto usage;
	if (seeds && parse_list("seeds", seeds, &seed_list, &n_seeds, &err))
		goto usage;
	if (rates && !cfg.n_slo) {
		rt_errf(&err, 0, "--rates needs at least one --slo");
		goto usage;
	}
	if (prefill) {
		cfg.pattern = SPEC_LOAD_PREFILL;
		if (!concurrency)
			concurrency = 1;
	} else if (rate > 0 || rates) {
		cfg.pattern = SPEC_LOAD_POISSON;
		if (pattern && !strcmp(pattern, "gamma"))
			cfg.pattern = SPEC_LOAD_GAMMA;
		else if (pattern && !strcmp(pattern, "constant"))
			cfg.pattern = SPEC_LOAD_CONSTANT;
		else if (pattern && strcmp(pattern, "poisson")) {
			rt_errf(&err, 0, "--pattern: '%s' is not poisson, gamma or constant", pattern);
			goto usage;
		}
	} else {
		cfg.pattern = SPEC_LOAD_CLOSED;
		if (!concurrency)
			concurrency = 1;
	}
	if (duration && (run_load_parse_duration(duration, &cfg.duration_s) || !(cfg.duration_s > 0))) {
		rt_errf(&err, 0, "--duration: '%s' is not a duration", duration);
		goto usage;
	}
	cfg.request_timeout_s = 600;
	if (timeout && (run_load_parse_duration(timeout, &cfg.request_timeout_s) ||
			!(cfg.request_timeout_s > 0))) {
		rt_errf(&err, 0, "--timeout: '%s' is not a duration", timeout);
		goto usage;
	}
	if (!requests && !duration)
		requests = prefill ? concurrency : 100;
	cfg.concurrency = (int)concurrency;
	cfg.rate = rate;
	cfg.burstiness = burstiness;
	cfg.requests = (int)requests;
	cfg.warmup = (int)warmup;
	cfg.prompt_tokens = (int)prompt_tokens;
	cfg.output_tokens = (int)output_tokens;
	cfg.dataset = (char *)dataset;
	cfg.model = (char *)model;
	cfg.ignore_eos = ignore_eos;
	cfg.rates = rate_list;
	cfg.n_rates = n_rates;
	uint64_t seed_u[64];
	for (size_t i = 0; i < n_seeds && i < 64; i++)
		seed_u[i] = (uint64_t)seed_list[i];
	cfg.seeds = n_seeds ? seed_u : NULL;
	cfg.n_seeds = n_seeds < 64 ? n_seeds : 64;
	if (!cfg.n_seeds) {
		seed_u[0] = (uint64_t)seed;
		cfg.seeds = seed_u;
		cfg.n_seeds = 1;
	}

	code = RT_EXIT_RUNTIME;
	struct run_load_result res;
	struct run_load_capacity cap;
	const struct run_load_result *shown = NULL;
	bool have_cap = false, have_res = false;
	int stored = 0, rc;
	if (rates) {
		rc = run_load_capacity(&cfg, endpoint, model, NULL, on_progress, ctx, &cap, &err);
		if (rc)
			goto fail;
		have_cap = true;
		if (cap.max_rate > 0)
			shown = &cap.points[cap.bound_point].runs[0];
		else if (cap.n_points)
			shown = &cap.points[0].runs[0];
		for (size_t i = 0; i < cap.n_points && !no_store && ctx->db; i++) {
			for (int k = 0; k < cap.points[i].n_seeds; k++) {
				char label[96];
				snprintf(label, sizeof(label), "rate=%.4g seed=%llu", cap.points[i].rate,
					 (unsigned long long)cfg.seeds[k]);
				int n = load_store_requests(ctx->db, 0, "load", NULL, (int)i, label,
							&cap.points[i].runs[k], &err);
				if (n < 0)
					goto fail;
				stored += n;
			}
		}
	} else {
		rc = run_load_run(&cfg, endpoint, model, (uint64_t)seed, NULL, &res, &err);
		if (rc)
			goto fail;
		have_res = true;
		shown = &res;
		if (!no_store && ctx->db) {
			char label[96];
			if (cfg.pattern == SPEC_LOAD_CLOSED)
				snprintf(label, sizeof(label), "concurrency=%ld seed=%ld", concurrency, seed);
			else if (cfg.pattern == SPEC_LOAD_PREFILL)
				snprintf(label, sizeof(label), "prefill=%ld seed=%ld", concurrency, seed);
			else
				snprintf(label, sizeof(label), "rate=%.4g seed=%ld", rate, seed);
			stored = load_store_requests(ctx->db, 0, "load", NULL, 0, label, &res, &err);
			if (stored < 0)
				goto fail;
		}
	}
	if (ctx->json)
		print_json(shown, have_cap ? &cap : NULL, endpoint, stored);
	else
		print_summary(shown, have_cap ? &cap : NULL, endpoint);
	if (!ctx->quiet && !ctx->json && !no_store && ctx->db)
		fprintf(stderr, "ratchet: stored %d request records in %s\n", stored,
			ctx->db_path);
	code = shown->completed > 0 ? RT_EXIT_OK : RT_EXIT_RUNTIME;
	if (code)
		cmd_error(ctx, "bench load: no request succeeded (%s)",
			  shown->n_reqs ? shown->reqs[shown->n_reqs - 1].error : "none sent");
	goto out;
fail:
	cmd_error(ctx, "bench load: %s", err.buf);
out:
	if (have_res)
		run_load_result_release(&res);
	if (have_cap)
		run_load_capacity_release(&cap);
	goto done;
usage:
	cmd_error(ctx, "bench load: %s", err.buf);
	fprintf(stderr, "usage: %s\n", help.usage);
done:
	for (size_t i = 0; i < cfg.n_slo; i++)
		free(cfg.slo[i].metric);
	free(cfg.slo);
	free(rate_list);
	free(seed_list);
	rt_sb_release(&err);
	return code;
}

/* The subcommands of `ratchet bench`. */
static const struct {
	const char *name;                          /* what the user types */
	int (*fn)(int, char **, struct rt_ctx *);  /* argv[0] is the subcommand */
	const char *summary;                       /* one line */
} subs[] = {
	{ "load", bench_load, "streamed load against an OpenAI-compatible endpoint" },
};

int cmd_bench(int argc, char **argv, struct rt_ctx *ctx)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		FILE *out = argc < 2 ? stderr : stdout;
		fprintf(out, "usage: ratchet bench SUBCOMMAND [options]\n\nsubcommands:\n");
		for (size_t i = 0; i < RT_ARRAY_SIZE(subs); i++)
			fprintf(out, "  %-8s %s\n", subs[i].name, subs[i].summary);
		return argc < 2 ? RT_EXIT_USAGE : RT_EXIT_OK;
	}
	for (size_t i = 0; i < RT_ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1, ctx);
	const char *names[RT_ARRAY_SIZE(subs)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(subs); i++)
		names[i] = subs[i].name;
	const char *dym = rt_did_you_mean(argv[1], names, RT_ARRAY_SIZE(names));
	if (dym)
		cmd_error(ctx, "bench: unknown subcommand '%s' (did you mean '%s'?)", argv[1], dym);
	else
		cmd_error(ctx, "bench: unknown subcommand '%s'", argv[1]);
	return RT_EXIT_USAGE;
}
