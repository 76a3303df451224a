/*
 * run_gate_run() end to end against the tests' GSM8K server (real HTTP on
 * loopback, a real SQLite file): exact accuracy, flips caught and listed, an
 * unchanged server passing against its own baseline, early stop, failed
 * requests making an ERROR, retries on 503, chat format, the API key
 * reaching the server but never the database, the default model from
 * GET /v1/models, and lm-eval's samples and results files.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"
#include "db/db.h"
#include "db/gate.h"
#include "fakeserver.h"

struct fx {
	char dir[64];            /* temp folder */
	char dbpath[128];
	struct db *db;
	struct gsm8k_set test;
	char dataset[512];       /* test.jsonl */
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rt-gate-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->dbpath, sizeof(f->dbpath), "%s/r.db", f->dir);
	const char *d = getenv("RATCHET_GSM8K_DIR");
	snprintf(f->dataset, sizeof(f->dataset), "%s/test.jsonl", d ? d : "../shared/data/gsm8k");
	struct rt_sb err = RT_SB_INIT;
	if (db_open(f->dbpath, &f->db, &err) || gsm8k_load(f->dataset, &f->test, &err)) {
		fprintf(stderr, "%s\n", err.buf);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	gsm8k_set_release(&f->test);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void cfg_init(struct fx *f, struct spec_gate *g, int limit)
{
	spec_gate_defaults(g);
	g->dataset = f->dataset;
	g->limit = limit;
	g->concurrency = 8;
	g->num_fewshot = 2;
}

static void opts_init(struct run_gate_opts *o)
{
	run_gate_opts_init(o);
	o->api_key = NULL;
	o->max_retries = 2;
	o->backoff_s = 0.01;
}

static int gate(struct fx *f, const struct spec_gate *g, const struct run_gate_opts *o, int port,
		int64_t base, struct run_gate_result *r)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct rt_sb err = RT_SB_INIT;
	int rc = run_gate_run_opts(f->db, g, o, url, "m", 0, base, r, &err);
	if (rc < 0)
		fprintf(stderr, "gate: %s\n", err.buf);
	rt_sb_release(&err);
	return rc;
}

static void test_exact_accuracy(void **state)
{
	struct fx *f = *state;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 0.9 };
	int port;
	struct fake_server *s = fake_start(&fc, &port);
	assert_non_null(s);
	struct spec_gate g;
	cfg_init(f, &g, 200);
	g.min_accuracy = 0.85;
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result r;
	int id = gate(f, &g, &o, port, 0, &r);
	assert_true(id > 0);
	assert_int_equal(r.status, RUN_GATE_PASS);
	assert_int_equal(r.fig.n_correct, 180); /* floor(200 * 0.9) */
	assert_int_equal(r.fig.n_correct_strict, 180);
	assert_true(fabs(r.fig.accuracy - 0.9) < 1e-12);
	assert_true(r.fig.wilson_lo < 0.9 && r.fig.wilson_hi > 0.9);
	assert_false(r.fig.early_stop);
	/* Stored: run figures, 200 answers, responses kept only for wrong ones. */
	struct db_gate_run row;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_gate_run_get(f->db, id, &row, &err), 0);
	assert_int_equal(row.fig.n_correct, 180);
	assert_int_equal(row.passed, 1);
	assert_string_equal(row.format, "gsm8k");
	db_gate_run_release(&row);
	struct db_gate_answer *v;
	size_t n;
	assert_int_equal(db_gate_answers_list(f->db, id, &v, &n, &err), 0);
	assert_int_equal(n, 200);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].idx, (int)i);
		assert_int_equal(strlen(v[i].response_sha256), 64);
		assert_int_equal(strlen(v[i].prompt_sha256), 64);
		kept += v[i].response != NULL;
		assert_true(v[i].correct == 1 ? v[i].response == NULL : v[i].response != NULL);
	}
	assert_int_equal(kept, 20);
	db_gate_answers_free(v, n);
	run_gate_result_release(&r);
	fake_stop(s);
}

