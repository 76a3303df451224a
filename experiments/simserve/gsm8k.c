/*
 * GSM8K mode of simserve. The dataset (test.jsonl) is loaded into a hash
 * table keyed by the trimmed question text. For a prompt, the LAST question
 * (after the last "Question: " or "Q: ") is looked up; question i is answered
 * correctly iff floor((i+1)f) > floor(i f) for f = --gsm8k-accuracy (so any
 * prefix of n questions has exactly floor(n f) correct), XOR i in --flip, and
 * never while a broken tile is in use. A wrong answer is the same worked
 * solution ending in N+1.
 */
#include "simserve.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
	char *question; /* trimmed question text */
	char *solution; /* worked solution without <<...>> and the #### line */
	char *number;   /* reference answer N (text after "#### ") */
	bool flip;      /* listed in --flip */
};

static struct {
	struct item *items; /* by dataset index */
	size_t n;           /* number of questions */
	long *slots;        /* open-addressing hash: index+1, 0 = empty */
	size_t n_slots;     /* power of two */
	double accuracy;    /* --gsm8k-accuracy */
	bool broken;        /* a broken tile is in use */
} ds;

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* Trim [*s, *s+*n) in place. */
static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

static long lookup(const char *q, size_t n)
{
	trim(&q, &n);
	if (!ds.n_slots || !n)
		return -1;
	for (size_t h = hash(q, n) & (ds.n_slots - 1);; h = (h + 1) & (ds.n_slots - 1)) {
		long v = ds.slots[h];
		if (!v)
			return -1;
		const char *have = ds.items[v - 1].question;
		if (strlen(have) == n && !memcmp(have, q, n))
			return v - 1;
	}
}

/* The solution lines of a reference answer, with <<...>> removed. */
static char *clean_solution(const char *ans, size_t n)
{
	struct rt_sb sb = RT_SB_INIT;
	for (size_t i = 0; i < n; i++) {
		if (ans[i] == '<' && i + 1 < n && ans[i + 1] == '<') {
			const char *end = strstr(ans + i, ">>");
			if (end && (size_t)(end - ans) < n) {
				i = (size_t)(end - ans) + 1;
				continue;
			}
		}
		rt_sb_addc(&sb, ans[i]);
	}
	rt_sb_trim(&sb);
	return rt_sb_detach(&sb, NULL);
}

static int parse_line(const char *path, long lineno, const char *line, struct item *it,
		      struct rt_sb *err)
{
	json_error_t je;
	json_t *o = json_loads(line, 0, &je);
	if (!o)
		return rt_errf(err, RT_EPARSE, "%s:%ld:%d: %s", path, lineno, je.column, je.text);
	const char *q = json_string_value(json_object_get(o, "question"));
	const char *a = json_string_value(json_object_get(o, "answer"));
	const char *mark = a ? strstr(a, "#### ") : NULL;
	if (!q || !a || !mark) {
		json_decref(o);
		return rt_errf(err, RT_EINVAL, "%s:%ld: expected {\"question\": ..., \"answer\": \"... #### N\"}",
			       path, lineno);
	}
	size_t qn = strlen(q);
	trim(&q, &qn);
	it->question = xstrndup(q, qn);
	it->solution = clean_solution(a, (size_t)(mark - a));
	const char *num = mark + 5;
	size_t nn = strlen(num);
	trim(&num, &nn);
	it->number = xstrndup(num, nn);
	json_decref(o);
	return 0;
}

