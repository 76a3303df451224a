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

/*
 * The fast path. The profile showed jansson's parse (and its mallocs) as the
 * client's largest cost at thousands of streams per second: every content
 * chunk, and the first chunk and the usage event of every request. So each
 * event is first read by one validating pass over its bytes (JSON's grammar,
 * no tree, no allocation) that picks up what matters on the way: a non-empty
 * "text" string of choices[0], or "content", "reasoning_content" or
 * "reasoning" string of choices[0].delta (content), the top-level integer
 * "server_ns", and the top-level "usage" object's integer "prompt_tokens" and
 * "completion_tokens". The scan follows the path root.choices[0].delta as
 * the jansson path reads it: only the first element of a top-level "choices"
 * array, only objects along the way, and a repeated key replaces what the
 * earlier one said (jansson keeps the last). Anything it does not take as
 * plain goes to jansson, which then decides and words the error: invalid
 * JSON, a non-null "error" or odd "usage", a root that is not an object,
 * nesting over SCAN_DEPTH, integers of 19 digits or more.
 */
#define SCAN_DEPTH 64

/* What one scan found. */
struct scan {
	unsigned content;      /* one bit per content key (SK_TEXT...) holding a non-empty string */
	bool has_server_ns;    /* top-level integer server_ns seen */
	int64_t server_ns;     /* its value */
	bool usage;            /* top-level usage is an object */
	bool has_pt, has_ct;   /* usage.prompt_tokens / completion_tokens integers seen */
	long long pt, ct;      /* their values */
};

/* Which key a value belongs to (SK_OTHER: none that matters). The four
 * content keys come first: their bit in scan.content is 1 << key. */
enum scan_key {
	SK_TEXT,      /* choices[0].text */
	SK_CONTENT,   /* choices[0].delta.content */
	SK_RC,        /* choices[0].delta.reasoning_content */
	SK_REASONING, /* choices[0].delta.reasoning */
	SK_OTHER,
	SK_CHOICES,   /* the top-level choices */
	SK_DELTA,     /* choices[0].delta */
	SK_SERVER_NS,
	SK_USAGE,
	SK_ERROR,
	SK_PT,
	SK_CT,
};

/* The bits of scan.content that choices[0].delta's keys set. */
#define DELTA_BITS (1u << SK_CONTENT | 1u << SK_RC | 1u << SK_REASONING)

/* Where the scan stands on the paths that matter: the depth at which each
 * open container sits (0: not open). The root is depth 1. */
struct scan_path {
	int usage;   /* the top-level usage object (2) */
	int choices; /* the top-level choices array (2) */
	bool elem0;  /* in that array, no comma seen yet: the next value is choices[0] */
	int choice;  /* choices[0], an object (3) */
	int delta;   /* choices[0].delta, an object (4) */
};

/* The key k (kl bytes) at nesting depth: which one it is. Looked up by
 * length first: every key of every event passes here. */
static enum scan_key classify(const char *k, size_t kl, int depth, const struct scan_path *p)
{
	bool in_choice = p->choice && depth == p->choice, in_delta = p->delta && depth == p->delta;
	switch (kl) {
	case 4:
		return in_choice && !memcmp(k, "text", 4) ? SK_TEXT : SK_OTHER;
	case 5:
		if (in_choice && !memcmp(k, "delta", 5))
			return SK_DELTA;
		if (depth != 1)
			return SK_OTHER;
		return !memcmp(k, "usage", 5) ? SK_USAGE : !memcmp(k, "error", 5) ? SK_ERROR : SK_OTHER;
	case 7:
		if (in_delta && !memcmp(k, "content", 7))
			return SK_CONTENT;
		return depth == 1 && !memcmp(k, "choices", 7) ? SK_CHOICES : SK_OTHER;
	case 9:
		if (in_delta && !memcmp(k, "reasoning", 9))
			return SK_REASONING;
		return depth == 1 && !memcmp(k, "server_ns", 9) ? SK_SERVER_NS : SK_OTHER;
	case 13:
		return p->usage && depth == p->usage && !memcmp(k, "prompt_tokens", 13) ? SK_PT
											 : SK_OTHER;
	case 17:
		if (in_delta && !memcmp(k, "reasoning_content", 17))
			return SK_RC;
		return p->usage && depth == p->usage && !memcmp(k, "completion_tokens", 17)
			       ? SK_CT
			       : SK_OTHER;
	default:
		return SK_OTHER;
	}
}

/* Bytes a string scan must stop at: the quote, the backslash, control
 * characters, and the start of a multi-byte UTF-8 sequence (checked). */
