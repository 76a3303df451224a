/* `ratchet show N`: everything about one iteration (reports/show.c). */
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_show(int argc, char **argv, struct rt_ctx *ctx)
{
	const struct rt_opt opts[] = { { 0 } };
	const struct rt_cmd_help help = {
		"ratchet show ID [--json]",
		"everything about one iteration: change, measurements, statistics, gate and flips,\n"
		"regressions, environment, log events, artifacts, notes, corrections",
		"ID is the iteration id printed in the first column of `ratchet log`.",
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1) {
		cmd_error(ctx, "show: expected one iteration id");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	char *end;
	long long id = strtoll(argv[1], &end, 10);
	if (*end || end == argv[1] || id <= 0) {
		cmd_error(ctx, "show: '%s' is not an iteration id", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	int rc = rep_show(ctx->db, stdout, id, ctx->json, ctx->color, &err);
	if (rc)
		cmd_error(ctx, "show: %s", err.buf);
	rt_sb_release(&err);
	return rc == RT_ENOENT ? RT_EXIT_USAGE : rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
