/*
 * The helpers of tests/fuzz/fuzz.h, linked into every harness in both
 * builds (libFuzzer and replay).
 */
#include "tests/fuzz/fuzz.h"

#include <string.h>
#include <unistd.h>

#include "runner/base/rt.h"

static char *dir;

static void remove_dir(void)
{
	if (!dir)
		return;
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "fuzz: could not remove %s\n", dir);
	free(cmd);
	free(dir);
	dir = NULL;
}

const char *fuzz_dir(void)
{
	if (dir)
		return dir;
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/ratchet-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		perror("fuzz: mkdtemp");
		abort();
	}
	dir = tmpl;
	atexit(remove_dir);
	return dir;
}

char *fuzz_write(const char *name, const void *data, size_t len)
{
	char *path = xasprintf("%s/%s", fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f)) {
		perror(path);
		abort();
	}
	return path;
}

/* The first sep (sl bytes) in [p, end), or NULL. */
static const char *find_sep(const char *p, const char *end, const char *sep, size_t sl)
{
	for (; (size_t)(end - p) >= sl; p++)
		if (!memcmp(p, sep, sl))
			return p;
	return NULL;
}

size_t fuzz_split(const uint8_t *data, size_t size, const char *sep, struct fuzz_part *parts,
		  size_t n)
{
	size_t sl = strlen(sep), found = 0;
	const char *p = data ? (const char *)data : "", *end = p + size;
	memset(parts, 0, n * sizeof(*parts));
	while (found < n) {
		const char *q = found + 1 < n ? find_sep(p, end, sep, sl) : NULL;
		parts[found].p = p;
		parts[found].n = q ? (size_t)(q - p) : (size_t)(end - p);
		found++;
		if (!q)
			break;
		p = q + sl;
	}
	return found;
}

char *fuzz_str(struct fuzz_part part)
{
	return part.p ? xstrndup(part.p, part.n) : xstrdup("");
}
