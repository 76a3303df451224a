/*
 * `ratchet bench SUBCOMMAND`: run one benchmark by hand. `ratchet bench load`
 * drives an OpenAI-compatible endpoint with the built-in load generator
 * (runner/load/load.h), prints a vLLM-like summary (or JSON with --json),
 * and stores every request record in the database (iteration_id NULL). SLO
 * names and durations are read as the spec reads them (spec_slo_parse,
 * rt_parse_duration). vLLM's `bench serve` flags and result file are
 * cmd_bench_vllm.c's (cmd_bench.h).
 */
#include "runner/cmd/cmd_bench.h"
#include "db/requests.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	printf("%-40s %.2f\n", "Mean input tokens (achieved):", run_load_mean_input(r));
	printf("%-40s %.2f\n", "Mean output tokens (achieved):", run_load_mean_output(r));
	printf("%-40s %.2f\n", "Request throughput (req/s):", v[SPEC_LM_REQUEST_THROUGHPUT]);
	printf("%-40s %.2f\n", "Output token throughput (tok/s):", v[SPEC_LM_OUTPUT_THROUGHPUT]);
	printf("%-40s %.2f\n", "Total token throughput (tok/s):", v[SPEC_LM_TOTAL_TOKEN_THROUGHPUT]);
	if (r->n_slo)
		printf("%-40s %.2f\n", "Request goodput (req/s):", v[SPEC_LM_GOODPUT]);
	if (r->offered_rate > 0)
		printf("%-40s %.2f\n", "Offered rate (req/s):", r->offered_rate);
	if (r->deadline_hit)
		printf("%-40s %s\n", "Run deadline:", "reached (unfinished requests failed)");
	printf("---------------- Latencies (ms) ------------------\n");
	printf("%-12s %10s %10s %10s %10s %10s %10s\n", "metric", "mean", "median", "p90", "p95",
	       "p99", "max");
	for (int q = 0; q < SPEC_LQ_N; q++) {
		const char *which = spec_load_q_name(q);
		struct run_load_dist d;
		run_load_dist(r, which, &d);
		char c[6][16];
		ms(c[0], 16, d.mean);
		ms(c[1], 16, d.median);
		ms(c[2], 16, d.p90);
		ms(c[3], 16, d.p95);
		ms(c[4], 16, d.p99);
		ms(c[5], 16, d.max);
		printf("%-12s %s %s %s %s %s %s\n", which, c[0], c[1], c[2], c[3], c[4], c[5]);
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
	json_object_set_new(o, "mean_input_tokens", num(run_load_mean_input(r)));
	json_object_set_new(o, "mean_output_tokens", num(run_load_mean_output(r)));
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

static const struct rt_cmd_help bload_help = {
	"ratchet bench load --endpoint URL [options]",
	"drive an OpenAI-compatible endpoint with streamed requests and report vLLM's serving metrics",
	"Without --rate it runs a closed loop (default --concurrency 1). Metrics follow vLLM's\n"
	"bench serve: ttft, tpot, itl, e2el (mean, median, p90, p95, p99; linear interpolation),\n"
	"plus ttft_sched (TTFT from the intended send time) and send_lag. Tokens come from the\n"
	"server's usage. With --rates and --slo it searches for the highest rate meeting every\n"
	"SLO. Every request record is stored in the database (table requests).\n"
	"vLLM's `bench serve` flags work as given (--num-prompts, --request-rate, --max-concurrency,\n"
	"--dataset-name, --goodput, --save-result, ...), with vLLM's defaults when no ratchet loop\n"
	"flag (--rate, --concurrency, --prefill, --pattern, --requests, --duration) is given;\n"
	"--save-result writes vLLM's result JSON, with ttft_sched and send_lag alongside.\n"
	"vLLM's connection flags too: --base-url URL, or --host and --port (127.0.0.1:8000), with\n"
	"--endpoint PATH (/v1/completions, /v1/chat/completions) joined to them; --backend and\n"
	"--endpoint-type choose the API; --tokenizer is taken and not used.\n"
	"exit codes: 0 ok, 2 usage error, 3 runtime error (including: no request succeeded)",
};

/* The options: a load benchmark's, generated from its spec table
 * (spec_cli.c: the spec's defaults, bounds and words), then ours and
 * vLLM's. Returns cmd_parse's result with *code set. */
static int bload_parse(int argc, char **argv, struct rt_ctx *ctx, struct cmd_bload *a, int *code)
{
	const struct rt_opt own[] = {
		{ "prefill", 0, RT_OPT_FLAG, &a->prefill, NULL, "waves of --concurrency prompts released together, max_tokens 1" },
		{ "seed", 0, RT_OPT_INT, &a->seed, "S", "seed for prompts and the schedule (default 1)" },
		{ "no-store", 0, RT_OPT_FLAG, &a->no_store, NULL, "do not store request records" },
		CMD_OPT_API_KEY_ENV(a->key_env),
		CMD_BLOAD_VLLM_OPTS(a),
		{ 0 },
	};
	spec_cli_init(&a->cli, SPEC_SECTION_LOAD, own, argc, argv);
	int npos = 0;
	if (cmd_parse(ctx, a->cli.opts, &bload_help, argc, argv, &npos, code))
		return 1;
	*code = RT_EXIT_USAGE;
	if (npos > 0) {
		cmd_error(ctx, "bench load: unexpected argument '%s'", argv[1]);
		fprintf(stderr, "usage: %s\n", bload_help.usage);
		return 1;
	}
	if ((*code = cmd_api_key(ctx, "bench load", a->key_env, &a->api_key)))
		return 1;
	return 0;
}

static bool given(const struct cmd_bload *a, const char *key)
{
	return spec_cli_get(&a->cli, key) != NULL;
}

/* The command line's own rules, then every option into a->cfg through the
 * spec's parsers and rules; RT_EUSAGE with err filled when one is wrong. */
static int bload_config(struct cmd_bload *a, struct rt_sb *err)
{
	char num[32];
	if (!given(a, "endpoint"))
		return rt_errf(err, RT_EUSAGE, "--endpoint is required");
	if (a->prefill && given(a, "pattern"))
		return rt_errf(err, RT_EUSAGE, "give --prefill or --pattern, not both");
	if (a->prefill) {
		spec_cli_set(&a->cli, "pattern", "prefill");
		if (!given(a, "concurrency"))
			spec_cli_set(&a->cli, "concurrency", "1");
	}
	if (!given(a, "requests") && !given(a, "duration")) /* a wave, or 100 */
		spec_cli_set(&a->cli, "requests", a->prefill ? spec_cli_get(&a->cli, "concurrency") : "100");
	snprintf(num, sizeof(num), "%ld", a->seed);
	if (!given(a, "seeds"))
		spec_cli_set(&a->cli, "seeds", num);
	int rc = spec_cli_load(&a->cli, &a->cfg, err);
	if (rc)
		return rc;
	if (isinf(a->cfg.rate) && a->cfg.duration_s > 0)
		return rt_errf(err, RT_EUSAGE, "an infinite rate sends every request at once: give a "
			       "request count (--requests, --num-prompts), not --duration");
	return 0;
}

static void bload_release(struct cmd_bload *a)
{
	cmd_bench_vllm_release(a);
	spec_load_release(&a->cfg);
	spec_cli_release(&a->cli);
}

/* The capacity search, every run's records stored; the run shown is the
 * bound's (or the first tried). Returns stored records or RT_E*. */
static int bload_capacity(struct cmd_bload *a, struct rt_ctx *ctx, struct run_load_capacity *cap,
			  const struct run_load_result **shown, struct rt_sb *err)
{
	int stored = 0;
	struct run_load_opts lo = { .api_key = a->api_key, .default_max_tokens = a->default_max_tokens };
	int rc = run_load_capacity(&a->cfg, a->cfg.endpoint, a->cfg.model, &lo, on_progress, ctx, cap, err);
	if (rc)
		return rc;
	if (cap->max_rate > 0)
		*shown = &cap->points[cap->bound_point].runs[0];
	else if (cap->n_points)
		*shown = &cap->points[0].runs[0];
	for (size_t i = 0; i < cap->n_points && !a->no_store && ctx->db; i++) {
		for (int k = 0; k < cap->points[i].n_seeds; k++) {
			char label[96];
			snprintf(label, sizeof(label), "rate=%.4g seed=%llu", cap->points[i].rate,
				 (unsigned long long)a->cfg.seeds[k]);
			int n = load_store_requests(ctx->db, 0, "load", NULL, (int)i, label,
						    &cap->points[i].runs[k], err);
			if (n < 0)
				return n;
			stored += n;
		}
	}
	return stored;
}

/* One run, its records stored. Returns stored records or RT_E*. */
static int bload_once(struct cmd_bload *a, struct rt_ctx *ctx, struct run_load_result *res,
		      struct rt_sb *err)
{
	char label[96];
	struct run_load_opts lo = { .api_key = a->api_key, .default_max_tokens = a->default_max_tokens };
	int rc = run_load_run(&a->cfg, a->cfg.endpoint, a->cfg.model, (uint64_t)a->seed, &lo, res, err);
	if (rc || a->no_store || !ctx->db)
		return rc;
	if (a->cfg.pattern == SPEC_LOAD_CLOSED)
		snprintf(label, sizeof(label), "concurrency=%d seed=%ld", a->cfg.concurrency, a->seed);
	else if (a->cfg.pattern == SPEC_LOAD_PREFILL)
		snprintf(label, sizeof(label), "prefill=%d seed=%ld", a->cfg.concurrency, a->seed);
	else
		snprintf(label, sizeof(label), "rate=%.4g seed=%ld", a->cfg.rate, a->seed);
	return load_store_requests(ctx->db, 0, "load", NULL, 0, label, res, err);
}

/* Measure (a capacity search or one run), store, print; the exit code. */
static int bload_measure(struct cmd_bload *a, struct rt_ctx *ctx, struct rt_sb *err)
{
	struct run_load_result res = { 0 };
	struct run_load_capacity cap = { 0 };
	const struct run_load_result *shown = &res;
	bool search = a->cfg.n_rates > 0;
	int stored = search ? bload_capacity(a, ctx, &cap, &shown, err)
			      : bload_once(a, ctx, &res, err);
	int code = RT_EXIT_RUNTIME;
	if (stored < 0) {
		cmd_error(ctx, "bench load: %s", err->buf);
	} else {
		if (ctx->json)
			print_json(shown, search ? &cap : NULL, a->cfg.endpoint, stored);
		else
			print_summary(shown, search ? &cap : NULL, a->cfg.endpoint);
		if (!ctx->quiet && !ctx->json && !a->no_store && ctx->db)
			fprintf(stderr, "ratchet: stored %d request records in %s\n", stored,
				ctx->db_path);
		if (!ctx->quiet && shown->resent)
			fprintf(stderr, "ratchet: %d requests sent a second time: the server dropped "
				"kept-alive connections before any byte of an answer\n", shown->resent);
		code = shown->completed > 0 ? RT_EXIT_OK : RT_EXIT_RUNTIME;
		char *path = NULL;
		if (cmd_bench_vllm_save(a, shown, &path, err)) {
			cmd_error(ctx, "bench load: %s", err->buf);
			code = RT_EXIT_RUNTIME;
		} else if (path && !ctx->quiet) {
			fprintf(stderr, "ratchet: wrote vLLM's result file %s\n", path);
		}
		free(path);
		if (code)
			cmd_error(ctx, "bench load: no request succeeded (%s)",
				  shown->n_reqs ? shown->reqs[shown->n_reqs - 1].error : "none sent");
	}
	run_load_result_release(&res);
	run_load_capacity_release(&cap);
	return code;
}

static int bench_load(int argc, char **argv, struct rt_ctx *ctx)
{
	struct cmd_bload a = { .seed = 1, .num_prompts = CMD_BLOAD_UNSET, .request_rate = NAN,
			   .port = CMD_BLOAD_UNSET,
			   .max_concurrency = CMD_BLOAD_UNSET, .random_input_len = CMD_BLOAD_UNSET,
			   .random_output_len = CMD_BLOAD_UNSET };
	struct rt_sb err = RT_SB_INIT;
	int code;
	cmd_bench_take_multi(&a, &argc, argv);
	if (bload_parse(argc, argv, ctx, &a, &code)) {
		bload_release(&a);
		return code;
	}
	int bad = cmd_bench_vllm_config(&a, &err) || bload_config(&a, &err);
	if (a.note && !ctx->quiet)
		fprintf(stderr, "ratchet: bench load: %s\n", a.note);
	if (bad) {
		cmd_error(ctx, "bench load: %s", err.buf);
		fprintf(stderr, "usage: %s\n", bload_help.usage);
		code = RT_EXIT_USAGE;
	} else {
		code = bload_measure(&a, ctx, &err);
	}
	bload_release(&a);
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
