/*
 * Unit tests of runner/oai's pure parts: the endpoint URL builder (trailing
 * slashes, with and without /v1), request bodies, the parse of a
 * non-streamed completion, and the incremental SSE parser (split anywhere,
 * CRLF, multi-line data, errors, the cap; its one-pass scan agrees with
 * jansson event by event, and a well-formed stream costs no jansson
 * allocation at all). The HTTP side is tested through
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
	/* the path goes before a query or a fragment (issue 22 item 23) */
	check_url("http://h/v1?api_key=k", OAI_CHAT, "http://h/v1/chat/completions?api_key=k");
	check_url("http://h/v1/?a=1&b=/x#f", OAI_MODELS, "http://h/v1/models?a=1&b=/x#f");
	check_url("http://h?a=1", OAI_CHAT, "http://h/v1/chat/completions?a=1");
	check_url("http://h/#f", OAI_COMPLETIONS, "http://h/v1/completions#f");
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

/* What the parser makes of one event, or what jansson's reading of the
 * OpenAI stream rules makes of it (the reference). */
struct ev_result {
	int ret;             /* content chunks, or -1 */
	int64_t server_ns;   /* first_server_ns */
	int pt, ct;          /* usage tokens, -1 unknown */
	bool saw_usage;      /* usage.completion_tokens was an integer */
};

static struct ev_result by_parser(const char *ev)
{
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	char *line = malloc(strlen(ev) + 16);
	sprintf(line, "data: %s\n\n", ev);
	struct ev_result r = { oai_sse_feed(&s, line, strlen(line)), s.first_server_ns,
			       s.prompt_tokens, s.completion_tokens, s.saw_usage };
	free(line);
	oai_sse_release(&s);
	return r;
}

static bool ref_nonempty(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) && json_string_length(v) > 0;
}

static struct ev_result by_jansson(const char *ev)
{
	struct ev_result r = { 0, 0, -1, -1, false };
	json_t *root = json_loads(ev, 0, NULL);
	json_t *e = json_object_get(root, "error");
	if (!json_is_object(root) || (e && !json_is_null(e))) {
		json_decref(root);
		r.ret = -1;
		return r;
	}
	json_t *c0 = json_array_get(json_object_get(root, "choices"), 0);
	json_t *delta = json_object_get(c0, "delta");
	r.ret = ref_nonempty(c0, "text") || ref_nonempty(delta, "content") ||
		ref_nonempty(delta, "reasoning_content") || ref_nonempty(delta, "reasoning");
	json_t *sn = json_object_get(root, "server_ns");
	if (r.ret && json_is_integer(sn))
		r.server_ns = json_integer_value(sn);
	json_t *u = json_object_get(root, "usage");
	if (json_is_object(u)) {
		json_t *pt = json_object_get(u, "prompt_tokens"), *ct = json_object_get(u, "completion_tokens");
		if (json_is_integer(pt))
			r.pt = (int)json_integer_value(pt);
		if (json_is_integer(ct))
			r.ct = (int)json_integer_value(ct);
		r.saw_usage = json_is_integer(ct);
	}
	json_decref(root);
	return r;
}

/* The one-pass scan and jansson agree on every event of OpenAI's stream
 * shapes, well-formed or broken (vLLM, llama.cpp and simserve chunks,
 * usage with details, duplicate keys, odd values, grammar errors). */
