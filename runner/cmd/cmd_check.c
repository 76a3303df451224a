/*
 * `ratchet check SPEC [--json]`: load and validate a campaign spec. Prints
 * the normalized form (YAML, or JSON with --json) on stdout and exits 0; on
 * a bad spec prints each error as "file:line:col: key.path: message" on
 * stderr (no prefix, so scripts and tests can compare lines) and exits 2.
 */
#include "runner/cmd/cmd.h"
#include "runner/spec/spec.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_check(int argc, char **argv, struct rt_ctx *ctx)
{
	bool json = false;
	const struct rt_opt opts[] = {
		{ "json", 0, RT_OPT_FLAG, &json, NULL, "print the normalized spec as JSON" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet check SPEC [--json]",
		"validate a campaign spec and print its normalized form",
		"Every key is checked; units are converted (durations to seconds, percentages to\n"
		"fractions), defaults are filled in and relative paths are made absolute against\n"
		"workdir. Errors go to stderr, one per line, as file:line:col: key.path: message\n"
		"(at most 20, then how many more). Exit codes: 0 valid, 2 bad or unreadable spec,\n"
		"or bad usage.",
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
