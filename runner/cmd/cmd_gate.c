/*
 * `ratchet gate`: the GSM8K accuracy gate for CI. Asks an OpenAI-compatible
 * endpoint the GSM8K test questions with lm-evaluation-harness's prompts,
 * scores them its way, compares with a baseline run question by question,
 * prints one line, optionally writes JUnit XML, a Markdown summary and
 * lm-eval's results and samples files, stores the run, and exits 0 (pass),
 * 1 (fail) or 3 (error: too many failed requests).
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
	"Prompts, stops and output files follow lm-evaluation-harness " GSM8K_LMEVAL_VERSION "\n"
	"(tasks gsm8k and gsm8k_cot, version 3.0).\n"
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

/* The options that are not gate.gsm8k's (those come from its table). */
struct gate_args {
	const char *baseline, *label, *junit, *summary, *key_env; /* from argv, NULL when not given */
	const char *log_samples, *output_path, *eos; /* lm-eval's files and EOS stop, or NULL */
	const char *endpoint, *model;             /* cfg's, once read */
	long retries;                             /* retries per request */
	bool no_early;                            /* ask every question */
};

/* Parse argv into a and cfg: gate.gsm8k's options are generated from its
 * field table (spec_cli.c), so each has the spec's default, bounds and
 * words. 0, or -1 to stop with *code (--help, a usage error). */
static int parse_args(int argc, char **argv, struct rt_ctx *ctx, struct gate_args *a,
		      struct spec_gate *cfg, int *code)
{
	*a = (struct gate_args){ .retries = 4 };
	const struct rt_opt own[] = {
		{ "baseline", 'b', RT_OPT_STR, &a->baseline, "RUN", "gate run id, or latest-pass (same label, model, format)" },
		{ "label", 'l', RT_OPT_STR, &a->label, "L", "endpoint label stored with the run (default: the URL)" },
		{ "eos-string", 0, RT_OPT_STR, &a->eos, "S", "add S to the stop sequences, as lm-eval does with the tokenizer's EOS (model_args eos_string)" },
		{ "retries", 0, RT_OPT_INT, &a->retries, "N", "retries on connection errors, 429 and 5xx (default 4)" },
		{ "no-early-stop", 0, RT_OPT_FLAG, &a->no_early, NULL, "ask every question even once the run cannot pass" },
		{ "junit", 0, RT_OPT_STR, &a->junit, "FILE", "write JUnit XML" },
		{ "summary", 0, RT_OPT_STR, &a->summary, "FILE", "write a Markdown summary ($GITHUB_STEP_SUMMARY is appended to)" },
		{ "output-path", 'o', RT_OPT_STR, &a->output_path, "PATH", "write lm-eval's results JSON: PATH if it ends in .json, else PATH/MODEL/results_DATE.json" },
		{ "log-samples", 0, RT_OPT_STR, &a->log_samples, "DIR", "write lm-eval's DIR/samples_TASK_DATE.jsonl: every answered question" },
		CMD_OPT_API_KEY_ENV(a->key_env),
		{ 0 },
	};
	struct spec_cli cli;
	spec_cli_init(&cli, SPEC_SECTION_GATE, own, argc, argv);
	int npos = 0;
	if (cmd_parse(ctx, cli.opts, &help, argc, argv, &npos, code)) {
		spec_cli_release(&cli);
		return -1;
	}
	*code = RT_EXIT_USAGE;
	struct rt_sb err = RT_SB_INIT;
	const char *api = spec_cli_get(&cli, "api");
	if (api && !strcmp(api, "chat") && !spec_cli_get(&cli, "format"))
		spec_cli_set(&cli, "format", "chat"); /* the command line's rule: --api chat asks in chat */
	if (npos)
		rt_errf(&err, RT_EUSAGE, "unexpected argument '%s'", argv[1]);
	else if (!spec_cli_get(&cli, "endpoint"))
		rt_errf(&err, RT_EUSAGE, "--endpoint is required");
	else if (a->retries < 0)
		rt_errf(&err, RT_EUSAGE, "--retries must not be negative");
	else
		spec_cli_gate(&cli, cfg, &err);
	spec_cli_release(&cli);
	if (err.len)
		cmd_error(ctx, "gate: %s", err.buf);
	int rc = err.len ? -1 : 0;
	rt_sb_release(&err);
	a->endpoint = cfg->endpoint;
	a->model = cfg->model;
	return rc;
}

