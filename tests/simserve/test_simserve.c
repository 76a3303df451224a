/*
 * End-to-end tests of simserve: each case starts the real binary on an
 * ephemeral loopback port, talks HTTP to it with libcurl, and stops it with
 * SIGTERM (checking it exits 0). The table of cases is at the end.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ss_client.h"

#define START(s, ...)                                                                   \
	do {                                                                            \
		const char *const a_[] = { __VA_ARGS__, NULL };                         \
		assert_int_equal(ssc_start((s), a_, NULL, 10, NULL), 0);                \
	} while (0)

static void stop_ok(struct ssc_srv *s)
{
	double secs;
	int st = ssc_stop(s, &secs);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(secs < 1.0);
	close(s->err_fd);
}

static json_t *parse_json(const char *s)
{
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);
	if (!j)
		fail_msg("not JSON (%s): %.200s", je.text, s);
	return j;
}

/* Split an SSE body into its data payloads; returns the count. */
static size_t sse_events(const char *body, char ***out)
{
	size_t n = 0;
	char **v = NULL;
	const char *p = body;
	while ((p = strstr(p, "data: "))) {
		p += 6;
		const char *e = strstr(p, "\n\n");
		if (!e)
			e = p + strlen(p);
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = strndup(p, (size_t)(e - p));
		p = e;
	}
	*out = v;
	return n;
}

static void free_events(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *gsm8k_path(void)
{
	const char *d = getenv("RATCHET_GSM8K_DIR");
	char *p = malloc(4096);
	snprintf(p, 4096, "%s/test.jsonl", d ? d : "../shared/data/gsm8k");
	return p;
}

/* ---- cases ---- */

static void test_health_and_models(void **st)
{
	struct ssc_srv s;
	START(&s, "--nonce", "n0nce-42", "--model", "m1");
	struct ssc_resp r;
	ssc_request(s.port, "/health", NULL, 5, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"status\":\"ok\"}");
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/models", NULL, 5, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "X-Launch-Nonce: n0nce-42"));
	json_t *j = parse_json(r.body);
	json_t *m = json_array_get(json_object_get(j, "data"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "id")), "m1");
	assert_string_equal(json_string_value(json_object_get(m, "nonce")), "n0nce-42");
	assert_string_equal(json_string_value(json_object_get(m, "owned_by")), "simserve");
	json_decref(j);
	ssc_resp_release(&r);
	ssc_request(s.port, "/nope", NULL, 5, &r);
	assert_int_equal(r.status, 404);
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_env_and_flag(void **st)
{
	struct ssc_srv s;
	const char *const env[] = { "SIMSERVE_MODEL=from-env", "SIMSERVE_NONCE=env-nonce", NULL };
	const char *const args[] = { "--nonce", "flag-nonce", NULL };
	assert_int_equal(ssc_start(&s, args, env, 10, NULL), 0);
	struct ssc_resp r;
	ssc_request(s.port, "/v1/models", NULL, 5, &r);
	assert_non_null(strstr(r.body, "\"id\":\"from-env\""));
	assert_non_null(strstr(r.body, "\"nonce\":\"flag-nonce\"")); /* the flag wins */
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_completions_nonstream(void **st)
{
	struct ssc_srv s;
	START(&s, "--decode-us-per-step", "100");
	struct ssc_resp r;
	double t0 = ssc_now();
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"one two  three\\nfour\",\"max_tokens\":7,\"temperature\":0}", 5, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "X-Server-Recv-Ns: "));
	json_t *j = parse_json(r.body);
	json_t *u = json_object_get(j, "usage");
	assert_int_equal(json_integer_value(json_object_get(u, "prompt_tokens")), 4);
	assert_int_equal(json_integer_value(json_object_get(u, "completion_tokens")), 7);
	assert_int_equal(json_integer_value(json_object_get(u, "total_tokens")), 11);
	json_t *c = json_array_get(json_object_get(j, "choices"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "finish_reason")), "length");
	const char *text = json_string_value(json_object_get(c, "text"));
	assert_non_null(text);
	assert_int_equal(text[0], ' ');
	json_int_t recv = json_integer_value(json_object_get(j, "server_recv_ns"));
	json_int_t done = json_integer_value(json_object_get(j, "server_done_ns"));
	assert_true(recv > 0 && done > recv);
	assert_true((double)recv * 1e-9 >= t0 - 0.001 && (double)done * 1e-9 <= ssc_now() + 0.001);
	json_decref(j);
	ssc_resp_release(&r);

	/* stop sequences cut the text; seed and greedy are deterministic */
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"a b\",\"max_tokens\":40,\"seed\":3,\"temperature\":1}", 5, &r);
	json_t *j1 = parse_json(r.body);
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"a b\",\"max_tokens\":40,\"seed\":3,\"temperature\":1}", 5, &r);
	json_t *j2 = parse_json(r.body);
	ssc_resp_release(&r);
	const char *t1 = json_string_value(json_object_get(json_array_get(json_object_get(j1, "choices"), 0), "text"));
	const char *t2 = json_string_value(json_object_get(json_array_get(json_object_get(j2, "choices"), 0), "text"));
	assert_string_equal(t1, t2);
	/* pinned: a seed's filler text must not change across releases */
	const char *pinned = " memory latency throughput number result result warp server engine";
	assert_int_equal(strncmp(t1, pinned, strlen(pinned)), 0);
	/* pick the 5th word as stop */
	char word[64] = "";
	const char *p = t1;
	for (int i = 0; i < 5; i++) {
		while (*p == ' ')
			p++;
		size_t k = strcspn(p, " ");
		snprintf(word, sizeof(word), " %.*s", (int)k, p);
		p += k;
	}
	char body[256];
	snprintf(body, sizeof(body), "{\"prompt\":\"a b\",\"max_tokens\":40,\"seed\":3,\"temperature\":1,\"stop\":[\"%s\"]}", word);
	ssc_request(s.port, "/v1/completions", body, 5, &r);
	json_t *j3 = parse_json(r.body);
	json_t *c3 = json_array_get(json_object_get(j3, "choices"), 0);
	assert_string_equal(json_string_value(json_object_get(c3, "finish_reason")), "stop");
	const char *t3 = json_string_value(json_object_get(c3, "text"));
	assert_true(strlen(t3) < strlen(t1) && !strncmp(t1, t3, strlen(t3)));
	assert_null(strstr(t3, word));
	json_decref(j1);
	json_decref(j2);
	json_decref(j3);
	ssc_resp_release(&r);

	/* bad requests */
	ssc_request(s.port, "/v1/completions", "{\"prompt\": 5}", 5, &r);
	assert_int_equal(r.status, 400);
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/completions", "{not json", 5, &r);
	assert_int_equal(r.status, 400);
	ssc_resp_release(&r);
	stop_ok(&s);
}

