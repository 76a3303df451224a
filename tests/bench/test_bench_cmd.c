/*
 * Tests of runner/bench_cmd*.c: real child processes (sh -c in tests only;
 * production never uses a shell), the timeout that stops a whole process
 * group, output caps, JSON pointers, regexes, the bad-metric error text and
 * the built-in extractors against hand-made fixtures in
 * tests/fixtures/formats/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static char *fixture(const char *name, size_t *len)
{
	const char *src = getenv("RATCHET_SRC");
	char *path = xasprintf("%s/tests/fixtures/formats/%s", src ? src : ".", name);
	char *data = NULL;
	assert_int_equal(rt_read_file(path, &data, len, NULL), 0);
	free(path);
	return data;
}

static void test_exec_stdout_env(void **state)
{
	char *argv[] = { "sh", "-c", "echo \"{\\\"x\\\": $RT_X}\"; echo oops >&2; exit 3", NULL };
	struct rt_env env[] = { { "RT_X", "3" } };
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 0);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_bcmd_exec(argv, env, 1, "/", 10, &r, &err), 0);
	assert_string_equal(r.out.buf, "{\"x\": 3}\n");
	assert_string_equal(r.err.buf, "oops\n");
	assert_int_equal(r.status, 3);
	assert_false(r.timed_out);
	struct spec_metric m = { .name = "x", .kind = SPEC_EXTRACT_POINTER, .expr = "/x" };
	double v = 0;
	assert_int_equal(run_bcmd_extract_metric(&m, r.out.buf, r.out.len, "stdout", &v, &err), 0);
	NEAR(v, 3, 0);
	run_bcmd_result_release(&r);
	rt_sb_release(&err);
}

static void test_exec_timeout_kills_group(void **state)
{
	/* the child starts a grandchild in the same group; both must go */
	char *argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 0);
	double t0 = rt_now_s();
	assert_int_equal(run_bcmd_exec(argv, NULL, 0, NULL, 0.5, &r, NULL), 0);
	double dt = rt_now_s() - t0;
	assert_true(r.timed_out);
	assert_true(dt < 0.5 + 2.0 + 1.0);
	assert_true(r.status >= 128);
	run_bcmd_result_release(&r);
}

static void test_exec_term_ignored(void **state)
{
	/* a child that ignores SIGTERM is killed after the 2 s grace */
	char *argv[] = { "sh", "-c", "trap '' TERM; while :; do sleep 0.1; done", NULL };
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 0);
	double t0 = rt_now_s();
	assert_int_equal(run_bcmd_exec(argv, NULL, 0, NULL, 0.3, &r, NULL), 0);
	double dt = rt_now_s() - t0;
	assert_true(r.timed_out);
	assert_true(dt >= 2.0 && dt < 4.0);
	run_bcmd_result_release(&r);
}

static void test_exec_cap_and_missing(void **state)
{
	char *argv[] = { "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a", NULL };
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, 1000);
	assert_int_equal(run_bcmd_exec(argv, NULL, 0, NULL, 10, &r, NULL), 0);
	assert_int_equal(r.out.len, 1000);
	assert_true(r.truncated);
	assert_int_equal(r.status, 0);
	run_bcmd_result_release(&r);
	char *bad[] = { "ratchet-no-such-program-xyz", NULL };
	struct rt_sb err = RT_SB_INIT;
	run_bcmd_result_init(&r, 0);
	assert_int_equal(run_bcmd_exec(bad, NULL, 0, NULL, 10, &r, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "ratchet-no-such-program-xyz: command not found"));
	run_bcmd_result_release(&r);
	rt_sb_release(&err);
}

