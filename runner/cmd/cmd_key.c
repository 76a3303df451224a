/*
 * The API key for OpenAI-compatible endpoints, resolved once in the command
 * layer (`--api-key-env NAME`, default OPENAI_API_KEY) and passed down to the
 * load generator and the gate; no library code reads it from the environment.
 */
#include "runner/cmd/cmd.h"

#include <stdlib.h>

int cmd_api_key(const struct rt_ctx *ctx, const char *cmd, const char *env_name, const char **key)
{
	const char *k = getenv(env_name ? env_name : "OPENAI_API_KEY");
	*key = k && *k ? k : NULL;
	rt_secret_add(*key); /* redacted from everything stored or printed, whatever NAME is */
	if (env_name && !*key) {
		cmd_error(ctx, "%s: --api-key-env: environment variable %s is not set", cmd, env_name);
		return RT_EXIT_USAGE;
	}
	return 0;
}
