/*
 * The vllm-bench-serve format reads every key of vLLM's result file
 * (issue 11): ratchet's own writer of that file (runner/load/load_vllm.c),
 * asked for every percentile metric, p90, p95 and p99, and goodput, writes
 * a file whose every statistic, throughput and count the reader returns,
 * in seconds; the names it returns are exactly those the spec declares for
 * the format, so each can be an objective or a constraint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"
#include "runner/load/load.h"

/* A small finished run: 4 requests, all served, a concurrency cap. */
static void make_run(struct run_load_result *r)
{
	memset(r, 0, sizeof(*r));
	r->n_reqs = 4;
	r->reqs = calloc(4, sizeof(*r->reqs));
	static const double itl[] = { 0.01, 0.03, 0.02, 0.02, 0.02, 0.04 };
	r->itl = malloc(sizeof(itl));
	memcpy(r->itl, itl, sizeof(itl));
	r->n_itl = RT_ARRAY_SIZE(itl);
	for (int i = 0; i < 4; i++) {
		int64_t sent = 1000000LL * (i + 1);
		r->reqs[i] = (struct run_load_req){
			.seq = i, .intended_ns = 0, .sent_ns = sent, .first_ns = sent + 100000000LL * (i + 1),
			.done_ns = sent + 150000000LL * (i + 1), .ttft_s = 0.1 * (i + 1),
			.e2el_s = 0.15 * (i + 1), .n_chunks = i == 0 ? 1 : 3 - (i == 3),
			.itl_off = (size_t)(i == 0 ? 0 : 2 * (i - 1)), .prompt_tokens = 10,
			.output_tokens = i == 0 ? 1 : 3 - (i == 3), .ok = true, .status = 200,
		};
	}
	r->completed = 4;
	r->duration_s = 1.0;
	r->prompt_tokens_total = 40;
	r->output_tokens_total = 8;
	r->offered_rate = 4;
}

static void test_every_key(void **state)
{
	(void)state;
	struct run_load_result r;
	make_run(&r);
	static const double pcts[] = { 90, 95, 99 };
	struct run_load_vllm_run v = {
		.date = "20260101-000000", .backend = "openai", .model_id = "m", .num_prompts = 4,
		.request_rate = 4, .burstiness = 1, .max_concurrency = 2, .goodput = true,
		.percentile_metrics = "ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue",
		.percentiles = pcts, .n_percentiles = RT_ARRAY_SIZE(pcts),
	};
	json_t *o = run_load_vllm_result(&r, &v);
	char *text = json_dumps(o, JSON_COMPACT);
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_vllm_bench_serve(text, strlen(text), &m, NULL), 0);

	/* every {stat}_{metric}_ms key of the file, in seconds */
	const char *key;
	json_t *val;
	size_t nstat = 0;
	json_object_foreach(o, key, val)
	{
		size_t len = strlen(key);
		if (len < 4 || strcmp(key + len - 3, "_ms") || !json_is_number(val))
			continue;
		const char *us = strchr(key, '_');
		char name[128];
		snprintf(name, sizeof(name), "%.*s_%.*s", (int)(len - 3 - (size_t)(us + 1 - key)), us + 1,
			 (int)(us - key), key);
		const double *got = run_bcmd_metric_get(&m, name);
		if (!got)
			fail_msg("%s: no metric %s", key, name);
		assert_float_equal(*got, json_number_value(val) / 1000, 1e-12);
		nstat++;
	}
	assert_int_equal(nstat, 8 * 6); /* 6 of vLLM's metrics and 2 of ratchet's, 6 statistics each */
	assert_float_equal(*run_bcmd_metric_get(&m, "goodput"),
			   json_number_value(json_object_get(o, "request_goodput")), 1e-12);
	assert_float_equal(*run_bcmd_metric_get(&m, "completed"), 4, 0);
	assert_float_equal(*run_bcmd_metric_get(&m, "failed"), 0, 0);
	assert_non_null(run_bcmd_metric_get(&m, "max_concurrent_requests"));
	assert_non_null(run_bcmd_metric_get(&m, "ttft_p95"));
	assert_non_null(run_bcmd_metric_get(&m, "itl_std"));

	/* the spec declares exactly these names for the format */
	static const char spec_text[] =
		"name: v\n"
		"benchmarks:\n"
		"  - {name: vs, command: [true], format: vllm-bench-serve}\n"
		"objective: {metric: vs.ttft_p95, goal: min}\n"
		"variants:\n"
		"  - {name: e, env: {A: '1'}}\n";
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(spec_load_text("v.yaml", spec_text, strlen(spec_text), &s, &err), 0);
	const char **names;
	size_t n = spec_bench_metrics(spec_bench_find(s, "vs"), &names);
	assert_int_equal(n, m.n);
	for (size_t i = 0; i < n; i++)
		if (!run_bcmd_metric_get(&m, names[i]))
			fail_msg("declared %s, not read", names[i]);
	spec_free(s);
	rt_sb_release(&err);
	run_bcmd_metrics_release(&m);
	free(text);
	json_decref(o);
	run_load_result_release(&r);
}

/* llama-bench's -o jsonl: one test object per line, logs around them. */
static void test_llama_bench_jsonl(void **state)
{
	(void)state;
	static const char text[] =
		"load_backend: loaded CPU backend\n"
		"{\"build_commit\": \"0104b151\", \"n_prompt\": 512, \"n_gen\": 0, \"n_depth\": 0, "
		"\"avg_ns\": 120000000, \"stddev_ns\": 1000, \"avg_ts\": 4266.67, \"stddev_ts\": 31.9, "
		"\"samples_ns\": [ 1, 2 ],\"samples_ts\": [ 3, 4 ]}\n"
		"{\"build_commit\": \"0104b151\", \"n_prompt\": 0, \"n_gen\": 128, \"n_depth\": 0, "
		"\"avg_ns\": 1600000000, \"stddev_ns\": 1000, \"avg_ts\": 80.0, \"stddev_ts\": 0.4, "
		"\"samples_ns\": [ 1, 2 ],\"samples_ts\": [ 3, 4 ]}\n";
	struct run_bcmd_metrics m = { 0 };
	assert_int_equal(run_bcmd_llama_bench_json(text, strlen(text), &m, NULL), 0);
	assert_float_equal(*run_bcmd_metric_get(&m, "pp_tps"), 4266.67, 1e-9);
	assert_float_equal(*run_bcmd_metric_get(&m, "tg_tps_stddev"), 0.4, 1e-9);
	run_bcmd_metrics_release(&m);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_bcmd_llama_bench_json("nothing\n", 8, &m, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "llama-bench: no prompt-only or generation-only test"));
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_llama_bench_jsonl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
