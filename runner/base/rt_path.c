/*
 * Where a path really leads: resolved as the kernel would open it (symbolic
 * links followed, a path that does not exist yet resolved through its
 * longest existing ancestor) and placed relative to a root folder, or
 * refused when it leaves the root. The containment of untrusted paths (a
 * chat model's answer, docs/reliability.md) rests on this; see rt.h.
 */
#define _GNU_SOURCE
#include "runner/base/rt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The real path of abs: realpath of its longest existing ancestor, the
 * names that do not exist yet appended (none is "." or ".."). NULL with
 * err set when a name cannot be resolved (a dangling link, a file used as
 * a folder, no permission). */
static char *resolve(const char *abs, struct rt_sb *err)
{
	char *p = xstrdup(abs), *tail = NULL, *real = NULL;
	for (;;) {
		real = realpath(p, NULL);
		if (real)
			break;
		struct stat st;
		int e = errno;
		if (e != ENOENT || !lstat(p, &st)) {
			rt_errf(err, RT_EINVAL, "%s: cannot resolve %s: %s", abs, p,
				e == ENOENT ? "a symbolic link whose target is missing" : strerror(e));
			break;
		}
		char *slash = strrchr(p, '/');
		const char *name = slash + 1;
		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			rt_errf(err, RT_EINVAL, "%s: '%s' names no file", abs, name);
			break;
		}
		if (*name) {
			char *t = tail ? xasprintf("%s/%s", name, tail) : xstrdup(name);
			free(tail);
			tail = t;
		}
		if (slash == p) {
			real = xstrdup("/");
			break;
		}
		*slash = 0;
	}
	free(p);
	if (real && tail) {
		char *j = xasprintf("%s%s%s", real, strcmp(real, "/") ? "/" : "", tail);
		free(real);
		real = j;
	}
	free(tail);
	return real;
}

int rt_path_within(const char *root, const char *path, char **rel, struct rt_sb *err)
{
	*rel = NULL;
	if (!path || path[0] != '/')
		return rt_errf(err, RT_EINVAL, "%s: not an absolute path", path ? path : "(none)");
	char *real = resolve(path, err);
	if (!real)
		return RT_EINVAL;
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	int rc = 0;
	if (!strncmp(real, root, n) && real[n] == 0)
		*rel = xstrdup(".");
	else if (n == 1 && root[0] == '/')
		*rel = xstrdup(real + 1);
	else if (!strncmp(real, root, n) && real[n] == '/')
		*rel = xstrdup(real + n + 1);
	else
		rc = rt_errf(err, RT_EINVAL, "%s leads to %s, outside %.*s", path, real, (int)n, root);
	free(real);
	return rc;
}