static void test_sse_scan_matches_jansson(void **state)
{
	(void)state;
	static const char *const evs[] = {
		"{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" batch\",\"logprobs\":null,\"finish_reason\":null}],\"server_ns\":2874345040276}",
		"{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":8,\"total_tokens\":10},\"server_ns\":5}",
		"{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \\u00e9t\\u00e9 \\\"q\\\" \\\\ \\/\"},\"finish_reason\":null}],\"usage\":null}",
		"{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}",
		"{\"choices\":[{\"delta\":{\"reasoning\":\"hm\",\"content\":null}}]}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":9,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":0,\"completion_tokens\":99}}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":1.5e1,\"completion_tokens\":3.0}}",
		"{\"choices\":[],\"usage\":{\"prompt_tokens\":\"7\",\"completion_tokens\":-4}}",
		"{\"choices\":[],\"usage\":{\"completion_tokens\":1},\"usage\":null}",
		"{\"choices\":[],\"usage\":null,\"usage\":{\"completion_tokens\":6}}",
		"{\"choices\":[{\"text\":\"x\"}],\"server_ns\":1,\"server_ns\":\"2\"}",
		"{\"choices\":[{\"text\":\"x\"}],\"server_ns\":7.0}",
		"{\"choices\":[{\"text\":\"x\",\"usage\":{\"completion_tokens\":5},\"server_ns\":3}]}",
		"{\"choices\":[{\"text\":\"x\"}],\"nested\":[[1,2,{\"a\":[true,false,null,-0.5e-3]}]]}",
		" { \"choices\" : [ { \"text\" : \"y\" } ] , \"usage\" : { \"completion_tokens\" : 1 } } ",
		"{\"error\":{\"message\":\"boom\"}}",
		"{\"error\":null,\"choices\":[{\"text\":\"z\"}]}",
		"{\"choices\":[{\"text\":\"a\"}],}",
		"{\"choices\":[{\"text\":\"a\"},]}",
		"{\"choices\" [{\"text\":\"a\"}]}",
		"{\"choices\":[{\"text\":\"a\\q\"}]}",
		"{\"choices\":[{\"text\":\"a\"}]",
		"{\"choices\":[{\"text\":\"a\"}]}}",
		"{\"choices\":[{\"text\":\"a\"}]} x",
		"{\"n\":01}",
		"{\"n\":-}",
		"{\"n\":1.}",
		"{\"n\":tru}",
		"{\"n\":\"\\u12\"}",
		"{\"n\":\"tab\there\"}",
		"{\"choices\":[{\"text\":\"abcdefghijklmnop\\\"qrstuvwxyz0123456789 \u00e9\u00e8 \u4e2d\u6587 end\"}]}",
		("{\"choices\":[{\"text\":\"abcdefghijklmnopqrstu\x01" "vwxyz\"}]}"), /* one literal: \x01 then v */
		"{\"choices\":[{\"text\":\"abcdefgh\\\\\"}],\"id\":\"0123456789abcdef0123456789\"}",
		"{\"choices\":[{\"text\":\"0123456789abcdef\"}],\"usage\":{\"completion_tokens\":12345678901234567}}",
		"[1,2]",
		"{\"choices\":[],\"usage\":{\"completion_tokens\":123456789012345678901}}",
		"{\"choices\":[{\"text\":\"x\"}],\"created\":123456789012345678901}",
		"{}",
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct ev_result a = by_parser(evs[i]), b = by_jansson(evs[i]);
		if (a.ret != b.ret || a.server_ns != b.server_ns || a.pt != b.pt || a.ct != b.ct ||
		    a.saw_usage != b.saw_usage)
			fail_msg("event %zu %s: parser %d ns=%lld pt=%d ct=%d usage=%d, jansson %d ns=%lld pt=%d ct=%d usage=%d",
				 i, evs[i], a.ret, (long long)a.server_ns, a.pt, a.ct, a.saw_usage, b.ret,
				 (long long)b.server_ns, b.pt, b.ct, b.saw_usage);
	}
}

static size_t jansson_allocs;
static void *count_malloc(size_t n)
{
	jansson_allocs++;
	return malloc(n);
}

/* A well-formed stream, first chunk and usage event included, is read
 * without jansson: no allocation at all on the client's hot path. */
static void test_sse_hot_path_without_jansson(void **state)
{
	(void)state;
	static const char st[] =
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":null}],\"server_ns\":11}\n\n"
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\" b\",\"finish_reason\":\"length\"}],\"server_ns\":12}\n\n"
		"data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2,\"total_tokens\":6}}\n\n"
		"data: [DONE]\n\n";
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	json_set_alloc_funcs(count_malloc, free);
	jansson_allocs = 0;
	int got = oai_sse_feed(&s, st, strlen(st));
	json_set_alloc_funcs(malloc, free);
	assert_int_equal(got, 2);
	assert_true(s.done);
	assert_int_equal(s.first_server_ns, 11);
	assert_int_equal(s.prompt_tokens, 4);
	assert_int_equal(s.completion_tokens, 2);
	assert_int_equal(jansson_allocs, 0);
	oai_sse_release(&s);
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
		cmocka_unit_test(test_sse_scan_matches_jansson),
		cmocka_unit_test(test_sse_hot_path_without_jansson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