static void test_flips_and_baseline(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 0.9 };
	struct fake_server *s = fake_start(&fc, &port);
	struct spec_gate g;
	cfg_init(f, &g, 100);
	g.format = SPEC_GSM8K_COT;
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result base, same, flipped;
	int base_id = gate(f, &g, &o, port, 0, &base);
	assert_true(base_id > 0);
	/* Unchanged server against its own baseline: pass, 0 flips, all identical. */
	assert_true(gate(f, &g, &o, port, base_id, &same) > 0);
	assert_int_equal(same.status, RUN_GATE_PASS);
	assert_int_equal(same.fig.flips_to_wrong + same.fig.flips_to_right, 0);
	assert_true(fabs(same.fig.identical_rate - 1) < 1e-12);
	assert_true(fabs(same.fig.diff) < 1e-12);
	assert_true(fabs(same.fig.mcnemar_p - 1) < 1e-12);
	fake_stop(s);
	/* Flip 3 and 17 (right at F=0.9) and 0 (wrong at F=0.9). */
	static const int fl[] = { 3, 17, 0 };
	fc.flip = fl;
	fc.n_flip = 3;
	/* Paced answers, so the early stop is decided while questions remain
	 * (a zero-latency server can answer all 100 before a loaded CI machine
	 * has read the first ones). */
	fc.delay_ms = 5;
	g.concurrency = 4;
	s = fake_start(&fc, &port);
	g.max_drop = 0.005;
	/* Two flips to wrong and one to right already drop 0.01 > 0.005: stops early. */
	assert_true(gate(f, &g, &o, port, base_id, &flipped) > 0);
	assert_int_equal(flipped.status, RUN_GATE_FAIL);
	assert_true(flipped.fig.early_stop);
	assert_true(flipped.fig.n_done < 100);
	run_gate_result_release(&flipped);
	o.no_early_stop = true;
	assert_true(gate(f, &g, &o, port, base_id, &flipped) > 0);
	assert_false(flipped.fig.early_stop);
	assert_int_equal(flipped.status, RUN_GATE_FAIL);
	assert_int_equal(flipped.fig.flips_to_wrong, 2);
	assert_int_equal(flipped.wrong_idx[0], 3);
	assert_int_equal(flipped.wrong_idx[1], 17);
	assert_int_equal(flipped.fig.flips_to_right, 1);
	assert_int_equal(flipped.right_idx[0], 0);
	assert_true(fabs(flipped.fig.diff - (-0.01)) < 1e-12);
	assert_true(fabs(flipped.fig.identical_rate - 0.97) < 1e-12);
	assert_non_null(strstr(flipped.verdict, "3,17"));
	/* The flipped answers keep their response text. */
	struct db_gate_answer *v;
	size_t n;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_gate_answers_list(f->db, flipped.run_id, &v, &n, &err), 0);
	assert_non_null(v[3].response);
	assert_non_null(v[0].response);
	assert_null(v[1].response);
	db_gate_answers_free(v, n);
	/* latest-pass finds the newest passed run of the same endpoint/model/format. */
	int64_t lp = 0;
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(db_gate_run_latest_pass(f->db, NULL, url, "m", "gsm8k_cot", &lp, &err),
			 RT_ENOENT); /* the port changed: a different endpoint */
	rt_sb_release(&err);
	run_gate_result_release(&base);
	run_gate_result_release(&same);
	run_gate_result_release(&flipped);
	fake_stop(s);
}

static void test_early_stop(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 0.5 };
	struct fake_server *s = fake_start(&fc, &port);
	struct spec_gate g;
	cfg_init(f, &g, 0); /* all 1319 */
	g.format = SPEC_GSM8K_COT;
	g.min_accuracy = 0.9;
	g.concurrency = 4;
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result r;
	assert_true(gate(f, &g, &o, port, 0, &r) > 0);
	assert_int_equal(r.status, RUN_GATE_FAIL);
	assert_true(r.fig.early_stop);
	/* It cannot pass once more than 0.1 * 1319 = 131.9 answers are wrong: ~264 asked. */
	assert_true(r.fig.n_done < 300);
	assert_true(fake_requests(s) < 320);
	assert_non_null(strstr(r.verdict, "stopped early"));
	run_gate_result_release(&r);
	fake_stop(s);
}

