/* `ratchet findings`: the research agent's findings, ranked by their Amdahl bound. */
#include "runner/cmd/cmd_profile.h"

#include <stdio.h>

#include "db/profiles.h"

static const struct rt_cmd_help help = {
	"ratchet findings [--campaign ID] [--profile ID] [--top N] [--json]",
	"List the findings recorded by `profile import`, `observe`, `holes` and `research`, ranked by\n"
	"their Amdahl bound: the share of the profile's time a finding concerns times (1 - 1/k), k a\n"
	"plausible speedup for its kind (hole 1.5, fallback 1.5, ungraphed 1.3, hot op 1.2, upstream\n"
	"1.2, recompile storm 1.1). The bound is the most acting on it could save, not a forecast.",
	"Kinds: hole (a shape the tuned table has no entry for), fallback (a default kernel ran),\n"
	"hot_op, ungraphed (batches over the largest graph capture size), recompile_storm (a log\n"
	"event still firing after warm-up), upstream (a ref whose diff touches hot kernels).\n"
	"`ratchet propose` turns the top ones into variants. Exit codes: 0, 3 runtime error.",
};

int cmd_findings(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0, top = 20, profile = 0;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "only this campaign's findings" },
		{ "profile", 'p', RT_OPT_INT, &profile, "ID", "only the findings read from this profile" },
		{ "top", 'n', RT_OPT_INT, &top, "N", "show the N first (default 20; 0: all)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "findings: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct db_finding *f = NULL;
	size_t n = 0;
	struct rt_sb err = RT_SB_INIT;
	if (db_findings_list(ctx->db, campaign, &f, &n, &err)) {
		cmd_error(ctx, "findings: %s", cmd_plain(&err));
		rt_sb_release(&err);
		return RT_EXIT_RUNTIME;
	}
	size_t kept = 0; /* --profile: its findings, still best first */
	for (size_t i = 0; i < n; i++) {
		if (profile && f[i].profile_id != profile)
			continue; /* stays in the array, freed with the rest */
		if (kept != i) {
			struct db_finding t = f[kept];
			f[kept] = f[i];
			f[i] = t;
		}
		kept++;
	}
	if (!kept && !ctx->json)
		printf("no findings%s: import a profile (`ratchet profile import`, `ratchet observe`)\n",
		       campaign ? " in this campaign" : "");
	else
		cmd_findings_print(ctx, f, kept, top);
	db_findings_free(f, n);
	rt_sb_release(&err);
	return RT_EXIT_OK;
}
