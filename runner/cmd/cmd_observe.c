/*
 * `ratchet observe --campaign ID PROFILE`: profiling as an iteration. An
 * observe iteration changes nothing: it records a profile of the campaign's
 * current best configuration and the findings read from it, under the next
 * seq, in the final state `observed`. Like any iteration it can be noted,
 * corrected (a later observation that invalidates a theory: `ratchet
 * correct`) or invalidated. Iteration, profile and findings are written in
 * one transaction: a failed import records nothing.
 */
#include "runner/cmd/cmd_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/profiles.h"

static const struct rt_cmd_help help = {
	"ratchet observe --campaign ID PROFILE... [--format F] [--steps N] [--json]",
	"Record a profile of a campaign's current best configuration as an iteration of its own:\n"
	"no change, a profile (as `ratchet profile import` reads it, with the campaign spec's\n"
	"profile: map) and the findings it suggests, in the final state 'observed'. It can be\n"
	"noted, corrected and invalidated like any other iteration.",
	"Run it between campaign runs, not while `ratchet run` holds the campaign: the iteration\n"
	"takes the next seq. Exit codes: 0 recorded, 2 usage or an unreadable profile, 3 runtime\n"
	"error.",
};

/* The next seq and the best configuration's iteration (the last kept, else
 * the baseline). */
static int next_seq(struct db *db, int64_t cid, int *seq, int64_t *parent, struct rt_sb *err)
{
	struct db_iteration *its = NULL;
	size_t n = 0;
	int rc = db_iterations_list(db, cid, &its, &n, err);
	*seq = 0;
	*parent = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (its[i].seq >= *seq)
			*seq = its[i].seq + 1;
		if (its[i].state == DB_ITER_KEPT || its[i].state == DB_ITER_BASELINE)
			*parent = its[i].id;
	}
	db_iterations_free(its, n);
	return rc;
}

/* A runner holding the campaign (a live heartbeat) would take the same seq:
 * RT_EBUSY naming it. A lease left by a dead runner is no obstacle. */
static int not_running(struct db *db, int64_t cid, struct rt_sb *err)
{
	struct db_lease l = { 0 };
	int rc = db_lease_get(db, cid, &l, err);
	if (!rc && l.token && rt_wall_ms() - l.heartbeat_at < 30000)
		rc = rt_errf(err, RT_EBUSY, "campaign %lld is being run by pid %lld on host %s; observe it "
			     "when that run ends", (long long)cid, (long long)l.pid, l.host ? l.host : "?");
	db_lease_release(&l);
	return rc;
}

/* One transaction: the iteration, the import and findings, the final state. */
static int observe(struct rt_ctx *ctx, struct research_import *in, const struct cmd_research_env *env,
		   int64_t *iter_id, int *seq, int64_t *profile_id, size_t *nfind)
{
	struct rt_sb err = RT_SB_INIT;
	struct research_observation o = { .variant = "observe" };
	char *note = xasprintf("observe: profile %s%s", in->paths[0], in->n_paths > 1 ? " ..." : "");
	o.note = note;
	int rc = db_begin(ctx->db, &err), code = 0;
	if (!rc)
		rc = not_running(ctx->db, in->campaign_id, &err);
	if (!rc)
		rc = next_seq(ctx->db, in->campaign_id, &o.seq, &o.parent, &err);
	*seq = o.seq;
	if (!rc)
		rc = research_observe(ctx->db, in, &o, env->map, env->tables, env->n_tables, iter_id,
				      profile_id, nfind, &err);
	if (!rc)
		rc = db_commit(ctx->db, &err);
	if (rc) {
		cmd_error(ctx, "observe: %s", cmd_plain(&err));
		code = rc == RT_EBUSY ? RT_EXIT_USAGE : cmd_research_exit(rc);
		db_rollback(ctx->db);
	}
	free(note);
	rt_sb_release(&err);
	return code;
}

int cmd_observe(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *format = NULL;
	long steps = 0, campaign = 0;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "the campaign observed (required)" },
		{ "format", 'f', RT_OPT_STR, &format, "F", "chrome, nsys, rocprof, unitrace or ncu (default: detect)" },
		{ "steps", 0, RT_OPT_INT, &steps, "N", "steps the profile covers (default: its step annotations)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos < 1 || campaign <= 0 || steps < 0) {
		cmd_error(ctx, "observe: expected --campaign ID and a PROFILE");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	struct cmd_research_env env;
	if ((code = cmd_research_env_load(ctx, "observe", campaign, NULL, &env)))
		return code;
	struct research_import in = { (const char *const *)argv + 1, (size_t)npos, format, steps,
				      campaign, 0 };
	int64_t iter = 0, profile = 0;
	int seq = 0;
	size_t nfind = 0;
	code = observe(ctx, &in, &env, &iter, &seq, &profile, &nfind);
	if (!code) {
		if (!ctx->json)
			printf("iteration %lld (%lld:%d) observed\n", (long long)iter, (long long)campaign, seq);
		cmd_profile_print(ctx, ctx->db, profile, nfind);
	}
	cmd_research_env_release(&env);
	return code;
}
