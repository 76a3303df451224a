/*
 * Incremental parser for the server-sent-event streams of OpenAI-compatible
 * servers. Bytes arrive in arbitrary pieces; complete lines are consumed as
 * they appear and the scan resumes where it stopped, so a multi-megabyte
 * event arriving in thousands of pieces is scanned once. Buffers grow on
 * demand (up to a cap) and are reused between requests: no per-chunk malloc
 * apart from jansson's own parse of each event.
 */
#include "runner/oai/oai.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void oai_sse_init(struct oai_sse *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	rt_sb_init(&s->buf, cap);
	rt_sb_init(&s->ev, cap);
	s->prompt_tokens = -1;
	s->completion_tokens = -1;
}

void oai_sse_reset(struct oai_sse *s)
{
	rt_sb_reset(&s->buf);
	rt_sb_reset(&s->ev);
	s->ev_has = false;
	s->scan = 0;
	s->n_content = 0;
	s->done = false;
	s->saw_usage = false;
	s->prompt_tokens = -1;
	s->completion_tokens = -1;
	s->first_server_ns = 0;
	free(s->error);
	s->error = NULL;
}

void oai_sse_release(struct oai_sse *s)
{
	rt_sb_release(&s->buf);
	rt_sb_release(&s->ev);
	free(s->error);
	s->error = NULL;
}

static int fail(struct oai_sse *s, char *msg)
{
	if (!s->error)
		s->error = msg;
	else
		free(msg);
	return -1;
}

/* A string member that is non-empty. */
static bool nonempty(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) && json_string_length(v) > 0;
}

static bool key_is(const char *k, size_t n, const char *name)
{
	return strlen(name) == n && !memcmp(k, name, n);
}

/* Where the fast path is in an event: the levels whose keys matter. */
enum fp_role { FP_OTHER, FP_ROOT, FP_CHOICES, FP_CHOICE0, FP_DELTA };
#define FP_LEVELS 5 /* root, choices, choices[0], delta: deeper levels do not matter */

/* The keys that matter, each at its level: their bit in the seen mask. */
enum fp_key { FP_KEY_CHOICES, FP_KEY_TEXT, FP_KEY_DELTA, FP_KEY_CONTENT };

/* Which key k is at a level of role r (-1: one that does not matter);
 * FP_KEY_CONTENT + 0..2 are delta's three content keys. */
static int fp_key(enum fp_role r, const char *k, size_t n)
{
	static const char *const content[] = { "content", "reasoning_content", "reasoning" };
	if (r == FP_ROOT)
		return key_is(k, n, "choices") ? FP_KEY_CHOICES : -1;
	if (r == FP_CHOICE0)
		return key_is(k, n, "text") ? FP_KEY_TEXT : key_is(k, n, "delta") ? FP_KEY_DELTA : -1;
	for (int i = 0; r == FP_DELTA && i < 3; i++)
		if (key_is(k, n, content[i]))
			return FP_KEY_CONTENT + i;
	return -1;
}

/* The index of the first byte at or after i that is not JSON whitespace
 * (the data: lines of one event are joined with '\n'). */
static size_t json_ws(const char *d, size_t n, size_t i)
{
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i;
}

/*
 * The profile showed jansson's parse (and its mallocs) as the client's
 * largest cost at thousands of streams per second, so ordinary content
 * chunks take this path: one pass that tracks strings and nesting, finds the
 * keys that matter, and checks the event is balanced. Returns 1/0 (content
 * chunk or not), or -2 when jansson must look: unbalanced or odd input
 * (jansson then words the error), a non-null usage or error, a first chunk.
 */
static int fast_event(struct oai_sse *s, const char *d, size_t n)
{
	if (n < 2 || d[0] != '{' || d[n - 1] != '}')
		return -2;
	int depth = 0, content = 0;
	size_t kstart = 0;
	bool in_str = false;
	/* Where each open level is (jansson reads content at choices[0].text and
	 * choices[0].delta.{content,reasoning_content,reasoning} only), the role
	 * the next container opened takes, the index in choices, and the keys
	 * that matter already seen (jansson takes the last of a repeated key: a
	 * repeat is left to it, as is a key written with escapes). */
	enum fp_role role[FP_LEVELS] = { FP_OTHER };
	enum fp_role next = FP_ROOT;
	int choice = 0;
	unsigned seen = 0;
	bool kesc = false;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		enum fp_role here = depth < FP_LEVELS ? role[depth] : FP_OTHER;
		if (in_str) {
			if (c == '\\') {
				kesc = true;
				i++;
			} else if (c == '"') {
				in_str = false;
				size_t j = json_ws(d, n, i + 1);
				if (j >= n || d[j] != ':')
					continue;
				/* a key: look at its value */
				const char *k = d + kstart;
				size_t kl = i - kstart;
				j = json_ws(d, n, j + 1);
				if (j >= n || kesc)
					return -2;
				bool null = n - j >= 4 && !memcmp(d + j, "null", 4);
				int key = fp_key(here, k, kl);
				if (key >= 0 && (seen & 1u << key))
					return -2;
				if (key >= 0)
					seen |= 1u << key;
				next = key == FP_KEY_CHOICES ? FP_CHOICES : key == FP_KEY_DELTA ? FP_DELTA
											   : FP_OTHER;
				if (key_is(k, kl, "usage") || key_is(k, kl, "error")) {
					if (!null)
						return -2;
				} else if (key == FP_KEY_TEXT || key >= FP_KEY_CONTENT) {
					if (d[j] == '"' && j + 1 < n && d[j + 1] != '"')
						content = 1;
				}
			}
		} else if (c == '"') {
			in_str = true;
			kesc = false;
			kstart = i + 1;
		} else if (c == '{' || c == '[') {
			/* the role of the level it opens: choices is an array, the rest objects */
			enum fp_role r = here == FP_CHOICES ? (choice == 0 && c == '{' ? FP_CHOICE0 : FP_OTHER)
				       : (next == FP_CHOICES) == (c == '[') ? next : FP_OTHER;
			if (++depth < FP_LEVELS)
				role[depth] = r;
			next = FP_OTHER;
		} else if (c == '}' || c == ']' || c == ',') {
			/* a role is only ever given to the value right after its key */
			next = FP_OTHER;
			if (c == ',')
				choice += here == FP_CHOICES;
			else if (--depth < 0)
				return -2;
		}
	}
	if (in_str || depth != 0)
		return -2;
	if (content && s->n_content == 0)
		return -2; /* the first content chunk: jansson reads server_ns too */
	s->n_content += content;
	return content;
}

