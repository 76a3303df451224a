/*
 * `ratchet gate`: the GSM8K accuracy gate for CI. Asks an OpenAI-compatible
 * endpoint the GSM8K test questions, scores them the lm-evaluation-harness
 * way, compares with a baseline run question by question, prints one line,
 * optionally writes JUnit XML and a Markdown summary, stores the run, and
 * exits 0 (pass), 1 (fail) or 3 (error: too many failed requests).
 */
#include "runner/cmd/cmd.h"
#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"
#include "db/gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct rt_cmd_help help = {
	"ratchet gate --endpoint URL [options]",
	"GSM8K accuracy gate against an OpenAI-compatible endpoint (CI)",
	"Pass iff accuracy >= --min-accuracy (or its Wilson lower bound with\n"
	"--wilson-lower) and, with a baseline, the paired drop <= --max-drop, the drop is\n"
	"not significant (McNemar mid-p >= --alpha) and the identical-answer rate >=\n"
	"--min-identical. More than --max-failed of the requests failing is an error.\n"
	"The run stops early once it cannot pass any more.\n"
	"\n"
	"Dataset: --dataset FILE|DIR, else $RATCHET_GSM8K, else\n"
	"$XDG_CACHE_HOME/ratchet/gsm8k/test.jsonl (~/.cache/...), else a download from\n"
	"github.com/openai/grade-school-math checked by sha256.\n"
	"API key: $OPENAI_API_KEY or the variable named by --api-key-env, sent as\n"
	"Authorization: Bearer; never stored, printed or written to reports.\n"
	"\n"
	"exit codes: 0 pass, 1 fail, 2 usage, 3 error",
};

struct progress_ctx {
	bool on;        /* print progress to stderr */
	double last;    /* last print, s */
};

static void progress(void *arg, const struct run_gate_progress *p)
{
	struct progress_ctx *pc = arg;
	if (!pc->on || (p->done < p->planned && p->elapsed_s - pc->last < 0.1))
		return;
	pc->last = p->elapsed_s;
	fprintf(stderr, "\rgate: %d/%d answered, %d correct, %d failed, %.1fs   ", p->done,
		p->planned, p->correct, p->failed, p->elapsed_s);
	fflush(stderr);
}