/* Check a streamed body: events parse, server_ns rises, usage, [DONE]. */
static void check_stream(const char *body, bool chat, int want_tokens, long want_prompt,
			 char *text, size_t text_cap)
{
	char **ev;
	size_t n = sse_events(body, &ev);
	assert_true(n >= 3);
	assert_string_equal(ev[n - 1], "[DONE]");
	json_int_t prev = 0;
	int tokens = 0;
	text[0] = '\0';
	for (size_t i = 0; i + 1 < n; i++) {
		json_t *j = parse_json(ev[i]);
		json_int_t ns = json_integer_value(json_object_get(j, "server_ns"));
		assert_true(ns > 0 && ns >= prev);
		prev = ns;
		json_t *choices = json_object_get(j, "choices");
		if (i + 2 == n) { /* usage chunk */
			assert_int_equal(json_array_size(choices), 0);
			json_t *u = json_object_get(j, "usage");
			assert_int_equal(json_integer_value(json_object_get(u, "completion_tokens")), want_tokens);
			assert_int_equal(json_integer_value(json_object_get(u, "prompt_tokens")), want_prompt);
		} else {
			json_t *c = json_array_get(choices, 0);
			const char *t = chat ? json_string_value(json_object_get(json_object_get(c, "delta"), "content"))
					     : json_string_value(json_object_get(c, "text"));
			assert_non_null(t);
			strncat(text, t, text_cap - strlen(text) - 1);
			tokens++;
			bool last = i + 3 == n;
			assert_int_equal(json_is_null(json_object_get(c, "finish_reason")), !last);
		}
		json_decref(j);
	}
	assert_int_equal(tokens, want_tokens);
	free_events(ev, n);
}

