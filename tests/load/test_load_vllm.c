/*
 * `ratchet bench load` speaking vLLM's `vllm bench serve`, end to end: the
 * ratchet binary ($RATCHET_BIN) given vLLM's flags against the in-process
 * test server (tests/load/testserver.c), its --save-result file compared key
 * by key with a vLLM result file, and read back through ratchet's own
 * `vllm-bench-serve` command-benchmark format (runner/bench). Also each
 * dataset record's own max_tokens, the usage errors of vLLM's flags, and
 * --burstiness choosing the arrival pattern.
 *
 * The reference file, tests/load/vllm_bench_serve_result.json, is what
 * vLLM's vllm/benchmarks/serve.py (main branch, commit 009e6d4a1cd6:
 * benchmark() builds `result`, main_async() adds the setup keys and
 * --metadata, drops nothing with --save-detailed) writes for
 *   vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random
 *     --num-prompts 4 --request-rate 10 --max-concurrency 2
 *     --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99
 *     --goodput ttft:500 --save-result --save-detailed --metadata tp=1
 * with its keys in that code's order; the values are made up (no GPU here).
 * (tests/fixtures/formats/vllm_bench_serve.json is an older, hand-made
 * shape without failed, label, the per-request lists or the peak figures.)
 *
 * tests/load/vllm_bench_serve_real.json is a result file that a real
 * `vllm bench serve --save-result` (vLLM 0.25.1, facebook/opt-125m, 8
 * prompts, --max-concurrency 2, default metrics) wrote, kept byte for byte
 * from github.com/er0080/vllm-benchmarking, path
 * packages/protocol/tests/fixtures/bench_serve_v0.25.1.json, commit
 * 35d37799380d8acc17607202959a5f17999ef30e (its keys come sorted there).
 * Every key it has must be in ours, with the same JSON type. It has no
 * per-request list (no --save-detailed); ours without --save-detailed keeps
 * latencies and queue_times, as the serve.py read above does, and nothing
 * else beyond ratchet's extras.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/bench/bench_cmd.h"
#include "runner/load/load.h"
#include "testserver.h"

static char tmp[64];       /* this test's folder */
static struct lts *srv;    /* the test server */
static char url[64];       /* its base URL */

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmp, sizeof(tmp), "/tmp/test_load_vllm_XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	int port;
	srv = lts_start(LTS_OK, 100, 0, &port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	return srv ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	lts_stop(srv);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) ? -1 : 0;
}

/* Run `ratchet bench load --endpoint URL <args>` (printf-style) with stdout
 * and stderr in tmp/out and tmp/err; its exit status. */
static int ratchet(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int ratchet(const char *fmt, ...)
{
	const char *bin = getenv("RATCHET_BIN");
	assert_non_null(bin);
	struct rt_sb cmd = RT_SB_INIT;
	rt_sb_addf(&cmd, "%s --db %s/r.db --quiet bench load --endpoint %s ", bin, tmp, url);
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&cmd, fmt, ap);
	va_end(ap);
	rt_sb_addf(&cmd, " >%s/out 2>%s/err", tmp, tmp);
	int st = system(cmd.buf);
	rt_sb_release(&cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The file's text (caller frees); "" when it cannot be read. */
static char *slurp(const char *path)
{
	char *text;
	size_t len;
	return rt_read_file(path, &text, &len, NULL) ? xstrdup("") : text;
}

/* The one file in folder dir (its name into name). */
static json_t *only_file(const char *dir, char *name, size_t n)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int found = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(name, n, "%s", e->d_name);
			found++;
		}
	closedir(d);
	assert_int_equal(found, 1);
	char *path = xasprintf("%s/%s", dir, name);
	json_t *o = json_load_file(path, 0, NULL);
	free(path);
	assert_non_null(o);
	return o;
}

static json_t *fixture_named(const char *name)
{
	char *p = xasprintf("%s/tests/load/%s", getenv("RATCHET_SRC"), name);
	json_t *o = json_load_file(p, 0, NULL);
	free(p);
	assert_non_null(o);
	return o;
}

static json_t *fixture(void)
{
	return fixture_named("vllm_bench_serve_result.json");
}

/* The extras ratchet writes besides vLLM's keys. */
static bool ratchet_extra(const char *k)
{
	return strstr(k, "_ttft_sched_ms") || strstr(k, "_send_lag_ms") ||
	       !strcmp(k, "mean_input_tokens") || !strcmp(k, "mean_output_tokens");
}

