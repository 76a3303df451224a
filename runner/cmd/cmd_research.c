/*
 * `ratchet research REPO --refs A,B,C`: rank a kernel library's refs (pull
 * requests the user fetched, branches, commits) by how much of a profile's
 * hot time their diffs touch, and record each as an `upstream` finding with
 * its diffstat (agents/research/upstream.c).
 */
#include "runner/cmd/cmd_profile.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/research/upstream.h"
#include "db/profiles.h"
#include "runner/bench/bench_cmd.h"

static const struct rt_cmd_help help = {
	"ratchet research REPO --refs A,B,C [--base REF] [--profile ID | --campaign ID]\n"
	"                [--patch-dir DIR] [--json]",
	"Rank refs of a local git checkout (a kernel library: vLLM, AITER, llama.cpp, Triton) by how\n"
	"much of a profile's kernel time their diffs touch: the ops their changed files are about\n"
	"(paths classified like kernel names) and the ops of the profile's kernels their changed\n"
	"lines name. Each ref is recorded as an upstream finding with its diffstat; with --patch-dir\n"
	"its diff is written there and the finding carries a patch variant (`ratchet propose`).",
	"Each ref is diffed from its merge base with --base (default HEAD): fetch the pull requests\n"
	"first (git fetch origin pull/123/head:pr-123). The profile is --profile ID, else the\n"
	"campaign's latest, else the latest imported. Exit codes: 0, 2 usage or a bad ref, 3 runtime.",
};

static void print_refs(const struct rt_ctx *ctx, const struct research_refs *r)
{
	if (ctx->json) {
		json_t *a = json_array();
		for (size_t i = 0; i < r->n; i++)
			json_array_append_new(a, json_pack("{s:s, s:f, s:s, s:s, s:s, s:s?}", "ref", r->v[i].ref,
							   "share", r->v[i].share, "ops", r->v[i].ops, "kernels",
							   r->v[i].kernels, "diffstat", r->v[i].diffstat,
							   "patch", r->v[i].patch));
		cmd_print_json(a);
		return;
	}
	printf("  %-4s %7s %7s  %-24s %s\n", "rank", "touches", "bound", "ref", "ops");
	double k = research_finding_speedup(RESEARCH_FIND_UPSTREAM);
	for (size_t i = 0; i < r->n; i++) {
		printf("  %-4zu %6.1f%% %6.1f%%  %-24s %s\n", i + 1, r->v[i].share * 100,
		       research_bound(r->v[i].share, k) * 100, r->v[i].ref, r->v[i].ops[0] ? r->v[i].ops : "-");
		printf("       %s%s%s%s%s\n", cmd_color(ctx, "dim"), r->v[i].diffstat,
		       r->v[i].kernels[0] ? "; kernels: " : "", r->v[i].kernels, cmd_color(ctx, "reset"));
		if (r->v[i].patch)
			printf("       patch: %s\n", r->v[i].patch);
	}
}

int cmd_research(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *refs = NULL, *base = NULL, *patch_dir = NULL;
	long profile = 0, campaign = 0;
	const struct rt_opt opts[] = {
		{ "refs", 'r', RT_OPT_STR, &refs, "A,B", "branches or commits to rank (required)" },
		{ "base", 'b', RT_OPT_STR, &base, "REF", "diff each ref from its merge base with REF (default HEAD)" },
		{ "profile", 'p', RT_OPT_INT, &profile, "ID", "the profile to weigh by (default: the latest)" },
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "its latest profile, its spec's op map" },
		{ "patch-dir", 0, RT_OPT_STR, &patch_dir, "DIR", "write each ref's diff there: a patch variant" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1 || !refs || !*refs) {
		cmd_error(ctx, "research: expected REPO and --refs A,B,C");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	struct rt_sb err = RT_SB_INIT;
	int64_t pid = profile;
	int rc = pid ? 0 : db_profile_latest(ctx->db, campaign, &pid, &err);
	if (rc) {
		cmd_error(ctx, "research: %s", rc == RT_ENOENT ? "no profile imported yet: run `ratchet "
			  "profile import` or `ratchet observe` first" : cmd_plain(&err));
		rt_sb_release(&err);
		return rc == RT_ENOENT ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	struct cmd_research_env env;
	if ((code = cmd_research_env_load(ctx, "research", campaign, NULL, &env))) {
		rt_sb_release(&err);
		return code;
	}
	char *copy = xstrdup(refs);
	const char **v = xcalloc(strlen(refs) + 1, sizeof(char *));
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		v[n++] = t;
	struct research_upstream u = { argv[1], base, v, n, patch_dir, run_bcmd_exec_simple, campaign };
	struct research_refs r;
	rc = research_rank_refs(ctx->db, pid, env.map, &u, &r, &err);
	if (rc) {
		cmd_error(ctx, "research: %s", cmd_plain(&err));
		code = cmd_research_exit(rc);
	} else {
		if (!ctx->json)
			printf("%zu ref%s ranked against profile %lld (recorded as upstream findings):\n", r.n,
			       r.n == 1 ? "" : "s", (long long)pid);
		print_refs(ctx, &r);
		research_refs_release(&r);
	}
	free(v);
	free(copy);
	cmd_research_env_release(&env);
	rt_sb_release(&err);
	return code;
}