static void test_streaming(void **st)
{
	struct ssc_srv s;
	START(&s, "--decode-us-per-step", "1000");
	struct ssc_resp r;
	char text[4096], text2[4096];
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"x y z\",\"max_tokens\":12,\"stream\":true,"
		    "\"stream_options\":{\"include_usage\":true}}", 5, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "text/event-stream"));
	assert_non_null(strstr(r.headers, "X-Server-Recv-Ns: "));
	check_stream(r.body, false, 12, 3, text, sizeof(text));
	ssc_resp_release(&r);
	/* the same prompt, not streamed, says the same thing (greedy) */
	ssc_request(s.port, "/v1/completions", "{\"prompt\":\"x y z\",\"max_tokens\":12}", 5, &r);
	json_t *j = parse_json(r.body);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "choices"), 0), "text")), text);
	json_decref(j);
	ssc_resp_release(&r);

	const char *chat = "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
			   "{\"role\":\"user\",\"content\":\"hello there you\"}],\"max_tokens\":9,"
			   "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
	ssc_request(s.port, "/v1/chat/completions", chat, 5, &r);
	assert_int_equal(r.status, 200);
	check_stream(r.body, true, 9, 5, text2, sizeof(text2));
	assert_non_null(strstr(r.body, "\"role\":\"assistant\""));
	assert_non_null(strstr(r.body, "chat.completion.chunk"));
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/chat/completions",
		    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4}", 5, &r);
	j = parse_json(r.body);
	json_t *c = json_array_get(json_object_get(j, "choices"), 0);
	assert_non_null(json_string_value(json_object_get(json_object_get(c, "message"), "content")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "usage"), "completion_tokens")), 4);
	json_decref(j);
	ssc_resp_release(&r);
	stop_ok(&s);
}

/* Tokens reach the client as each step ends, not all at the end. */
static void test_stream_paced(void **st)
{
	struct ssc_srv s;
	START(&s, "--decode-us-per-step", "20000", "--decode-us-per-seq", "0");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"p\",\"max_tokens\":6,\"stream\":true}", 5, &r);
	char **ev;
	size_t n = sse_events(r.body, &ev);
	assert_int_equal(n, 7);
	json_t *a = parse_json(ev[0]), *b = parse_json(ev[5]);
	double gap = (double)(json_integer_value(json_object_get(b, "server_ns")) -
			      json_integer_value(json_object_get(a, "server_ns"))) * 1e-9;
	/* 5 steps of 20 ms: paced, not bunched at the end (loose: shared CI) */
	if (!(gap > 0.08 && gap < 0.4))
		fail_msg("gap between token 0 and 5 is %.3f s", gap);
	json_decref(a);
	json_decref(b);
	free_events(ev, n);
	ssc_resp_release(&r);
	stop_ok(&s);
}

static bool expected_correct(long i, double f)
{
	return floor((double)(i + 1) * f + 1e-9) > floor((double)i * f + 1e-9);
}

/* Run the first n questions in Q:/A: form; returns how many were right. */
static int run_gsm8k(int port, int n, bool *right)
{
	char *path = gsm8k_path();
	FILE *f = fopen(path, "r");
	free(path);
	assert_non_null(f);
	char **bodies = calloc((size_t)n, sizeof(*bodies));
	char **refs = calloc((size_t)n, sizeof(*refs));
	char *line = NULL;
	size_t cap = 0;
	for (int i = 0; i < n && getline(&line, &cap, f) > 0; i++) {
		json_t *j = parse_json(line);
		const char *ans = json_string_value(json_object_get(j, "answer"));
		refs[i] = strdup(strstr(ans, "#### ") + 5);
		char *prompt;
		assert_true(asprintf(&prompt, "Q: There are 2 cats. How many?\nA: The answer is 2.\n\nQ: %s\nA:",
				     json_string_value(json_object_get(j, "question"))) > 0);
		json_t *req = json_pack("{s:s,s:i,s:[s,s],s:f}", "prompt", prompt, "max_tokens", 256,
					"stop", "Q:", "</s>", "temperature", 0.0);
		bodies[i] = json_dumps(req, JSON_COMPACT);
		json_decref(req);
		json_decref(j);
		free(prompt);
	}
	free(line);
	fclose(f);
	struct ssc_resp *rs = calloc((size_t)n, sizeof(*rs));
	ssc_request_many(port, "/v1/completions", (const char *const *)bodies, (size_t)n, 16, 20, rs);
	int correct = 0;
	for (int i = 0; i < n; i++) {
		assert_int_equal(rs[i].status, 200);
		json_t *j = parse_json(rs[i].body);
		const char *t = json_string_value(json_object_get(json_array_get(json_object_get(j, "choices"), 0), "text"));
		const char *a = strstr(t, "The answer is ");
		assert_non_null(a);
		char got[64];
		snprintf(got, sizeof(got), "%s", a + 14);
		got[strcspn(got, ".")] = '\0';
		right[i] = !strcmp(got, refs[i]);
		correct += right[i];
		json_decref(j);
		ssc_resp_release(&rs[i]);
		free(bodies[i]);
		free(refs[i]);
	}
	free(rs);
	free(bodies);
	free(refs);
	return correct;
}

