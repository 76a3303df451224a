/*
 * Unit tests of the load generator's pure parts: percentile math with known
 * answers, schedules, datasets (ShareGPT, prompt JSONL, JSON array), metrics
 * of a hand-made run and vLLM's result file of it, the SLO grammar shared
 * with the spec loader, and the requests table round trip. (The SSE parser's tests are in
 * tests/oai/test_oai.c.)
 */
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

#include "db/db_int.h" /* db_sqlite: checks the stored rows */
#include "db/requests.h"
#include "runner/load/load.h"
#include "runner/oai/oai.h"
#include "runner/stats/stats.h"

/* The load generator's percentiles are run_stats_quantile's (numpy's linear
 * default), infinities (failed requests in SLO checks) included. */
static void test_percentile_known(void **state)
{
	(void)state;
	double x[] = { 5, 1, 4, 2, 3 }, s[] = { 1, 2, 3, 4, 5 };
	/* numpy.percentile([1,2,3,4,5], [50, 90, 95, 99, 25]) = 3, 4.6, 4.8, 4.96, 2 */
	assert_float_equal(run_stats_quantile(x, 5, 0.5), 3.0, 1e-12);
	assert_float_equal(run_stats_quantile_sorted(s, 5, 0.9), 4.6, 1e-12);
	assert_float_equal(run_stats_quantile_sorted(s, 5, 0.95), 4.8, 1e-12);
	assert_float_equal(run_stats_quantile_sorted(s, 5, 0.99), 4.96, 1e-12);
	assert_float_equal(run_stats_quantile_sorted(s, 5, 0.25), 2.0, 1e-12);
	double y[] = { 10, 20 };
	/* numpy.percentile([10, 20], 99) = 19.9 */
	assert_float_equal(run_stats_quantile(y, 2, 0.99), 19.9, 1e-12);
	double z[] = { 7 };
	assert_float_equal(run_stats_quantile(z, 1, 0.99), 7.0, 0);
	assert_true(isnan(run_stats_quantile(NULL, 0, 0.5)));
	/* towards an infinity: the infinity; on an order statistic: that one */
	double f[] = { 1, 2, INFINITY, INFINITY };
	assert_true(isinf(run_stats_quantile_sorted(f, 4, 0.5)));
	assert_float_equal(run_stats_quantile_sorted(f, 4, 1.0 / 3), 2.0, 1e-12);
	assert_true(isinf(run_stats_quantile_sorted(f, 4, 0.99)));
	assert_false(isnan(run_stats_quantile_sorted(f, 4, 0.9)));
}

static void test_schedule(void **state)
{
	(void)state;
	size_t n = 20000;
	int64_t *t = malloc(n * sizeof(*t));
	run_load_schedule(SPEC_LOAD_CONSTANT, 100, 1, 1, 5, t);
	assert_int_equal(t[0], 0);
	assert_int_equal(t[4], 40000000);
	run_load_schedule(SPEC_LOAD_POISSON, 1000, 1, 7, n, t);
	double mean = (double)t[n - 1] / 1e9 / (double)(n - 1);
	assert_float_equal(mean, 1e-3, 0.05e-3);
	/* same seed, same schedule; other seed, other schedule */
	int64_t *u = malloc(n * sizeof(*u));
	run_load_schedule(SPEC_LOAD_POISSON, 1000, 1, 7, n, u);
	assert_memory_equal(t, u, n * sizeof(*t));
	run_load_schedule(SPEC_LOAD_POISSON, 1000, 1, 8, n, u);
	assert_true(memcmp(t, u, n * sizeof(*t)) != 0);
	/* gamma: mean 1/rate, burstier (higher CV) for shape < 1 */
	run_load_schedule(SPEC_LOAD_GAMMA, 1000, 0.25, 3, n, t);
	mean = (double)t[n - 1] / 1e9 / (double)(n - 1);
	assert_float_equal(mean, 1e-3, 0.1e-3);
	double ss = 0;
	for (size_t i = 1; i < n; i++) {
		double g = (double)(t[i] - t[i - 1]) / 1e9 - mean;
		ss += g * g;
	}
	double cv = sqrt(ss / (double)(n - 1)) / mean;
	assert_float_equal(cv, 2.0, 0.3); /* 1/sqrt(0.25) */
	free(t);
	free(u);
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/test_load_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_dataset_sharegpt(void **state)
{
	(void)state;
	char *p = write_tmp(
		"{\"id\":\"a\",\"conversations\":[{\"from\":\"human\",\"value\":\"hello there\"},"
		"{\"from\":\"gpt\",\"value\":\"one two three four\"}]}\n"
		"\n"
		"{\"id\":\"b\",\"conversations\":[{\"from\":\"human\",\"value\":\"only one turn\"}]}\n"
		"{\"id\":\"c\",\"conversations\":[{\"from\":\"human\",\"value\":\"q\"},"
		"{\"from\":\"gpt\",\"value\":\"x\"}]}\n");
	struct run_load_dataset d;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_load_dataset_read(p, 64, 0, &d, &err), 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].text, "hello there");
	assert_int_equal(d.v[0].max_tokens, 4);
	assert_int_equal(d.v[1].max_tokens, 1);
	run_load_dataset_release(&d);
	/* override */
	assert_int_equal(run_load_dataset_read(p, 64, 9, &d, &err), 0);
	assert_int_equal(d.v[0].max_tokens, 9);
	run_load_dataset_release(&d);
	unlink(p);
	free(p);
	/* a JSON array file (the usual ShareGPT download) */
	p = write_tmp("[{\"conversations\":[{\"value\":\"a b\"},{\"value\":\"c d e\"}]}]");
	assert_int_equal(run_load_dataset_read(p, 64, 0, &d, &err), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].max_tokens, 3);
	run_load_dataset_release(&d);
	unlink(p);
	free(p);
	rt_sb_release(&err);
}

