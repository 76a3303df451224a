/* `ratchet run`: placeholder until its issue lands. */
#include "cmd.h"

int cmd_run(int argc, char **argv, struct rt_ctx *ctx)
{
	(void)argc;
	(void)argv;
	cmd_error(ctx, "run: not implemented yet");
	return RT_EXIT_RUNTIME;
}