int cmd_gate(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *endpoint = NULL, *model = NULL, *api = "completions", *format = NULL;
	const char *extract = "flexible", *baseline = NULL, *label = NULL, *dataset = NULL;
	const char *junit = NULL, *summary = NULL, *key_env = NULL;
	double min_acc = 0, max_drop = 0.01, alpha = 0.05, min_ident = 0, max_failed = 0.02;
	double timeout = 300;
	long limit = 0, offset = 0, seed = 0, conc = 32, max_tokens = 256, nshot = 5, retries = 4;
	bool wilson = false, no_early = false;
	const struct rt_opt opts[] = {
		{ "endpoint", 'e', RT_OPT_STR, &endpoint, "URL", "base URL, e.g. http://127.0.0.1:8000 (required)" },
		{ "model", 'm', RT_OPT_STR, &model, "NAME", "model name sent with each request" },
		{ "api", 0, RT_OPT_STR, &api, "API", "completions (default) or chat" },
		{ "format", 'f', RT_OPT_STR, &format, "FMT", "gsm8k (default), gsm8k_cot, or chat (default with --api chat)" },
		{ "extract", 0, RT_OPT_STR, &extract, "MODE", "flexible (default) or strict: the extraction that decides" },
		{ "min-accuracy", 0, RT_OPT_DBL, &min_acc, "F", "lowest accuracy that passes (default 0)" },
		{ "wilson-lower", 0, RT_OPT_FLAG, &wilson, NULL, "compare the Wilson lower bound with --min-accuracy" },
		{ "max-drop", 0, RT_OPT_DBL, &max_drop, "F", "largest drop vs the baseline that passes (default 0.01)" },
		{ "alpha", 0, RT_OPT_DBL, &alpha, "F", "significance of the paired drop test; intervals at 1-alpha (default 0.05)" },
		{ "min-identical", 0, RT_OPT_DBL, &min_ident, "F", "lowest identical-answer rate vs the baseline (default off)" },
		{ "max-failed", 0, RT_OPT_DBL, &max_failed, "F", "failed-request fraction that makes the run an error (default 0.02)" },
		{ "baseline", 'b', RT_OPT_STR, &baseline, "RUN", "gate run id, or latest-pass (same label, model, format)" },
		{ "label", 'l', RT_OPT_STR, &label, "L", "endpoint label stored with the run (default: the URL)" },
		{ "limit", 'n', RT_OPT_INT, &limit, "N", "ask N questions (default all 1319)" },
		{ "offset", 0, RT_OPT_INT, &offset, "K", "start at question K" },
		{ "seed", 0, RT_OPT_INT, &seed, "S", "seeded random subset of --limit questions (0: consecutive)" },
		{ "num-fewshot", 0, RT_OPT_INT, &nshot, "N", "shots for --format gsm8k: the first N of train.jsonl (default 5)" },
		{ "concurrency", 'c', RT_OPT_INT, &conc, "N", "requests in flight (default 32)" },
		{ "max-tokens", 0, RT_OPT_INT, &max_tokens, "N", "max_tokens per request (default 256)" },
		{ "timeout", 0, RT_OPT_DBL, &timeout, "S", "timeout per request attempt in seconds (default 300)" },
		{ "retries", 0, RT_OPT_INT, &retries, "N", "retries on connection errors, 429 and 5xx (default 4)" },
		{ "no-early-stop", 0, RT_OPT_FLAG, &no_early, NULL, "ask every question even once the run cannot pass" },
		{ "dataset", 'd', RT_OPT_STR, &dataset, "PATH", "GSM8K test.jsonl, or the folder holding it" },
		{ "junit", 0, RT_OPT_STR, &junit, "FILE", "write JUnit XML" },
		{ "summary", 0, RT_OPT_STR, &summary, "FILE", "write a Markdown summary ($GITHUB_STEP_SUMMARY is appended to)" },
		{ "api-key-env", 0, RT_OPT_STR, &key_env, "NAME", "environment variable holding the API key (default OPENAI_API_KEY)" },
		{ 0 },
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "gate: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	if (!endpoint) {
		cmd_error(ctx, "gate: --endpoint is required");
		return RT_EXIT_USAGE;
	}
	struct spec_gate cfg;
	run_gate_defaults(&cfg);
	if (!strcmp(api, "chat"))
		cfg.api = SPEC_API_CHAT;
	else if (strcmp(api, "completions")) {
		cmd_error(ctx, "gate: --api: '%s' is not completions or chat", api);
		return RT_EXIT_USAGE;
	}
	if (!format)
		format = cfg.api == SPEC_API_CHAT ? "chat" : "gsm8k";
	if (gsm8k_format_parse(format, &cfg.format)) {
		cmd_error(ctx, "gate: --format: '%s' is not gsm8k, gsm8k_cot or chat", format);
		return RT_EXIT_USAGE;
	}
	if (cfg.format == SPEC_GSM8K_CHAT && cfg.api != SPEC_API_CHAT) {
		cmd_error(ctx, "gate: --format chat needs --api chat");
		return RT_EXIT_USAGE;
	}
	if (!strcmp(extract, "strict"))
		cfg.extract = SPEC_EXTRACT_STRICT;
	else if (strcmp(extract, "flexible")) {
		cmd_error(ctx, "gate: --extract: '%s' is not flexible or strict", extract);
		return RT_EXIT_USAGE;
	}
	const struct {
		const char *name;
		double v, lo, hi;
	} ranges[] = {
		{ "min-accuracy", min_acc, 0, 1 }, { "max-drop", max_drop, 0, 1 },
		{ "alpha", alpha, 1e-12, 0.999999 }, { "min-identical", min_ident, 0, 1 },
		{ "max-failed", max_failed, 0, 1 }, { "timeout", timeout, 0.001, 86400 },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(ranges); i++)
		if (!(ranges[i].v >= ranges[i].lo && ranges[i].v <= ranges[i].hi)) {
			cmd_error(ctx, "gate: --%s: %g is not in [%g, %g]", ranges[i].name, ranges[i].v,
				  ranges[i].lo, ranges[i].hi);
			return RT_EXIT_USAGE;
		}
	if (limit < 0 || offset < 0 || seed < 0 || conc < 1 || conc > 4096 || max_tokens < 1 ||
	    nshot < 0 || retries < 0) {
		cmd_error(ctx, "gate: --limit, --offset, --seed, --num-fewshot and --retries must not be "
			       "negative; --concurrency in [1, 4096]; --max-tokens at least 1");
		return RT_EXIT_USAGE;
	}
	cfg.min_accuracy = min_acc;
	cfg.use_wilson_lower = wilson;
	cfg.max_drop = max_drop;
	cfg.alpha = alpha;
	cfg.min_identical = min_ident;
	cfg.max_failed = max_failed;
	cfg.limit = (int)limit;
	cfg.offset = (int)offset;
	cfg.seed = (uint64_t)seed;
	cfg.num_fewshot = (int)nshot;
	cfg.concurrency = (int)conc;
	cfg.max_tokens = (int)max_tokens;
	cfg.request_timeout_s = timeout;
	cfg.dataset = (char *)dataset;

	struct run_gate_opts o;
	run_gate_opts_init(&o);
	if (key_env) {
		const char *k = getenv(key_env);
		if (!k || !*k) {
			cmd_error(ctx, "gate: --api-key-env: environment variable %s is not set", key_env);
			return RT_EXIT_USAGE;
		}
		o.api_key = k;
	}
	o.label = label;
	o.no_early_stop = no_early;
	o.max_retries = (int)retries;
	struct progress_ctx pc = { isatty(2) && !ctx->quiet && !ctx->json, -1 };
	o.progress = progress;
	o.progress_arg = &pc;

	struct rt_sb err = RT_SB_INIT;
	int64_t base_id = 0;
	if (baseline && !strcmp(baseline, "latest-pass")) {
		int rc = db_gate_run_latest_pass(ctx->db, label, endpoint, model,
						 gsm8k_format_name(cfg.format), &base_id, &err);
		if (rc == RT_ENOENT) {
			if (!ctx->quiet)
				fprintf(stderr, "gate: %s; running without a baseline\n", err.buf);
			base_id = 0;
		} else if (rc) {
			cmd_error(ctx, "gate: %s", err.buf);
			rt_sb_release(&err);
			return RT_EXIT_RUNTIME;
		}
		rt_sb_reset(&err);
	} else if (baseline) {
		char *end;
		base_id = strtoll(baseline, &end, 10);
		if (*end || base_id <= 0) {
			cmd_error(ctx, "gate: --baseline: '%s' is not a run id or latest-pass", baseline);
			return RT_EXIT_USAGE;
		}
	}

	struct run_gate_result res;
	int rc = run_gate_run_opts(ctx->db, &cfg, &o, endpoint, model, 0, base_id, &res, &err);
	if (pc.on && pc.last >= 0)
		fputc('\n', stderr);
	if (rc < 0 && !res.run_id) {
		cmd_error(ctx, "%s", err.buf);
		rt_sb_release(&err);
		run_gate_result_release(&res);
		return rc == RT_EUSAGE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	if (res.early_stop && !ctx->quiet && !ctx->json)
		fprintf(stderr, "gate: stopped early after %d of %d questions: the run cannot pass\n",
			res.n_done, res.n_planned);
	struct rt_sb werr = RT_SB_INIT;
	if (junit && run_gate_write_junit(&res, &cfg, junit, &werr))
		cmd_error(ctx, "gate: --junit: %s", werr.buf);
	rt_sb_reset(&werr);
	if (summary) {
		const char *gh = getenv("GITHUB_STEP_SUMMARY");
		bool append = gh && !strcmp(gh, summary);
		if (run_gate_write_summary(&res, &cfg, summary, append, &werr))
			cmd_error(ctx, "gate: --summary: %s", werr.buf);
	}
	bool write_failed = werr.len > 0;
	rt_sb_release(&werr);
	if (ctx->json) {
		struct rt_sb js = RT_SB_INIT;
		run_gate_json(&res, &js);
		printf("%s\n", js.buf);
		rt_sb_release(&js);
	} else {
		const char *col = res.status == RUN_GATE_PASS ? "green" : "red";
		printf("gate run %lld: %s%s%s\n", (long long)res.run_id, cmd_color(ctx, col),
		       res.verdict, cmd_color(ctx, "reset"));
	}
	int exit_code = res.status == RUN_GATE_PASS ? RT_EXIT_OK
			: res.status == RUN_GATE_FAIL ? RT_EXIT_NO : RT_EXIT_RUNTIME;
	if (write_failed && exit_code == RT_EXIT_OK)
		exit_code = RT_EXIT_RUNTIME;
	rt_sb_release(&err);
	run_gate_result_release(&res);
	return exit_code;
}
