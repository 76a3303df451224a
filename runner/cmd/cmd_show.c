/*
 * `ratchet show ITERATION`: everything about one iteration (reports/show.c);
 * with --artifact NAME, the bytes of one of its stored artifacts (an engine
 * or build log) on stdout instead. Under strategy llm, the round of chat
 * exchanges that proposed it follows the decision (db/llm.h): each attempt's
 * verdict, tokens and latency, the prompt's last message and the answer,
 * cut short unless --full.
 */
#include "runner/cmd/cmd.h"
#include "db/llm.h"
#include "db/query.h"
#include "reports/rep.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text of the prompt or the answer shown without --full. */
#define SHOW_CLIP 400

/* s on one indented line, cut at SHOW_CLIP bytes unless full. */
static void put_clip(const char *label, const char *s, bool full)
{
	size_t n = s ? strlen(s) : 0;
	size_t k = full || n <= SHOW_CLIP ? n : SHOW_CLIP;
	printf("     %s: %.*s%s", label, (int)k, s ? s : "", full && n > SHOW_CLIP ? "\n" : "");
	if (k < n)
		printf("... (%zu more bytes; --full shows all)", n - k);
	printf("\n");
}

/* The model's answer in a stored response body, or the body itself. */
static char *answer_of(const char *body)
{
	json_t *b = body ? json_loads(body, 0, NULL) : NULL;
	json_t *m = json_object_get(json_array_get(json_object_get(b, "choices"), 0), "message");
	const char *c = json_string_value(json_object_get(m, "content"));
	char *out = c ? xstrdup(c) : body ? xstrdup(body) : NULL;
	json_decref(b);
	return out;
}

static void show_exchange(const struct db_llm_exchange *x, bool full)
{
	printf("  attempt %d  %-10s  %d+%d tokens  %.0f ms\n", x->attempt, db_llm_verdict_name(x->verdict),
	       x->prompt_tokens, x->completion_tokens, x->latency_ms);
	json_t *msgs = json_loads(x->request, 0, NULL);
	size_t nm = json_array_size(msgs);
	if (full) {
		for (size_t i = 0; i < nm; i++) {
			json_t *m = json_array_get(msgs, i);
			put_clip(json_string_value(json_object_get(m, "role")),
				 json_string_value(json_object_get(m, "content")), true);
		}
	} else if (nm) {
		printf("     prompt: %zu messages, %zu bytes; the last:\n", nm, strlen(x->request));
		put_clip(json_string_value(json_object_get(json_array_get(msgs, nm - 1), "role")),
			 json_string_value(json_object_get(json_array_get(msgs, nm - 1), "content")), false);
	}
	json_decref(msgs);
	char *a = full ? (x->response ? xstrdup(x->response) : NULL) : answer_of(x->response);
	put_clip(full ? "response" : "answer", a, full);
	free(a);
	if (x->error)
		put_clip("refused", x->error, full);
}

/* The llm round that proposed iteration id, if any (text output only). */
static int show_llm(struct rt_ctx *ctx, int64_t id, bool full)
{
	struct db_llm_exchange *x = NULL;
	size_t n = 0;
	struct rt_sb err = RT_SB_INIT;
	int rc = db_llm_of_iteration(ctx->db, id, &x, &n, &err);
	if (rc)
		cmd_error(ctx, "show: %s", err.buf);
	if (n)
		printf("\nllm exchanges (strategy llm: the model's answers that led to this iteration)\n");
	for (size_t i = 0; i < n; i++)
		show_exchange(&x[i], full);
	if (n && x[n - 1].verdict == DB_LLM_ACCEPTED && x[n - 1].rationale)
		printf("  accepted; rationale: %s\n", x[n - 1].rationale);
	db_llm_free(x, n);
	rt_sb_release(&err);
	return rc;
}

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
		  "strategy llm: print the prompts and responses whole, not cut short" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet show ITERATION [--artifact NAME] [--full] [--json]",
		"everything about one iteration: change, measurements, statistics, gate and flips,\n"
		"regressions, environment, log events, artifacts, notes, corrections, and under\n"
		"strategy llm the chat exchanges that proposed it",
		"ITERATION is CAMPAIGN:SEQ as `ratchet log` prints it (3:5), or the global id\n"
		"(the id column). --artifact prints one of the artifacts listed under\n"
		"\"artifacts\" byte for byte, e.g. engine-start-failure.log.",
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
	int rc = rep_show(ctx->db, stdout, id, ctx->json, ctx->color, &err);
	if (!rc && !ctx->json)
		rc = show_llm(ctx, id, full);
	else if (rc)
		cmd_error(ctx, "show: %s", err.buf);
	rt_sb_release(&err);
	return rc == RT_ENOENT ? RT_EXIT_USAGE : rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