static void test_json_pointer(void **state)
{
	json_t *doc = json_loads("{\"a\": {\"b/c\": [10, {\"m~n\": 7}]}, \"\": 1}", 0, NULL);
	assert_ptr_equal(run_bcmd_json_pointer(doc, "", NULL), doc);
	assert_int_equal(json_integer_value(run_bcmd_json_pointer(doc, "/a/b~1c/0", NULL)), 10);
	assert_int_equal(json_integer_value(run_bcmd_json_pointer(doc, "/a/b~1c/1/m~0n", NULL)), 7);
	assert_int_equal(json_integer_value(run_bcmd_json_pointer(doc, "/", NULL)), 1);
	struct rt_sb err = RT_SB_INIT;
	assert_null(run_bcmd_json_pointer(doc, "/a/b~1c/01", &err));
	assert_null(run_bcmd_json_pointer(doc, "/a/zz", &err));
	assert_non_null(strstr(err.buf, "no \"zz\" at \"/a\""));
	json_decref(doc);
	rt_sb_release(&err);
}

static void test_regex_and_bad_metric(void **state)
{
	const char *out = "warmup done\nthroughput: 123.5 tok/s\n";
	struct spec_metric m = { .name = "tps", .kind = SPEC_EXTRACT_REGEX,
				 .expr = "throughput: ([0-9.]+)" };
	double v;
	assert_int_equal(run_bcmd_extract_metric(&m, out, strlen(out), "stdout", &v, NULL), 0);
	NEAR(v, 123.5, 1e-12);
	struct spec_metric whole = { .name = "n", .kind = SPEC_EXTRACT_REGEX, .expr = "[0-9]+\\.[0-9]+" };
	assert_int_equal(run_bcmd_extract_metric(&whole, out, strlen(out), "stdout", &v, NULL), 0);
	NEAR(v, 123.5, 1e-12);
	struct spec_metric bad = { .name = "tps", .kind = SPEC_EXTRACT_REGEX, .expr = "throughput: (\\S+) (\\S+)" };
	struct rt_sb err = RT_SB_INIT;
	const char *o2 = "throughput: fast tok/s\n";
	assert_int_equal(run_bcmd_extract_metric(&bad, o2, strlen(o2), "stdout", &v, &err), RT_EPARSE);
	assert_string_equal(err.buf, "metric tps: regex /throughput: (\\S+) (\\S+)/ captured a non-number "
				     "in stdout (saw: \"fast\")");
	rt_sb_reset(&err);
	struct spec_metric p = { .name = "gflops", .kind = SPEC_EXTRACT_POINTER, .expr = "/gflops" };
	const char *o3 = "{\"gflops\": \"n/a\"}";
	assert_int_equal(run_bcmd_extract_metric(&p, o3, strlen(o3), "stdout", &v, &err), RT_EPARSE);
	assert_string_equal(err.buf, "metric gflops: stdout at /gflops is not a number (saw: \"\\\"n/a\\\"\")");
	rt_sb_reset(&err);
	/* not JSON at all: the first 200 bytes are shown */
	char big[400];
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(run_bcmd_extract_metric(&p, big, strlen(big), "stdout", &v, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "metric gflops: stdout is not JSON"));
	assert_non_null(strstr(err.buf, "zzzz\"...)"));
	assert_true(strlen(strstr(err.buf, "(saw: ")) == strlen("(saw: \"") + 200 + strlen("\"...)"));
	rt_sb_release(&err);
}

static void test_llama_batched_table(void **state)
{
	size_t len;
	char *d = fixture("llama_batched_bench.md", &len);
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_llama_batched_table(d, len, NULL, &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "s_pp"), 1374.50, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "t"), 7.623, 1e-9);
	run_bcmd_metrics_release(&m);
	assert_int_equal(run_bcmd_llama_batched_table(d, len, "128,128,2", &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "s_tg"), 50.90, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "t_pp"), 0.198, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "s"), 97.95, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "t_tg"), 5.029, 1e-9);
	assert_int_equal(m.n, 6);
	run_bcmd_metrics_release(&m);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_bcmd_llama_batched_table(d, len, "1,2,3", &m, &err), RT_ENOENT);
	assert_string_equal(err.buf, "llama-batched-bench: no row 1,2,3 (PP,TG,B)");
	rt_sb_release(&err);
	free(d);
}

