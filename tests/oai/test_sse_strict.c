/*
 * The SSE parser's fast path against jansson: an event jansson refuses must
 * be a protocol error, never a content chunk. Hand-written cases cover each
 * rule (structure, strings, escapes, UTF-8, numbers, literals); then valid
 * chunks mutated at random (seeded, the same on every run) are each fed after
 * a first content chunk (so the fast path is the one that looks) and checked
 * against json_loadb. Valid chunks of every shape still count as before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"
#include "runner/oai/oai.h"

#define FIRST "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}\n\n"

/* Feed FIRST then one event with data d (no newline in it); returns the
 * second feed's result and leaves s as it is. */
static int feed_after_first(struct oai_sse *s, const char *d, size_t n)
{
	oai_sse_reset(s);
	assert_int_equal(oai_sse_feed(s, FIRST, strlen(FIRST)), 1);
	struct rt_sb ev = RT_SB_INIT;
	rt_sb_adds(&ev, "data: ");
	rt_sb_add(&ev, d, n);
	rt_sb_adds(&ev, "\n\n");
	int r = oai_sse_feed(s, ev.buf, ev.len);
	rt_sb_release(&ev);
	return r;
}

static bool jansson_accepts(const char *d, size_t n)
{
	json_t *v = json_loadb(d, n, 0, NULL);
	json_decref(v);
	return v != NULL;
}

/* Each one has a content key the old scanner counted; jansson refuses all. */
static const char *const invalid[] = {
	"{\"choices\":[{\"text\":\"b\" \"c\"}]}",            /* missing comma */
	"{\"choices\":[{\"text\":\"b\",}]}",                 /* trailing comma */
	"{\"choices\":[{\"text\":\"b\"}],}",
	"{,\"choices\":[{\"text\":\"b\"}]}",
	"{\"choices\":[{\"text\" \"b\"}]}",                  /* missing colon */
	"{\"choices\":[{\"text\"::\"b\"}]}",
	"{\"choices\":[{\"text\":\"b\"]}}",                  /* crossed brackets */
	"{\"choices\":[{\"text\":\"b\"}]}{\"x\":1}",         /* two values */
	"{\"choices\":[{\"text\":\"b\"}],\"x\":tru}",        /* bad literal */
	"{\"choices\":[{\"text\":\"b\"}],\"x\":nul}",
	"{\"choices\":[{\"text\":\"b\"}],\"usage\":nullx}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":01}",         /* bad numbers */
	"{\"choices\":[{\"text\":\"b\"}],\"x\":1.}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":.5}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":+1}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":1e}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":-}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":99999999999999999999}", /* beyond int64 */
	"{\"choices\":[{\"text\":\"b\"}],\"x\":1e400}",      /* beyond a double */
	"{\"choices\":[{\"text\":\"b\\q\"}]}",               /* bad escape */
	"{\"choices\":[{\"text\":\"b\\u12\"}]}",
	"{\"choices\":[{\"text\":\"b\\u0000\"}]}",           /* NUL */
	"{\"choices\":[{\"text\":\"b\\ud800\"}]}",           /* lone surrogates */
	"{\"choices\":[{\"text\":\"b\\udc00\"}]}",
	"{\"choices\":[{\"text\":\"b\\ud800\\u0041\"}]}",
	"{\"choices\":[{\"text\":\"b\tc\"}]}",               /* raw control character */
	"{\"choices\":[{\"text\":\"b\xff\"}]}",              /* ill-formed UTF-8 */
	"{\"choices\":[{\"text\":\"b\xc0\xaf\"}]}",
	"{\"choices\":[{\"text\":\"b\xed\xa0\x80\"}]}",
	"{\"choices\":[{\"text\":\"b\xe2\x82\"}]}",
	"{\"choices\":[{\"text\":\"b\"}],\"x\":\xc3\xa9}",   /* UTF-8 outside a string */
	"{\"choices\":[{\"text\":\"b\"}],x:1}",              /* bare key */
	"{\"choices\":[{\"text\":'b'}]}",                    /* single quotes */
	"{\"choices\":[{\"text\":\"b\"}] \"x\":1}",
	"{\"choices\":[{\"text\":\"b\"}]",                   /* unclosed */
};