static void test_failures_error(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 1.0, .fail_every = 10 };
	struct fake_server *s = fake_start(&fc, &port);
	struct spec_gate g;
	cfg_init(f, &g, 100);
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result r;
	int rc = gate(f, &g, &o, port, 0, &r);
	assert_true(rc < 0);
	assert_true(r.run_id > 0);
	assert_int_equal(r.status, RUN_GATE_ERROR);
	assert_true(r.fig.n_failed > 2);
	struct db_gate_run row;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_gate_run_get(f->db, r.run_id, &row, &err), 0);
	assert_int_equal(row.passed, -1); /* NULL: no decision */
	db_gate_run_release(&row);
	run_gate_result_release(&r);
	/* Under the limit: failures counted separately, the run decides. */
	g.max_failed = 0.2;
	o.no_early_stop = true;
	assert_true(gate(f, &g, &o, port, 0, &r) > 0);
	assert_int_equal(r.fig.n_failed, 10);
	assert_int_equal(r.n_scored, 90);
	assert_int_equal(r.fig.n_correct, 90);
	assert_int_equal(r.status, RUN_GATE_PASS);
	run_gate_result_release(&r);
	fake_stop(s);
}

static void test_retry_503(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 1.0, .flaky_every = 5 };
	struct fake_server *s = fake_start(&fc, &port);
	struct spec_gate g;
	cfg_init(f, &g, 50);
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result r;
	assert_true(gate(f, &g, &o, port, 0, &r) > 0);
	assert_int_equal(r.fig.n_failed, 0);
	assert_int_equal(r.fig.n_correct, 50);
	assert_int_equal(fake_requests(s), 60); /* 10 questions asked twice */
	run_gate_result_release(&r);
	fake_stop(s);
}

static void test_chat_and_key(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 0.75 };
	struct fake_server *s = fake_start(&fc, &port);
	struct spec_gate g;
	cfg_init(f, &g, 40);
	g.api = SPEC_API_CHAT;
	g.format = SPEC_GSM8K_CHAT;
	g.extract = SPEC_EXTRACT_STRICT;
	struct run_gate_opts o;
	opts_init(&o);
	o.api_key = "sk-test-SECRET-4242";
	struct run_gate_result r;
	assert_true(gate(f, &g, &o, port, 0, &r) > 0);
	assert_int_equal(r.fig.n_correct, 30);
	char auth[256];
	fake_last_auth(s, auth, sizeof(auth));
	assert_string_equal(auth, "Bearer sk-test-SECRET-4242");
	assert_null(strstr(r.verdict, "SECRET"));
	run_gate_result_release(&r);
	fake_stop(s);
	/* The key is nowhere in the database file (nor its WAL). */
	char *text = NULL;
	size_t len = 0;
	struct rt_sb err = RT_SB_INIT;
	db_close(f->db);
	assert_int_equal(rt_read_file(f->dbpath, &text, &len, &err), 0);
	assert_null(memmem(text, len, "SECRET-4242", 11));
	free(text);
	assert_int_equal(db_open(f->dbpath, &f->db, &err), 0);
}

/* The default model, and lm-eval's files from a chat run (the prompt in
 * arg_0 as json.dumps writes the messages). */
