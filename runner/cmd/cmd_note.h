/*
 * Shared by `ratchet note`, `ratchet correct` and `ratchet invalidate`
 * (runner/cmd_note.c): resolve what the user typed, add the row, print.
 */
#ifndef RT_CMD_NOTE_H
#define RT_CMD_NOTE_H

#include "runner/cmd/cmd.h"

/* Add a note of kind (note | correction | invalidation) to the iteration the
 * user named as ref ("42" or "3:5"); by_ref names the correcting iteration of
 * a correction (else NULL). Prints the result (or --json) and returns the
 * exit code: 2 for a bad or unknown reference, or a second invalidation. */
int cmd_note_add(struct rt_ctx *ctx, const char *cmd, const char *kind, const char *ref,
		 const char *by_ref, const char *text);
/* The positionals from argv[first] on, joined by spaces; the caller frees it. */
char *cmd_note_join(char **argv, int first, int n);

#endif
