/*
 * Answer extraction and normalisation, exactly as lm-evaluation-harness
 * scores GSM8K: the strict-match and flexible-extract regexes (PCRE2, whose
 * semantics match Python's `re` for these patterns: leftmost match, ordered
 * alternation, `.` not matching a newline) and the normalisation applied to
 * prediction and reference before an exact string comparison.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "runner/gate/gsm8k.h"

#include <ctype.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char re_strict_gsm8k[] = "#### (\\-?[0-9\\.\\,]+)";
static const char re_strict_cot[] = "The answer is (\\-?[0-9\\.\\,]+).";
static const char re_flex[] = "(-?[$0-9.,]{2,})|(-?[0-9]+)";

static pcre2_code *code_strict_gsm8k, *code_strict_cot, *code_flex;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static pcre2_code *compile(const char *pat)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	/* Python's `.` excludes only \n; pin the newline convention to LF so a
	 * library built with another default behaves the same. */
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &ec, &off, cc);
	pcre2_compile_context_free(cc);
	if (!c) {
		fprintf(stderr, "ratchet: internal regex '%s' does not compile\n", pat);
		abort();
	}
	return c;
}

static void init_regexes(void)
{
	code_strict_gsm8k = compile(re_strict_gsm8k);
	code_strict_cot = compile(re_strict_cot);
	code_flex = compile(re_flex);
}

/* The first non-empty capture group of the match in md, as a new string. */
static char *first_group(const char *s, pcre2_match_data *md, int rc)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
	for (int g = 1; g < rc; g++) {
		if (ov[2 * g] == PCRE2_UNSET || ov[2 * g + 1] == ov[2 * g])
			continue;
		return xstrndup(s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
	}
	return NULL;
}

/* Find the first (last = false) or last match of code in s, as Python's
 * findall would list them: scanning on from the end of each match. */
static char *find(pcre2_code *code, const char *s, bool last)
{
	size_t len = strlen(s), start = 0;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
	char *found = NULL;
	while (start <= len) {
		int rc = pcre2_match(code, (PCRE2_SPTR)s, len, start, 0, md, NULL);
		if (rc <= 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		char *g = first_group(s, md, rc);
		if (g) {
			free(found);
			found = g;
		}
		if (!last && found)
			break;
		/* None of our patterns can match empty, but never loop forever. */
		start = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	pcre2_match_data_free(md);
	return found ? found : xstrdup(GSM8K_INVALID);
}

char *gsm8k_extract_strict(enum spec_gsm8k_format fmt, const char *response)
{
	pthread_once(&once, init_regexes);
	return find(fmt == SPEC_GSM8K ? code_strict_gsm8k : code_strict_cot, response ? response : "",
		    false);
}

char *gsm8k_extract_flex(const char *response)
{
	pthread_once(&once, init_regexes);
	return find(code_flex, response ? response : "", true);
}

char *gsm8k_normalize(const char *s)
{
	struct rt_sb sb = RT_SB_INIT;
	/* 1. remove ',' and 2. remove '$' (order does not matter between the two). */
	for (const char *p = s; *p; p++)
		if (*p != ',' && *p != '$')
			rt_sb_addc(&sb, *p);
	/* 3. everything up to and including the last "#### " ((?s).*#### is greedy). */
	const char *cut = NULL;
	for (const char *p = sb.buf; (p = strstr(p, "#### ")); p++)
		cut = p + 5;
	if (cut) {
		size_t off = (size_t)(cut - sb.buf);
		memmove(sb.buf, cut, sb.len - off + 1);
		sb.len -= off;
	}
	/* 4. one trailing '.' (Python's `\.$` also matches before a final
	 * newline; extracted answers never hold one, references do not either). */
	if (sb.len && sb.buf[sb.len - 1] == '.')
		sb.buf[--sb.len] = 0;
	else if (sb.len >= 2 && sb.buf[sb.len - 1] == '\n' && sb.buf[sb.len - 2] == '.') {
		sb.buf[sb.len - 2] = '\n';
		sb.buf[--sb.len] = 0;
	}
	/* 5. lowercase. */
	for (size_t i = 0; i < sb.len; i++)
		sb.buf[i] = (char)tolower((unsigned char)sb.buf[i]);
	char *out = rt_sb_detach(&sb, NULL);
	return out;
}

bool gsm8k_match(const char *extracted, const char *target)
{
	char *a = gsm8k_normalize(extracted);
	char *b = gsm8k_normalize(target);
	bool eq = !strcmp(a, b);
	free(a);
	free(b);
	return eq;
}