static void test_models_and_lmeval_files(void **state)
{
	struct fx *f = *state;
	int port;
	struct fake_cfg fc = { .test = &f->test, .accuracy = 0.75, .model_id = "vendor/m:1" };
	struct fake_server *s = fake_start(&fc, &port);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/", port);
	char *model = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_gate_first_model(url, NULL, 5, &model, &err), 0);
	assert_string_equal(model, "vendor/m:1");
	free(model);
	struct spec_gate g;
	cfg_init(f, &g, 40);
	g.api = SPEC_API_CHAT;
	g.format = SPEC_GSM8K_CHAT;
	struct run_gate_opts o;
	opts_init(&o);
	o.keep_samples = true;
	struct run_gate_result r;
	assert_true(run_gate_run_opts(f->db, &g, &o, url, "vendor/m:1", 0, 0, &r, &err) > 0);
	assert_int_equal(r.n_samples, 40);
	assert_int_equal(r.num_fewshot, 8);
	assert_int_equal(r.n_test, 1319);
	assert_true(r.samples[0].prompt[0] == '[');
	struct run_gate_lmeval l;
	run_gate_lmeval_init(&l, &g, &o, "vendor/m:1", url, &r);
	char *hash = NULL, *written = NULL;
	char *dir = xasprintf("%s/samples", f->dir);
	assert_int_equal(run_gate_write_samples(&l, &r, dir, &hash, &err), 0);
	assert_int_equal(strlen(hash), 64);
	char *path = xasprintf("%s/samples_gsm8k_cot_%s.jsonl", dir, l.date_id), *text = NULL;
	size_t len, lines = 0;
	assert_int_equal(rt_read_file(path, &text, &len, &err), 0);
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	assert_int_equal(lines, 80); /* 40 questions, 2 filters */
	assert_non_null(strstr(text, "\"arg_0\": \"[{\\\"role\\\": \\\"user\\\", \\\"content\\\": "));
	assert_non_null(strstr(text, "\"filter\": \"flexible-extract\""));
	free(text);
	/* A folder output path: PATH/<model, sanitised>/results_<date>.json */
	assert_int_equal(run_gate_write_results(&l, &r, f->dir, hash, &written, &err), 0);
	char *want = xasprintf("%s/vendor__m__1/results_%s.json", f->dir, l.date_id);
	assert_string_equal(written, want);
	assert_int_equal(rt_read_file(written, &text, &len, &err), 0);
	assert_non_null(strstr(text, "\"exact_match,flexible-extract\": 0.75"));
	assert_non_null(strstr(text, "\"exact_match_stderr,strict-match\": "));
	assert_non_null(strstr(text, "\"model\": \"local-chat-completions\""));
	assert_non_null(strstr(text, hash));
	free(text);
	free(want);
	free(written);
	free(path);
	free(dir);
	free(hash);
	run_gate_result_release(&r);
	fake_stop(s);
	/* No /v1/models: an error saying so; gsm8k_cot has only 8 exemplars. */
	fc.model_id = NULL;
	s = fake_start(&fc, &port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(run_gate_first_model(url, NULL, 5, &model, &err), RT_EHTTP);
	assert_non_null(strstr(err.buf, "/v1/models: HTTP 404"));
	assert_null(model);
	g.api = SPEC_API_COMPLETIONS;
	g.format = SPEC_GSM8K_COT;
	g.num_fewshot = 9;
	assert_int_equal(run_gate_run_opts(f->db, &g, &o, url, NULL, 0, 0, &r, &err), RT_EUSAGE);
	run_gate_result_release(&r);
	fake_stop(s);
	rt_sb_release(&err);
}

static void test_bad_input(void **state)
{
	struct fx *f = *state;
	struct spec_gate g;
	cfg_init(f, &g, 10);
	g.format = SPEC_GSM8K_CHAT; /* needs api chat */
	struct run_gate_opts o;
	opts_init(&o);
	struct run_gate_result r;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_gate_run_opts(f->db, &g, &o, "http://127.0.0.1:1", NULL, 0, 0, &r, &err),
			 RT_EUSAGE);
	rt_sb_reset(&err);
	/* A baseline that does not exist. */
	g.format = SPEC_GSM8K_COT;
	assert_int_equal(run_gate_run_opts(f->db, &g, &o, "http://127.0.0.1:1", NULL, 0, 999999, &r,
					   &err),
			 RT_ENOENT);
	assert_non_null(strstr(err.buf, "999999"));
	rt_sb_reset(&err);
	/* Nothing listening: every request fails, an error after retries. */
	assert_true(run_gate_run_opts(f->db, &g, &o, "http://127.0.0.1:1", NULL, 0, 0, &r, &err) < 0);
	assert_int_equal(r.status, RUN_GATE_ERROR);
	run_gate_result_release(&r);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact_accuracy, setup, teardown),     /* floor(n*F) right, rows stored */
		cmocka_unit_test_setup_teardown(test_flips_and_baseline, setup, teardown), /* 0 flips vs itself; flips listed */
		cmocka_unit_test_setup_teardown(test_early_stop, setup, teardown),         /* 0.5 vs 0.9 stops at ~264/1319 */
		cmocka_unit_test_setup_teardown(test_failures_error, setup, teardown),     /* > max_failed: ERROR */
		cmocka_unit_test_setup_teardown(test_retry_503, setup, teardown),          /* 503 retried with backoff */
		cmocka_unit_test_setup_teardown(test_chat_and_key, setup, teardown),       /* chat; key sent, never stored */
		cmocka_unit_test_setup_teardown(test_models_and_lmeval_files, setup, teardown), /* /v1/models; lm-eval files */
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),          /* usage, missing baseline, refused */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
