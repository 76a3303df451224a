/*
 * The spec loader at the sizes where its duplicate checks were quadratic
 * (issue 17 item 9): a mapping of 40,000 keys, 77,000 log_events, 20,000
 * variants and a spec over 9 MB, each with its first entry repeated at the
 * end. Each loads in seconds (the quadratic checks took minutes), and the
 * duplicate is reported where it is, naming the first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale_gen.h"

/* Load the spec; its errors must start with want; returns the seconds taken. */
static double load(enum scale_spec_kind kind, size_t n, const char *want)
{
	size_t len;
	int rc;
	struct rt_sb err = RT_SB_INIT;
	double el = scale_load_spec(kind, n, &len, &rc, &err);
	assert_int_equal(rc, RT_EUSAGE);
	if (strncmp(err.buf, want, strlen(want)))
		fail_msg("got: %.300s\nwant: %s", err.buf, want);
	printf("%zu entries, %.1f MB: %.2f s\n", n, (double)len / 1e6, el);
	rt_sb_release(&err);
	return SCALE_TIMED ? el : 0;
}

static void test_40k_keys(void **state)
{
	(void)state;
	assert_true(load(SCALE_ENV, 40000, "scale.yaml:40010:5: engine.env: duplicate key "
					   "'VARIABLE_0' (first at 10:5)\n") < 10);
}

static void test_77k_log_events(void **state)
{
	(void)state;
	assert_true(load(SCALE_LOG_EVENTS, 77000, "scale.yaml:77008:3: log_events: duplicate "
						  "key 'event_0' (first at 8:3)\n") < 10);
}

static void test_20k_variants(void **state)
{
	(void)state;
	assert_true(load(SCALE_VARIANTS, 20000, "scale.yaml:20008:12: variants[20000].name: "
						"duplicate variant name 'variant-0' (first at 8:5)\n") < 10);
}

static void test_big_spec(void **state)
{
	(void)state;
	assert_true(load(SCALE_MIXED, 70000, "scale.yaml:70010:5: engine.env: duplicate key "
					     "'VARIABLE_0' (first at 10:5)\nscale.yaml:140012:3: "
					     "log_events: duplicate key 'event_0' (first at 70012:3)\n") < 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_40k_keys),
		cmocka_unit_test(test_77k_log_events),
		cmocka_unit_test(test_20k_variants),
		cmocka_unit_test(test_big_spec),
	};
	return cmocka_run_group_tests_name("spec_scale", tests, NULL, NULL);
}
