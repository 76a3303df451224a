/* `ratchet regressions`: placeholder until its issue lands. */
#include "cmd.h"

int cmd_regressions(int argc, char **argv, struct rt_ctx *ctx)
{
	(void)argc;
	(void)argv;
	cmd_error(ctx, "regressions: not implemented yet");
	return RT_EXIT_RUNTIME;
}
