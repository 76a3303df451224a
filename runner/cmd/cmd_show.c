/*
 * `ratchet show ITERATION`: one iteration in summary, everything with --full
 * (reports/show.c); with --artifact NAME, the bytes of one of its stored
 * artifacts (an engine or build log) on stdout instead. A name several
 * artifacts were stored under (one engine log per launch) is refused with
 * their unique names. Under strategy llm, the round of chat exchanges that
 * proposed it follows the decision, cut short unless --full.
 */
#include "runner/cmd/cmd.h"
#include "db/query.h"
#include "reports/rep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names of the iteration's artifacts, for the error that lists them. */
static void artifact_names(struct db *db, int64_t id, struct rt_sb *out)
{
	struct db_q_kv *a = NULL;
	size_t n = 0;
	if (db_q_artifacts(db, id, &a, &n, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			rt_sb_addf(out, "%s%s", i ? ", " : "", a[i].key);
	db_q_kvs_free(a, n);
}

static int show_artifact(struct rt_ctx *ctx, const char *ref, int64_t id, const char *name)
{
	struct rt_sb err = RT_SB_INIT;
	void *bytes = NULL;
	size_t len = 0;
	int rc = db_q_artifact_content(ctx->db, id, name, &bytes, &len, &err);
	int code = RT_EXIT_OK;
	if (rc == RT_ENOENT) {
		struct rt_sb names = RT_SB_INIT;
		artifact_names(ctx->db, id, &names);
		cmd_error(ctx, "show: iteration %s has no artifact '%s' (%s%s)", ref, name,
			  names.len ? "it has: " : "it has none", names.buf);
		rt_sb_release(&names);
		code = RT_EXIT_USAGE;
	} else if (rc == RT_EINVAL) {
		cmd_error(ctx, "show: iteration %s: %s", ref, err.buf);
		code = RT_EXIT_USAGE;
	} else if (rc) {
		cmd_error(ctx, "show: %s", err.buf);
		code = RT_EXIT_RUNTIME;
	} else if (fwrite(bytes, 1, len, stdout) != len || fflush(stdout)) {
		cmd_error(ctx, "show: stdout: write error");
		code = RT_EXIT_RUNTIME;
	}
	free(bytes);
	rt_sb_release(&err);
	return code;
}

int cmd_show(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *artifact = NULL;
	bool full = false;
	const struct rt_opt opts[] = {
		{ "artifact", 0, RT_OPT_STR, &artifact, "NAME",
		  "print this stored artifact (an engine or build log) instead" },
		{ "full", 0, RT_OPT_FLAG, &full, NULL,
		  "everything, not the summary: samples, environment, provenance, llm text whole" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet show ITERATION [--artifact NAME] [--full] [--json]",
		"one iteration in summary: change, decision and statistics, gate and flips,\n"
		"regressions, engine launches (identical ones as one block), artifacts, notes,\n"
		"corrections, and under strategy llm the chat exchanges that proposed it;\n"
		"--full adds the samples per arm, log events, environment and provenance",
		"ITERATION is CAMPAIGN:SEQ as `ratchet log` prints it (3:5), or the global id\n"
		"(the id column). --artifact prints one of the artifacts listed under\n"
		"\"artifacts\" byte for byte, e.g. engine-start-failure.log. Several logs of\n"
		"one kind (one per engine launch) are numbered: engine-cand-1.log,\n"
		"engine-cand-2.log; the bare engine-cand.log is then refused with the list.",
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1) {
		cmd_error(ctx, "show: expected one ITERATION (CAMPAIGN:SEQ or id)");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	int64_t id;
	if ((code = cmd_iteration(ctx, "show", argv[1], &id)))
		return code;
	if (artifact)
		return show_artifact(ctx, argv[1], id, artifact);
	struct rt_sb err = RT_SB_INIT;
	const struct rep_show_opts so = { .json = ctx->json, .color = ctx->color, .full = full };
	int rc = rep_show(ctx->db, stdout, id, &so, &err);
	if (rc)
		cmd_error(ctx, "show: %s", err.buf);
	rt_sb_release(&err);
	return rc == RT_ENOENT ? RT_EXIT_USAGE : rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