static void test_dataset_prompts(void **state)
{
	(void)state;
	char *p = write_tmp("{\"prompt\":\"say hi\",\"max_tokens\":5}\n{\"prompt\":\"no max\"}\n");
	struct run_load_dataset d;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_load_dataset_read(p, 33, 0, &d, &err), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.v[0].max_tokens, 5);
	assert_int_equal(d.v[1].max_tokens, 33);
	run_load_dataset_release(&d);
	unlink(p);
	free(p);
	/* errors name the file and line */
	p = write_tmp("{\"prompt\":\"ok\"}\n{\"prompt\": 3}\n");
	assert_int_equal(run_load_dataset_read(p, 33, 0, &d, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, ":2: prompt"));
	rt_sb_reset(&err);
	unlink(p);
	free(p);
	p = write_tmp("{\"prompt\":\"ok\"}\n{broken\n");
	assert_int_equal(run_load_dataset_read(p, 33, 0, &d, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, ":2:"));
	unlink(p);
	free(p);
	rt_sb_release(&err);
}

static void test_random_prompts(void **state)
{
	(void)state;
	struct run_load_dataset d;
	run_load_dataset_random(3, 100, 7, 5, &d);
	assert_int_equal(d.n, 3);
	int w = 1;
	for (const char *c = d.v[0].text; *c; c++)
		w += *c == ' ';
	assert_int_equal(w, 100);
	assert_int_equal(d.v[0].max_tokens, 7);
	assert_string_not_equal(d.v[0].text, d.v[1].text);
	run_load_dataset_release(&d);
}

/* A hand-made run: 4 requests (one failed), known answers. */
static void make_run(struct run_load_result *r)
{
	memset(r, 0, sizeof(*r));
	r->n_reqs = 4;
	r->reqs = calloc(4, sizeof(*r->reqs));
	static double itl[] = { 0.01, 0.03, 0.02, 0.02, 0.02 };
	r->itl = malloc(sizeof(itl));
	memcpy(r->itl, itl, sizeof(itl));
	r->n_itl = 5;
	struct run_load_req *q = r->reqs;
	/* req 0: ttft 0.1, e2el 0.14, 3 tokens, 3 chunks -> tpot 0.02 */
	q[0] = (struct run_load_req){ .seq = 0, .intended_ns = 0, .sent_ns = 1000000,
				      .first_ns = 101000000, .ttft_s = 0.1, .e2el_s = 0.14,
				      .n_chunks = 3, .itl_off = 0, .prompt_tokens = 10,
				      .output_tokens = 3, .ok = true, .status = 200 };
	/* req 1: ttft 0.2, e2el 0.26, 4 tokens -> tpot 0.02 */
	q[1] = (struct run_load_req){ .seq = 1, .intended_ns = 0, .sent_ns = 0,
				      .first_ns = 200000000, .ttft_s = 0.2, .e2el_s = 0.26,
				      .n_chunks = 4, .itl_off = 2, .prompt_tokens = 10,
				      .output_tokens = 4, .ok = true, .status = 200 };
	/* req 2: one token only: no tpot */
	q[2] = (struct run_load_req){ .seq = 2, .intended_ns = 0, .sent_ns = 2000000,
				      .first_ns = 302000000, .ttft_s = 0.3, .e2el_s = 0.3,
				      .n_chunks = 1, .itl_off = 5, .prompt_tokens = 10,
				      .output_tokens = 1, .ok = true, .status = 200 };
	q[3] = (struct run_load_req){ .seq = 3, .sent_ns = 0, .ttft_s = NAN, .e2el_s = 0.01,
				      .itl_mean_s = NAN, .itl_max_s = NAN, .ok = false, .status = 500,
				      .prompt_tokens = -1, .error = strdup("http 500: boom") };
	r->completed = 3;
	r->failed = 1;
	r->duration_s = 1.0;
	r->prompt_tokens_total = 30;
	r->output_tokens_total = 8;
}

