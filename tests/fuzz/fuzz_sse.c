/*
 * Fuzz harness: the streamed-completion parser (runner/oai/oai_sse.c),
 * cross-checked against jansson. The input is the bytes of a stream. It is
 * fed three ways: at once, one byte at a time, and in pieces whose sizes
 * follow the input; the three must agree. A reference reading of the
 * stream, written here with jansson on every event (the slow, plain way:
 * split lines, join data: lines, parse each event whole), must agree too:
 * an event jansson rejects is an error, never counted as tokens (issue 17,
 * item 11), and the content chunks, [DONE] and the usage counts are the ones
 * jansson's reading finds.
 */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <string.h>

#include "runner/oai/oai.h"

/* What a stream said. */
struct seen {
	int n_content;          /* content chunks */
	bool done;              /* [DONE] seen */
	bool error;             /* a protocol error stopped it */
	int prompt_tokens;      /* usage, -1 unknown */
	int completion_tokens;  /* usage, -1 unknown */
	int64_t first_server_ns;/* server_ns of the first content chunk */
};

static bool nonempty(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) && json_string_length(v) > 0;
}

/* One event as jansson reads it; false on an error. */
static bool ref_event(struct seen *r, const char *d, size_t n)
{
	if (n == 6 && !memcmp(d, "[DONE]", 6)) {
		r->done = true;
		return true;
	}
	if (r->done)
		return true;
	json_error_t je;
	json_t *root = json_loadb(d, n, 0, &je);
	json_t *e = json_object_get(root, "error");
	if (!json_is_object(root) || (e && !json_is_null(e))) {
		json_decref(root);
		return false;
	}
	json_t *c0 = json_array_get(json_object_get(root, "choices"), 0);
	json_t *delta = json_object_get(c0, "delta");
	if (nonempty(c0, "text") || nonempty(delta, "content") ||
	    nonempty(delta, "reasoning_content") || nonempty(delta, "reasoning")) {
		if (r->n_content++ == 0 && json_is_integer(json_object_get(root, "server_ns")))
			r->first_server_ns = json_integer_value(json_object_get(root, "server_ns"));
	}
	json_t *u = json_object_get(root, "usage");
	if (json_is_object(u)) {
		json_t *pt = json_object_get(u, "prompt_tokens"), *ct = json_object_get(u, "completion_tokens");
		if (json_is_integer(pt))
			r->prompt_tokens = (int)json_integer_value(pt);
		if (json_is_integer(ct))
			r->completion_tokens = (int)json_integer_value(ct);
	}
	json_decref(root);
	return true;
}

/* The reference: complete lines only; a blank line ends an event. */
static struct seen reference(const char *d, size_t n)
{
	struct seen r = { .prompt_tokens = -1, .completion_tokens = -1 };
	struct rt_sb ev = RT_SB_INIT;
	bool has = false;
	for (const char *p = d, *nl; (nl = memchr(p, '\n', (size_t)(d + n - p))); p = nl + 1) {
		size_t ll = (size_t)(nl - p);
		if (ll && p[ll - 1] == '\r')
			ll--;
		if (ll == 0 && has) {
			has = false;
			if (!ref_event(&r, ev.buf, ev.len)) {
				r.error = true;
				break;
			}
			rt_sb_reset(&ev);
		} else if (ll >= 5 && !memcmp(p, "data:", 5)) {
			size_t skip = ll > 5 && p[5] == ' ' ? 6 : 5;
			if (has)
				rt_sb_addc(&ev, '\n');
			rt_sb_add(&ev, p + skip, ll - skip);
			has = true;
		}
	}
	rt_sb_release(&ev);
	return r;
}

/* The parser fed in pieces of the given sizes (cycled; 0: all at once). */
static struct seen parse(const char *d, size_t n, const uint8_t *sizes, size_t nsizes)
{
	struct oai_sse s;
	oai_sse_init(&s, 1u << 20);
	int total = 0;
	bool error = false;
	for (size_t off = 0, k = 0; off < n && !error;) {
		size_t piece = nsizes ? (size_t)sizes[k++ % nsizes] % 17 + 1 : n;
		if (piece > n - off)
			piece = n - off;
		int got = oai_sse_feed(&s, d + off, piece);
		FUZZ_CHECK(got >= -1, "feed returned %d", got);
		error = got < 0;
		total += got > 0 ? got : 0;
		off += piece;
	}
	FUZZ_CHECK(error == (s.error != NULL), "an error without its message, or the reverse");
	FUZZ_CHECK(error || total == s.n_content, "feeds returned %d chunks, the parser counts %d",
		   total, s.n_content);
	struct seen r = { s.n_content, s.done, error, s.prompt_tokens, s.completion_tokens,
			  s.first_server_ns };
	oai_sse_release(&s);
	return r;
}

static void same(const struct seen *a, const struct seen *b, const char *what)
{
	FUZZ_CHECK(a->error == b->error, "%s: error %d, reference %d", what, a->error, b->error);
	if (a->error)
		return; /* where the stream stopped is all an error promises */
	FUZZ_CHECK(a->n_content == b->n_content, "%s: %d content chunks, reference %d", what,
		   a->n_content, b->n_content);
	FUZZ_CHECK(a->done == b->done, "%s: done %d, reference %d", what, a->done, b->done);
	FUZZ_CHECK(a->prompt_tokens == b->prompt_tokens && a->completion_tokens == b->completion_tokens,
		   "%s: usage %d/%d, reference %d/%d", what, a->prompt_tokens, a->completion_tokens,
		   b->prompt_tokens, b->completion_tokens);
	FUZZ_CHECK(a->first_server_ns == b->first_server_ns, "%s: first server_ns differs", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	struct seen ref = reference(d, size);
	struct seen whole = parse(d, size, NULL, 0);
	static const uint8_t one[] = { 0 };
	struct seen bytes = parse(d, size, one, 1);
	struct seen pieces = parse(d, size, data, size);
	same(&whole, &ref, "whole");
	same(&bytes, &ref, "byte by byte");
	same(&pieces, &ref, "in pieces");
	return 0;
}
