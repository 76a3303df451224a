/* `ratchet log`: one line per iteration of a campaign (reports/log.c). */
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>
#include <string.h>

int cmd_log(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0, limit = 50;
	const char *state = NULL, *since = NULL;
	bool all = false;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "campaign id (default: the latest)" },
		{ "state", 's', RT_OPT_STR, &state, "S",
		  "only this state: baseline kept reverted gated failed invalid interrupted" },
		{ "since", 0, RT_OPT_STR, &since, "WHEN", "only iterations started since 2025-11-30, 12h, 3d" },
		{ "limit", 'n', RT_OPT_INT, &limit, "N", "the newest N iterations, oldest first (default 50)" },
		{ "all", 'a', RT_OPT_FLAG, &all, NULL, "every iteration (same as --limit 0)" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet log [--campaign ID] [--state S] [--since DATE|Nh|Nd] [--limit N] [--json]",
		"one line per iteration: id, seq, state, change, objective delta [CI], gate accuracy",
		"glyphs: ● baseline  ✓ kept  ↩ reverted  ✗ gated  ! failed  ⊘ invalid (also any\n"
		"iteration with an invalidation note; its delta is struck through)  ⚡ interrupted.\n"
		"The id column is what `ratchet show` takes.",
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "log: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	if (limit < 0 || campaign < 0) {
		cmd_error(ctx, "log: --limit and --campaign must not be negative");
		return RT_EXIT_USAGE;
	}
	enum db_iter_state parsed;
	if (state && db_iter_state_parse(state, &parsed)) {
		const char *states[DB_ITER_N_STATES];
		for (int i = 0; i < DB_ITER_N_STATES; i++)
			states[i] = db_iter_state_name((enum db_iter_state)i);
		{
			const char *d = rt_did_you_mean(state, states, DB_ITER_N_STATES);
			cmd_error(ctx, "log: --state: unknown state '%s'%s%s%s", state,
				  d ? " (did you mean '" : "", d ? d : "", d ? "'?)" : "");
			return RT_EXIT_USAGE;
		}
	}
	struct rt_sb err = RT_SB_INIT;
	struct rep_log_opts o = {
		.campaign_id = campaign, .state = state, .limit = all ? 0 : (size_t)limit,
		.json = ctx->json, .color = ctx->color,
	};
	if (since && rep_parse_since(since, rt_wall_ms(), &o.since_ms, &err)) {
		cmd_error(ctx, "log: %s", err.buf);
		rt_sb_release(&err);
		return RT_EXIT_USAGE;
	}
	int rc = rep_log(ctx->db, stdout, &o, &err);
	if (rc)
		cmd_error(ctx, "log: %s", err.buf);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
