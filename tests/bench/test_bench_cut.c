/*
 * A command benchmark whose stdout passes its cap: the capture keeps what
 * fits and marks stdout as cut, and a metric that was in the dropped part
 * fails with a message that says the output was cut (not only "does not
 * match"). A metric found before the cut, or read from a file, is unaffected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"

/* Prints "early: 1", 4000 x's and a newline, then "late: 2". */
static char *const argv[] = { "sh", "-c",
			      "echo 'early: 1'; head -c 4000 /dev/zero | tr '\\0' x; echo; "
			      "echo 'late: 2'",
			      NULL };

static void run_capped(struct run_bcmd_result *r, size_t cap)
{
	run_bcmd_result_init(r, cap);
	assert_int_equal(run_bcmd_exec(argv, NULL, 0, NULL, 10, r, NULL), 0);
	assert_int_equal(r->status, 0);
}

static void test_metric_past_the_cap(void **state)
{
	(void)state;
	struct run_bcmd_result r;
	run_capped(&r, 1024);
	assert_true(r.truncated);
	assert_true(r.out_cut);
	assert_int_equal(r.out.len, 1024);
	struct spec_metric mt[] = {
		{ .name = "early", .kind = SPEC_EXTRACT_REGEX, .expr = "early: ([0-9]+)" },
		{ .name = "late", .kind = SPEC_EXTRACT_REGEX, .expr = "late: ([0-9]+)" },
	};
	struct spec_cmd_bench b = { .metrics = mt, .n_metrics = 2 };
	struct run_bcmd_metrics m = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_bcmd_extract(&b, NULL, &r, &m, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "metric late: regex /late: ([0-9]+)/ does not match stdout"));
	assert_non_null(strstr(err.buf, "stdout was cut at its 1024-byte cap"));
	assert_float_equal(*run_bcmd_metric_get(&m, "early"), 1, 0);
	run_bcmd_metrics_release(&m);
	rt_sb_release(&err);

	/* The same benchmark with a JSON pointer and a 16 MiB cap. */
	mt[1] = (struct spec_metric){ .name = "late", .kind = SPEC_EXTRACT_POINTER, .expr = "/late" };
	r.out.cap = 16u << 20;
	assert_int_equal(run_bcmd_extract(&b, NULL, &r, &m, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "stdout was cut at its 16 MiB cap"));
	run_bcmd_metrics_release(&m);
	rt_sb_release(&err);
	run_bcmd_result_release(&r);
}

static void test_not_cut(void **state)
{
	(void)state;
	struct run_bcmd_result r;
	run_capped(&r, 0);
	assert_false(r.truncated);
	assert_false(r.out_cut);
	struct spec_metric mt[] = {
		{ .name = "late", .kind = SPEC_EXTRACT_REGEX, .expr = "late: ([0-9]+)" },
		{ .name = "none", .kind = SPEC_EXTRACT_REGEX, .expr = "none: ([0-9]+)" },
	};
	struct spec_cmd_bench b = { .metrics = mt, .n_metrics = 2 };
	struct run_bcmd_metrics m = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_bcmd_extract(&b, NULL, &r, &m, &err), RT_ENOENT);
	assert_null(strstr(err.buf, "cut"));
	assert_float_equal(*run_bcmd_metric_get(&m, "late"), 2, 0);
	run_bcmd_metrics_release(&m);
	rt_sb_release(&err);
	run_bcmd_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_past_the_cap),
		cmocka_unit_test(test_not_cut),
	};
	return cmocka_run_group_tests_name("bench_cut", tests, NULL, NULL);
}