static double metric(const char **names, const double *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return v[i];
	fail_msg("no metric %s", name);
	return NAN;
}

static void test_metrics(void **state)
{
	(void)state;
	struct run_load_result r;
	make_run(&r);
	const char *names[RUN_LOAD_MAX_METRICS], *units[RUN_LOAD_MAX_METRICS];
	double v[RUN_LOAD_MAX_METRICS];
	size_t n = run_load_metrics(&r, NULL, names, v, units, RUN_LOAD_MAX_METRICS);
	assert_int_equal(n, 36);
	assert_float_equal(metric(names, v, n, "request_throughput"), 3.0, 1e-12);
	assert_float_equal(metric(names, v, n, "output_throughput"), 8.0, 1e-12);
	assert_float_equal(metric(names, v, n, "total_token_throughput"), 38.0, 1e-12);
	assert_float_equal(metric(names, v, n, "completed"), 3, 0);
	assert_float_equal(metric(names, v, n, "failed"), 1, 0);
	assert_float_equal(metric(names, v, n, "ttft_mean"), 0.2, 1e-12);
	assert_float_equal(metric(names, v, n, "ttft_median"), 0.2, 1e-12);
	assert_float_equal(metric(names, v, n, "ttft_p90"), 0.28, 1e-12);
	assert_float_equal(metric(names, v, n, "tpot_mean"), 0.02, 1e-12);
	assert_float_equal(metric(names, v, n, "itl_median"), 0.02, 1e-12);
	assert_float_equal(metric(names, v, n, "itl_mean"), 0.02, 1e-12);
	assert_float_equal(metric(names, v, n, "e2el_p99"), 0.26 + 0.98 * 0.04, 1e-12);
	/* ttft_sched from intended: 0.101, 0.2, 0.302 */
	assert_float_equal(metric(names, v, n, "ttft_sched_median"), 0.2, 1e-12);
	/* send lag over the 4 sent requests: 0, 0, 1ms, 2ms */
	assert_float_equal(metric(names, v, n, "send_lag_mean"), 0.00075, 1e-12);
	assert_float_equal(metric(names, v, n, "goodput"), 3.0, 1e-12);
	/* SLOs: goodput counts per-request bounds; slo_ok counts failures as inf */
	struct spec_slo slo = { "ttft_p95", 0.25 };
	r.slo = &slo;
	r.n_slo = 1;
	n = run_load_metrics(&r, NULL, names, v, units, RUN_LOAD_MAX_METRICS);
	assert_float_equal(metric(names, v, n, "goodput"), 2.0, 1e-12);
	assert_false(run_load_slo_ok(&r, &slo, 1));
	struct spec_slo loose = { "ttft_median", 0.35 };
	assert_true(run_load_slo_ok(&r, &loose, 1));
	r.slo = NULL;
	r.n_slo = 0;
	run_load_result_release(&r);
}

/* vLLM's result numbers on the hand-made run: statistics over the
 * successful requests in ms, numpy's std (divides by n), percentile keys
 * named as Python prints them, and vLLM's file names. */
