/*
 * The replay main(): feeds every file of the folders (or files) given on the
 * command line to the harness's LLVMFuzzerTestOneInput, one after the other,
 * in name order, so the committed seed and crash corpora run as an ordinary
 * ctest test on machines without clang (tests/fuzz.cmake). Names starting
 * with '.' and README files are skipped. A broken promise aborts (the
 * harness's FUZZ_CHECK) and a sanitizer build reports what it finds, as
 * under libFuzzer; the input being replayed is named on stderr first.
 */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/base/rt.h"

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_file(const char *path, size_t *n)
{
	char *data;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	if (rt_read_file(path, &data, &len, &err)) {
		fprintf(stderr, "replay: %s\n", err.buf);
		rt_sb_release(&err);
		return 1;
	}
	fprintf(stderr, "replay: %s\n", path);
	/* A copy of exactly len bytes, as libFuzzer passes: a read past the end
	 * is caught by the sanitizers. */
	uint8_t *copy = xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	free(data);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	(*n)++;
	return 0;
}

static int replay_dir(const char *dir, size_t *n)
{
	struct dirent **ents;
	int k = scandir(dir, &ents, NULL, by_name);
	if (k < 0) {
		fprintf(stderr, "replay: %s: cannot read the folder\n", dir);
		return 1;
	}
	int rc = 0;
	for (int i = 0; i < k; i++) {
		const char *name = ents[i]->d_name;
		if (name[0] != '.' && strncmp(name, "README", 6)) {
			char *path = xasprintf("%s/%s", dir, name);
			rc |= replay_file(path, n);
			free(path);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb)) {
			fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
			rc = 1;
		} else {
			rc |= S_ISDIR(sb.st_mode) ? replay_dir(argv[i], &n) : replay_file(argv[i], &n);
		}
	}
	printf("replayed %zu inputs\n", n);
	return rc;
}
