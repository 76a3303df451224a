/* `ratchet regressions`: every metric that got worse beyond the noise (reports/log.c). */
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>

int cmd_regressions(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "campaign id (default: the latest)" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet regressions [--campaign ID] [--json]",
		"every regression: metric, before -> after, delta [CI], and the iteration that caused it",
		"KEPT marks regressions of changes that were kept anyway (the objective gain won).",
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "regressions: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	int rc = rep_regressions(ctx->db, stdout, campaign, ctx->json, ctx->color, &err);
	if (rc)
		cmd_error(ctx, "regressions: %s", err.buf);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