static void test_gsm8k_accuracy_and_flip(void **st)
{
	char *ds = gsm8k_path();
	struct ssc_srv s;
	START(&s, "--zero-latency", "--gsm8k", ds, "--gsm8k-accuracy", "0.9", "--flip", "3,7,150");
	bool right[200];
	int c = run_gsm8k(s.port, 200, right);
	int want = 0;
	for (int i = 0; i < 200; i++) {
		bool e = expected_correct(i, 0.9) ^ (i == 3 || i == 7 || i == 150);
		assert_int_equal(right[i], e);
		want += e;
	}
	assert_int_equal(c, want);
	/* the prefix property without flips: exactly floor(n f) */
	int plain = 0;
	for (int i = 0; i < 200; i++)
		plain += expected_correct(i, 0.9);
	assert_int_equal(plain, 180);

	/* Question:/Answer: style ends in #### N; unknown question */
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"Question: What is 1+1?\\nAnswer: 2\\n#### 2\\n\\nQuestion: Janet\\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?\\nAnswer:\",\"max_tokens\":200,\"stop\":[\"Question:\"]}",
		    5, &r);
	assert_non_null(strstr(r.body, "\\n#### 19\"")); /* index 0 is wrong at f = 0.9: N+1 */
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/completions",
		    "{\"prompt\":\"Q: How many moons does Zorblax have?\\nA:\",\"max_tokens\":50}", 5, &r);
	assert_non_null(strstr(r.body, "\"text\":\" I don't know.\""));
	ssc_resp_release(&r);
	/* chat: the last user message is the question */
	ssc_request(s.port, "/v1/chat/completions",
		    "{\"messages\":[{\"role\":\"user\",\"content\":\"Q: A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total does it take?\\nA:\"}],\"max_tokens\":100}",
		    5, &r);
	assert_non_null(strstr(r.body, "The answer is 3.")); /* index 1 is correct at f=0.9 */
	ssc_resp_release(&r);
	stop_ok(&s);

	/* a broken tile: every answer wrong */
	char tiles[] = "/tmp/simserve-test-tiles-XXXXXX";
	int fd = mkstemp(tiles);
	const char *tj = "{\"decode.BS_LE_8\":{\"BLOCK_M\":16,\"BLOCK_N\":64,\"num_warps\":4,\"broken\":true}}";
	assert_int_equal(write(fd, tj, strlen(tj)), (ssize_t)strlen(tj));
	close(fd);
	START(&s, "--zero-latency", "--gsm8k", ds, "--tiles", tiles);
	c = run_gsm8k(s.port, 40, right);
	assert_int_equal(c, 0);
	stop_ok(&s);
	unlink(tiles);
	free(ds);
}

/* 8 concurrent requests share decode steps: far less than 8x one request. */
static void test_batching(void **st)
{
	struct ssc_srv s;
	START(&s, "--decode-us-per-step", "5000", "--decode-us-per-seq", "50", "--log-recompiles");
	const char *body = "{\"prompt\":\"a b c d\",\"max_tokens\":20,\"stream\":true}";
	struct ssc_resp one;
	ssc_request(s.port, "/v1/completions", body, 10, &one);
	double t1 = one.t_end - one.t_start;
	ssc_resp_release(&one);
	const char *bodies[8];
	struct ssc_resp rs[8];
	for (int i = 0; i < 8; i++)
		bodies[i] = body;
	double t0 = ssc_now();
	ssc_request_many(s.port, "/v1/completions", bodies, 8, 8, 10, rs);
	double t8 = ssc_now() - t0;
	for (int i = 0; i < 8; i++) {
		assert_int_equal(rs[i].status, 200);
		assert_non_null(strstr(rs[i].body, "[DONE]"));
		ssc_resp_release(&rs[i]);
	}
	assert_true(t1 > 0.095);       /* 20 steps of >= 5 ms */
	assert_true(t8 < 2.0 * t1);    /* batched, not 8x */
	usleep(50000);
	char *err = ssc_stderr(&s);
	assert_non_null(strstr(err, "Compiling kernel for batch size 1\n"));
	assert_null(strstr(err, "Compiling kernel for batch size 9\n"));
	free(err);
	stop_ok(&s);
}