static void test_vllm_result(void **state)
{
	(void)state;
	struct run_load_result r;
	make_run(&r);
	double pcts[] = { 50, 99.9 };
	struct run_load_vllm_run v = { .date = "20260101-000000", .backend = "openai",
				       .model_id = "org/m", .num_prompts = 4, .request_rate = 10,
				       .burstiness = 1, .percentile_metrics = "ttft,e2el",
				       .percentiles = pcts, .n_percentiles = 2 };
	json_t *o = run_load_vllm_result(&r, &v);
	assert_float_equal(json_real_value(json_object_get(o, "mean_ttft_ms")), 200, 1e-9);
	assert_float_equal(json_real_value(json_object_get(o, "std_ttft_ms")), 1e3 * sqrt(0.02 / 3), 1e-9);
	assert_float_equal(json_real_value(json_object_get(o, "p50_ttft_ms")), 200, 1e-9);
	assert_non_null(json_object_get(o, "p99.9_e2el_ms"));
	assert_null(json_object_get(o, "mean_tpot_ms")); /* not asked for */
	assert_int_equal(json_integer_value(json_object_get(o, "completed")), 3);
	assert_int_equal(json_integer_value(json_object_get(o, "failed")), 1);
	assert_true(json_is_null(json_object_get(o, "request_goodput")));
	json_decref(o);
	run_load_result_release(&r);
	static const struct {
		double rate;      /* request_rate */
		long conc;        /* max_concurrency */
		const char *name; /* vLLM's file name */
	} names[] = {
		{ INFINITY, 0, "openai-infqps-m-20260101-000000.json" },
		{ 10, 4, "openai-10.0qps-concurrency4-m-20260101-000000.json" },
		{ 2.5, 0, "openai-2.5qps-m-20260101-000000.json" },
		{ 0.1, 0, "openai-0.1qps-m-20260101-000000.json" },
		{ 1e-05, 0, "openai-1e-05qps-m-20260101-000000.json" },
		{ 1e16, 0, "openai-1e+16qps-m-20260101-000000.json" },
		{ 123456.0, 0, "openai-123456.0qps-m-20260101-000000.json" },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(names); i++) {
		v.request_rate = names[i].rate;
		v.max_concurrency = names[i].conc;
		char *f = run_load_vllm_filename(&v);
		assert_string_equal(f, names[i].name);
		free(f);
	}
}

/* One SLO grammar: every name the spec loader accepts (spec_slo_parse), the
 * load generator evaluates, and a name it refuses (ttft_p80, which `ratchet
 * check` used to accept) the load generator refuses too. */
static void test_slo_grammar(void **state)
{
	(void)state;
	struct run_load_result r;
	make_run(&r);
	size_t accepted = 0;
	for (int q = 0; q < SPEC_LQ_N; q++) {
		for (int st = 0; st <= SPEC_LS_N; st++) {
			char *name = xstrdup(st == SPEC_LS_EACH
						     ? spec_load_q_name(q)
						     : spec_load_metric_name(spec_load_metric_of(q, st)));
			enum spec_load_q pq;
			enum spec_load_stat ps;
			double v;
			int spec_rc = spec_slo_parse(name, &pq, &ps, NULL);
			int load_rc = run_load_slo_value(&r, name, &v);
			if (spec_rc != load_rc)
				fail_msg("%s: spec says %d, the load generator %d", name, spec_rc, load_rc);
			if (!spec_rc) {
				assert_int_equal(pq, q);
				assert_int_equal(ps, st);
				accepted++;
			}
			free(name);
		}
	}
	assert_int_equal(accepted, 5 * (SPEC_LS_N + 1)); /* send_lag is no SLO */
	static const char *const refused[] = { "ttft_p80", "ttft_p50", "ttft_max", "send_lag",
					       "ttfb_p95", "ttft_", "" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(refused); i++) {
		double v;
		struct rt_sb why = RT_SB_INIT;
		enum spec_load_q q;
		enum spec_load_stat st;
		assert_int_equal(spec_slo_parse(refused[i], &q, &st, &why), RT_EINVAL);
		assert_int_equal(run_load_slo_value(&r, refused[i], &v), RT_EINVAL);
		assert_non_null(strstr(why.buf, "SLO metrics are ttft, tpot, itl, e2el or ttft_sched"));
		rt_sb_release(&why);
	}
	/* ttft_sched, which the spec did not accept before, has values: 0.101,
	 * 0.2, 0.302 and the failed request as +inf */
	double v;
	assert_int_equal(run_load_slo_value(&r, "ttft_sched_median", &v), 0);
	assert_float_equal(v, 0.251, 1e-12);
	run_load_result_release(&r);
}

/* The names a load benchmark declares in the spec (what objectives and
 * constraints may name) are exactly the names the load generator yields. */
static void test_metric_names_match_spec(void **state)
{
	(void)state;
	static const char text[] =
		"name: t\n"
		"benchmarks:\n"
		"  - {name: cap, load: {endpoint: 'http://x', rates: [1, 2], duration: 10s,\n"
		"                       slo: {ttft_sched_p95: 1s, itl: 50ms}}}\n"
		"objective: {metric: cap.max_rate}\n";
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	if (spec_load_text("t.yaml", text, strlen(text), &s, &err))
		fail_msg("%s", err.buf);
	const char **declared;
	size_t nd = spec_bench_metrics(&s->benches[0], &declared);
	struct run_load_result r;
	struct run_load_capacity cap = { .max_rate = 1.5 };
	make_run(&r);
	const char *names[RUN_LOAD_MAX_METRICS], *units[RUN_LOAD_MAX_METRICS];
	double v[RUN_LOAD_MAX_METRICS];
	size_t n = run_load_metrics(&r, &cap, names, v, units, RUN_LOAD_MAX_METRICS);
	assert_int_equal(n, nd);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], declared[i]);
	assert_float_equal(v[SPEC_LM_MAX_RATE], 1.5, 0);
	run_load_result_release(&r);
	spec_free(s);
	rt_sb_release(&err);
}

