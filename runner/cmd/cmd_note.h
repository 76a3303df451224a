/*
 * Shared by `ratchet note`, `ratchet correct` and `ratchet invalidate`
 * (runner/cmd/cmd_note.c): one command-line shape (ITERATION, TEXT, at most
 * one option), resolve what the user typed, add the row, print.
 */
#ifndef RT_CMD_NOTE_H
#define RT_CMD_NOTE_H

#include "runner/cmd/cmd.h"

/* What differs between the three note commands. */
struct cmd_note_def {
	const char *cmd;               /* command name, for errors */
	const char *kind;              /* note | correction | invalidation */
	const struct rt_cmd_help *help; /* its --help */
	const char *opt;               /* its one required option ("by", "reason"), or NULL */
	const char *opt_arg;           /* the option's value placeholder ("ITERATION") */
	const char *opt_help;          /* the option's help line */
	bool opt_is_text;              /* the option's value is the note's text (invalidate);
					  else TEXT is the words after ITERATION and the
					  option names the correcting iteration */
};

/* Parse `CMD ITERATION [TEXT...] [--OPT VALUE]` as def describes, add the
 * note and print it; returns the exit code (2 for a usage error, a bad or
 * unknown reference, or a second invalidation). */
int cmd_note_run(int argc, char **argv, struct rt_ctx *ctx, const struct cmd_note_def *def);

#endif