/* Server-side duration of one non-streamed request (done - recv). */
static double time_one(int port, const char *body)
{
	struct ssc_resp r;
	ssc_request(port, "/v1/completions", body, 10, &r);
	assert_int_equal(r.status, 200);
	json_t *j = parse_json(r.body);
	double t = (double)(json_integer_value(json_object_get(j, "server_done_ns")) -
			    json_integer_value(json_object_get(j, "server_recv_ns"))) * 1e-9;
	json_decref(j);
	ssc_resp_release(&r);
	return t;
}

/* A hole in the tile table falls back to a slow default. */
static void test_missing_tile_slow(void **st)
{
	const char *src = getenv("RATCHET_SRC");
	char best[4096];
	snprintf(best, sizeof(best), "%s/tests/simserve/tiles_best.json", src ? src : ".");
	const char *body = "{\"prompt\":\"a\",\"max_tokens\":40}";
	struct ssc_srv s;
	START(&s, "--tiles", best, "--decode-us-per-step", "0", "--decode-us-per-seq", "2000");
	double fast = time_one(s.port, body);
	stop_ok(&s);
	START(&s, "--decode-us-per-step", "0", "--decode-us-per-seq", "2000");
	double slow = time_one(s.port, body);
	stop_ok(&s);
	/* 40 x 2 ms vs 40 x 3.2 ms */
	if (!(fast > 0.078 && fast < 0.5 && slow / fast > 1.3)) /* upper bound loose for a loaded CI */
		fail_msg("fast %.3f s, slow %.3f s", fast, slow);
	/* above --max-graph-bs decode costs 1.5x: batch 1 with max-graph-bs 0 */
	START(&s, "--tiles", best, "--decode-us-per-step", "0", "--decode-us-per-seq", "2000",
	      "--max-graph-bs", "0");
	double nograph = time_one(s.port, body);
	stop_ok(&s);
	if (!(nograph / fast > 1.25))
		fail_msg("fast %.3f s, slow %.3f s, no graph %.3f s", fast, slow, nograph);
}

