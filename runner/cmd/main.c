/*
 * ratchet's entry point: global flags, then one lookup in the command table.
 * Everything a command needs beyond its own flags (the database, colour,
 * --json) is set up here, so commands stay small.
 */
#include "runner/cmd/cmd.h"
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct rt_cmd commands[] = {
#define RT_CMD_ROW(name, flags, summary) { #name, cmd_##name, flags, summary },
	RT_COMMANDS(RT_CMD_ROW)
#undef RT_CMD_ROW
};

const struct rt_cmd *cmd_table(size_t *n)
{
	*n = RT_ARRAY_SIZE(commands);
	return commands;
}

const struct rt_cmd *cmd_find(const char *name)
{
	for (size_t k = 0; k < RT_ARRAY_SIZE(commands); k++)
		if (!strcmp(commands[k].name, name))
			return &commands[k];
	return NULL;
}

/* The options that come before the command. */
struct globals {
	const char *db;   /* --db FILE */
	bool json;        /* --json */
	bool quiet;       /* --quiet */
	bool version;     /* --version */
};

#define GLOBAL_OPTS(g)                                                                      \
	{                                                                                   \
		{ "db", 0, RT_OPT_STR, &(g)->db, "FILE",                                    \
		  "database file (default ./ratchet.db, or $RATCHET_DB)" },                 \
		{ "json", 0, RT_OPT_FLAG, &(g)->json, NULL,                                 \
		  "machine-readable output for read commands" },                            \
		{ "quiet", 'q', RT_OPT_FLAG, &(g)->quiet, NULL, "no progress output" },     \
		{ "version", 0, RT_OPT_FLAG, &(g)->version, NULL, "print the version" },    \
		{ 0 },                                                                      \
	}

static const struct rt_cmd_help main_help = {
	"ratchet [--db FILE] [--json] [--quiet] [--version] COMMAND [ARGS]",
	"ratchet tunes GPU inference one change at a time: it applies one change on top of\n"
	"the best configuration so far, benchmarks it, gates it on GSM8K accuracy, decides\n"
	"keep or revert with a stated confidence, and records everything in SQLite.",
	"exit codes:\n"
	"  0  ok\n"
	"  1  the gate or decision said no\n"
	"  2  usage error (bad flag, bad spec)\n"
	"  3  runtime error\n"
	"\n"
	"An iteration is named CAMPAIGN:SEQ (3:5, as `ratchet log` prints it) or by its\n"
	"global id (the id column).\n"
	"\n"
	"`ratchet help COMMAND` (or `ratchet COMMAND --help`) describes each command.",
};

void cmd_main_describe(const struct cmd_describe *d)
{
	struct globals g;
	const struct rt_opt opts[] = GLOBAL_OPTS(&g);
	d->fn(d->arg, opts, &main_help);
}