static void test_invalid_is_an_error(void **state)
{
	(void)state;
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		const char *d = invalid[i];
		if (jansson_accepts(d, strlen(d)))
			fail_msg("case %zu: jansson accepts %s", i, d);
		int r = feed_after_first(&s, d, strlen(d));
		if (r != -1 || !s.error || s.n_content != 1)
			fail_msg("case %zu: %s: feed %d, %d chunks, error %s", i, d, r, s.n_content,
				 s.error ? s.error : "(none)");
	}
	oai_sse_release(&s);
}

/* Valid chunks of every shape the checker reads: counted as jansson counts. */
static const struct {
	const char *d; /* event data */
	int got;       /* content chunks */
} valid[] = {
	{ "{\"choices\":[{\"delta\":{\"content\":\"b\"}}],\"usage\":null}", 1 },
	{ "{\"choices\":[{\"text\":\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"}]}", 1 },
	{ "{\"choices\":[{\"text\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}]}", 1 },
	{ " { \"choices\" : [ { \"text\" : \"b\" , \"i\" : [ ] , \"o\" : { } } ] } ", 1 },
	{ "{\"choices\":[{\"text\":\"b\",\"logprobs\":[-0.5,1e-3,2E+2,0,-0,123456789012345678]}]}", 1 },
	{ "{\"choices\":[{\"text\":\"b\",\"x\":[true,false,null]}]}", 1 },
	{ "{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}", 0 },
	{ "{\"choices\":[{\"text\":\"\"}]}", 0 },
};

static void test_valid_still_counts(void **state)
{
	(void)state;
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		int r = feed_after_first(&s, valid[i].d, strlen(valid[i].d));
		if (r != valid[i].got || s.error)
			fail_msg("case %zu: %s: feed %d, want %d (%s)", i, valid[i].d, r, valid[i].got,
				 s.error ? s.error : "no error");
	}
	oai_sse_release(&s);
}

/* Mutations of valid chunks: whatever jansson refuses, the parser refuses. */
static void test_mutations_match_jansson(void **state)
{
	(void)state;
	static const char pool[] = "\"\\,:{}[] x0-e.u\x01\x7f\x80\xbf\xc3\xe2\xed\xf0\xf4\xff";
	struct rt_rand rng;
	rt_rand_seed(&rng, 17);
	struct oai_sse s;
	oai_sse_init(&s, 1 << 20);
	size_t refused = 0;
	char buf[256];
	for (int t = 0; t < 100000; t++) {
		const char *src = valid[rt_rand_below(&rng, sizeof(valid) / sizeof(valid[0]))].d;
		size_t n = strlen(src);
		memcpy(buf, src, n);
		int edits = 1 + (int)rt_rand_below(&rng, 3);
		for (int e = 0; e < edits && n > 2 && n < sizeof(buf) - 1; e++) {
			size_t at = 1 + rt_rand_below(&rng, n - 2); /* keep the outer { } */
			char c = pool[rt_rand_below(&rng, sizeof(pool) - 1)];
			switch (rt_rand_below(&rng, 3)) {
			case 0: /* replace */
				buf[at] = c;
				break;
			case 1: /* insert */
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = c;
				n++;
				break;
			default: /* delete */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		if (jansson_accepts(buf, n))
			continue;
		refused++;
		int r = feed_after_first(&s, buf, n);
		if (r != -1)
			fail_msg("trial %d: jansson refuses %.*s but the parser returned %d", t, (int)n,
				 buf, r);
	}
	assert_true(refused > 10000);
	oai_sse_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_is_an_error),
		cmocka_unit_test(test_valid_still_counts),
		cmocka_unit_test(test_mutations_match_jansson),
	};
	return cmocka_run_group_tests_name("sse_strict", tests, NULL, NULL);
}
