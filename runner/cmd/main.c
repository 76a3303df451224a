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

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ratchet [--db FILE] [--json] [--quiet] [--version] COMMAND [ARGS]\n"
		"\n"
		"ratchet tunes GPU inference one change at a time: it applies one change on top of\n"
		"the best configuration so far, benchmarks it, gates it on GSM8K accuracy, decides\n"
		"keep or revert with a stated confidence, and records everything in SQLite.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < RT_ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"global options:\n"
		"  --db FILE      database file (default ./ratchet.db, or $RATCHET_DB)\n"
		"  --json         machine-readable output for read commands\n"
		"  --quiet        no progress output\n"
		"  --version      print the version\n"
		"\n"
		"exit codes:\n"
		"  0  ok\n"
		"  1  the gate or decision said no\n"
		"  2  usage error (bad flag, bad spec)\n"
		"  3  runtime error\n"
		"\n"
		"`ratchet COMMAND --help` describes each command.\n");
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

int cmd_parse(const struct rt_ctx *ctx, const struct rt_opt *opts, const struct rt_cmd_help *help,
	      int argc, char **argv, int *npos, int *exit_code)
{
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

int main(int argc, char **argv)
{
	struct rt_ctx ctx = { 0 };
	ctx.db_path = getenv("RATCHET_DB");
	if (!ctx.db_path || !*ctx.db_path)
		ctx.db_path = "ratchet.db";
	const char *nc = getenv("NO_COLOR");
	ctx.color = isatty(1) && !(nc && *nc);

	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--db") && i + 1 < argc) {
			ctx.db_path = argv[++i];
		} else if (!strncmp(a, "--db=", 5)) {
			ctx.db_path = a + 5;
		} else if (!strcmp(a, "--json")) {
			ctx.json = true;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			ctx.quiet = true;
		} else if (!strcmp(a, "--version")) {
			printf("ratchet %s\n", RATCHET_VERSION);
			return RT_EXIT_OK;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return RT_EXIT_OK;
		} else {
			cmd_error(&ctx, "unknown global option '%s'", a);
			usage(stderr);
			return RT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return RT_EXIT_USAGE;
	}
	const char *name = argv[i];
	const struct rt_cmd *cmd = NULL;
	for (size_t k = 0; k < RT_ARRAY_SIZE(commands); k++)
		if (!strcmp(commands[k].name, name))
			cmd = &commands[k];
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
	if ((cmd->flags & CMD_NEEDS_DB) && !wants_help) {
		struct rt_sb err = RT_SB_INIT;
		int rc = db_open(ctx.db_path, &ctx.db, &err);
		if (rc) {
			cmd_error(&ctx, "%s", err.buf);
			rt_sb_release(&err);
			free(args);
			return RT_EXIT_RUNTIME;
		}
	}
	int code = cmd->fn(n, args, &ctx);
	if (ctx.db)
		db_close(ctx.db);
	free(args);
	return code;
}
