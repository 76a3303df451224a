/*
 * The configuration fingerprint (variants/var.c) of what this program was
 * started with, for the recipe test: started by a recipe's run.sh in place
 * of the engine, its arguments are the engine's argv, the environment
 * overrides are the variables RECIPE_FP_ENV names (space-separated; one not
 * set counts as unset), and the files are the paths in RECIPE_FP_FILES
 * (one per line), hashed as they are on disk. Prints the sha256 hex.
 *
 * usage: RECIPE_FP_FILES=... RECIPE_FP_ENV=... recipe_fp ENGINE ARGS...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variants/var.h"

int main(int argc, char **argv)
{
	const char *fenv = getenv("RECIPE_FP_FILES"), *nenv = getenv("RECIPE_FP_ENV");
	char *files = xstrdup(fenv ? fenv : ""), *names = xstrdup(nenv ? nenv : "");
	struct var_fp_file *f = xcalloc(strlen(files) + 1, sizeof(*f));
	size_t nf = 0;
	for (char *save = NULL, *p = strtok_r(files, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		f[nf++] = (struct var_fp_file){ p, NULL };
	struct rt_envv env = { xcalloc(strlen(names) + 1, sizeof(struct rt_env)), 0 };
	for (char *save = NULL, *p = strtok_r(names, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		const char *v = getenv(p);
		env.v[env.n++] = (struct rt_env){ p, v ? (char *)v : NULL };
	}
	char out[65];
	struct rt_sb err = RT_SB_INIT;
	if (argc < 2 || var_config_fingerprint(f, nf, argv + 1, &env, out, &err)) {
		fprintf(stderr, "recipe_fp: %s\n", argc < 2 ? "usage: recipe_fp ENGINE ARGS..." : err.buf);
		return 2;
	}
	printf("%s\n", out);
	free(env.v);
	free(f);
	free(files);
	free(names);
	return 0;
}
