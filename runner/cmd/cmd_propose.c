/*
 * `ratchet propose`: the top findings that carry a variant, as entries of a
 * spec's variants: list (YAML to paste, or to feed a strategy), best bound
 * first, each under a comment naming its finding and its bound.
 */
#include "runner/cmd/cmd_profile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/profiles.h"
#include "runner/base/rt_yaml.h"

static const struct rt_cmd_help help = {
	"ratchet propose [--campaign ID] [--top N] [--json]",
	"Turn the top findings into variants in the spec's schema: a hole becomes a table entry\n"
	"copied from the nearest existing one (shape columns compared numerically, measured columns\n"
	"never copied), an upstream ref a patch. Printed as YAML for the spec's variants: list, best\n"
	"Amdahl bound first; --json prints the variants as a JSON array.",
	"Findings without a concrete change (hot ops, storms) are listed as comments. Measure before\n"
	"trusting: the bound is a ceiling. Exit codes: 0 variants proposed, 1 none, 3 runtime error.",
};

int cmd_propose(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0, top = 5;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "only this campaign's findings" },
		{ "top", 'n', RT_OPT_INT, &top, "N", "propose for the N best findings with a variant (default 5)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "propose: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	struct db_finding *f = NULL;
	size_t n = 0;
	struct rt_sb err = RT_SB_INIT;
	if (db_findings_list(ctx->db, campaign, &f, &n, &err)) {
		cmd_error(ctx, "propose: %s", cmd_plain(&err));
		rt_sb_release(&err);
		return RT_EXIT_RUNTIME;
	}
	json_t *all = json_array();
	struct rt_sb out = RT_SB_INIT;
	long proposed = 0;
	for (size_t i = 0; i < n && proposed < (top > 0 ? top : (long)n); i++) {
		double bound = isnan(f[i].potential) ? 0 : f[i].potential * 100;
		json_t *v = f[i].variant ? json_loads(f[i].variant, 0, NULL) : NULL;
		if (!v) {
			if (!ctx->json && i < (size_t)(top > 0 ? top : (long)n))
				rt_sb_addf(&out, "# finding %lld (%s, bound %.1f%%): %s: no variant to propose\n",
					   (long long)f[i].id, f[i].kind, bound, f[i].detail ? f[i].detail : f[i].subject);
			continue;
		}
		proposed++;
		json_array_append(all, v);
		rt_sb_addf(&out, "# finding %lld (%s, bound %.1f%% = %.1f%% x (1 - 1/%.2g)): %s\n",
			   (long long)f[i].id, f[i].kind, bound, f[i].share * 100, f[i].speedup,
			   f[i].detail ? f[i].detail : f[i].subject);
		json_t *one = json_pack("[O]", v);
		if (rt_yaml_from_json(one, &out, &err))
			rt_sb_addf(&out, "# %s\n", err.buf);
		json_decref(one);
		json_decref(v);
	}
	if (ctx->json) {
		cmd_print_json(json_incref(all));
	} else if (proposed) {
		printf("# variants proposed by ratchet from its findings: paste under the spec's variants:\n%s",
		       out.buf);
	} else {
		printf("%sno finding carries a variant%s\n", out.buf, n ? "" : " (no findings)");
	}
	json_decref(all);
	rt_sb_release(&out);
	rt_sb_release(&err);
	db_findings_free(f, n);
	return proposed ? RT_EXIT_OK : RT_EXIT_NO;
}
