/*
 * The command table's types and its one list (RT_COMMANDS). Each command
 * lives in runner/cmd/cmd_<name>.c, parses its own options with an rt_opt
 * table, prints, and returns an exit code (RT_EXIT_*). main.c turns the list
 * into the one table of commands.
 */
#ifndef RT_CMD_H
#define RT_CMD_H

#include "runner/base/opt.h"
#include "runner/base/rt.h"

#include <stdio.h>

struct db;

/*
 * What `ratchet help` reads from a command (runner/cmd/cmd_help.c): with
 * ctx->describe set, cmd_parse hands the command's option table and help
 * text to fn instead of parsing, and the command returns. The man pages and
 * the shell completions are made this way from the tables --help prints.
 */
struct cmd_describe {
	void (*fn)(void *arg, const struct rt_opt *opts, const struct rt_cmd_help *help);
	void *arg; /* fn's */
};

/* Shared state set up by main before a command runs. */
struct rt_ctx {
	const char *db_path; /* --db, RATCHET_DB, or ./ratchet.db */
	bool json;           /* --json: machine-readable output */
	bool color;          /* stdout is a tty and NO_COLOR is unset */
	bool quiet;          /* --quiet */
	struct db *db;       /* opened by main when the command has a CMD_*DB flag */
	const struct cmd_describe *describe; /* set by `ratchet help` only, else NULL */
};

/* How main opens the database before the command runs (none: not opened). */
enum {
	CMD_NEEDS_DB = 1 << 0,  /* open it, creating and migrating it as needed */
	CMD_READS_DB = 1 << 1,  /* read-only; a missing file is an error, never created */
	CMD_EDITS_DB = 1 << 2,  /* read-write, but the file must exist (notes, restore) */
	CMD_SHOWS_DB = 1 << 3,  /* prints or exports stored text: all of it redacted on the way
				 * out (db_redact_reads), so an old store leaks no secret */
};

typedef int (*rt_cmd_fn)(int argc, char **argv, struct rt_ctx *ctx);

struct rt_cmd {
	const char *name;    /* what the user types */
	rt_cmd_fn fn;        /* argv[0] is the command name */
	unsigned flags;      /* CMD_* */
	const char *summary; /* one line for `ratchet --help` */
};