static void test_llama_batched_jsonl(void **state)
{
	size_t len;
	char *d = fixture("llama_batched_bench.jsonl", &len);
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_llama_batched_jsonl(d, len, NULL, &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "s"), 97.95, 1e-9);
	run_bcmd_metrics_release(&m);
	assert_int_equal(run_bcmd_llama_batched_jsonl(d, len, "128,128,1", &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "s_pp"), 1185.19, 1e-9);
	run_bcmd_metrics_release(&m);
	free(d);
}

/* llama.cpp's log loses the end of the output now and then (its writer
 * thread is not flushed at exit; 3 of 30 runs of the real llama-batched-bench
 * here): the fixture cut after its second row, and inside its third, is
 * refused, never read as the second row's numbers, unless format_row names a
 * row that arrived whole. */
static void test_llama_batched_lost_end(void **state)
{
	size_t len;
	char *d = fixture("llama_batched_bench.md", &len);
	struct run_bcmd_metrics m = { 0 };
	struct rt_sb err = RT_SB_INIT;
	const char *row3 = strstr(d, "|   256 |");
	assert_non_null(row3);
	size_t cuts[] = { (size_t)(row3 - d), (size_t)(row3 - d) + 30 };
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(run_bcmd_llama_batched_table(d, cuts[i], NULL, &m, &err), RT_EPARSE);
		assert_non_null(strstr(err.buf, "llama-batched-bench: the output ends inside the "
						"results (after row 128,128,2), without the empty line"));
		assert_int_equal(m.n, 0);
		rt_sb_reset(&err);
		/* the row format_row names arrived whole: read */
		assert_int_equal(run_bcmd_llama_batched_table(d, cuts[i], "128,128,2", &m, &err), 0);
		NEAR(*run_bcmd_metric_get(&m, "s_tg"), 50.90, 1e-9);
		run_bcmd_metrics_release(&m);
	}
	/* cut after the separator: no row arrived */
	const char *row1 = strstr(d, "|   128 |");
	assert_int_equal(run_bcmd_llama_batched_table(d, (size_t)(row1 - d), "128,128,1", &m, &err),
			 RT_EPARSE);
	assert_non_null(strstr(err.buf, "ends inside the results, without"));
	rt_sb_reset(&err);
	/* complete up to the empty line after the rows: read */
	const char *blank = strstr(row3, "\n\n");
	assert_int_equal(run_bcmd_llama_batched_table(d, (size_t)(blank - d) + 2, NULL, &m, &err), 0);
	NEAR(*run_bcmd_metric_get(&m, "s_pp"), 1374.50, 1e-9);
	run_bcmd_metrics_release(&m);
	free(d);
	d = fixture("llama_batched_bench.jsonl", &len);
	const char *last = strstr(d, "\n\n");
	assert_non_null(last);
	assert_int_equal(run_bcmd_llama_batched_jsonl(d, (size_t)(last - d) + 1, NULL, &m, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "llama-batched-bench jsonl: the output ends inside the results (after row 128,128,2)"));
	rt_sb_reset(&err);
	assert_int_equal(run_bcmd_llama_batched_jsonl(d, (size_t)(last - d) - 10, NULL, &m, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "(after row 128,128,1)"));
	rt_sb_reset(&err);
	assert_int_equal(m.n, 0);
	free(d);
	/* the real program's stdout that lost its end (llama.cpp 80fb11a, -npl 8,
	 * on this host): the row arrived, the empty line after it did not */
	d = fixture("llama_batched_bench_lost_end.md", &len);
	assert_int_equal(run_bcmd_llama_batched_table(d, len, NULL, &m, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "(after row 16,8,8)"));
	rt_sb_release(&err);
	assert_int_equal(run_bcmd_llama_batched_table(d, len, "16,8,8", &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "s"), 2829.94, 1e-9);
	run_bcmd_metrics_release(&m);
	free(d);
}

