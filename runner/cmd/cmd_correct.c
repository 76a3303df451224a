/*
 * `ratchet correct N --by M TEXT`: record that iteration M's findings correct
 * iteration N's narrative. Both stay as they were; the correction is a new
 * note on N that points at M.
 */
#include "runner/cmd/cmd_note.h"

static const struct rt_cmd_help help = {
	"ratchet correct ITERATION --by ITERATION TEXT...",
	"record that a later iteration's findings correct an earlier one's narrative",
	"ITERATION is the id `ratchet log` shows, or CAMPAIGN:SEQ (e.g. 3:5). Nothing is\n"
	"changed or hidden: the correction is a note on the first iteration pointing at the\n"
	"second. Exit 2 when either does not exist or both are the same.",
};

int cmd_correct(int argc, char **argv, struct rt_ctx *ctx)
{
	static const struct cmd_note_def def = {
		.cmd = "correct",
		.kind = "correction",
		.help = &help,
		.opt = "by",
		.opt_arg = "ITERATION",
		.opt_help = "the iteration whose findings correct it",
	};
	return cmd_note_run(argc, argv, ctx, &def);
}
