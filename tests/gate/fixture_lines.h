/*
 * The gate tests' fixture files (pyrandom_vectors.txt,
 * lmeval_gsm8k_v0.4.12.txt): "#" comment lines, then lines of a tag and
 * space-separated words. fixture_read() loads one from tests/gate/ under
 * $RATCHET_SRC; fixture_each() calls fn with the words of each line that
 * has the tag (w[0] is the first word after the tag; at most 256 words).
 */
#ifndef GATE_FIXTURE_LINES_H
#define GATE_FIXTURE_LINES_H

#include <stddef.h>

/* The file's text, newly allocated, or NULL (said on stderr). */
char *fixture_read(const char *name);
/* Calls fn per line tagged tag; returns how many lines it called it for. */
int fixture_each(const char *text, const char *tag, void (*fn)(char **w, size_t n));

#endif
