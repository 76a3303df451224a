/* `ratchet run SPEC`: run or resume a campaign. */
#include "runner/campaign/campaign.h"
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct rt_cmd_help help = {
	"ratchet run [--resume] [--max-iterations N] [--until HH:MM | --for DURATION] [--api-key-env NAME]\n"
	"            [--devices LIST] [--quiet] SPEC",
	"Run a campaign: measure the baseline, then try one change per iteration on top of the\n"
	"best configuration so far, gate it, keep or revert it, and record everything.",
	"Budget: --until 07:00 (local time, its next occurrence) or --for 8h stops at the last\n"
	"iteration boundary that fits: an iteration starts only when it is expected to end\n"
	"in time, judged from this campaign's finished iterations (their 90th percentile\n"
	"wall time, the longest while fewer than 5 finished). The run says why it stopped;\n"
	"--resume continues.\n"
	"\n"
	"A crash, kill -9 or reboot loses no finished iteration: `ratchet run --resume SPEC`\n"
	"undoes a half-applied change, marks the unfinished iteration interrupted, tries it\n"
	"again and continues. `ratchet restore` puts every touched file back.\n"
	"\n"
	"Device pool: --devices cuda:0,cuda:1 (or the spec's devices:) measures up to one\n"
	"trial per device at once, each in a worker pinned to its device; the round's best\n"
	"trial is then confirmed and kept (docs/scale.md).\n"
	"\n"
	"API key: $OPENAI_API_KEY or the variable named by --api-key-env, sent as\n"
	"Authorization: Bearer by the load benchmarks and the gate; never stored, printed\n"
	"or written to reports.\n"
	"\n"
	"exit codes: 0 the campaign finished (or its budget ran out), 2 bad spec or\n"
	"usage, 3 runtime error or interrupted (resumable).",
};

/* --until or --for as a Unix time, and the words that name it. */
static int parse_budget(struct rt_ctx *ctx, const char *until, const char *dur, double *deadline,
			char **text)
{
	double now = (double)rt_wall_ms() / 1000.0, d;
	if (until && dur) {
		cmd_error(ctx, "run: give --until or --for, not both");
		return RT_EXIT_USAGE;
	}
	if (until && run_budget_until(until, now, deadline)) {
		cmd_error(ctx, "run: --until '%s': expected a local time HH:MM or HH:MM:SS (07:00)", until);
		return RT_EXIT_USAGE;
	}
	if (dur && (rt_parse_duration(dur, &d) || !(d > 0))) {
		cmd_error(ctx, "run: --for '%s': expected a duration such as 8h, 90m or 600s", dur);
		return RT_EXIT_USAGE;
	}
	if (dur)
		*deadline = now + d;
	if (until || dur)
		*text = xasprintf("--%s %s", until ? "until" : "for", until ? until : dur);
	return 0;
}

int cmd_run(int argc, char **argv, struct rt_ctx *ctx)
{
	bool resume = false;
	long max_it = 0;
	bool quiet = false;
	const char *key_env = NULL, *until = NULL, *dur = NULL, *devices = NULL, *worker = NULL;
	const struct rt_opt opts[] = {
		{ "resume", 0, RT_OPT_FLAG, &resume, NULL, "continue the interrupted campaign of this spec" },
		{ "max-iterations", 0, RT_OPT_INT, &max_it, "N", "stop after N iterations (baseline included)" },
		{ "until", 0, RT_OPT_STR, &until, "HH:MM", "stop at the last iteration boundary before this local time" },
		{ "for", 0, RT_OPT_STR, &dur, "DURATION", "stop at the last iteration boundary within this time (8h, 90m, 600s)" },
		{ "quiet", 'q', RT_OPT_FLAG, &quiet, NULL, "no progress output" },
		{ "devices", 0, RT_OPT_STR, &devices, "LIST", "a device pool, cuda:0,cuda:1 (replaces the spec's devices:)" },
		{ "pool-worker", 0, RT_OPT_STR, &worker, "ARG", "internal: one worker of a device pool's round", true },
		CMD_OPT_API_KEY_ENV(key_env),
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1) {
		cmd_error(ctx, "run: expected one SPEC file");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	const char *key;
	if ((code = cmd_api_key(ctx, "run", key_env, &key)))
		return code;
	double deadline = 0;
	char *deadline_text = NULL;
	if ((code = parse_budget(ctx, until, dur, &deadline, &deadline_text)))
		return code;
	struct rt_sb err = RT_SB_INIT;
	struct spec *s = NULL;
	int rc = spec_load(argv[1], &s, &err);
	if (rc) {
		fprintf(stderr, "%s", err.buf);
		if (err.len && err.buf[err.len - 1] != '\n')
			fputc('\n', stderr);
		rt_sb_release(&err);
		return rc == RT_EUSAGE || rc == RT_EPARSE || rc == RT_EINVAL ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	if (s->warnings)
		fputs(s->warnings, stderr);
	if (devices) {
		struct spec_device *dv;
		size_t nd;
		if (spec_devices_parse_list(devices, &dv, &nd, &err)) {
			cmd_error(ctx, "run: --devices: %s", err.buf);
			rt_sb_release(&err);
			spec_free(s);
			return RT_EXIT_USAGE;
		}
		free(s->devices);
		s->devices = dv;
		s->n_devices = nd;
	}
	/* A testing hook (docs/campaign.md): the nth journal write fails. */
	const char *fault = getenv("RATCHET_FAULT_JOURNAL");
	struct run_campaign_opts o = {
		.resume = resume, .quiet = quiet || ctx->quiet, .tty = isatty(2),
		.max_iterations = (int)max_it, .out = stderr, .api_key = key,
		.deadline = deadline, .deadline_text = deadline_text,
		.fault_journal = fault ? atol(fault) : 0, .worker = worker, .api_key_env = key_env,
	};
	struct run_campaign_result res;
	rc = run_campaign(ctx->db, s, &o, &res, &err);
	if (rc && res.preflight) {
		/* Pre-flight's problems, one per line as `check --preflight` prints them. */
		rt_sb_trim(&err);
		fprintf(stderr, "%s\n", err.buf);
		code = RT_EXIT_USAGE;
	} else if (rc) {
		/* The progress printed the iteration's reason with its lines (an
		 * engine's log) already: the first line says enough here. */
		char *nl = o.quiet ? NULL : strchr(err.buf, '\n');
		if (nl)
			cmd_error(ctx, "run: %.*s (see above)", (int)(nl - err.buf), err.buf);
		else
			cmd_error(ctx, "run: %s", err.buf);
		code = rc == RT_EUSAGE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	} else {
		if (!o.quiet) {
			printf("campaign %lld '%s': %d iteration%s this run, %d kept",
			       (long long)res.campaign_id, s->name, res.iterations,
			       res.iterations == 1 ? "" : "s", res.kept);
			if (!isnan(res.gain)) {
				struct rt_sb g = RT_SB_INIT;
				rep_fmt_change(&g, res.gain, NAN, NAN, res.gain_better);
				printf(", objective %s vs baseline", g.buf);
				rt_sb_release(&g);
			}
			printf("%s\n", res.finished ? "; finished" : "; not finished (--resume continues)");
			if (res.stopped)
				printf("stopped: %s\n", res.stopped);
			printf("review: ratchet log, ratchet show %lld:SEQ, ratchet report --format html -o report.html\n",
			       (long long)res.campaign_id);
		}
		code = RT_EXIT_OK;
	}
	rt_sb_release(&err);
	free(res.stopped);
	free(deadline_text);
	spec_free(s);
	return code;
}
