/*
 * What every fuzz harness shares: the libFuzzer entry point's prototype, the
 * check that turns a broken promise into a crash (so libFuzzer and the
 * replay both report it, with the input saved), a private temporary folder
 * for harnesses whose code under test reads files, and the split of one
 * input into parts.
 *
 * A harness is one file defining LLVMFuzzerTestOneInput. It is linked two
 * ways (tests/fuzz.cmake): with clang's -fsanitize=fuzzer by tools/fuzz.sh,
 * and with tests/fuzz/replay.c, a main() that feeds it the committed seed
 * and crash corpora, as an ordinary ctest test built by any compiler.
 */
#ifndef RT_FUZZ_H
#define RT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A promise the code under test broke: say which and where, then abort, so
 * the input counts as a crash. */
#define FUZZ_CHECK(cond, ...)                                                        \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: fuzz check failed: %s: ", __FILE__,  \
				__LINE__, #cond);                                    \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			abort();                                                     \
		}                                                                    \
	} while (0)

/* The process's own temporary folder (made on first use, removed at exit). */
const char *fuzz_dir(void);
/* Write len bytes to fuzz_dir()/name; returns the absolute path (owned). */
char *fuzz_write(const char *name, const void *data, size_t len);

/* One part of an input. */
struct fuzz_part {
	const char *p; /* first byte (points into the input) */
	size_t n;      /* bytes */
};

/* Split data at each occurrence of sep (at most n - 1 splits; the last part
 * holds the rest). Returns the number of parts found (the others are empty). */
size_t fuzz_split(const uint8_t *data, size_t size, const char *sep, struct fuzz_part *parts,
		  size_t n);
/* A NUL-terminated copy of a part (owned). */
char *fuzz_str(struct fuzz_part part);

#endif
