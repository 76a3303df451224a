/* `ratchet restore`: every file a campaign touched back to its pre-campaign bytes. */
#include "runner/campaign/campaign.h"
#include "runner/cmd/cmd.h"

#include <stdio.h>

static const struct rt_cmd_help help = {
	"ratchet restore [--campaign ID]",
	"Put every file the campaign (default: the latest) touched back to its pre-campaign\n"
	"bytes, undoing any half-applied change first. The campaign is marked aborted unless\n"
	"it had finished; its history stays.",
	NULL,
};

int cmd_restore(int argc, char **argv, struct rt_ctx *ctx)
{
	long id = 0;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &id, "ID", "campaign to restore (default: the latest)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "restore: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	int n = 0;
	int rc = run_campaign_restore(ctx->db, id, &n, &err);
	if (rc) {
		cmd_error(ctx, "restore: %s", err.buf);
		rt_sb_release(&err);
		return rc == RT_ENOENT ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	if (!ctx->quiet)
		printf("restored %d file%s to their pre-campaign bytes\n", n, n == 1 ? "" : "s");
	rt_sb_release(&err);
	return RT_EXIT_OK;
}
