/*
 * `ratchet note N TEXT`: add a note to an iteration. Also the code shared with
 * `ratchet correct` and `ratchet invalidate` (cmd_note.h): they all append
 * one row to `notes`, never change an existing one.
 */
#include "runner/cmd/cmd_note.h"
#include "db/db.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The positionals from argv[first] on, joined by spaces; the caller frees it. */
static char *join(char **argv, int first, int n)
{
	struct rt_sb sb = RT_SB_INIT;
	for (int i = first; i < n; i++) {
		if (i > first)
			rt_sb_addc(&sb, ' ');
		rt_sb_adds(&sb, argv[i]);
	}
	return rt_sb_detach(&sb, NULL);
}

static void print_json(int64_t note_id, const char *kind, const struct db_iteration *it,
		       int64_t by, const char *text)
{
	json_t *o = json_object();
	json_object_set_new(o, "note_id", json_integer(note_id));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "iteration_id", json_integer(it->id));
	json_object_set_new(o, "campaign_id", json_integer(it->campaign_id));
	json_object_set_new(o, "seq", json_integer(it->seq));
	json_object_set_new(o, "by_iteration_id", by ? json_integer(by) : json_null());
	json_t *t = json_string(text);
	json_object_set_new(o, "text", t ? t : json_null());
	json_dumpf(o, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(o);
}

/* Add a note of kind to the iteration the user named as ref ("42" or "3:5");
 * by_ref names the correcting iteration of a correction (else NULL). */
static int add(struct rt_ctx *ctx, const char *cmd, const char *kind, const char *ref,
	       const char *by_ref, const char *text)
{
	int64_t id = 0, by = 0;
	int code = cmd_iteration(ctx, cmd, ref, &id);
	if (code)
		return code;
	if (by_ref && (code = cmd_iteration(ctx, cmd, by_ref, &by)))
		return code;
	const char *author = getenv("USER");
	if (!author || !*author)
		author = getenv("LOGNAME");

	struct rt_sb err = RT_SB_INIT;
	struct db_iteration it = { 0 }, byit = { 0 };
	int64_t note_id = 0;
	int rc = db_note_add_as(ctx->db, id, kind, by, text, author, &note_id, &err);
	if (!rc)
		rc = db_iteration_get(ctx->db, id, &it, &err);
	if (!rc && by)
		rc = db_iteration_get(ctx->db, by, &byit, &err);
	if (rc) {
		bool user = rc == RT_EINVAL || rc == RT_ESTATE || rc == RT_ENOENT;
		cmd_error(ctx, "%s: %s", cmd, user ? cmd_plain(&err) : err.buf);
		rt_sb_release(&err);
		db_iteration_release(&it);
		return user ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	if (ctx->json) {
		print_json(note_id, kind, &it, by, text);
	} else if (!ctx->quiet) {
		const char *what = !strcmp(kind, "invalidation") ? "invalidation" :
				   !strcmp(kind, "correction") ? "correction" : "note";
		printf("%s %lld added to iteration %lld:%d (id %lld, %s)", what, (long long)note_id,
		       (long long)it.campaign_id, it.seq, (long long)it.id, it.variant ? it.variant : "");
		if (by)
			printf(", corrected by %lld:%d (id %lld)", (long long)byit.campaign_id, byit.seq,
			       (long long)by);
		if (!strcmp(kind, "invalidation"))
			printf("; its result is now marked invalid and stays in the log");
		putchar('\n');
	}
	db_iteration_release(&it);
	db_iteration_release(&byit);
	return RT_EXIT_OK;
}

/* The first thing missing from the command line, or NULL. */
static const char *missing(const struct cmd_note_def *def, int npos, const char *opt_value,
			   char *buf, size_t n)
{
	if (npos < 1)
		return def->opt_is_text ? "missing ITERATION" : "missing ITERATION and TEXT";
	if (def->opt && !opt_value) {
		snprintf(buf, n, "missing --%s %s", def->opt, def->opt_arg);
		return buf;
	}
	if (def->opt_is_text)
		return npos > 1 ? "one ITERATION only" : NULL;
	return npos < 2 ? "missing TEXT" : NULL;
}

int cmd_note_run(int argc, char **argv, struct rt_ctx *ctx, const struct cmd_note_def *def)
{
	const char *value = NULL;
	const struct rt_opt opts[] = {
		{ def->opt, 0, def->opt ? RT_OPT_STR : RT_OPT_END, &value, def->opt_arg, def->opt_help },
		{ 0 },
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, def->help, argc, argv, &npos, &code))
		return code;
	char buf[128];
	const char *miss = missing(def, npos, value, buf, sizeof(buf));
	if (miss) {
		cmd_error(ctx, "%s: %s", def->cmd, miss);
		fprintf(stderr, "usage: %s\n", def->help->usage);
		return RT_EXIT_USAGE;
	}
	if (def->opt_is_text)
		return add(ctx, def->cmd, def->kind, argv[1], NULL, value);
	char *text = join(argv, 2, npos + 1);
	code = add(ctx, def->cmd, def->kind, argv[1], value, text);
	free(text);
	return code;
}

static const struct rt_cmd_help help = {
	"ratchet note ITERATION TEXT...",
	"add a note to an iteration (history is append-only: notes are new rows)",
	"ITERATION is the id `ratchet log` shows, or CAMPAIGN:SEQ (e.g. 3:5).\n"
	"The words of TEXT are joined by spaces. Exit 2 when the iteration does not exist.",
};

int cmd_note(int argc, char **argv, struct rt_ctx *ctx)
{
	static const struct cmd_note_def def = { .cmd = "note", .kind = "note", .help = &help };
	return cmd_note_run(argc, argv, ctx, &def);
}
