/*
 * Chrome traces (Trace Event Format), as the PyTorch profiler (Kineto)
 * writes them: `torch.profiler.profile(...).export_chrome_trace()` and
 * vLLM's torch profiler (VLLM_TORCH_PROFILER_DIR, `vllm bench ... --profile`),
 * followed as of PyTorch 2.5 / Kineto: a JSON object whose "traceEvents"
 * array holds complete events {"ph": "X", "cat", "name", "ts", "dur"
 * (microseconds), "args"}. GPU kernels have cat "kernel"; "cuda_runtime",
 * "cpu_op" and the rest are host side and not counted. Steps are annotations
 * (cat "user_annotation", "ProfilerStep#N"; the same name again under
 * "gpu_user_annotation" is not counted twice). The bare-array form of the
 * format ([{...}, ...]) is read too. Each kernel's "ts" gives the trace's
 * span; the host's "cuda_runtime"/"cuda_driver" calls (PyTorch 2.11 writes
 * cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch) say how kernels were
 * launched.
 *
 * A trace can be gigabytes: it is never loaded whole. A byte scanner walks
 * the text (strings and escapes aware), finds the traceEvents array, and
 * hands each event object alone to jansson, so memory holds one event and
 * the per-kernel sums.
 */
#include "agents/research/profile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The most one event may take: far above any real one (a kernel's args). */
#define EVENT_CAP (16u << 20)

/* Where the scanner stands. */
struct scan {
	int depth;             /* containers open */
	bool top_array;        /* the document is a bare array of events */
	bool in_string;        /* inside a string */
	bool escape;           /* the previous byte was a backslash in a string */
	bool expect_key;       /* at depth 1 of an object, the next string is a key */
	bool in_key;           /* reading that key */
	char key[32];          /* the last depth-1 key (cut at 31 bytes) */
	size_t key_len;
	int events_depth;      /* depth of the events array, 0: not in it */
	bool capturing;        /* copying one event's bytes */
	struct rt_sb ev;       /* those bytes */
	long long offset;      /* byte offset of the event's start, for errors */
};

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int one_event(const char *path, struct scan *s, struct research_profile *p, struct rt_sb *err)
{
	json_error_t je;
	json_t *e = json_loadb(s->ev.buf, s->ev.len, 0, &je);
	if (!e)
		return rt_errf(err, RT_EPARSE, "%s: event at byte %lld: %s", path, s->offset, je.text);
	const char *ph = str(e, "ph"), *cat = str(e, "cat"), *name = str(e, "name");
	json_t *dur = json_object_get(e, "dur"), *args = json_object_get(e, "args");
	int rc = 0;
	struct rt_sb why = RT_SB_INIT;
	if (ph && !strcmp(ph, "X") && name && json_is_number(dur)) {
		double us = json_number_value(dur);
		json_t *ts = json_object_get(e, "ts");
		if (cat && !strcasecmp(cat, "kernel")) {
			rc = research_profile_add(p, name, str(args, "shape"), us, 1, &why);
			if (!rc && json_is_number(ts) && isfinite(json_number_value(ts)))
				research_profile_timed(p, json_number_value(ts), us);
		} else if (cat && (!strcasecmp(cat, "cuda_runtime") || !strcasecmp(cat, "cuda_driver") ||
				   !strcasecmp(cat, "hip_runtime"))) {
			research_profile_host_call(p, name);
		} else if ((!cat || strcasecmp(cat, "gpu_user_annotation")) &&
			   research_profile_is_step(p, name)) {
			json_t *b = json_object_get(args, "batch"), *g = json_object_get(args, "graphed");
			rc = research_profile_step(p, us, json_is_integer(b) ? (long)json_integer_value(b) : -1,
						   json_is_boolean(g) ? json_is_true(g) : -1, &why);
		}
	}
	if (rc)
		rt_errf(err, rc, "%s: event at byte %lld: %s", path, s->offset, why.buf);
	rt_sb_release(&why);
	json_decref(e);
	return rc;
}

static void open_container(struct scan *s, char c)
{
	s->depth++;
	if (s->depth == 1) {
		s->top_array = c == '[';
		s->expect_key = !s->top_array;
		if (s->top_array)
			s->events_depth = 1;
	} else if (s->depth == 2 && !s->top_array && c == '[' && !strcmp(s->key, "traceEvents")) {
		s->events_depth = 2;
	} else if (s->events_depth && s->depth == s->events_depth + 1 && c == '{') {
		rt_sb_reset(&s->ev);
		rt_sb_addc(&s->ev, '{');
		s->capturing = true;
	}
}

/* One byte of the document; 0, or an error from the event it ends. */
static int scan_byte(const char *path, struct scan *s, char c, struct research_profile *p,
		     struct rt_sb *err)
{
	if (s->capturing) {
		if (s->ev.len >= EVENT_CAP)
			return rt_errf(err, RT_ETOOBIG, "%s: event at byte %lld is over %u MiB", path,
				       s->offset, EVENT_CAP >> 20);
		rt_sb_addc(&s->ev, c);
	}
	if (s->in_string) {
		if (s->escape)
			s->escape = false;
		else if (c == '\\')
			s->escape = true;
		else if (c == '"')
			s->in_string = s->in_key = false;
		else if (s->in_key && s->key_len + 1 < sizeof(s->key))
			s->key[s->key_len++] = c, s->key[s->key_len] = 0;
		return 0;
	}
	bool top = s->depth == 1 && !s->top_array;
	switch (c) {
	case '"':
		s->in_string = true;
		if (top && s->expect_key) {
			s->in_key = true;
			s->key_len = 0;
			s->key[0] = 0;
		}
		break;
	case ':':
		if (top)
			s->expect_key = false;
		break;
	case ',':
		if (top)
			s->expect_key = true;
		break;
	case '{':
	case '[':
		open_container(s, c);
		break;
	case '}':
	case ']':
		if (s->capturing && s->depth == s->events_depth + 1) {
			s->capturing = false;
			int rc = one_event(path, s, p, err);
			if (rc)
				return rc;
		}
		if (s->depth == s->events_depth)
			s->events_depth = 0;
		if (--s->depth < 0)
			return rt_errf(err, RT_EPARSE, "%s: unbalanced '%c'", path, c);
		break;
	default:
		break;
	}
	return 0;
}

int research_read_chrome(const char *path, struct research_profile *p, struct rt_sb *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rt_errf(err, RT_EIO, "%s: %s", path, strerror(errno));
	struct scan s = { .ev = RT_SB_INIT };
	char buf[1 << 16];
	size_t n;
	long long off = 0;
	int rc = 0;
	while (!rc && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n && !rc; i++) {
			if (!s.capturing)
				s.offset = off + (long long)i;
			rc = scan_byte(path, &s, buf[i], p, err);
		}
		off += (long long)n;
	}
	if (!rc && ferror(f))
		rc = rt_errf(err, RT_EIO, "%s: read error", path);
	if (!rc && (s.depth || s.in_string))
		rc = rt_errf(err, RT_EPARSE, "%s: the trace ends inside %s (cut short?)", path,
			     s.in_string ? "a string" : "an object or array");
	fclose(f);
	rt_sb_release(&s.ev);
	return rc;
}

bool research_sniff_chrome(const char *head, size_t n, const char *path)
{
	(void)path;
	size_t i = 0;
	while (i < n && strchr(" \t\r\n", head[i]))
		i++;
	return i < n && (head[i] == '{' || head[i] == '[') &&
	       (strstr(head, "\"traceEvents\"") || strstr(head, "\"ph\""));
}
