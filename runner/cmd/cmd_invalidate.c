/*
 * `ratchet invalidate N --reason TEXT`: mark an iteration's result invalid.
 * It stays visible (flagged) in the log, reports and exports; nothing is
 * deleted. An iteration is invalidated once: a second time is refused.
 */
#include "runner/cmd/cmd_note.h"

static const struct rt_cmd_help help = {
	"ratchet invalidate ITERATION --reason TEXT",
	"mark an iteration's result invalid (it stays visible)",
	"ITERATION is the id `ratchet log` shows, or CAMPAIGN:SEQ (e.g. 3:5). The reason is\n"
	"stored as an invalidation note. Exit 2 when the iteration does not exist or is\n"
	"already invalid.",
};

int cmd_invalidate(int argc, char **argv, struct rt_ctx *ctx)
{
	static const struct cmd_note_def def = {
		.cmd = "invalidate",
		.kind = "invalidation",
		.help = &help,
		.opt = "reason",
		.opt_arg = "TEXT",
		.opt_help = "why the result is not valid (required)",
		.opt_is_text = true,
	};
	return cmd_note_run(argc, argv, ctx, &def);
}
