/*
 * What the tests of variants/ share: a fresh temp folder per test (setup,
 * teardown) and reading and writing files in it by relative path. Included
 * by one test file per executable, so everything here is static inline.
 * Include it after <cmocka.h>.
 */
#ifndef RT_TESTS_VAR_TEST_H
#define RT_TESTS_VAR_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"
#include "variants/var.h"

static char tmpdir[256];

static inline int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ratchet-test-var-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static inline int teardown(void **state)
{
	char *argv[] = { "rm", "-rf", tmpdir, NULL };
	struct rt_sb out = RT_SB_INIT;
	int st;
	run_bcmd_exec_simple(argv, NULL, 30, &out, &st, NULL);
	rt_sb_release(&out);
	return 0;
}

/* tmpdir/rel; the caller frees it. */
static inline char *at_tmp(const char *rel)
{
	return xasprintf("%s/%s", tmpdir, rel);
}

static inline void put_bytes(const char *rel, const void *data, size_t len)
{
	char *p = at_tmp(rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	free(p);
}

static inline void put_file(const char *rel, const char *text)
{
	put_bytes(rel, text, strlen(text));
}

/* The file's bytes (NUL-terminated), or NULL when it does not exist; *len
 * gets their length when len is given. The caller frees them. */
static inline char *get_bytes(const char *rel, size_t *len)
{
	char *p = at_tmp(rel);
	char *d = NULL;
	size_t n = 0;
	if (rt_read_file(p, &d, &n, NULL))
		d = NULL;
	free(p);
	if (len)
		*len = n;
	return d;
}

static inline char *get_file(const char *rel)
{
	return get_bytes(rel, NULL);
}

/* Revert a change (asserting it works) and release its plan. */
static inline void do_revert(const struct var_def *v, struct var_ctx *ctx, struct var_plan *p)
{
	struct rt_sb err = RT_SB_INIT;
	int rc = var_ops_for(v->kind)->revert(v, ctx, p, NULL, &err);
	if (rc)
		print_error("revert: %s\n", err.buf);
	assert_int_equal(rc, 0);
	rt_sb_release(&err);
	var_plan_release(p);
}

#endif
