/* `ratchet note`: placeholder until its issue lands. */
#include "cmd.h"

int cmd_note(int argc, char **argv, struct rt_ctx *ctx)
{
	(void)argc;
	(void)argv;
	cmd_error(ctx, "note: not implemented yet");
	return RT_EXIT_RUNTIME;
}
