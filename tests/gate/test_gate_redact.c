/*
 * The API key and the endpoint's ?api_key= never reach the database, even
 * when the server echoes them: a gate run against tests/gate/echo_server.c
 * stores its answers (each quoting the credentials) and its errors (HTTP 401
 * quoting them) redacted, the run's endpoint redacted, and a CSV export of
 * the answers holds neither. The raw bytes of the SQLite file are searched.
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
#include "db/export.h"
#include "db/gate.h"
#include "echo_server.h"
#include "runner/gate/gate.h"

#define KEY "sk-echo-SECRET-0123456789"  /* given as the API key */
#define QKEY "sk-query-SECRET-98765"     /* given in the endpoint URL */

struct fx {
	char dir[64];      /* temporary folder */
	char dbpath[128];  /* the store */
	char dataset[512]; /* GSM8K test.jsonl */
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rt-gate-redact-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->dbpath, sizeof(f->dbpath), "%s/r.db", f->dir);
	const char *d = getenv("RATCHET_GSM8K_DIR");
	snprintf(f->dataset, sizeof(f->dataset), "%s/test.jsonl", d ? d : "../shared/data/gsm8k");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(cmd);
	free(f);
	return rc ? -1 : 0;
}

/* One gate run of 6 questions against an echo server in mode; returns what
 * run_gate_run_opts returned, the error text in err. */
static int run(struct fx *f, enum echo_mode mode, struct rt_sb *err)
{
	int port;
	struct echo_server *s = echo_start(mode, &port);
	assert_non_null(s);
	struct db *db;
	assert_int_equal(db_open(f->dbpath, &db, err), 0);
	struct spec_gate g;
	spec_gate_defaults(&g);
	g.dataset = f->dataset;
	g.limit = 6;
	g.concurrency = 2;
	g.num_fewshot = 0;
	struct run_gate_opts o;
	run_gate_opts_init(&o);
	o.api_key = KEY;
	o.max_retries = 0;
	char url[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?api_key=" QKEY, port);
	struct run_gate_result r;
	int rc = run_gate_run_opts(db, &g, &o, url, "m", 0, 0, &r, err);
	assert_true(echo_requests(s) >= 1); /* failures may stop the run early */
	run_gate_result_release(&r);

	/* What the export writes holds neither. */
	char *csv = NULL;
	size_t n = 0, rows = 0;
	FILE *m = open_memstream(&csv, &n);
	assert_int_equal(db_export_csv(db, "gate_answers", false, m, &rows, err), 0);
	fclose(m);
	assert_true(rows >= 1);
	assert_null(strstr(csv, KEY));
	assert_null(strstr(csv, QKEY));
	assert_non_null(strstr(csv, "you sent Bearer [redacted] and [redacted]"));
	free(csv);
	db_close(db);
	echo_stop(s);
	assert_false(echo_file_holds(f->dbpath, KEY));
	assert_false(echo_file_holds(f->dbpath, QKEY));
	assert_true(echo_file_holds(f->dbpath, "you sent Bearer [redacted] and [redacted]"));
	assert_true(echo_file_holds(f->dbpath, "/?api_key=[redacted]")); /* gate_runs.endpoint */
	return rc;
}

static void test_answers_echoing_the_key(void **state)
{
	struct rt_sb err = RT_SB_INIT;
	run(*state, ECHO_TEXT, &err); /* every answer is wrong, so each is kept */
	rt_sb_release(&err);
}

static void test_errors_echoing_the_key(void **state)
{
	struct rt_sb err = RT_SB_INIT;
	assert_true(run(*state, ECHO_401, &err) < 0); /* every request failed */
	assert_null(strstr(err.buf, KEY));
	assert_null(strstr(err.buf, QKEY));
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answers_echoing_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_echoing_the_key, setup, teardown),
	};
	return cmocka_run_group_tests_name("gate_redact", tests, NULL, NULL);
}