static const char vllm_args[] =
	"--model meta-llama/Llama-3.1-8B-Instruct --dataset-name random --num-prompts 4 "
	"--request-rate 10 --max-concurrency 2 --percentile-metrics ttft,tpot,itl,e2el "
	"--metric-percentiles 50,99 --goodput ttft:500 --save-result --save-detailed --metadata tp=1 "
	"--random-input-len 8 --random-output-len 3";

/* vLLM's command line gives vLLM's file: the same keys in the same order,
 * plus ratchet's extras; its values as asked. */
static void test_result_keys_match_vllm(void **state)
{
	(void)state;
	int rc = ratchet("%s --result-dir %s/res", vllm_args, tmp);
	if (rc) {
		char *err = xasprintf("%s/err", tmp);
		char *e = slurp(err);
		fail_msg("exit %d: %s", rc, e);
	}
	char dir[96], name[256];
	snprintf(dir, sizeof(dir), "%s/res", tmp);
	json_t *ours = only_file(dir, name, sizeof(name));
	/* vLLM's name: {backend}-{rate}qps-concurrency{N}-{model after /}-{date}.json */
	assert_int_equal(strncmp(name, "openai-10.0qps-concurrency2-Llama-3.1-8B-Instruct-", 50), 0);
	assert_int_equal(strlen(name), 50 + strlen("20260101-120000.json"));
	json_t *ref = fixture();
	const char *k;
	json_t *v;
	for (void *it = json_object_iter(ref); it; it = json_object_iter_next(ref, it))
		if (!json_object_get(ours, json_object_iter_key(it)))
			fail_msg("vLLM's key '%s' is missing", json_object_iter_key(it));
	/* same order: vLLM's keys appear in ours in the fixture's order */
	void *a = json_object_iter(ours), *b = json_object_iter(ref);
	while (a && b) {
		if (!strcmp(json_object_iter_key(a), json_object_iter_key(b)))
			b = json_object_iter_next(ref, b);
		a = json_object_iter_next(ours, a);
	}
	if (b)
		fail_msg("key '%s' out of vLLM's order", json_object_iter_key(b));
	json_object_foreach(ours, k, v)
		if (!json_object_get(ref, k) && !ratchet_extra(k))
			fail_msg("key '%s' is neither vLLM's nor one of ratchet's extras", k);
	assert_true(json_object_get(ours, "mean_ttft_sched_ms") && json_object_get(ours, "p99_send_lag_ms"));
	assert_int_equal(json_integer_value(json_object_get(ours, "completed")), 4);
	assert_int_equal(json_integer_value(json_object_get(ours, "num_prompts")), 4);
	assert_int_equal(json_integer_value(json_object_get(ours, "max_concurrency")), 2);
	assert_true(json_real_value(json_object_get(ours, "request_rate")) == 10.0);
	assert_string_equal(json_string_value(json_object_get(ours, "tp")), "1");
	assert_true(json_is_number(json_object_get(ours, "request_goodput")));
	json_t *ol = json_object_get(ours, "output_lens"), *itls = json_object_get(ours, "itls");
	assert_int_equal(json_array_size(ol), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(json_integer_value(json_array_get(ol, i)), 3);
		assert_int_equal(json_array_size(json_array_get(itls, i)), 2);
	}
	/* ratchet's own reader of vLLM's files takes both the same way */
	char *text = json_dumps(ours, 0), *rtext = json_dumps(ref, 0);
	struct run_bcmd_metrics m1 = { 0 }, m2 = { 0 };
	assert_int_equal(run_bcmd_vllm_bench_serve(text, strlen(text), &m1, NULL), 0);
	assert_int_equal(run_bcmd_vllm_bench_serve(rtext, strlen(rtext), &m2, NULL), 0);
	/* every key of vLLM's own file (p99 and std of ttft, tpot, itl; counts; throughputs),
	 * and in ours ratchet's extras too: {mean,median,std,p99}_{ttft_sched,send_lag} */
	assert_int_equal(m1.n, 33);
	assert_int_equal(m1.n, m2.n + 8);
	for (size_t i = 0; i < m2.n; i++)
		assert_non_null(run_bcmd_metric_get(&m1, m2.v[i].name));
	run_bcmd_metrics_release(&m1);
	run_bcmd_metrics_release(&m2);
	free(text);
	free(rtext);
	json_decref(ours);
	json_decref(ref);
}

