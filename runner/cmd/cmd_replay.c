/* `ratchet replay --from CAMPAIGN SPEC`: a campaign's kept changes measured again on a new base. */
#include "runner/campaign/campaign.h"
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct rt_cmd_help help = {
	"ratchet replay --from CAMPAIGN|VARIANTS.yaml [--order original|best-first] [--onto REV] [--resume]\n"
	"               [--junit FILE] [--summary FILE] [--max-iterations N] [--quiet] SPEC",
	"Carry the kept changes of CAMPAIGN (or of a recipe's variants.yaml) to the new base\n"
	"SPEC (another engine version, model, device or machine): each becomes a lever,\n"
	"measured on top of the new best, one per iteration, with the same decision rule and\n"
	"gate as any campaign. Each lever's verdict is stored and printed with its gain then\n"
	"and now: held (kept again), lost (no gain now), reversed (worse now by more than\n"
	"min_gain, or the gate said no), not applicable (the patch does not apply, the table\n"
	"entry or the flag is refused: the reason says which, with git's words) or superseded\n"
	"(--onto only).",
	"--onto REV first checks out REV (detached; the tree must be clean) in the git\n"
	"repository of every patch lever's dir, so the baseline is the new revision alone\n"
	"and each patch is measured on top of it; a patch that no longer helps is\n"
	"superseded when REV alone is as good as the old revision with the patch was, or\n"
	"when REV already contains it.\n"
	"\n"
	"The replay is a campaign named SPEC's name + \"-replay-\" + CAMPAIGN, resumable\n"
	"like any other (`ratchet replay --resume --from CAMPAIGN SPEC` keeps the first\n"
	"run's order and revision). `ratchet report` shows its levers side by side.\n"
	"--junit and --summary write what `ratchet gate` writes, one test case per lever\n"
	"($GITHUB_STEP_SUMMARY is appended to): a nightly CI job can watch a recipe's\n"
	"variants.yaml campaign against engine nightlies. SPEC's workdir must hold the\n"
	"new base as it is (run `ratchet restore` first when it is CAMPAIGN's own).\n"
	"\n"
	"exit codes: 0 every lever decided and none reversed, 1 a lever reversed, 2 usage\n"
	"or bad spec, 3 runtime error or interrupted (resumable).",
};

/* --order's word. */
static int parse_order(struct rt_ctx *ctx, const char *s, enum run_replay_order *out)
{
	if (!s || !strcmp(s, "original"))
		*out = RUN_REPLAY_ORIGINAL;
	else if (!strcmp(s, "best-first"))
		*out = RUN_REPLAY_BEST_FIRST;
	else {
		cmd_error(ctx, "replay: --order '%s': expected original or best-first", s);
		return RT_EXIT_USAGE;
	}
	return 0;
}

/* --junit and --summary. */
static void write_reports(struct rt_ctx *ctx, const char *junit, const char *summary,
			  const struct run_replay_result *res, const char *name, double wall_s)
{
	struct rt_sb werr = RT_SB_INIT;
	if (junit && rep_replay_junit(res->levers, res->n, name, wall_s, junit, &werr))
		cmd_error(ctx, "replay: --junit: %s", werr.buf);
	rt_sb_reset(&werr);
	if (summary) {
		const char *gh = getenv("GITHUB_STEP_SUMMARY");
		if (rep_replay_summary(ctx->db, res->run.campaign_id, summary, gh && !strcmp(gh, summary), &werr))
			cmd_error(ctx, "replay: --summary: %s", werr.buf);
	}
	rt_sb_release(&werr);
}

/* The exit code and the message of a run that did not finish. */
static int failed(struct rt_ctx *ctx, int rc, const struct run_replay_result *res, struct rt_sb *err)
{
	rt_sb_trim(err);
	if (res->preflight) {
		fprintf(stderr, "%s\n", err->buf);
		return RT_EXIT_USAGE;
	}
	char *nl = strchr(err->buf, '\n');
	if (nl)
		cmd_error(ctx, "replay: %.*s (see above)", (int)(nl - err->buf), err->buf);
	else
		cmd_error(ctx, "replay: %s", err->buf);
	return rc == RT_EUSAGE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
}

