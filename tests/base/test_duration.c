/*
 * Unit tests of runner/base/rt_duration.c: the one number and duration
 * reader that the spec loader, `ratchet bench load` and the load generator
 * share (each unit, a bare number as seconds, signs, what is refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runner/base/rt.h"

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *text; /* as written */
		double want;      /* seconds */
	} ok[] = {
		{ "300s", 300 },    { "4s", 4 },	 { "250ms", 0.25 }, { "50us", 50e-6 },
		{ "10ns", 10e-9 },  { "5m", 300 },	 { "5min", 300 },   { "1h", 3600 },
		{ "7", 7 },	    { "1.5", 1.5 },	 { ".5s", 0.5 },    { "2 s", 2 },
		{ " 3ms", 3e-3 },   { "1e3ms", 1 },	 { "+2s", 2 },	    { "-1s", -1 },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(ok); i++) {
		double v = -99;
		if (rt_parse_duration(ok[i].text, &v) != 0)
			fail_msg("'%s' refused", ok[i].text);
		if (!(v == ok[i].want || (v - ok[i].want) * (v - ok[i].want) < 1e-30))
			fail_msg("'%s' = %g, want %g", ok[i].text, v, ok[i].want);
	}
	static const char *const bad[] = { "",	   "s",	   "abc",  "4 parsecs", "5sec", "1d",
					   "0x10", "inf",  "nan",  "1e999s",    "4s ",  "--1s",
					   "1.2.3s", NULL };
	for (size_t i = 0; bad[i]; i++) {
		double v;
		if (rt_parse_duration(bad[i], &v) != RT_EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	}
	double v;
	assert_int_equal(rt_parse_duration(NULL, &v), RT_EINVAL);
}

static void test_numbers(void **state)
{
	(void)state;
	double v;
	assert_int_equal(rt_parse_number("42", &v), 0);
	assert_true(v == 42);
	assert_int_equal(rt_parse_number("-1.25e-3", &v), 0);
	assert_true(v == -1.25e-3);
	assert_int_equal(rt_parse_number("5.", &v), 0);
	assert_true(v == 5);
	static const char *const bad[] = { "", "+", ".", "1e", "1e+", "0x1F", "-0x10", "inf", "-inf",
					   "nan", "1 ", " 1", "1,5", "1_000", "1e400", NULL };
	for (size_t i = 0; bad[i]; i++)
		if (rt_parse_number(bad[i], &v) != RT_EINVAL)
			fail_msg("'%s' accepted as a number", bad[i]);
	/* a number and its unit, for sizes and percentages */
	const char *u;
	assert_int_equal(rt_split_unit(" 64 MiB", &v, &u), 0);
	assert_true(v == 64);
	assert_string_equal(u, "MiB");
	assert_int_equal(rt_split_unit("2%", &v, &u), 0);
	assert_string_equal(u, "%");
	assert_int_equal(rt_split_unit("1ex", &v, &u), 0); /* an exponent needs digits */
	assert_true(v == 1);
	assert_string_equal(u, "ex");
	assert_int_equal(rt_split_unit("0x10", &v, &u), 0); /* hex is not read as hex */
	assert_true(v == 0);
	assert_string_equal(u, "x10");
	assert_int_equal(rt_split_unit("MiB", &v, &u), RT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_durations  every unit (ns us ms s m min h), bare seconds, signs kept, bad text refused
 *   test_numbers    decimals only (no hex, inf, nan, overflow); a number and its unit
 */
