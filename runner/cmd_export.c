/* `ratchet export`: placeholder until its issue lands. */
#include "cmd.h"

int cmd_export(int argc, char **argv, struct rt_ctx *ctx)
{
	(void)argc;
	(void)argv;
	cmd_error(ctx, "export: not implemented yet");
	return RT_EXIT_RUNTIME;
}