void cmd_usage(FILE *out)
{
	struct globals g;
	const struct rt_opt opts[] = GLOBAL_OPTS(&g);
	fprintf(out, "usage: %s\n\n%s\n\ncommands:\n", main_help.usage, main_help.summary);
	for (size_t i = 0; i < RT_ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nglobal options:\n");
	for (const struct rt_opt *o = opts; o->type != RT_OPT_END; o++) {
		char left[32];
		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-14s %s\n", left, o->help);
	}
	fprintf(out, "\n%s\n", main_help.details);
}

void cmd_error(const struct rt_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	bool color = ctx && ctx->color && isatty(2);
	fputs(color ? "\033[31mratchet:\033[0m " : "ratchet: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *cmd_plain(const struct rt_sb *err)
{
	return strncmp(err->buf, "db: ", 4) ? err->buf : err->buf + 4;
}

int cmd_iteration(const struct rt_ctx *ctx, const char *cmd, const char *ref, int64_t *id)
{
	struct rt_sb err = RT_SB_INIT;
	int rc = db_iteration_ref(ctx->db, ref, id, &err);
	int code = RT_EXIT_OK;
	if (rc == RT_ENOENT) {
		cmd_error(ctx, "%s: no iteration %s in %s", cmd, ref, db_path(ctx->db));
		code = RT_EXIT_USAGE;
	} else if (rc == RT_EUSAGE) {
		cmd_error(ctx, "%s: %s", cmd, cmd_plain(&err));
		code = RT_EXIT_USAGE;
	} else if (rc) {
		cmd_error(ctx, "%s: %s", cmd, err.buf);
		code = RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	return code;
}

int cmd_parse(const struct rt_ctx *ctx, const struct rt_opt *opts, const struct rt_cmd_help *help,
	      int argc, char **argv, int *npos, int *exit_code)
{
	if (ctx && ctx->describe) {
		ctx->describe->fn(ctx->describe->arg, opts, help);
		*exit_code = RT_EXIT_OK;
		return -1;
	}
	struct rt_sb err = RT_SB_INIT;
	int rc = rt_opt_parse(opts, help, argc, argv, npos, &err);
	if (rc == 1) {
		*exit_code = RT_EXIT_OK;
		return -1;
	}
	if (rc) {
		cmd_error(ctx, "%s: %s", argv[0], err.buf);
		fprintf(stderr, "usage: %s\n", help->usage);
		rt_sb_release(&err);
		*exit_code = RT_EXIT_USAGE;
		return -1;
	}
	return 0;
}

const char *cmd_color(const struct rt_ctx *ctx, const char *which)
{
	static const struct {
		const char *name, *code;
	} colors[] = {
		{ "red", "\033[31m" }, { "green", "\033[32m" }, { "yellow", "\033[33m" },
		{ "blue", "\033[34m" }, { "dim", "\033[2m" }, { "bold", "\033[1m" },
		{ "reset", "\033[0m" },
	};
	if (!ctx || !ctx->color)
		return "";
	for (size_t i = 0; i < RT_ARRAY_SIZE(colors); i++)
		if (!strcmp(colors[i].name, which))
			return colors[i].code;
	return "";
}

/* Parse the global options before the command into ctx; the command's index
 * in argv, or -1 to exit with *code. */
static int parse_globals(int argc, char **argv, struct rt_ctx *ctx, int *code)
{
	struct globals g = { 0 };
	const struct rt_opt opts[] = GLOBAL_OPTS(&g);
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cmd_usage(stdout);
			*code = RT_EXIT_OK;
			return -1;
		}
		for (const struct rt_opt *o = opts; o->type != RT_OPT_END; o++)
			if (o->type != RT_OPT_FLAG && !strcmp(argv[i] + 2, o->name) && argv[i][1] == '-')
				i++; /* its value */
	}
	/* rt_opt_parse reorders and ends its argv: give it a copy of the prefix. */
	char **pre = xcalloc((size_t)i + 1, sizeof(*pre));
	memcpy(pre, argv, (size_t)i * sizeof(*pre));
	struct rt_sb err = RT_SB_INIT;
	int npos = 0;
	int rc = rt_opt_parse(opts, &main_help, i < argc ? i : argc, pre, &npos, &err);
	free(pre);
	*code = RT_EXIT_USAGE;
	if (rc || npos) {
		cmd_error(ctx, "%s", rc ? err.buf : "a global option needs its value");
		rt_sb_release(&err);
		cmd_usage(stderr);
		return -1;
	}
	rt_sb_release(&err);
	if (g.version) {
		printf("ratchet %s\n", RATCHET_VERSION);
		*code = RT_EXIT_OK;
		return -1;
	}
	if (g.db)
		ctx->db_path = g.db;
	ctx->json |= g.json;
	ctx->quiet |= g.quiet;
	if (i >= argc) {
		cmd_usage(stderr);
		return -1;
	}
	return i;
}

/* The database as the command's flags ask; 0 or the exit code. */
static int open_db(const struct rt_cmd *cmd, struct rt_ctx *ctx)
{
	enum db_open_mode mode = (cmd->flags & CMD_READS_DB)   ? DB_OPEN_READONLY
				 : (cmd->flags & CMD_EDITS_DB) ? DB_OPEN_EXISTING
							       : DB_OPEN_CREATE;
	if (!(cmd->flags & (CMD_NEEDS_DB | CMD_READS_DB | CMD_EDITS_DB)))
		return 0;
	if (cmd->flags & CMD_SHOWS_DB)
		db_redact_reads();
	struct rt_sb err = RT_SB_INIT;
	int rc = db_open_mode(ctx->db_path, mode, &ctx->db, &err);
	if (rc)
		cmd_error(ctx, "%s", err.buf);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "__step"))
		return cmd_step(argc - 1, argv + 1); /* internal: a Slurm step's wrapper */
	struct rt_ctx ctx = { 0 };
	ctx.db_path = getenv("RATCHET_DB");
	if (!ctx.db_path || !*ctx.db_path)
		ctx.db_path = "ratchet.db";
	const char *nc = getenv("NO_COLOR");
	ctx.color = isatty(1) && !(nc && *nc);

	int code;
	int i = parse_globals(argc, argv, &ctx, &code);
	if (i < 0)
		return code;
	const char *name = argv[i];
	const struct rt_cmd *cmd = cmd_find(name);
	if (!cmd) {
		const char *names[RT_ARRAY_SIZE(commands)];
		for (size_t k = 0; k < RT_ARRAY_SIZE(commands); k++)
			names[k] = commands[k].name;
		const char *dym = rt_did_you_mean(name, names, RT_ARRAY_SIZE(names));
		if (dym)
			cmd_error(&ctx, "unknown command '%s' (did you mean '%s'?)", name, dym);
		else
			cmd_error(&ctx, "unknown command '%s'", name);
		return RT_EXIT_USAGE;
	}
	/* Commands accept --json and --quiet after the command name, too. */
	int n = 0;
	char **args = xcalloc((size_t)(argc - i) + 1, sizeof(*args));
	bool wants_help = false;
	for (int k = i; k < argc; k++) {
		if (!strcmp(argv[k], "--json"))
			ctx.json = true;
		else if (!strcmp(argv[k], "--quiet"))
			ctx.quiet = true;
		else
			args[n++] = argv[k];
		if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
			wants_help = true;
	}
	if (!wants_help && (code = open_db(cmd, &ctx))) {
		free(args);
		return code;
	}
	code = cmd->fn(n, args, &ctx);
	if (ctx.db)
		db_close(ctx.db);
	free(args);
	return code;
}
