/*
 * Incremental parser for the server-sent-event streams of OpenAI-compatible
 * servers. Bytes arrive in arbitrary pieces; complete lines are consumed as
 * they appear and the scan resumes where it stopped, so a multi-megabyte
 * event arriving in thousands of pieces is scanned once. Buffers grow on
 * demand (up to a cap) and are reused between requests: no per-chunk malloc
 * apart from jansson's own parse of each event.
 */
#include "runner/oai/oai.h"

#include <ctype.h>
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

/*
 * Well-formedness for the fast path: true only when jansson would accept the
 * event too (RFC 8259 with jansson's refusals: \u0000, lone surrogates,
 * ill-formed UTF-8, integers beyond int64, reals beyond a double). What might
 * pass one of jansson's limits (deep nesting, long numbers) is false, and
 * jansson decides. No allocation: the nesting is a small stack.
 */
#define WF_MAX_DEPTH 64

static size_t wf_ws(const char *d, size_t n, size_t i)
{
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i;
}

static bool wf_hex4(const char *d, size_t n, size_t i, unsigned *cp)
{
	*cp = 0;
	for (size_t k = i; k < i + 4; k++) {
		if (k >= n || !isxdigit((unsigned char)d[k]))
			return false;
		unsigned char c = (unsigned char)d[k];
		*cp = *cp << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return true;
}

/* The string at d[i] == '"': the index after its closing quote, or 0. */
static size_t wf_string(const char *d, size_t n, size_t i)
{
	for (i++; i < n;) {
		unsigned char c = (unsigned char)d[i];
		size_t bad, len;
		unsigned cp, lo;
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++; /* the common case first */
			continue;
		}
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (c != '\\') {
			if (!(len = rt_utf8_seq(d + i, n - i, &bad)))
				return 0;
			i += len;
			continue;
		}
		if (++i >= n)
			return 0;
		if (d[i] != 'u') {
			if (!d[i] || !strchr("\"\\/bfnrt", d[i]))
				return 0;
			i++;
			continue;
		}
		if (!wf_hex4(d, n, i + 1, &cp) || cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
			return 0;
		i += 5;
		if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate needs its low one */
			if (i + 1 >= n || d[i] != '\\' || d[i + 1] != 'u' || !wf_hex4(d, n, i + 2, &lo) ||
			    lo < 0xDC00 || lo > 0xDFFF)
				return 0;
			i += 6;
		}
	}
	return 0;
}

static size_t wf_digits(const char *d, size_t n, size_t i, long *value)
{
	for (; i < n && d[i] >= '0' && d[i] <= '9'; i++)
		if (value && *value < 100000)
			*value = *value * 10 + (d[i] - '0');
	return i;
}

/* The number at d[i]: the index after it, or 0 (also for one that might not
 * fit jansson's int64 or double). */
static size_t wf_number(const char *d, size_t n, size_t i)
{
	long ex = 0;
	bool real = false;
	if (d[i] == '-')
		i++;
	size_t s = i;
	if (i < n && d[i] == '0')
		i++;
	else if (i < n && d[i] >= '1' && d[i] <= '9')
		i = wf_digits(d, n, i, NULL);
	else
		return 0;
	long int_digits = (long)(i - s);
	if (i < n && d[i] == '.') {
		real = true;
		size_t f = ++i;
		if ((i = wf_digits(d, n, i, NULL)) == f)
			return 0;
	}
	if (i < n && (d[i] == 'e' || d[i] == 'E')) {
		real = true;
		bool neg = ++i < n && d[i] == '-';
		if (i < n && (d[i] == '+' || d[i] == '-'))
			i++;
		size_t e = i;
		if ((i = wf_digits(d, n, i, &ex)) == e)
			return 0;
		if (neg)
			ex = -ex;
	}
	if (real ? int_digits + ex > 300 : int_digits > 18)
		return 0;
	return i;
}