/* The same type in JSON, integers and reals both numbers. */
static bool same_type(const json_t *a, const json_t *b)
{
	return json_typeof(a) == json_typeof(b) || (json_is_number(a) && json_is_number(b));
}

/* The file a real `vllm bench serve --save-result` wrote: each of its keys
 * is in ours, with its type; ours has only ratchet's extras and the two
 * per-request lists vLLM keeps without --save-detailed besides. */
static void test_result_keys_match_real_file(void **state)
{
	(void)state;
	int rc = ratchet("--model facebook/opt-125m --num-prompts 8 --max-concurrency 2 "
			 "--random-input-len 32 --random-output-len 16 --save-result --result-dir %s/res3", tmp);
	assert_int_equal(rc, 0);
	char dir[96], name[256];
	snprintf(dir, sizeof(dir), "%s/res3", tmp);
	json_t *ours = only_file(dir, name, sizeof(name));
	json_t *real = fixture_named("vllm_bench_serve_real.json");
	const char *k;
	json_t *v;
	json_object_foreach(real, k, v) {
		json_t *o = json_object_get(ours, k);
		if (!o)
			fail_msg("the real file's key '%s' is missing", k);
		if (!same_type(o, v) && !json_is_null(v) && !json_is_null(o))
			fail_msg("key '%s': type %d, the real file's %d", k, json_typeof(o), json_typeof(v));
	}
	json_object_foreach(ours, k, v)
		if (!json_object_get(real, k) && !ratchet_extra(k) && strcmp(k, "latencies") &&
		    strcmp(k, "queue_times"))
			fail_msg("key '%s' is in ours, not in the real file", k);
	assert_string_equal(json_string_value(json_object_get(ours, "request_rate")), "inf");
	assert_int_equal(json_integer_value(json_object_get(ours, "completed")), 8);
	json_decref(ours);
	json_decref(real);
}

/* Without --save-detailed vLLM drops the per-request lists but keeps
 * latencies and queue_times; --label names the file; vLLM's defaults
 * (--request-rate inf, no cap) are recorded as vLLM records them;
 * --append-result appends a line. */
static void test_result_defaults_and_append(void **state)
{
	(void)state;
	assert_int_equal(ratchet("--num-prompts 3 --random-input-len 8 --random-output-len 2 "
				 "--save-result --label mine --result-dir %s/res2", tmp), 0);
	char dir[96], name[256];
	snprintf(dir, sizeof(dir), "%s/res2", tmp);
	json_t *o = only_file(dir, name, sizeof(name));
	assert_int_equal(strncmp(name, "mine-infqps-default-", 20), 0);
	assert_string_equal(json_string_value(json_object_get(o, "request_rate")), "inf");
	assert_true(json_is_null(json_object_get(o, "max_concurrency")));
	assert_true(json_is_null(json_object_get(o, "request_goodput")));
	assert_string_equal(json_string_value(json_object_get(o, "label")), "mine");
	assert_null(json_object_get(o, "ttfts"));
	assert_null(json_object_get(o, "input_lens"));
	assert_int_equal(json_array_size(json_object_get(o, "latencies")), 3);
	assert_int_equal(json_array_size(json_object_get(o, "queue_times")), 3);
	assert_non_null(json_object_get(o, "p99_itl_ms"));
	assert_null(json_object_get(o, "p99_e2el_ms")); /* not in the default metrics */
	json_decref(o);
	for (int k = 0; k < 2; k++)
		assert_int_equal(ratchet("--num-prompts 2 --random-input-len 4 --random-output-len 2 "
					 "--append-result --result-filename %s/app.json", tmp), 0);
	char *p = xasprintf("%s/app.json", tmp);
	char *text = slurp(p);
	free(p);
	size_t at = strcspn(text, "\n");
	assert_int_equal(text[at], '\n');
	assert_null(strchr(text + at + 1, '\n'));
	json_t *first = json_loadb(text, at, 0, NULL), *second = json_loads(text + at + 1, 0, NULL);
	assert_non_null(first);
	assert_non_null(second);
	json_decref(first);
	json_decref(second);
	free(text);
}

/* Each dataset record's own max_tokens (ShareGPT: the reply's words) is
 * what its request asks for, unless --output-tokens says otherwise; the
 * achieved mean lengths are reported. */