static void test_bad_inputs(void **st)
{
	struct ssc_srv s;
	int status = 0;
	char tiles[] = "/tmp/simserve-test-tiles-XXXXXX";
	int fd = mkstemp(tiles);
	const char *tj = "{\"decode.BS_LE_9\":{\"BLOCK_M\":16,\"BLOCK_N\":64,\"num_warps\":4}}";
	assert_int_equal(write(fd, tj, strlen(tj)), (ssize_t)strlen(tj));
	close(fd);
	const char *const a1[] = { "--tiles", tiles, NULL };
	assert_int_equal(ssc_start(&s, a1, NULL, 5, &status), -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	char *err = ssc_stderr(&s);
	assert_non_null(strstr(err, "decode.BS_LE_9: unknown shape class (did you mean 'decode.BS_LE_8'?)"));
	free(err);
	close(s.err_fd);
	unlink(tiles);
	const char *const a2[] = { "--malformed", "bogus", NULL };
	assert_int_equal(ssc_start(&s, a2, NULL, 5, &status), -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	close(s.err_fd);
	const char *const a3[] = { "--max-batc", "3", NULL };
	assert_int_equal(ssc_start(&s, a3, NULL, 5, &status), -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	close(s.err_fd);
}

static void test_crash_after(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--crash-after", "2");
	struct ssc_resp r;
	for (int i = 0; i < 2; i++) {
		ssc_request(s.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", 5, &r);
		assert_int_equal(r.status, 200);
		ssc_resp_release(&r);
	}
	ssc_request(s.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", 5, &r);
	assert_int_not_equal(r.curl_rc, 0);
	ssc_resp_release(&r);
	int status = ssc_wait_exit(&s, 2);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 70);
	close(s.err_fd);
}

static void test_hang_after(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--hang-after", "1");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", 5, &r);
	assert_int_equal(r.status, 200);
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", 0.5, &r);
	assert_int_equal(r.curl_rc, CURLE_OPERATION_TIMEDOUT);
	ssc_resp_release(&r);
	ssc_request(s.port, "/health", NULL, 0.3, &r);
	assert_int_equal(r.curl_rc, CURLE_OPERATION_TIMEDOUT);
	ssc_resp_release(&r);
	assert_int_equal(ssc_wait_exit(&s, 0.1), -1); /* still running */
	stop_ok(&s);                                  /* and SIGTERM still works */
}

static void test_slow_start(void **st)
{
	struct ssc_srv s;
	START(&s, "--slow-start", "0.6");
	assert_true(s.start_s >= 0.6);
	stop_ok(&s);
}

static const char *stream_req = "{\"prompt\":\"a b\",\"max_tokens\":10,\"stream\":true}";

static void test_malformed_badjson(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--malformed", "badjson");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", stream_req, 5, &r);
	char **ev;
	size_t n = sse_events(r.body, &ev);
	assert_true(n >= 2);
	json_error_t je;
	json_t *j = json_loads(ev[0], 0, &je);
	assert_null(j);
	free_events(ev, n);
	ssc_resp_release(&r);
	ssc_request(s.port, "/v1/completions", "{\"prompt\":\"a\"}", 5, &r);
	assert_int_equal(r.status, 200);
	assert_null(json_loads(r.body, 0, &je));
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_malformed_nodone(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--malformed", "nodone");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", stream_req, 5, &r);
	assert_int_equal(r.curl_rc, 0);
	assert_null(strstr(r.body, "[DONE]"));
	assert_non_null(strstr(r.body, "\"finish_reason\":\"length\""));
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_malformed_500mid(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--malformed", "500mid");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", stream_req, 5, &r);
	assert_int_equal(r.status, 200);
	char **ev;
	size_t n = sse_events(r.body, &ev);
	assert_int_equal(n, 6); /* 5 tokens, then the error */
	assert_non_null(strstr(ev[5], "\"error\""));
	assert_null(strstr(r.body, "[DONE]"));
	free_events(ev, n);
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_malformed_reset(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--malformed", "reset");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", stream_req, 5, &r);
	assert_int_not_equal(r.curl_rc, 0); /* the transfer broke off */
	assert_null(strstr(r.body, "[DONE]"));
	ssc_resp_release(&r);
	stop_ok(&s);
}

static void test_malformed_bigchunk(void **st)
{
	struct ssc_srv s;
	START(&s, "--zero-latency", "--malformed", "bigchunk");
	struct ssc_resp r;
	ssc_request(s.port, "/v1/completions", stream_req, 10, &r);
	assert_int_equal(r.curl_rc, 0);
	char **ev;
	size_t n = sse_events(r.body, &ev);
	assert_int_equal(n, 11);
	assert_true(strlen(ev[0]) > 3u << 20);
	json_t *j = parse_json(ev[0]);
	json_decref(j);
	assert_string_equal(ev[10], "[DONE]");
	free_events(ev, n);
	ssc_resp_release(&r);
	stop_ok(&s);
}

/* SIGTERM with streams and non-streaming requests in flight: exit 0 in < 1 s. */
static void test_sigterm_in_flight(void **st)
{
	struct ssc_srv s;
	START(&s, "--decode-us-per-step", "100000");
	pid_t kid = fork();
	if (kid == 0) {
		const char *bodies[2] = { "{\"prompt\":\"a\",\"max_tokens\":100,\"stream\":true}",
					  "{\"prompt\":\"a\",\"max_tokens\":100}" };
		struct ssc_resp rs[2];
		ssc_request_many(s.port, "/v1/completions", bodies, 2, 2, 5, rs);
		_exit(0);
	}
	usleep(300000);
	stop_ok(&s);
	int ws;
	waitpid(kid, &ws, 0);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_and_models),
		cmocka_unit_test(test_env_and_flag),
		cmocka_unit_test(test_completions_nonstream),
		cmocka_unit_test(test_streaming),
		cmocka_unit_test(test_stream_paced),
		cmocka_unit_test(test_gsm8k_accuracy_and_flip),
		cmocka_unit_test(test_batching),
		cmocka_unit_test(test_missing_tile_slow),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_crash_after),
		cmocka_unit_test(test_hang_after),
		cmocka_unit_test(test_slow_start),
		cmocka_unit_test(test_malformed_badjson),
		cmocka_unit_test(test_malformed_nodone),
		cmocka_unit_test(test_malformed_500mid),
		cmocka_unit_test(test_malformed_reset),
		cmocka_unit_test(test_malformed_bigchunk),
		cmocka_unit_test(test_sigterm_in_flight),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
