/* `ratchet regressions`: the metrics that got worse beyond the noise in kept
 * changes, the client's self-metrics apart; --all adds the changes not kept
 * (reports/log.c). */
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>

int cmd_regressions(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0;
	bool all = false;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "campaign id (default: the latest)" },
		{ "all", 'a', RT_OPT_FLAG, &all, NULL, "also the regressions of changes not kept, marked" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet regressions [--campaign ID] [--all] [--json]",
		"the regressions of kept changes: metric, before -> after, change [CI] (worse), and the "
		"iteration that caused it",
		"A kept change shipped; its regressions are listed first. The client's self-metrics "
		"(send lag, a kernel's rsd and samples) are listed apart: they measure the client, not "
		"the engine. --all adds the regressions of changes that were not kept, marked with "
		"their state.",
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "regressions: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	const struct rep_regr_opts ro = { .campaign_id = campaign, .all = all, .json = ctx->json,
					  .color = ctx->color };
	int rc = rep_regressions(ctx->db, stdout, &ro, &err);
	if (rc)
		cmd_error(ctx, "regressions: %s", err.buf);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