static size_t wf_literal(const char *d, size_t n, size_t i)
{
	static const char *const words[] = { "true", "false", "null" };
	for (size_t w = 0; w < 3; w++) {
		size_t l = strlen(words[w]);
		if (n - i >= l && !memcmp(d + i, words[w], l))
			return i + l;
	}
	return 0;
}

static bool json_well_formed(const char *d, size_t n)
{
	char stack[WF_MAX_DEPTH]; /* '{' or '[' of each open level */
	int depth = 0;
	enum { WANT_VALUE, WANT_KEY, AFTER_VALUE } st = WANT_VALUE;
	bool may_close = false; /* just after '{' or '[' */
	size_t i = wf_ws(d, n, 0);
	if (i >= n || (d[i] != '{' && d[i] != '['))
		return false; /* jansson wants an object or an array */
	for (;;) {
		i = wf_ws(d, n, i);
		if (st == AFTER_VALUE && depth == 0)
			return i == n;
		if (i >= n)
			return false;
		char close = depth && stack[depth - 1] == '{' ? '}' : ']';
		if ((st == AFTER_VALUE || may_close) && d[i] == close) {
			depth--, i++, st = AFTER_VALUE, may_close = false;
			continue;
		}
		may_close = false;
		if (st == AFTER_VALUE) {
			if (d[i] != ',')
				return false;
			i++, st = close == '}' ? WANT_KEY : WANT_VALUE;
		} else if (st == WANT_KEY) {
			if (d[i] != '"' || !(i = wf_string(d, n, i)))
				return false;
			if ((i = wf_ws(d, n, i)) >= n || d[i] != ':')
				return false;
			i++, st = WANT_VALUE;
		} else if (d[i] == '{' || d[i] == '[') {
			if (depth == WF_MAX_DEPTH)
				return false;
			stack[depth++] = d[i];
			st = d[i++] == '{' ? WANT_KEY : WANT_VALUE, may_close = true;
		} else {
			if (d[i] == '"')
				i = wf_string(d, n, i);
			else if (d[i] == '-' || (d[i] >= '0' && d[i] <= '9'))
				i = wf_number(d, n, i);
			else
				i = wf_literal(d, n, i);
			if (!i)
				return false;
			st = AFTER_VALUE;
		}
	}
}

/*
 * The profile showed jansson's parse (and its mallocs) as the client's
 * largest cost at thousands of streams per second, so ordinary content
 * chunks take this path: one pass that tracks strings and nesting, finds the
 * keys that matter, after json_well_formed said jansson would accept it.
 * Returns 1/0 (content chunk or not), or -2 when jansson must look: input it
 * may refuse (jansson then words the error), a non-null usage or error, a
 * first chunk.
 */
static int fast_event(struct oai_sse *s, const char *d, size_t n)
{
	if (n < 2 || d[0] != '{' || d[n - 1] != '}' || !json_well_formed(d, n))
		return -2;
	int depth = 0, content = 0;
	size_t kstart = 0;
	bool in_str = false;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		if (in_str) {
			if (c == '\\') {
				i++;
			} else if (c == '"') {
				in_str = false;
				size_t j = i + 1;
				while (j < n && (d[j] == ' ' || d[j] == '\t'))
					j++;
				if (j >= n || d[j] != ':')
					continue;
				/* a key: look at its value */
				const char *k = d + kstart;
				size_t kl = i - kstart;
				j++;
				while (j < n && (d[j] == ' ' || d[j] == '\t'))
					j++;
				if (j >= n)
					return -2;
				bool null = n - j >= 4 && !memcmp(d + j, "null", 4);
				if (key_is(k, kl, "usage") || key_is(k, kl, "error")) {
					if (!null)
						return -2;
				} else if (key_is(k, kl, "text") || key_is(k, kl, "content") ||
					   key_is(k, kl, "reasoning_content") ||
					   key_is(k, kl, "reasoning")) {
					if (d[j] == '"' && j + 1 < n && d[j + 1] != '"')
						content = 1;
				}
			}
		} else if (c == '"') {
			in_str = true;
			kstart = i + 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth < 0)
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
