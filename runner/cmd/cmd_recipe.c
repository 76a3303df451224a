/* `ratchet recipe`: what a campaign kept, written so that it can be reproduced without ratchet. */
#include "runner/campaign/campaign.h"
#include "runner/cmd/cmd.h"

#include <stdio.h>

static const struct rt_cmd_help help = {
	"ratchet recipe [--campaign ID] -o DIR",
	"Write what the campaign (default: the latest) kept into DIR, a new or empty folder:\n"
	"files/ (the best configuration's bytes of every file a kept change touched),\n"
	"patches/ (the kept patches, in order), apply.sh (puts files/ into a workdir and runs\n"
	"the kept builds), run.sh (the environment and the command line with the kept flags),\n"
	"spec.yaml (the benchmarks and gate on the best configuration), variants.yaml (the\n"
	"kept changes with their lineage: `ratchet replay --from` reads it), a Dockerfile when\n"
	"the engine ran from a container image, and README.txt (how to use each).",
	"Everything comes from the database, so a recipe can be written after `ratchet restore`\n"
	"or on another machine; stored bytes are checked against their sha256 first. Every path\n"
	"in the scripts is relative to DIR, so they run from any folder: on a copy of the\n"
	"workdir as it was before the campaign, `sh DIR/apply.sh COPY` puts the best's files\n"
	"there (and spec.yaml as COPY/ratchet-recipe.yaml), `sh DIR/run.sh COPY` starts the\n"
	"engine on COPY's files as the best was measured (both default to the current folder),\n"
	"and `ratchet run COPY/ratchet-recipe.yaml` measures it again. README.txt names the\n"
	"configuration fingerprint. Nothing is written outside DIR.\n"
	"\n"
	"exit codes: 0 written, 2 usage (no such campaign, DIR not empty), 3 runtime error.",
};

int cmd_recipe(int argc, char **argv, struct rt_ctx *ctx)
{
	long id = 0;
	const char *dir = NULL;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &id, "ID", "campaign to write (default: the latest)" },
		{ "output", 'o', RT_OPT_STR, &dir, "DIR", "folder to write, new or empty" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos || !dir) {
		cmd_error(ctx, npos ? "recipe: unexpected argument '%s'" : "recipe: -o DIR is required%s",
			  npos ? argv[1] : "");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	struct run_recipe_result res;
	int rc = run_campaign_recipe(ctx->db, id, dir, &res, &err);
	if (rc) {
		cmd_error(ctx, "recipe: %s", err.buf);
		rt_sb_release(&err);
		return rc == RT_ENOENT || rc == RT_EUSAGE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	if (!ctx->quiet)
		printf("campaign %lld: %d kept change%s, best %lld:%d; wrote %d file%s and %d patch%s to %s "
		       "(see %s/README.txt)\n",
		       (long long)res.campaign_id, res.kept, res.kept == 1 ? "" : "s", (long long)res.campaign_id,
		       res.best_seq, res.files, res.files == 1 ? "" : "s", res.patches,
		       res.patches == 1 ? "" : "es", dir, dir);
	rt_sb_release(&err);
	return RT_EXIT_OK;
}
