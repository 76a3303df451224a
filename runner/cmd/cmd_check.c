/*
 * `ratchet check SPEC [--json] [--preflight]`: load and validate a campaign
 * spec. Prints the normalized form (YAML, or JSON with --json) on stdout and
 * exits 0; on a bad spec prints each error as "file:line:col: key.path:
 * message" on stderr (no prefix, so scripts and tests can compare lines) and
 * exits 2. --preflight also checks this machine as `ratchet run` does before
 * anything is measured (runner/campaign/preflight.c): each problem is one
 * such line with its fix, and any problem exits 2.
 */
#include "runner/campaign/campaign.h"
#include "runner/cmd/cmd.h"
#include "runner/spec/spec.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_check(int argc, char **argv, struct rt_ctx *ctx)
{
	bool json = false, pre = false;
	const struct rt_opt opts[] = {
		{ "json", 0, RT_OPT_FLAG, &json, NULL, "print the normalized spec as JSON" },
		{ "preflight", 0, RT_OPT_FLAG, &pre, NULL,
		  "also check this machine: programs, files, patches, GSM8K data, port, devices" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet check SPEC [--json] [--preflight]",
		"validate a campaign spec and print its normalized form",
		"Every key is checked; units are converted (durations to seconds, percentages to\n"
		"fractions), defaults are filled in and relative paths are made absolute against\n"
		"workdir. Errors go to stderr, one per line, as file:line:col: key.path: message\n"
		"(at most 20, then how many more).\n"
		"\n"
		"--preflight checks what `ratchet run` checks before it measures anything: every\n"
		"program resolves on PATH, every file exists, every patch passes `git apply --check`,\n"
		"the GSM8K data is there when a gate is declared, a fixed engine port is free, the\n"
		"devices named are visible. Each problem is one line, file:line:col: key.path:\n"
		"problem; fix. Nothing is started or recorded.\n"
		"\n"
		"Exit codes: 0 valid, 2 bad or unreadable spec, a pre-flight problem, or bad usage.",
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1) {
		cmd_error(ctx, "check: expected one SPEC file, got %d", npos);
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	json |= ctx->json;
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	int rc = spec_load(argv[1], &s, &err);
	if (rc) {
		if (rc == RT_EIO) {
			rt_sb_trim(&err);
			cmd_error(ctx, "check: %s", err.buf);
		} else {
			fputs(err.buf, stderr);
		}
		rt_sb_release(&err);
		return RT_EXIT_USAGE;
	}
	if (s->warnings) /* the spec loads; what it probably did not mean is said */
		fputs(s->warnings, stderr);
	if (pre) {
		struct rt_sb probs = RT_SB_INIT;
		struct run_preflight_opts po = { .resume = false };
		int n = run_preflight(s, &po, &probs);
		fputs(probs.buf, stderr);
		rt_sb_release(&probs);
		if (n) {
			cmd_error(ctx, "check: %d pre-flight problem%s", n, n == 1 ? "" : "s");
			spec_free(s);
			return RT_EXIT_USAGE;
		}
	}
	if (json) {
		json_t *j = spec_to_json(s);
		char *text = json_dumps(j, JSON_INDENT(2));
		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(j);
	} else {
		struct rt_sb out = RT_SB_INIT;
		spec_dump(s, &out);
		fputs(out.buf, stdout);
		rt_sb_release(&out);
	}
	spec_free(s);
	return RT_EXIT_OK;
}