static int parse_flip(const char *flip, struct rt_sb *err)
{
	const char *p = flip;
	while (p && *p) {
		char *end;
		errno = 0;
		long i = strtol(p, &end, 10);
		if (errno || end == p || i < 0 || (*end && *end != ','))
			return rt_errf(err, RT_EUSAGE, "--flip: '%s' is not a comma-separated list of indices",
				       flip);
		if ((size_t)i >= ds.n)
			return rt_errf(err, RT_EUSAGE, "--flip: index %ld is outside the dataset (%zu questions)",
				       i, ds.n);
		ds.items[i].flip = true;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int ss_gsm8k_load(const char *path, double accuracy, const char *flip, struct rt_sb *err)
{
	if (accuracy < 0 || accuracy > 1)
		return rt_errf(err, RT_EUSAGE, "--gsm8k-accuracy: %g is not in [0, 1]", accuracy);
	ds.accuracy = accuracy;
	if (!path) {
		if (flip && *flip)
			return rt_errf(err, RT_EUSAGE, "--flip: needs --gsm8k");
		return 0;
	}
	FILE *f = fopen(path, "r");
	if (!f)
		return rt_errf(err, RT_EIO, "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len == 0 || strspn(line, " \t\r\n") == (size_t)len)
			continue;
		if (ds.n == alloc) {
			alloc = alloc ? alloc * 2 : 2048;
			ds.items = xrealloc(ds.items, alloc * sizeof(*ds.items));
		}
		memset(&ds.items[ds.n], 0, sizeof(ds.items[ds.n]));
		if ((rc = parse_line(path, lineno, line, &ds.items[ds.n], err)))
			break;
		ds.n++;
	}
	free(line);
	fclose(f);
	if (!rc && !ds.n)
		rc = rt_errf(err, RT_EINVAL, "%s: no questions", path);
	if (rc)
		return rc;
	ds.n_slots = 16;
	while (ds.n_slots < ds.n * 2)
		ds.n_slots *= 2;
	ds.slots = xcalloc(ds.n_slots, sizeof(*ds.slots));
	for (size_t i = 0; i < ds.n; i++) {
		const char *q = ds.items[i].question;
		if (lookup(q, strlen(q)) >= 0)
			continue; /* duplicate question: the first index wins */
		size_t h = hash(q, strlen(q)) & (ds.n_slots - 1);
		while (ds.slots[h])
			h = (h + 1) & (ds.n_slots - 1);
		ds.slots[h] = (long)i + 1;
	}
	return parse_flip(flip, err);
}

void ss_gsm8k_free(void)
{
	for (size_t i = 0; i < ds.n; i++) {
		free(ds.items[i].question);
		free(ds.items[i].solution);
		free(ds.items[i].number);
	}
	free(ds.items);
	free(ds.slots);
	memset(&ds, 0, sizeof(ds));
}

bool ss_gsm8k_loaded(void)
{
	return ds.n > 0;
}

void ss_gsm8k_set_broken(bool broken)
{
	ds.broken = broken;
}

bool ss_gsm8k_correct(long i)
{
	/* the epsilon keeps e.g. 10 * 0.9 at 9 */
	double f = ds.accuracy;
	bool ok = floor((double)(i + 1) * f + 1e-9) > floor((double)i * f + 1e-9);
	if (i >= 0 && (size_t)i < ds.n && ds.items[i].flip)
		ok = !ok;
	return ok;
}

/* Last occurrence of needle in hay, or NULL. */
static const char *last_of(const char *hay, const char *needle)
{
	const char *last = NULL;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		last = p;
	return last;
}

/* N+1 for a wrong answer; a non-integer gets a "1" appended. */
static char *wrong_number(const char *n)
{
	char digits[64];
	size_t k = 0;
	for (const char *p = n; *p && k + 1 < sizeof(digits); p++)
		if (*p != ',')
			digits[k++] = *p;
	digits[k] = '\0';
	char *end;
	errno = 0;
	long long v = strtoll(digits, &end, 10);
	if (errno || end == digits || *end)
		return xasprintf("%s1", n);
	return xasprintf("%lld", v + 1);
}

char *ss_gsm8k_answer(const char *text, bool chat, bool *known)
{
	*known = false;
	if (!text)
		return NULL;
	const char *qa = last_of(text, "Question: ");
	const char *qb = last_of(text, "Q: ");
	bool cot = qb && (!qa || qb > qa);
	const char *start = cot ? qb + 3 : qa ? qa + 10 : NULL;
	long idx;
	if (start) {
		const char *e1 = strstr(start, "\nAnswer:");
		const char *e2 = strstr(start, "\nA:");
		const char *end = e1 && (!e2 || e1 < e2) ? e1 : e2;
		idx = lookup(start, end ? (size_t)(end - start) : strlen(start));
	} else {
		idx = lookup(text, strlen(text));
		if (idx < 0)
			return NULL; /* not a GSM8K prompt at all */
		cot = true;
	}
	if (idx < 0)
		return xstrdup("I don't know.");
	*known = true;
	const struct item *it = &ds.items[idx];
	bool ok = ss_gsm8k_correct(idx) && !ds.broken;
	char *wrong = ok ? NULL : wrong_number(it->number);
	const char *n = ok ? it->number : wrong;
	char *out = cot ? xasprintf("%s The answer is %s.", it->solution, n)
			: xasprintf("%s\n#### %s", it->solution, n);
	free(wrong);
	(void)chat;
	return out;
}