/* One complete event's data; returns new content chunks (0/1) or -1. */
static int dispatch(struct oai_sse *s, const char *data, size_t len)
{
	if (len == 6 && !memcmp(data, "[DONE]", 6)) {
		s->done = true;
		return 0;
	}
	if (s->done)
		return 0; /* anything after [DONE] is ignored */
	int f = fast_event(s, data, len);
	if (f >= 0)
		return f;
	json_error_t jerr;
	json_t *root = json_loadb(data, len, 0, &jerr);
	if (!root) {
		return fail(s, xasprintf("bad json in stream event at byte %d: %s", jerr.position,
					 jerr.text));
	}
	int got = 0;
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(s, xasprintf("stream event is not a json object"));
	}
	json_t *e = json_object_get(root, "error");
	if (e && !json_is_null(e)) {
		const char *msg = NULL;
		if (json_is_object(e))
			msg = json_string_value(json_object_get(e, "message"));
		else if (json_is_string(e))
			msg = json_string_value(e);
		char *m = xasprintf("server error in stream: %s", msg ? msg : "(no message)");
		json_decref(root);
		return fail(s, m);
	}
	json_t *choices = json_object_get(root, "choices");
	if (json_is_array(choices) && json_array_size(choices) > 0) {
		json_t *c0 = json_array_get(choices, 0);
		json_t *delta = json_object_get(c0, "delta");
		if (nonempty(c0, "text") ||
		    (json_is_object(delta) &&
		     (nonempty(delta, "content") || nonempty(delta, "reasoning_content") ||
		      nonempty(delta, "reasoning"))))
			got = 1;
	}
	if (got) {
		if (s->n_content == 0) {
			json_t *sn = json_object_get(root, "server_ns");
			if (json_is_integer(sn))
				s->first_server_ns = (int64_t)json_integer_value(sn);
		}
		s->n_content++;
	}
	json_t *u = json_object_get(root, "usage");
	if (json_is_object(u)) {
		json_t *pt = json_object_get(u, "prompt_tokens");
		json_t *ct = json_object_get(u, "completion_tokens");
		if (json_is_integer(pt))
			s->prompt_tokens = (int)json_integer_value(pt);
		if (json_is_integer(ct))
			s->completion_tokens = (int)json_integer_value(ct);
		s->saw_usage = json_is_integer(ct);
	}
	json_decref(root);
	return got;
}

int oai_sse_feed(struct oai_sse *s, const char *data, size_t n)
{
	if (s->error)
		return -1;
	if (rt_sb_add(&s->buf, data, n))
		return fail(s, xasprintf("stream event larger than the %zu byte cap", s->buf.cap));
	int got = 0;
	size_t start = 0; /* start of the current (unconsumed) line */
	char *b = s->buf.buf;
	size_t i = s->scan;
	for (;;) {
		char *nl = memchr(b + i, '\n', s->buf.len - i);
		if (!nl)
			break;
		size_t end = (size_t)(nl - b);
		size_t ll = end - start;
		const char *line = b + start;
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (ll == 0) {
			if (s->ev_has) {
				int r = dispatch(s, s->ev.buf, s->ev.len);
				rt_sb_reset(&s->ev);
				s->ev_has = false;
				if (r < 0)
					return -1;
				got += r;
			}
		} else if (ll >= 5 && !memcmp(line, "data:", 5)) {
			const char *v = line + 5;
			size_t vl = ll - 5;
			if (vl && *v == ' ') {
				v++;
				vl--;
			}
			if (s->ev_has && rt_sb_addc(&s->ev, '\n'))
				return fail(s, xasprintf("stream event too large"));
			if (rt_sb_add(&s->ev, v, vl))
				return fail(s, xasprintf("stream event larger than the cap"));
			s->ev_has = true;
		}
		/* other fields (event:, id:, retry:, comments) carry nothing we need */
		start = end + 1;
		i = start;
	}
	/* drop consumed lines; keep the partial one */
	if (start) {
		memmove(b, b + start, s->buf.len - start);
		s->buf.len -= start;
		b[s->buf.len] = 0;
	}
	s->scan = s->buf.len;
	return got;
}
