/*
 * The file a command benchmark's format reads (see bench_cmd.h). A
 * format_file that names a folder or a glob names every file there: the
 * one this run wrote is picked by comparing the folder before and after
 * the run (new, or changed in time, size or inode), so no clock is
 * trusted and an earlier sample's file is never read again. Without a
 * format_file, `vllm bench serve --save-result` says where its result goes:
 * --result-dir (default the working folder) and --result-filename (default
 * a name with the date in it, so the newest *.json written by this run),
 * following vllm/benchmarks/serve.py of vLLM's main branch at commit
 * 009e6d4a1cd6 (main_async: file_name joined to result_dir).
 */
#include "runner/bench/bench_cmd.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void run_bcmd_outputs_release(struct run_bcmd_outputs *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].path);
	free(o->v);
	free(o->pattern);
	memset(o, 0, sizeof(*o));
}

/* Every regular file the pattern names now, with its state. */
static void list(const char *pattern, struct run_bcmd_out_file **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	glob_t g;
	if (glob(pattern, 0, NULL, &g))
		return;
	*v = xcalloc(g.gl_pathc + 1, sizeof(**v));
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;
		if (stat(g.gl_pathv[i], &st) || !S_ISREG(st.st_mode))
			continue;
		(*v)[(*n)++] = (struct run_bcmd_out_file){ xstrdup(g.gl_pathv[i]), st.st_mtim, st.st_size,
							   st.st_ino };
	}
	globfree(&g);
}

void run_bcmd_outputs_init(struct run_bcmd_outputs *o, const char *path, const char *cwd)
{
	memset(o, 0, sizeof(*o));
	char *abs = path[0] == '/' || !cwd ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
	struct stat st;
	if (!stat(abs, &st) && S_ISDIR(st.st_mode)) {
		o->pattern = xasprintf("%s/*", abs);
		free(abs);
		o->pick = true;
	} else {
		o->pattern = abs;
		o->pick = strpbrk(abs, "*?[") != NULL;
	}
	if (o->pick)
		list(o->pattern, &o->v, &o->n);
}

/* Was f there, unchanged, before the run? */
static bool unchanged(const struct run_bcmd_outputs *o, const struct run_bcmd_out_file *f)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].path, f->path))
			return o->v[i].mtime.tv_sec == f->mtime.tv_sec &&
			       o->v[i].mtime.tv_nsec == f->mtime.tv_nsec && o->v[i].size == f->size &&
			       o->v[i].ino == f->ino;
	return false;
}

static bool later(struct timespec a, struct timespec b)
{
	return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

int run_bcmd_outputs_pick(const struct run_bcmd_outputs *o, char **path, struct rt_sb *err)
{
	*path = NULL;
	struct stat st;
	bool made_dir = !o->pick && !stat(o->pattern, &st) && S_ISDIR(st.st_mode);
	if (!o->pick && !made_dir) {
		*path = xstrdup(o->pattern);
		return 0;
	}
	/* a folder the run made (vLLM makes --result-dir): all of it is new */
	char *pattern = made_dir ? xasprintf("%s/*", o->pattern) : xstrdup(o->pattern);
	struct run_bcmd_out_file *now;
	size_t n;
	list(pattern, &now, &n);
	const struct run_bcmd_out_file *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (!unchanged(o, &now[i]) && (!best || later(now[i].mtime, best->mtime)))
			best = &now[i];
	if (best)
		*path = xstrdup(best->path);
	int rc = best ? 0
		      : rt_errf(err, RT_ENOENT, "%s: no file written by this run (%zu there, none new "
				"or changed)", pattern, n);
	free(pattern);
	for (size_t i = 0; i < n; i++)
		free(now[i].path);
	free(now);
	return rc;
}

/* The value of option name in argv ("--x v" or "--x=v"), or NULL. */
static const char *opt_value(char *const *argv, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 1; argv[i]; i++) {
		if (!strncmp(argv[i], name, len) && argv[i][len] == '=')
			return argv[i] + len + 1;
		if (!strcmp(argv[i], name) && argv[i + 1])
			return argv[i + 1];
	}
	return NULL;
}

char *run_bcmd_vllm_result_path(char *const *argv)
{
	bool save = false;
	for (size_t i = 1; argv[i]; i++)
		save |= !strcmp(argv[i], "--save-result");
	if (!save)
		return NULL;
	const char *dir = opt_value(argv, "--result-dir");
	const char *name = opt_value(argv, "--result-filename");
	if (name)
		return dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	return xasprintf("%s/*.json", dir ? dir : ".");
}
