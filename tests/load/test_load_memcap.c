/*
 * The load generator's total cap on response memory: streams that each stay
 * under the per-response cap but together pass the total fail with a message
 * naming the total cap; the same streams one at a time pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/load/load.h"
#include "testserver.h"

/* Each stream carries one 4 MiB content event: its parser holds about 16 MiB
 * (the line being read and the event's data, each rounded up to a power of
 * two). 20 MiB holds one such stream, not two. */
#define TOTAL_CAP ((size_t)20 << 20)

static void run_big(int concurrency, int requests, struct run_load_result *r)
{
	struct spec_load c = { 0 };
	c.api = SPEC_API_COMPLETIONS;
	c.pattern = SPEC_LOAD_CLOSED;
	c.concurrency = concurrency;
	c.requests = requests;
	c.prompt_tokens = 8;
	c.output_tokens = 8;
	c.request_timeout_s = 20;
	int port;
	/* 30 ms between tokens: concurrent streams hold their big event together */
	struct lts *s = lts_start(LTS_BIGCHUNK, 30000, 0, &port);
	assert_non_null(s);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct rt_sb err = RT_SB_INIT;
	struct run_load_opts o = { .no_calibrate = true, .resp_total_cap = TOTAL_CAP };
	if (run_load_run(&c, url, "m", 1, &o, r, &err))
		fail_msg("run_load_run: %s", err.buf);
	rt_sb_release(&err);
	lts_stop(s);
}

static void test_total_cap_stops_streams(void **state)
{
	(void)state;
	struct run_load_result r;
	run_big(4, 4, &r);
	assert_true(r.failed >= 1);
	size_t capped = 0;
	for (size_t i = 0; i < r.n_reqs; i++) {
		const struct run_load_req *q = &r.reqs[i];
		if (q->ok)
			continue;
		assert_non_null(q->error);
		if (!strstr(q->error, "over the 20 MiB total cap for all streams together"))
			fail_msg("request %zu: %s", i, q->error);
		capped++;
	}
	assert_int_equal(capped, (size_t)r.failed);
	printf("load_memcap: %d of 4 concurrent streams stopped at the total cap\n", r.failed);
	run_load_result_release(&r);
}

static void test_one_at_a_time_fits(void **state)
{
	(void)state;
	struct run_load_result r;
	run_big(1, 4, &r);
	for (size_t i = 0; i < r.n_reqs; i++)
		if (!r.reqs[i].ok)
			fail_msg("request %zu: %s", i, r.reqs[i].error);
	assert_int_equal(r.completed, 4);
	run_load_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_total_cap_stops_streams),
		cmocka_unit_test(test_one_at_a_time_fits),
	};
	return cmocka_run_group_tests_name("load_memcap", tests, NULL, NULL);
}
