/*
 * `ratchet invalidate N --reason TEXT`: mark an iteration's result invalid.
 * It stays visible (flagged) in the log, reports and exports; nothing is
 * deleted. An iteration is invalidated once: a second time is refused.
 */
#include "runner/cmd/cmd_note.h"

#include <stdio.h>

static const struct rt_cmd_help help = {
	"ratchet invalidate ITERATION --reason TEXT",
	"mark an iteration's result invalid (it stays visible)",
	"ITERATION is the id `ratchet log` shows, or CAMPAIGN:SEQ (e.g. 3:5). The reason is\n"
	"stored as an invalidation note. Exit 2 when the iteration does not exist or is\n"
	"already invalid.",
};

int cmd_invalidate(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *reason = NULL;
	const struct rt_opt opts[] = {
		{ "reason", 0, RT_OPT_STR, &reason, "TEXT", "why the result is not valid (required)" },
		{ 0 },
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	const char *missing = npos < 1 ? "missing ITERATION" : npos > 1 ? "one ITERATION only"
			      : !reason ? "missing --reason TEXT" : NULL;
	if (missing) {
		cmd_error(ctx, "invalidate: %s", missing);
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	return cmd_note_add(ctx, "invalidate", "invalidation", argv[1], NULL, reason);
}
