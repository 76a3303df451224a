/*
 * Shared by `ratchet help` (runner/cmd/cmd_help.c: the text, the manual
 * pages) and the shell completions (runner/cmd/cmd_complete.c): reading a
 * command's option table and help text through ctx->describe, so every
 * document is made from the tables that `--help` prints and none is written
 * by hand.
 */
#ifndef RT_CMD_HELP_H
#define RT_CMD_HELP_H

#include "runner/cmd/cmd.h"

/* Hand the option table and help text of command name (NULL: ratchet's own,
 * the global options) to fn, called once before this returns. */
void cmd_help_describe(const char *name,
		       void (*fn)(void *arg, const struct rt_opt *opts, const struct rt_cmd_help *help),
		       void *arg);
/* The subcommand whose table stands for command name ("load" for bench), or
 * NULL when the command has none. */
const char *cmd_help_sub(const char *name);
/* Does an option's value placeholder ("FILE", "DIR|FILE", "SPEC") name a path? */
bool cmd_help_is_path(const char *arg);
/* Write the completion script of shell ("bash" or "zsh") to out; RT_EUSAGE
 * for another shell (nothing written). */
int cmd_complete_write(FILE *out, const char *shell);

#endif
