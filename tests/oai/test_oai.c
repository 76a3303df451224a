/*
 * Unit tests of runner/oai's pure parts: the endpoint URL builder (trailing
 * slashes, with and without /v1), request bodies, the parse of a
 * non-streamed completion, and the incremental SSE parser (split anywhere,
 * CRLF, multi-line data, errors, the cap). The HTTP side is tested through
 * its users against real servers (tests/load/test_load_run.c,
 * tests/gate/test_gate_run.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/oai/oai.h"

static void check_url(const char *base, enum oai_api api, const char *want)
{
	char *u = oai_url(base, api);
	if (strcmp(u, want))
		fail_msg("oai_url(\"%s\") = \"%s\", want \"%s\"", base, u, want);
	free(u);
}

static void test_url(void **state)
{
	(void)state;
	static const char *const bases[] = {
		"http://127.0.0.1:8000", "http://127.0.0.1:8000/", "http://127.0.0.1:8000//",
		"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1//",
	};
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		check_url(bases[i], OAI_COMPLETIONS, "http://127.0.0.1:8000/v1/completions");
		check_url(bases[i], OAI_CHAT, "http://127.0.0.1:8000/v1/chat/completions");
	}
	/* a path prefix is kept; /v1 is only added when it is not the last segment */
	check_url("https://host/openai/v1", OAI_CHAT, "https://host/openai/v1/chat/completions");
	check_url("https://host/openai/", OAI_COMPLETIONS, "https://host/openai/v1/completions");
}

static void test_body(void **state)
{
	(void)state;
	json_t *o = oai_body_new(OAI_CHAT, "m", oai_chat_user("hi"), 7, true);
	char *s = json_dumps(o, JSON_COMPACT);
	assert_string_equal(s, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
			       "\"max_tokens\":7,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
	free(s);
	json_decref(o);
	o = oai_body_new(OAI_COMPLETIONS, NULL, json_string("p"), 3, false);
	s = json_dumps(o, JSON_COMPACT);
	assert_string_equal(s, "{\"prompt\":\"p\",\"max_tokens\":3}");
	free(s);
	json_decref(o);
}

static void test_completion_parse(void **state)
{
	(void)state;
	struct oai_completion c = { 0 };
	struct rt_sb err = RT_SB_INIT;
	const char *ok = "{\"choices\":[{\"text\":\" 42\",\"finish_reason\":\"stop\"}],"
			 "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}";
	assert_int_equal(oai_completion_parse(ok, strlen(ok), OAI_COMPLETIONS, &c, &err), 0);
	assert_string_equal(c.text, " 42");
	assert_string_equal(c.finish_reason, "stop");
	assert_int_equal(c.prompt_tokens, 5);
	assert_int_equal(c.completion_tokens, 2);
	const char *chat = "{\"choices\":[{\"message\":{\"content\":\"x\"}}]}";
	assert_int_equal(oai_completion_parse(chat, strlen(chat), OAI_CHAT, &c, &err), 0);
	assert_string_equal(c.text, "x");
	assert_null(c.finish_reason);
	assert_int_equal(c.prompt_tokens, -1);
	/* a chat answer read as a completion is missing its text */
	assert_int_equal(oai_completion_parse(chat, strlen(chat), OAI_COMPLETIONS, &c, &err),
			 RT_EPARSE);
	assert_string_equal(err.buf, "response: no choices[0].text");
	assert_null(c.text);
	rt_sb_reset(&err);
	assert_int_equal(oai_completion_parse("{", 1, OAI_CHAT, &c, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "invalid JSON"));
	oai_completion_release(&c);
	rt_sb_release(&err);
}

static const char stream[] =
	"data: {\"choices\":[{\"text\":\"a\"}],\"server_ns\":123}\n\n"
	": a comment\r\n"
	"event: message\r\n"
	"data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\r\n"
	"data: {\"choices\":[{\"text\":\"\"}]}\n\n"
	"data: {\"choices\":\n"
	"data: [{\"text\":\"c\"}]}\n\n"
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n"
	"data: [DONE]\n\n";

static void check_stream(struct oai_sse *s)
{
	assert_null(s->error);
	assert_int_equal(s->n_content, 3);
	assert_true(s->done);
	assert_true(s->saw_usage);
	assert_int_equal(s->prompt_tokens, 7);
	assert_int_equal(s->completion_tokens, 3);
	assert_int_equal(s->first_server_ns, 123);
}

static void test_sse_whole_and_split(void **state)
{
	(void)state;
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	assert_int_equal(oai_sse_feed(&s, stream, strlen(stream)), 3);
	check_stream(&s);
	/* byte by byte: same answer */
	oai_sse_reset(&s);
	int got = 0;
	for (size_t i = 0; i < strlen(stream); i++) {
		int r = oai_sse_feed(&s, stream + i, 1);
		assert_true(r >= 0);
		got += r;
	}
	assert_int_equal(got, 3);
	check_stream(&s);
	oai_sse_release(&s);
}

/* Chunks the fast path reads (usage null, keys inside strings, role-only
 * deltas) count exactly as jansson would count them. */
static void test_sse_fast_path(void **state)
{
	(void)state;
	static const char st[] =
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}\n\n"
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null,\"server_ns\":5}\n\n"
		"data: {\"choices\":[{\"delta\":{\"content\":\"\\\"text\\\": {[\"}}],\"usage\":null}\n\n"
		"data: {\"choices\":[{\"delta\":{\"content\":null}}],\"usage\":null}\n\n"
		"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"r\"}}]}\n\n"
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}\n\n"
		"data: [DONE]\n\n";
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	assert_int_equal(oai_sse_feed(&s, st, strlen(st)), 3);
	assert_null(s.error);
	assert_int_equal(s.first_server_ns, 5);
	assert_int_equal(s.completion_tokens, 3);
	assert_true(s.done);
	/* balanced but broken: the fast path hands it to jansson, which says why */
	oai_sse_reset(&s);
	const char *bad = "data: {\"choices\":[{\"text\":\"a\"}],}\n\n";
	assert_int_equal(oai_sse_feed(&s, bad, strlen(bad)), -1);
	oai_sse_release(&s);
}

