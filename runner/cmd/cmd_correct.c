/*
 * `ratchet correct N --by M TEXT`: record that iteration M's findings correct
 * iteration N's narrative. Both stay as they were; the correction is a new
 * note on N that points at M.
 */
#include "runner/cmd/cmd_note.h"

#include <stdio.h>
#include <stdlib.h>

static const struct rt_cmd_help help = {
	"ratchet correct ITERATION --by ITERATION TEXT...",
	"record that a later iteration's findings correct an earlier one's narrative",
	"ITERATION is the id `ratchet log` shows, or CAMPAIGN:SEQ (e.g. 3:5). Nothing is\n"
	"changed or hidden: the correction is a note on the first iteration pointing at the\n"
	"second. Exit 2 when either does not exist or both are the same.",
};

int cmd_correct(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *by = NULL;
	const struct rt_opt opts[] = {
		{ "by", 0, RT_OPT_STR, &by, "ITERATION", "the iteration whose findings correct it" },
		{ 0 },
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	const char *missing = npos < 1 ? "missing ITERATION" : !by ? "missing --by ITERATION"
			      : npos < 2 ? "missing TEXT" : NULL;
	if (missing) {
		cmd_error(ctx, "correct: %s", missing);
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	char *text = cmd_note_join(argv, 2, npos + 1);
	code = cmd_note_add(ctx, "correct", "correction", argv[1], by, text);
	free(text);
	return code;
}