/* The templated body is byte for byte what json_dumps writes for the whole
 * object, for both APIs, with and without ignore_eos and a model, for
 * prompts that need escaping, the template's own mark, invalid UTF-8 (the
 * slow path), a model name holding the mark, and max_tokens changing. */
static void test_body_template(void **state)
{
	(void)state;
	static const char *const prompts[] = {
		"", "say \"hi\"\n\tnow", "é 漢字 😀 \x7f", "a/b\\c", "\x01ratchet-prompt\x02",
		"\xff\xfe not utf-8", "plain words",
	};
	static const char *const models[] = { NULL, "m", "\x01ratchet-prompt\x02" };
	static const int max_tokens[] = { 5, 7, 5 };
	for (int api = 0; api < 2; api++)
		for (int eos = 0; eos < 2; eos++)
			for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
				struct spec_load cfg = { .api = api ? SPEC_API_CHAT : SPEC_API_COMPLETIONS,
							 .ignore_eos = eos };
				struct run_load_body_tmpl t = { 0 };
				for (size_t k = 0; k < 3; k++)
					for (size_t i = 0; i < sizeof(prompts) / sizeof(prompts[0]); i++) {
						const char *pr = prompts[i];
						json_t *in = api ? oai_chat_user(pr) : json_string(pr);
						json_t *o = oai_body_new(api ? OAI_CHAT : OAI_COMPLETIONS,
									 models[m], in, max_tokens[k], true);
						if (eos)
							json_object_set_new(o, "ignore_eos", json_true());
						char *want = json_dumps(o, JSON_COMPACT);
						json_decref(o);
						size_t len;
						char *got = run_load_body(&cfg, models[m], pr, max_tokens[k], &t, &len);
						assert_string_equal(got, want);
						assert_int_equal(len, strlen(want));
						free(got);
						free(want);
					}
				run_load_body_tmpl_release(&t);
			}
}

static void test_db_round_trip(void **state)
{
	(void)state;
	char path[] = "/tmp/test_load_db_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	struct db *db;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_open(path, &db, &err), 0);
	struct run_load_result r;
	make_run(&r);
	assert_int_equal(load_store_requests(db, 0, "load", NULL, 0, "rate=3 seed=1", &r, &err), 4);
	assert_int_equal(load_store_requests(db, 0, "load", NULL, 1, "rate=4 seed=1", &r, &err), 4);
	int64_t n = 0;
	assert_int_equal(db_requests_count(db, 0, "load", "rate=3 seed=1", &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(db_requests_count(db, 0, NULL, NULL, &n, &err), 0);
	assert_int_equal(n, 8);
	/* what went in comes back */
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db),
					    "SELECT ttft_s, output_tokens, ok, status, error, "
					    "iteration_id IS NULL, sent_ns FROM requests "
					    "WHERE rep = 0 ORDER BY seq",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_float_equal(sqlite3_column_double(st, 0), 0.1, 1e-12);
	assert_int_equal(sqlite3_column_int(st, 1), 3);
	assert_int_equal(sqlite3_column_int(st, 2), 1);
	assert_int_equal(sqlite3_column_int(st, 5), 1);
	assert_int_equal(sqlite3_column_int64(st, 6), 1000000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_type(st, 0), SQLITE_NULL); /* NAN ttft -> NULL */
	assert_int_equal(sqlite3_column_int(st, 2), 0);
	assert_int_equal(sqlite3_column_int(st, 3), 500);
	assert_string_equal((const char *)sqlite3_column_text(st, 4), "http 500: boom");
	sqlite3_finalize(st);
	run_load_result_release(&r);
	db_close(db);
	rt_sb_release(&err);
	unlink(path);
	char side[64];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_known),
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_dataset_sharegpt),
		cmocka_unit_test(test_dataset_prompts),
		cmocka_unit_test(test_random_prompts),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_vllm_result),
		cmocka_unit_test(test_slo_grammar),
		cmocka_unit_test(test_metric_names_match_spec),
		cmocka_unit_test(test_body_template),
		cmocka_unit_test(test_db_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
