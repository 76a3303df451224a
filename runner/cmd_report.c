/* `ratchet report`: placeholder until its issue lands. */
#include "cmd.h"

int cmd_report(int argc, char **argv, struct rt_ctx *ctx)
{
	(void)argc;
	(void)argv;
	cmd_error(ctx, "report: not implemented yet");
	return RT_EXIT_RUNTIME;
}
