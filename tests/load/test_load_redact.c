/*
 * `bench load`'s failures never carry the API key, even when the server
 * echoes it: against tests/gate/echo_server.c (HTTP 401 quoting the
 * credentials, or an SSE error event quoting them) every request's error is
 * redacted before anything prints or stores it, and the requests stored in
 * a SQLite file hold neither the key nor the endpoint's ?api_key=.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "echo_server.h"
#include "runner/load/load.h"

#define KEY "sk-load-SECRET-13579"   /* given as the API key */
#define QKEY "sk-lquery-SECRET-2468" /* given in the endpoint URL */

static void run(enum echo_mode mode)
{
	char dir[] = "/tmp/rt-load-redact-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int port;
	struct echo_server *s = echo_start(mode, &port);
	assert_non_null(s);
	struct spec_load c = { 0 };
	c.api = SPEC_API_COMPLETIONS;
	c.pattern = SPEC_LOAD_CLOSED;
	c.concurrency = 2;
	c.requests = 4;
	c.prompt_tokens = 8;
	c.output_tokens = 4;
	c.request_timeout_s = 10;
	char url[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?api_key=" QKEY, port);
	struct run_load_opts o = { .no_calibrate = true, .api_key = KEY };
	struct run_load_result r;
	struct rt_sb err = RT_SB_INIT;
	if (run_load_run(&c, url, "m", 1, &o, &r, &err))
		fail_msg("run_load_run: %s", err.buf);
	assert_int_equal(r.failed, 4);
	for (size_t i = 0; i < r.n_reqs; i++) {
		const char *e = r.reqs[i].error;
		assert_non_null(e);
		if (strstr(e, KEY) || strstr(e, QKEY) || !strstr(e, "you sent Bearer [redacted] and [redacted]"))
			fail_msg("request %zu: %s", i, e);
	}
	char *path = xasprintf("%s/r.db", dir);
	struct db *db;
	assert_int_equal(db_open(path, &db, &err), 0);
	assert_int_equal(load_store_requests(db, 0, "serve", NULL, 0, NULL, &r, &err), 4);
	db_close(db);
	assert_false(echo_file_holds(path, KEY));
	assert_false(echo_file_holds(path, QKEY));
	assert_true(echo_file_holds(path, "you sent Bearer [redacted]"));
	run_load_result_release(&r);
	rt_sb_release(&err);
	echo_stop(s);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
}

static void test_401_echoing_the_key(void **state)
{
	(void)state;
	run(ECHO_401);
}

static void test_stream_error_echoing_the_key(void **state)
{
	(void)state;
	run(ECHO_SSE_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_401_echoing_the_key),
		cmocka_unit_test(test_stream_error_echoing_the_key),
	};
	return cmocka_run_group_tests_name("load_redact", tests, NULL, NULL);
}