static void test_sse_errors(void **state)
{
	(void)state;
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	const char *bad = "data: {\"choices\": [{\"text\": \"x\"\n\n";
	assert_int_equal(oai_sse_feed(&s, bad, strlen(bad)), -1);
	assert_non_null(strstr(s.error, "bad json"));
	oai_sse_reset(&s);
	const char *err = "data: {\"error\":{\"message\":\"boom\"}}\n\n";
	assert_int_equal(oai_sse_feed(&s, err, strlen(err)), -1);
	assert_non_null(strstr(s.error, "server error in stream: boom"));
	oai_sse_reset(&s);
	/* the cap: an event larger than it is an error, not a crash */
	oai_sse_release(&s);
	oai_sse_init(&s, 64);
	char big[200];
	memset(big, 'x', sizeof(big));
	assert_int_equal(oai_sse_feed(&s, "data: ", 6), 0);
	assert_int_equal(oai_sse_feed(&s, big, sizeof(big)), -1);
	assert_non_null(strstr(s.error, "cap"));
	oai_sse_release(&s);
}

static void test_sse_big_event(void **state)
{
	(void)state;
	/* a 3 MiB event in 4 KiB pieces */
	size_t n = (size_t)3 << 20;
	char *ev = malloc(n + 64);
	int k = sprintf(ev, "data: {\"choices\":[{\"text\":\"");
	memset(ev + k, 'z', n);
	strcpy(ev + k + n, "\"}]}\n\ndata: [DONE]\n\n");
	size_t len = strlen(ev);
	struct oai_sse s;
	oai_sse_init(&s, (size_t)256 << 20);
	int got = 0;
	for (size_t i = 0; i < len; i += 4096)
		got += oai_sse_feed(&s, ev + i, len - i < 4096 ? len - i : 4096);
	assert_int_equal(got, 1);
	assert_true(s.done);
	oai_sse_release(&s);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_completion_parse),
		cmocka_unit_test(test_sse_whole_and_split),
		cmocka_unit_test(test_sse_fast_path),
		cmocka_unit_test(test_sse_errors),
		cmocka_unit_test(test_sse_big_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