int cmd_replay(int argc, char **argv, struct rt_ctx *ctx)
{
	bool resume = false, quiet = false;
	long max_it = 0;
	const char *from_s = NULL, *order_s = NULL, *onto = NULL, *junit = NULL, *summary = NULL, *key_env = NULL;
	const struct rt_opt opts[] = {
		{ "from", 0, RT_OPT_STR, &from_s, "CAMPAIGN", "the campaign whose kept changes are replayed, or a recipe's variants.yaml" },
		{ "order", 0, RT_OPT_STR, &order_s, "ORDER", "original (as kept, the default) or best-first" },
		{ "onto", 0, RT_OPT_STR, &onto, "REV", "check out REV in every patch lever's repository first" },
		{ "resume", 0, RT_OPT_FLAG, &resume, NULL, "continue the interrupted replay" },
		{ "junit", 0, RT_OPT_STR, &junit, "FILE", "write JUnit XML, one test case per lever" },
		{ "summary", 0, RT_OPT_STR, &summary, "FILE", "write a Markdown summary ($GITHUB_STEP_SUMMARY is appended to)" },
		{ "max-iterations", 0, RT_OPT_INT, &max_it, "N", "stop after N iterations (baseline included)" },
		{ "quiet", 'q', RT_OPT_FLAG, &quiet, NULL, "no progress output" },
		CMD_OPT_API_KEY_ENV(key_env),
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	enum run_replay_order order;
	if ((code = parse_order(ctx, order_s, &order)))
		return code;
	char *end = NULL;
	long long from = from_s ? strtoll(from_s, &end, 10) : 0;
	bool is_id = from_s && *from_s && end && !*end && from > 0;
	if (npos != 1 || !from_s) {
		cmd_error(ctx, npos != 1 ? "replay: expected one SPEC file" : "replay: --from CAMPAIGN is required");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	const char *key;
	if ((code = cmd_api_key(ctx, "replay", key_env, &key)))
		return code;
	struct rt_sb err = RT_SB_INIT;
	struct spec *s = NULL;
	int rc = spec_load(argv[1], &s, &err);
	if (rc) {
		rt_sb_trim(&err);
		fprintf(stderr, "%s\n", err.buf);
		rt_sb_release(&err);
		return rc == RT_EUSAGE || rc == RT_EPARSE || rc == RT_EINVAL ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	const char *fault = getenv("RATCHET_FAULT_JOURNAL");
	struct run_replay_opts o = {
		.run = { .resume = resume, .quiet = quiet || ctx->quiet, .tty = isatty(2), .max_iterations = (int)max_it,
			 .out = stderr, .api_key = key, .fault_journal = fault ? atol(fault) : 0,
			 .api_key_env = key_env },
		.from = is_id ? from : 0, .from_file = is_id ? NULL : from_s, .order = order, .onto = onto,
	};
	struct run_replay_result res;
	int64_t t0 = rt_wall_ms();
	rc = run_replay(ctx->db, s, &o, &res, &err);
	if (res.run.campaign_id && (junit || summary))
		write_reports(ctx, junit, summary, &res, s->name, (double)(rt_wall_ms() - t0) / 1000.0);
	if (res.n && !ctx->quiet) {
		struct rt_sb t = RT_SB_INIT;
		rep_replay_text(&t, res.levers, res.n);
		printf("replay %lld of %s%s on %s:\n%s", (long long)res.run.campaign_id, is_id ? "campaign " : "",
		       from_s, s->path, t.buf);
		rt_sb_release(&t);
	}
	if (rc)
		code = failed(ctx, rc, &res, &err);
	else if (!res.run.finished)
		code = RT_EXIT_RUNTIME; /* its budget ran out: levers are left undecided */
	else
		code = res.reversed ? RT_EXIT_NO : RT_EXIT_OK;
	if (!rc && !ctx->quiet)
		printf("%d lever%s reversed%s\n", res.reversed, res.reversed == 1 ? "" : "s",
		       res.run.finished ? "" : "; not finished (--resume continues)");
	run_replay_result_release(&res);
	rt_sb_release(&err);
	spec_free(s);
	return code;
}