/* Print "ratchet: <msg>" to stderr, in red on a tty. */
void cmd_error(const struct rt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse a command's options; on --help returns -1 with *exit_code = 0, on a
 * usage error prints it and returns -1 with *exit_code = RT_EXIT_USAGE. With
 * ctx->describe set it only hands the tables over and returns -1, exit 0. */
int cmd_parse(const struct rt_ctx *ctx, const struct rt_opt *opts, const struct rt_cmd_help *help,
	      int argc, char **argv, int *npos, int *exit_code);
/* The iteration the user named as ref: CAMPAIGN:SEQ ("3:5", as `ratchet
 * log` prints it) or the global id ("42"). 0 with *id set; else the error is
 * printed as "CMD: ..." and the exit code returned (2: no such iteration or
 * not a reference, 3: the database failed). */
int cmd_iteration(const struct rt_ctx *ctx, const char *cmd, const char *ref, int64_t *id);
/* A store error for people: without the library's "db: " prefix. */
const char *cmd_plain(const struct rt_sb *err);
/* The API key for OpenAI-compatible endpoints (cmd_key.c): *key gets the
 * value of the environment variable env_name, or of OPENAI_API_KEY when
 * env_name is NULL (NULL when unset or empty). A named variable that is not
 * set is a usage error: printed, and RT_EXIT_USAGE returned; else 0. *key
 * points into the environment: pass it on, never store or print it. */
int cmd_api_key(const struct rt_ctx *ctx, const char *cmd, const char *env_name, const char **key);
/* The option row every command that talks to an endpoint carries. */
#define CMD_OPT_API_KEY_ENV(var)                                                  \
	{ "api-key-env", 0, RT_OPT_STR, &(var), "NAME",                             \
	  "environment variable holding the API key (default OPENAI_API_KEY)" }
/* The command table (main.c), in `ratchet --help` order, and one row by name (NULL: none). */
const struct rt_cmd *cmd_table(size_t *n);
const struct rt_cmd *cmd_find(const char *name);
/* `ratchet --help` into out; and the global options and that text handed to d. */
void cmd_usage(FILE *out);
void cmd_main_describe(const struct cmd_describe *d);
/* ANSI colour helpers that return "" when colour is off. */
const char *cmd_color(const struct rt_ctx *ctx, const char *which); /* "red", "green", "yellow", "dim", "bold", "reset" */

/*
 * The one list of commands: XX(name, flags, summary). It declares each
 * cmd_<name>() below and fills main.c's table, in this order (the order of
 * `ratchet --help`). A new command is one line here and one file
 * runner/cmd/cmd_<name>.c.
 */
#define RT_COMMANDS(XX) \
	XX(run, CMD_NEEDS_DB, "run a campaign: one change per iteration, measured, gated, decided") \
	XX(restore, CMD_EDITS_DB, "put every file a campaign touched back to its pre-campaign bytes") \
	XX(recipe, CMD_READS_DB, "write what a campaign kept (files, patches, flags, env) to reproduce it without ratchet") \
	XX(replay, CMD_NEEDS_DB, "measure a campaign's kept changes again on a new base: held, lost, reversed, not applicable") \
	XX(check, 0, "validate a campaign spec and print its normalized form") \
	XX(log, CMD_READS_DB | CMD_SHOWS_DB, "one line per iteration: state, change, objective delta, gate") \
	XX(show, CMD_READS_DB | CMD_SHOWS_DB, "everything about one iteration") \
	XX(regressions, CMD_READS_DB | CMD_SHOWS_DB, "every metric that got worse beyond the noise") \
	XX(report, CMD_READS_DB | CMD_SHOWS_DB, "write the campaign journal as Markdown or self-contained HTML") \
	XX(export, CMD_READS_DB | CMD_SHOWS_DB, "export every table as CSV or JSON") \
	XX(note, CMD_EDITS_DB, "add a note to an iteration") \
	XX(correct, CMD_EDITS_DB, "record that iteration M corrects iteration N's narrative") \
	XX(invalidate, CMD_EDITS_DB, "mark an iteration's result invalid (it stays visible)") \
	XX(gate, CMD_NEEDS_DB, "GSM8K accuracy gate against an OpenAI-compatible endpoint (CI)") \
	XX(bench, CMD_NEEDS_DB, "run one benchmark by hand: `ratchet bench load`") \
	XX(devices, CMD_NEEDS_DB, "list devices of every backend; --peak measures ceilings") \
	XX(holes, CMD_NEEDS_DB, "shapes a profile saw that a tuned table has no entry for") \
	XX(profile, CMD_NEEDS_DB, "import a profile (Chrome trace, nsys, rocprofv3, unitrace, ncu): ops and shapes") \
	XX(observe, CMD_NEEDS_DB, "record a profile of a campaign as an iteration of its own, with findings") \
	XX(findings, CMD_READS_DB, "the research agent's findings, ranked by their Amdahl bound") \
	XX(propose, CMD_READS_DB, "the top findings as variants in the spec's schema, to paste") \
	XX(research, CMD_NEEDS_DB, "rank a kernel library's refs by how much hot time their diffs touch") \
	XX(help, 0, "describe a command; --man writes its manual page, --completion a shell's")

/* `ratchet __step DIR -- ARGV`: the Slurm executor's step wrapper
 * (cmd_step.c); internal, not in the table, so help never lists it. */
int cmd_step(int argc, char **argv);

#define RT_CMD_DECLARE(name, flags, summary) int cmd_##name(int argc, char **argv, struct rt_ctx *ctx);
RT_COMMANDS(RT_CMD_DECLARE)
#undef RT_CMD_DECLARE

#endif