/* --baseline: a run id, or the latest pass (none yet: no baseline). 0 or the exit code. */
static int resolve_baseline(struct rt_ctx *ctx, const struct gate_args *a,
			    const struct spec_gate *cfg, int64_t *base_id)
{
	*base_id = 0;
	if (!a->baseline)
		return 0;
	if (strcmp(a->baseline, "latest-pass")) {
		char *end;
		*base_id = strtoll(a->baseline, &end, 10);
		if (*end || *base_id <= 0) {
			cmd_error(ctx, "gate: --baseline: '%s' is not a run id or latest-pass", a->baseline);
			return RT_EXIT_USAGE;
		}
		return 0;
	}
	struct rt_sb err = RT_SB_INIT;
	int rc = db_gate_run_latest_pass(ctx->db, a->label, a->endpoint, a->model,
					 gsm8k_format_name(cfg->format), base_id, &err);
	int code = 0;
	if (rc == RT_ENOENT) {
		if (!ctx->quiet)
			fprintf(stderr, "gate: %s; running without a baseline\n", err.buf);
		*base_id = 0;
	} else if (rc) {
		cmd_error(ctx, "gate: %s", err.buf);
		code = RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	return code;
}

/* --log-samples and --output-path (lm-eval's files); false when one could not be written. */
static bool write_lmeval(struct rt_ctx *ctx, const struct gate_args *a,
			 const struct run_gate_result *res, const struct spec_gate *cfg,
			 const struct run_gate_opts *o)
{
	if (!a->log_samples && !a->output_path)
		return true;
	struct run_gate_lmeval l;
	char *endpoint = run_gate_strip_credentials(a->endpoint);
	run_gate_lmeval_init(&l, cfg, o, a->model, endpoint, res);
	struct rt_sb werr = RT_SB_INIT;
	char *hash = NULL;
	bool ok = true;
	if (a->log_samples && run_gate_write_samples(&l, res, a->log_samples, &hash, &werr)) {
		cmd_error(ctx, "gate: --log-samples: %s", werr.buf);
		ok = false;
	}
	rt_sb_reset(&werr);
	if (a->output_path && run_gate_write_results(&l, res, a->output_path, hash, NULL, &werr)) {
		cmd_error(ctx, "gate: --output-path: %s", werr.buf);
		ok = false;
	}
	free(hash);
	free(endpoint);
	rt_sb_release(&werr);
	return ok;
}

/* --junit and --summary; false when one could not be written. */
static bool write_reports(struct rt_ctx *ctx, const struct gate_args *a,
			  const struct run_gate_result *res, const struct spec_gate *cfg)
{
	struct rt_sb werr = RT_SB_INIT;
	if (a->junit && run_gate_write_junit(res, cfg, a->junit, &werr))
		cmd_error(ctx, "gate: --junit: %s", werr.buf);
	rt_sb_reset(&werr);
	if (a->summary) {
		const char *gh = getenv("GITHUB_STEP_SUMMARY");
		bool append = gh && !strcmp(gh, a->summary);
		if (run_gate_write_summary(res, cfg, a->summary, append, &werr))
			cmd_error(ctx, "gate: --summary: %s", werr.buf);
	}
	bool ok = werr.len == 0;
	rt_sb_release(&werr);
	return ok;
}

/* Why the requests failed, as stored with the answers: the first failure's
 * error (by question) into first, and how many failed with that same error. */
static int first_failure(struct rt_ctx *ctx, int64_t run_id, struct rt_sb *first)
{
	struct db_gate_answer *v = NULL;
	size_t n = 0, same = 0;
	if (db_gate_answers_list(ctx->db, run_id, &v, &n, NULL) == 0) {
		const char *e = NULL;
		for (size_t i = 0; i < n; i++) {
			if (!v[i].failed)
				continue;
			const char *mine = v[i].error ? v[i].error : "no error recorded";
			if (!e)
				e = mine;
			same += !strcmp(e, mine);
		}
		if (e)
			rt_sb_adds(first, e);
	}
	db_gate_answers_free(v, n);
	return (int)same;
}

/* The result on stdout: one line, or the JSON object. A run whose requests
 * failed says why, by the first failure's error: when none was answered
 * there are no figures to print, only the cause. */
static void print_result(struct rt_ctx *ctx, const struct run_gate_result *res, const char *endpoint)
{
	if (ctx->json) {
		struct rt_sb js = RT_SB_INIT;
		run_gate_json(res, &js);
		printf("%s\n", js.buf);
		rt_sb_release(&js);
		return;
	}
	const char *col = res->status == RUN_GATE_PASS ? "green" : "red";
	struct rt_sb why = RT_SB_INIT;
	int same = res->fig.n_failed ? first_failure(ctx, res->run_id, &why) : 0;
	printf("gate run %lld: %s", (long long)res->run_id, cmd_color(ctx, col));
	if (res->fig.n_failed && !res->n_scored && why.len && same == res->fig.n_failed)
		printf("ERROR: every request failed (%d of %d): %s (%s)", res->fig.n_failed, res->fig.n_done,
		       why.buf, endpoint);
	else if (res->fig.n_failed && !res->n_scored && why.len)
		printf("ERROR: every request failed (%d of %d), the first: %s (%s; %d with this error)",
		       res->fig.n_failed, res->fig.n_done, why.buf, endpoint, same);
	else
		printf("%s", res->verdict);
	printf("%s\n", cmd_color(ctx, "reset"));
	if (res->fig.n_failed && res->n_scored && why.len)
		cmd_error(ctx, "gate: %d request%s failed; the first: %s (%d with this error)",
			  res->fig.n_failed, res->fig.n_failed == 1 ? "" : "s", why.buf, same);
	rt_sb_release(&why);
}

/* Run the gate and report; the exit code. */
static int run_and_report(struct rt_ctx *ctx, const struct gate_args *a,
			  const struct spec_gate *cfg, const struct run_gate_opts *o,
			  int64_t base_id, const struct progress_ctx *pc)
{
	struct rt_sb err = RT_SB_INIT;
	struct run_gate_result res;
	int rc = run_gate_run_opts(ctx->db, cfg, o, a->endpoint, a->model, 0, base_id, &res, &err);
	if (pc->on && pc->last >= 0)
		fputc('\n', stderr);
	int exit_code;
	if (rc < 0 && !res.run_id) {
		cmd_error(ctx, "%s", err.buf);
		exit_code = rc == RT_EUSAGE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	} else {
		if (res.fig.early_stop && !ctx->quiet && !ctx->json)
			fprintf(stderr, "gate: stopped early after %d of %d questions: the run cannot pass\n",
				res.fig.n_done, res.fig.n_planned);
		bool written = write_reports(ctx, a, &res, cfg);
		written = write_lmeval(ctx, a, &res, cfg, o) && written;
		print_result(ctx, &res, a->endpoint);
		exit_code = res.status == RUN_GATE_PASS ? RT_EXIT_OK
			    : res.status == RUN_GATE_FAIL ? RT_EXIT_NO : RT_EXIT_RUNTIME;
		if (!written && exit_code == RT_EXIT_OK)
			exit_code = RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	run_gate_result_release(&res);
	return exit_code;
}

/* No --model: the first id the server lists (vLLM's and lm-eval's clients
 * do the same); NULL (no model sent, said on stderr) when it lists none. */
static char *default_model(struct rt_ctx *ctx, const struct gate_args *a, const char *api_key,
			   double timeout_s)
{
	if (a->model)
		return NULL;
	char *model = NULL;
	struct rt_sb err = RT_SB_INIT;
	if (run_gate_first_model(a->endpoint, api_key, timeout_s < 10 ? timeout_s : 10, &model,
				 &err)) {
		if (!ctx->quiet)
			fprintf(stderr, "gate: no --model and %s: sending no model name\n", err.buf);
	} else if (!ctx->quiet && !ctx->json) {
		fprintf(stderr, "gate: --model %s (the first model the server lists)\n", model);
	}
	rt_sb_release(&err);
	return model;
}

int cmd_gate(int argc, char **argv, struct rt_ctx *ctx)
{
	struct gate_args a;
	struct spec_gate cfg;
	spec_gate_defaults(&cfg);
	int code;
	if (parse_args(argc, argv, ctx, &a, &cfg, &code)) {
		spec_gate_release(&cfg);
		return code;
	}
	struct run_gate_opts o;
	run_gate_opts_init(&o);
	code = cmd_api_key(ctx, "gate", a.key_env, &o.api_key);
	/* The model before the baseline: latest-pass matches on it. */
	char *model = code ? NULL : default_model(ctx, &a, o.api_key, cfg.request_timeout_s);
	if (model)
		a.model = model;
	int64_t base_id = 0;
	if (!code)
		code = resolve_baseline(ctx, &a, &cfg, &base_id);
	if (code) {
		free(model);
		spec_gate_release(&cfg);
		return code;
	}
	o.label = a.label;
	o.no_early_stop = a.no_early;
	o.max_retries = (int)a.retries;
	o.eos_string = a.eos;
	o.keep_samples = a.log_samples || a.output_path;
	struct progress_ctx pc = { isatty(2) && !ctx->quiet && !ctx->json, -1 };
	o.progress = progress;
	o.progress_arg = &pc;
	code = run_and_report(ctx, &a, &cfg, &o, base_id, &pc);
	free(model);
	spec_gate_release(&cfg);
	return code;
}
