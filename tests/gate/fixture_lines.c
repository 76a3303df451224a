/* The gate tests' fixture lines (see fixture_lines.h). */
#include "fixture_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"

char *fixture_read(const char *name)
{
	const char *src = getenv("RATCHET_SRC");
	char *path = xasprintf("%s/tests/gate/%s", src ? src : "..", name);
	struct rt_sb err = RT_SB_INIT;
	char *text = NULL;
	size_t len;
	if (rt_read_file(path, &text, &len, &err))
		fprintf(stderr, "%s\n", err.buf);
	rt_sb_release(&err);
	free(path);
	return text;
}

int fixture_each(const char *text, const char *tag, void (*fn)(char **w, size_t n))
{
	int lines = 0;
	size_t tl = strlen(tag);
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > tl + 1 && !strncmp(p, tag, tl) && p[tl] == ' ') {
			char *line = xstrndup(p + tl + 1, len - tl - 1);
			char *w[256];
			size_t n = 0;
			for (char *t = strtok(line, " "); t && n < 256; t = strtok(NULL, " "))
				w[n++] = t;
			fn(w, n);
			free(line);
			lines++;
		}
		p += len + (e != NULL);
	}
	return lines;
}