static const bool string_stop[256] = {
	[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true, [0x80 ... 0xff] = true,
};

/* Four hex digits at d[i]; false when they are not. */
static bool hex4(const char *d, size_t n, size_t i, unsigned *cp)
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

/* A string at d[i] == '"': index past its closing quote, or 0 if jansson
 * might refuse it (then jansson decides): ill-formed UTF-8, \u0000, a lone
 * surrogate, a control character, a bad escape. */
static size_t scan_string(const char *d, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		while (i < n && !string_stop[(unsigned char)d[i]])
			i++;
		if (i >= n)
			return 0;
		unsigned char c = (unsigned char)d[i];
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (c >= 0x80) {
			size_t bad, len = rt_utf8_seq(d + i, n - i, &bad);
			if (!len)
				return 0;
			i += len - 1;
			continue;
		}
		if (++i >= n)
			return 0;
		if (d[i] == 'u') {
			unsigned cp, lo;
			if (!hex4(d, n, i + 1, &cp) || cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
				return 0;
			i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate needs its low one */
				if (i + 2 >= n || d[i + 1] != '\\' || d[i + 2] != 'u' ||
				    !hex4(d, n, i + 3, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					return 0;
				i += 6;
			}
		} else if (!d[i] || !strchr("\"\\/bfnrt", d[i])) {
			return 0;
		}
	}
	return 0;
}

/* A number at d[i]: index past it, or 0 if invalid. With want, *ival gets
 * its value and *is_int says so when it is an integer of at most 18 digits.
 * *big: an integer of more digits (jansson then decides). */
static size_t scan_number(const char *d, size_t n, size_t i, bool want, long long *ival,
			  bool *is_int, bool *big)
{
	size_t s = i;
	bool neg = d[i] == '-';
	if (neg)
		i++;
	if (i >= n || !isdigit((unsigned char)d[i]))
		return 0;
	long long v = 0;
	size_t nd = 0;
	if (d[i] == '0') {
		i++;
		nd = 1;
	} else if (!want) {
		size_t s0 = i;
		while (i < n && isdigit((unsigned char)d[i]))
			i++;
		nd = i - s0;
	} else {
		for (; i < n && isdigit((unsigned char)d[i]); i++, nd++)
			v = nd < 18 ? v * 10 + (d[i] - '0') : v;
	}
	*is_int = true;
	if (i < n && d[i] == '.') {
		*is_int = false;
		if (++i >= n || !isdigit((unsigned char)d[i]))
			return 0;
		while (i < n && isdigit((unsigned char)d[i]))
			i++;
	}
	if (i < n && (d[i] == 'e' || d[i] == 'E')) {
		*is_int = false;
		if (++i < n && (d[i] == '+' || d[i] == '-'))
			i++;
		if (i >= n || !isdigit((unsigned char)d[i]))
			return 0;
		size_t e0 = i;
		while (i < n && isdigit((unsigned char)d[i]))
			i++;
		if (i - e0 > 2)
			return 0; /* an exponent of 100 or more may overflow a double: jansson decides */
	}
	if (nd > 300)
		return 0; /* the same for a mantissa of over 300 digits */
	*ival = neg ? -v : v;
	*big = *is_int && nd > 18; /* jansson decides: it refuses those past int64 */
	*is_int = want && *is_int;
	return i > s ? i : 0;
}

/* A value's start (d[i], ending at end) against its key. Returns false
 * when jansson must look. A later duplicate key replaces an earlier one, as
 * in jansson, so what the earlier one set is forgotten first. *opens: the
 * container opened here is one of scan_path's (its key). */
static inline bool take_value(struct scan *sc, enum scan_key key, const char *d, size_t i,
			      size_t end, enum scan_key *opens)
{
	char c = d[i];
	*opens = SK_OTHER;
	switch (key) {
	case SK_TEXT:
	case SK_CONTENT:
	case SK_RC:
	case SK_REASONING:
		sc->content &= ~(1u << key);
		if (c == '"' && end - i > 2)
			sc->content |= 1u << key;
		return true;
	case SK_CHOICES:
		sc->content = 0;
		*opens = c == '[' ? key : SK_OTHER;
		return true;
	case SK_DELTA:
		sc->content &= ~DELTA_BITS;
		*opens = c == '{' ? key : SK_OTHER;
		return true;
	case SK_ERROR:
		return c == 'n';
	case SK_USAGE:
		sc->usage = c == '{';
		sc->has_pt = sc->has_ct = false;
		*opens = sc->usage ? key : SK_OTHER;
		return c == 'n' || sc->usage;
	case SK_SERVER_NS:
		sc->has_server_ns = false;
		return true;
	case SK_PT:
		sc->has_pt = false;
		return true;
	case SK_CT:
		sc->has_ct = false;
		return true;
	default:
		return true;
	}
}

/* A container opened at depth (by the value of key, as take_value said;
 * elem0: it is choices[0]): where it stands on the paths. */
static void path_open(struct scan_path *p, enum scan_key opens, bool elem0, char c, int depth)
{
	if (opens == SK_USAGE)
		p->usage = depth;
	else if (opens == SK_CHOICES) {
		p->choices = depth;
		p->elem0 = true;
	}
	else if (opens == SK_DELTA)
		p->delta = depth;
	else if (elem0 && c == '{')
		p->choice = depth;
}

/* The container at depth closed. */
static void path_close(struct scan_path *p, int depth)
{
	int *at[] = { &p->usage, &p->choices, &p->choice, &p->delta };
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
		if (*at[k] == depth)
			*at[k] = 0;
}

/* An integer value of a key that matters. */
static void take_int(struct scan *sc, enum scan_key key, long long v)
{
	if (key == SK_SERVER_NS) {
		sc->has_server_ns = true;
		sc->server_ns = v;
	} else if (key == SK_PT) {
		sc->has_pt = true;
		sc->pt = v;
	} else if (key == SK_CT) {
		sc->has_ct = true;
		sc->ct = v;
	}
}

/* A string, number or literal at d[i] (the value of key): index past it,
 * or 0 if invalid; *iv and *is_int as scan_number's for the keys whose
 * integers matter, *big when jansson must decide. */
static size_t scan_scalar(const char *d, size_t n, size_t i, enum scan_key key, long long *iv,
			  bool *is_int, bool *big)
{
	char c = d[i];
	*is_int = *big = false;
	if (c == '"')
		return scan_string(d, n, i);
	if (c == '-' || isdigit((unsigned char)c))
		return scan_number(d, n, i, key == SK_SERVER_NS || key == SK_PT || key == SK_CT, iv,
				   is_int, big);
	const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
	size_t ll = lit ? strlen(lit) : 0;
	return lit && n - i >= ll && !memcmp(d + i, lit, ll) ? i + ll : 0;
}

static inline size_t skip_ws(const char *d, size_t n, size_t i)
{
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i;
}

/* One event's data: 1/0 (content chunk or not) with sc filled, or -2 when
 * jansson must look. One step per member: its key, the colon and its value;
 * then a comma or the container's end. */
static int scan_event(const char *d, size_t n, struct scan *sc)
{
	enum { VALUE, MEMBER, AFTER } st = VALUE;
	char stack[SCAN_DEPTH];
	int depth = 0;
	struct scan_path path = { 0 };
	bool first = false; /* a container just opened: it may close at once */
	enum scan_key key = SK_OTHER;
	memset(sc, 0, sizeof(*sc));
	if (!n || d[0] != '{')
		return -2;
	for (size_t i = 0;;) {
		if ((i = skip_ws(d, n, i)) >= n)
			return -2;
		char c = d[i];
		if (st == AFTER) {
			if (c == '}' || c == ']')
				goto close;
			if (c != ',')
				return -2;
			st = stack[depth - 1] == '{' ? MEMBER : VALUE;
			if (depth == path.choices)
				path.elem0 = false; /* past choices[0] */
			first = false;
			key = SK_OTHER;
			i++;
			continue;
		}
		if (st == MEMBER) {
			if (c == '}' && first)
				goto close;
			size_t e = c == '"' ? scan_string(d, n, i) : 0;
			if (!e)
				return -2;
			key = classify(d + i + 1, e - i - 2, depth, &path);
			if ((i = skip_ws(d, n, e)) >= n || d[i] != ':' || (i = skip_ws(d, n, i + 1)) >= n)
				return -2;
			c = d[i];
			first = false; /* on to its value */
		}
		if (c == ']' && first)
			goto close;
		if (c == '{' || c == '[') {
			enum scan_key opens;
			bool elem0 = path.elem0 && depth == path.choices;
			if (depth == SCAN_DEPTH || !take_value(sc, key, d, i, i + 1, &opens))
				return -2;
			stack[depth++] = c;
			path_open(&path, opens, elem0, c, depth);
			st = c == '{' ? MEMBER : VALUE;
			first = true;
			key = SK_OTHER;
			i++;
			continue;
		}
		long long v = 0;
		bool is_int, big;
		enum scan_key opens;
		size_t e = scan_scalar(d, n, i, key, &v, &is_int, &big);
		if (!e || big || !take_value(sc, key, d, i, e, &opens))
			return -2;
		if (is_int)
			take_int(sc, key, v);
		i = e;
		st = AFTER;
		continue;
	close:
		if ((c == '}') != (stack[depth - 1] == '{'))
			return -2;
		path_close(&path, depth);
		st = AFTER;
		i++;
		if (!--depth) /* the root closed: only white space may follow */
			return skip_ws(d, n, i) == n ? sc->content != 0 : -2;
	}
}

/* What a scanned event adds to the stream's state (as the jansson path would). */
static int apply_scan(struct oai_sse *s, const struct scan *sc)
{
	if (sc->content) {
		if (s->n_content == 0 && sc->has_server_ns)
			s->first_server_ns = sc->server_ns;
		s->n_content++;
	}
	if (sc->usage) {
		if (sc->has_pt)
			s->prompt_tokens = (int)sc->pt;
		if (sc->has_ct)
			s->completion_tokens = (int)sc->ct;
		s->saw_usage = sc->has_ct;
	}
	return sc->content != 0;
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
	struct scan sc;
	if (scan_event(data, len, &sc) >= 0)
		return apply_scan(s, &sc);
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

/* The event being assembled is complete: dispatch it. */
static int flush_event(struct oai_sse *s)
{
	if (!s->ev_has)
		return 0;
	int r = dispatch(s, s->ev.buf, s->ev.len);
	rt_sb_reset(&s->ev);
	s->ev_has = false;
	return r;
}

/* Length of the empty line at b[i..len) ("\n" or "\r\n"), 0 if none there. */
static size_t blank_at(const char *b, size_t len, size_t i)
{
	if (i < len && b[i] == '\n')
		return 1;
	return i + 1 < len && b[i] == '\r' && b[i + 1] == '\n' ? 2 : 0;
}

/* One "data:" line's value v (vl bytes) ending at b[end]: an event of one
 * line followed by its empty line is dispatched where it lies (the usual
 * case: nothing copied); anything else is assembled in s->ev. Returns new
 * content chunks or -1, and moves *next past the empty line it consumed. */
static int data_line(struct oai_sse *s, const char *v, size_t vl, const char *b, size_t len,
		     size_t end, size_t *next)
{
	size_t bl = s->ev_has ? 0 : blank_at(b, len, end + 1);
	if (bl) {
		*next = end + 1 + bl;
		return dispatch(s, v, vl);
	}
	if (s->ev_has && rt_sb_addc(&s->ev, '\n'))
		return fail(s, xasprintf("stream event too large"));
	if (rt_sb_add(&s->ev, v, vl))
		return fail(s, xasprintf("stream event larger than the cap"));
	s->ev_has = true;
	return 0;
}

/* The complete lines of b[0..len), looking for line ends from `from`.
 * Returns where the unconsumed partial line starts, or -1; *got counts
 * new content chunks. */
static long take_lines(struct oai_sse *s, const char *b, size_t len, size_t from, int *got)
{
	size_t start = 0; /* start of the current (unconsumed) line */
	for (size_t i = from;;) {
		const char *nl = memchr(b + i, '\n', len - i);
		if (!nl)
			break;
		size_t end = (size_t)(nl - b), ll = end - start, next = end + 1;
		const char *line = b + start;
		if (ll && line[ll - 1] == '\r')
			ll--;
		int r = 0;
		if (ll == 0) {
			r = flush_event(s);
		} else if (ll >= 5 && !memcmp(line, "data:", 5)) {
			size_t sp = ll > 5 && line[5] == ' ';
			r = data_line(s, line + 5 + sp, ll - 5 - sp, b, len, end, &next);
		}
		/* other fields (event:, id:, retry:, comments) carry nothing we need */
		if (r < 0)
			return -1;
		*got += r;
		start = i = next;
	}
	return (long)start;
}

int oai_sse_feed(struct oai_sse *s, const char *data, size_t n)
{
	if (s->error)
		return -1;
	int got = 0;
	if (!s->buf.len) {
		/* nothing pending: read the lines where curl put them */
		long rest = take_lines(s, data, n, 0, &got);
		if (rest < 0)
			return -1;
		if ((size_t)rest < n && rt_sb_add(&s->buf, data + rest, n - (size_t)rest))
			return fail(s, xasprintf("stream event larger than the %zu byte cap", s->buf.cap));
		s->scan = s->buf.len;
		return got;
	}
	if (rt_sb_add(&s->buf, data, n))
		return fail(s, xasprintf("stream event larger than the %zu byte cap", s->buf.cap));
	long start = take_lines(s, s->buf.buf, s->buf.len, s->scan, &got);
	if (start < 0)
		return -1;
	/* drop consumed lines; keep the partial one */
	if (start) {
		memmove(s->buf.buf, s->buf.buf + start, s->buf.len - (size_t)start);
		s->buf.len -= (size_t)start;
		s->buf.buf[s->buf.len] = 0;
	}
	s->scan = s->buf.len;
	return got;
}