static void test_llama_bench_json(void **state)
{
	size_t len;
	char *d = fixture("llama_bench.json", &len);
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_llama_bench_json(d, len, &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "pp_tps"), 4266.67, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "pp_tps_stddev"), 31.9, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "tg_tps"), 80.0, 1e-9);
	NEAR(*run_bcmd_metric_get(&m, "tg_tps_stddev"), 0.4, 1e-9);
	run_bcmd_metrics_release(&m);
	free(d);
}

static void test_vllm_bench_serve(void **state)
{
	size_t len;
	char *d = fixture("vllm_bench_serve.json", &len);
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_vllm_bench_serve(d, len, &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "request_throughput"), 5.0, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "output_throughput"), 640.0, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "total_token_throughput"), 5760.0, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "ttft_mean"), 0.25, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "ttft_p99"), 0.9, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "tpot_median"), 0.0195, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "itl_p99"), 0.045, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "e2el_median"), 2.7, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "ttft_std"), 0.08, 1e-12);
	NEAR(*run_bcmd_metric_get(&m, "completed"), 200, 0);
	assert_int_equal(m.n, 21);
	run_bcmd_metrics_release(&m);
	free(d);
}

static void test_extract_spec(void **state)
{
	/* a whole benchmark: built-in format from a file plus an explicit regex */
	const char *src = getenv("RATCHET_SRC");
	char *cwd = xasprintf("%s/tests/fixtures/formats", src ? src : ".");
	struct spec_metric mt[] = { { .name = "gen", .kind = SPEC_EXTRACT_REGEX,
				      .expr = "generated ([0-9]+) tokens" } };
	struct spec_cmd_bench b = { .format = SPEC_FMT_VLLM_BENCH_SERVE,
				    .format_file = "vllm_bench_serve.json", .metrics = mt, .n_metrics = 1 };
	struct run_bcmd_result so;
	run_bcmd_result_init(&so, 0);
	rt_sb_adds(&so.out, "generated 4096 tokens\n");
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_extract(&b, cwd, &so, &m, NULL), 0);
	NEAR(*run_bcmd_metric_get(&m, "gen"), 4096, 0);
	NEAR(*run_bcmd_metric_get(&m, "ttft_median"), 0.2, 1e-12);
	run_bcmd_metrics_release(&m);
	run_bcmd_result_release(&so);
	free(cwd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_stdout_env),
		cmocka_unit_test(test_exec_timeout_kills_group),
		cmocka_unit_test(test_exec_term_ignored),
		cmocka_unit_test(test_exec_cap_and_missing),
		cmocka_unit_test(test_json_pointer),
		cmocka_unit_test(test_regex_and_bad_metric),
		cmocka_unit_test(test_llama_batched_table),
		cmocka_unit_test(test_llama_batched_jsonl),
		cmocka_unit_test(test_llama_batched_lost_end),
		cmocka_unit_test(test_llama_bench_json),
		cmocka_unit_test(test_vllm_bench_serve),
		cmocka_unit_test(test_extract_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_exec_stdout_env           real child: stdout, stderr, env override, exit status
 *   test_exec_timeout_kills_group  sleep 30 child + grandchild killed within timeout + grace
 *   test_exec_term_ignored         SIGTERM ignored: SIGKILL after the 2 s grace
 *   test_exec_cap_and_missing      output cap, program not in PATH
 *   test_json_pointer              RFC 6901 escapes, array indexes, errors
 *   test_regex_and_bad_metric      capture group, whole match, exact bad-metric messages, 200 bytes
 *   test_llama_batched_table       last row, row "PP,TG,B", missing row
 *   test_llama_batched_jsonl       last line, selected line, log lines skipped
 *   test_llama_batched_lost_end    output cut at or inside a row refused, saying so
 *   test_llama_bench_json          pp/tg avg_ts and stddev_ts
 *   test_vllm_bench_serve          throughputs, ms -> s, all 15 metrics
 *   test_extract_spec              format_file relative to cwd + explicit regex
 */
