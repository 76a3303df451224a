/*
 * The growable string buffer struct rt_sb (see rt.h): never NULL, always
 * NUL-terminated, with an optional size cap for untrusted input; detaching
 * hands the contents to the caller; the markup escaper and the UTF-8 check
 * the HTML writers and the SSE parser share.
 */
#include "runner/base/rt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char rt_sb_empty[1];

void rt_sb_init(struct rt_sb *sb, size_t cap)
{
	sb->buf = rt_sb_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->cap = cap;
}

void rt_sb_release(struct rt_sb *sb)
{
	if (sb->alloc)
		free(sb->buf);
	rt_sb_init(sb, sb->cap);
}

void rt_sb_reset(struct rt_sb *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = 0;
}

static int grow(struct rt_sb *sb, size_t extra)
{
	if (sb->cap && sb->len + extra > sb->cap)
		return RT_ETOOBIG;
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, n);
	} else {
		sb->buf = xmalloc(n);
		sb->buf[0] = 0;
	}
	sb->alloc = n;
	return 0;
}

int rt_sb_add(struct rt_sb *sb, const void *data, size_t n)
{
	if (!n)
		return 0;
	int rc = grow(sb, n);
	if (rc)
		return rc;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
	return 0;
}

int rt_sb_adds(struct rt_sb *sb, const char *s)
{
	return rt_sb_add(sb, s, strlen(s));
}

int rt_sb_addc(struct rt_sb *sb, char c)
{
	return rt_sb_add(sb, &c, 1);
}

int rt_sb_vaddf(struct rt_sb *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n <= 0)
		return 0;
	int rc = grow(sb, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int rt_sb_addf(struct rt_sb *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = rt_sb_vaddf(sb, fmt, ap);
	va_end(ap);
	return rc;
}

char *rt_sb_detach(struct rt_sb *sb, size_t *len)
{
	char *p = sb->alloc ? sb->buf : xstrdup("");
	if (len)
		*len = sb->len;
	rt_sb_init(sb, sb->cap);
	return p;
}

void rt_sb_trim(struct rt_sb *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->buf[--sb->len] = 0;
}

size_t rt_utf8_seq(const char *str, size_t n, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;
	*bad = 1;
	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3, lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4, lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		/* Only the second byte's range depends on the first. */
		if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF)) {
			*bad = i;
			return 0;
		}
	}
	return len;
}

bool rt_utf8_c1(const char *s)
{
	return (unsigned char)s[0] == 0xC2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9F;
}

void rt_sb_add_markup(struct rt_sb *sb, const char *s)
{
	size_t left = s ? strlen(s) : 0;
	while (left) {
		size_t bad, n = rt_utf8_seq(s, left, &bad);
		if (!n) {
			rt_sb_adds(sb, "\xEF\xBF\xBD"); /* U+FFFD */
			s += bad;
			left -= bad;
			continue;
		}
		if (n == 2 && rt_utf8_c1(s)) {
			rt_sb_addc(sb, ' '); /* a C1 control: U+009B is a one-character CSI */
			s += n;
			left -= n;
			continue;
		}
		if (n > 1) {
			rt_sb_add(sb, s, n);
			s += n;
			left -= n;
			continue;
		}
		switch (*s) {
		case '&': rt_sb_adds(sb, "&amp;"); break;
		case '<': rt_sb_adds(sb, "&lt;"); break;
		case '>': rt_sb_adds(sb, "&gt;"); break;
		case '"': rt_sb_adds(sb, "&quot;"); break;
		case '\'': rt_sb_adds(sb, "&#39;"); break;
		default:
			/* XML 1.0 allows no other control characters, HTML shows none. */
			if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
				rt_sb_addc(sb, ' ');
			else
				rt_sb_addc(sb, *s);
		}
		s++;
		left--;
	}
}

int rt_sb_add_shq(struct rt_sb *sb, const char *s)
{
	int rc = rt_sb_addc(sb, '\'');
	for (; s && *s && !rc; s++)
		rc = *s == '\'' ? rt_sb_adds(sb, "'\\''") : rt_sb_addc(sb, *s);
	return rc ? rc : rt_sb_addc(sb, '\'');
}