static void test_record_lengths(void **state)
{
	(void)state;
	char *p = xasprintf("%s/d.jsonl", tmp);
	FILE *f = fopen(p, "w");
	fputs("{\"prompt\": \"one two three\", \"max_tokens\": 3}\n"
	      "{\"prompt\": \"four five\", \"max_tokens\": 7}\n"
	      "{\"conversations\": [{\"from\": \"human\", \"value\": \"six\"}, "
	      "{\"from\": \"gpt\", \"value\": \"a b c d e\"}]}\n", f);
	fclose(f);
	assert_int_equal(ratchet("--dataset %s -n 3 -c 1 --json", p), 0);
	char *out = xasprintf("%s/out", tmp);
	json_t *o = json_load_file(out, 0, NULL);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "output_tokens")), 3 + 7 + 5);
	assert_true(fabs(json_real_value(json_object_get(o, "mean_output_tokens")) - 5.0) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(o, "mean_input_tokens")) - 2.0) < 1e-9);
	json_decref(o);
	assert_int_equal(ratchet("--dataset-name sharegpt --dataset-path %s --num-prompts 3 "
				 "--max-concurrency 1 --output-tokens 2 --json", p), 0);
	o = json_load_file(out, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(o, "output_tokens")), 6);
	json_decref(o);
	/* the summary says what was achieved */
	assert_int_equal(ratchet("--dataset %s -n 3 -c 1", p), 0);
	char *text = slurp(out);
	assert_non_null(strstr(text, "Mean output tokens (achieved):           5.00"));
	free(text);
	free(out);
	free(p);
}

/* --burstiness without --pattern picks the arrival pattern (as in the spec
 * and in vLLM): inf gives constant gaps, so the intended sends (start_times
 * minus queue_times) are exactly 1/rate apart. */
static void test_burstiness_pattern(void **state)
{
	(void)state;
	assert_int_equal(ratchet("--rate 50 --burstiness inf -n 5 --prompt-tokens 4 --output-tokens 2 "
				 "--save-result --save-detailed --result-filename %s/b.json", tmp), 0);
	char *p = xasprintf("%s/b.json", tmp);
	json_t *o = json_load_file(p, 0, NULL);
	free(p);
	assert_non_null(o);
	json_t *st = json_object_get(o, "start_times"), *qt = json_object_get(o, "queue_times");
	assert_int_equal(json_array_size(st), 5);
	for (size_t i = 1; i < 5; i++) {
		double a = json_real_value(json_array_get(st, i - 1)) - json_real_value(json_array_get(qt, i - 1));
		double b = json_real_value(json_array_get(st, i)) - json_real_value(json_array_get(qt, i));
		if (fabs(b - a - 0.02) > 1e-6)
			fail_msg("intended gap %zu: %.9f s, want 0.02", i, b - a);
	}
	json_decref(o);
}

/* vLLM's flags are checked the way vLLM checks them, in ratchet's words. */
static void test_usage_errors(void **state)
{
	(void)state;
	static const struct {
		const char *args; /* the command line after --endpoint */
		const char *says; /* part of the error */
	} cases[] = {
		{ "--goodput ttft:500 itl:3", "invalid metric name 'itl'" },
		{ "--goodput", "needs at least one" },
		{ "--percentile-metrics ttft,tpto", "did you mean 'tpot'" },
		{ "--dataset-name random --dataset-path /nope", "cannot use the 'random' dataset" },
		{ "--dataset-name sharegpt", "needs --dataset-path" },
		{ "--dataset-name shargpt", "did you mean 'sharegpt'" },
		{ "--request-rate 0", "--request-rate must be positive" },
		{ "--max-concurrency 0", "must be greater than 0" },
		{ "--num-prompts 3 --requests 3", "not both" },
		{ "--metadata version", "is not KEY=VALUE" },
		{ "--metric-percentiles 99,101", "not a percentile" },
		{ "--rate inf --duration 2s", "give a request count" },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		int rc = ratchet("%s", cases[i].args);
		char *p = xasprintf("%s/err", tmp);
		char *e = slurp(p);
		free(p);
		if (rc != 2 || !strstr(e, cases[i].says))
			fail_msg("%s: exit %d, %s", cases[i].args, rc, e);
		free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_keys_match_vllm),
		cmocka_unit_test(test_result_keys_match_real_file),
		cmocka_unit_test(test_result_defaults_and_append),
		cmocka_unit_test(test_record_lengths),
		cmocka_unit_test(test_burstiness_pattern),
		cmocka_unit_test(test_usage_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
