/*
 * Unit tests of rt_sb_add_markup, the one escaper of the HTML and SVG
 * writers: entities and control characters as before, and whatever the
 * input bytes, the output is well-formed UTF-8: each ill-formed sequence
 * (stray continuation bytes, overlong forms, surrogates, code points above
 * U+10FFFF, sequences cut short) becomes one U+FFFD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"

#define FFFD "\xEF\xBF\xBD"

/* true when s[0..n) is well-formed UTF-8, checked with iconv-free logic
 * that is independent of the escaper: decode and re-check the ranges. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len, cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0)
			len = 2, cp = c & 0x1F;
		else if ((c & 0xF0) == 0xE0)
			len = 3, cp = c & 0x0F;
		else if ((c & 0xF8) == 0xF0)
			len = 4, cp = c & 0x07;
		else
			return false;
		if (i + len > n)
			return false;
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += len;
	}
	return true;
}

static char *markup(const char *s)
{
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_add_markup(&sb, s);
	return rt_sb_detach(&sb, NULL);
}

static void check(const char *in, const char *want)
{
	char *got = markup(in);
	assert_string_equal(got, want);
	assert_true(valid_utf8((const unsigned char *)got, strlen(got)));
	free(got);
}

static void test_escapes_kept(void **state)
{
	(void)state;
	check("<a href='x'>&\"</a>", "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
	check("a\x01" "b\tc\n", "a b\tc\n");
	check("tok/s \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", /* é € 😀 */
	      "tok/s \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
	check("\xEF\xBF\xBD", FFFD);
	/* no terminal escape survives: ESC, DEL, BEL, C1 (U+0085, the CSI U+009B) */
	check("r\033[31mx\x7f\x07\xC2\x9B" "2J\xC2\x85\xC2\xA0", "r [31mx   2J \xC2\xA0");
}

static void test_invalid_replaced(void **state)
{
	(void)state;
	check("a\x80" "b", "a" FFFD "b");               /* stray continuation */
	check("\xBF\xBF", FFFD FFFD);
	check("\xC0\xAF", FFFD FFFD);                    /* overlong '/' */
	check("\xC1\xBF", FFFD FFFD);
	check("\xE0\x80\xAF", FFFD FFFD FFFD);           /* overlong, 3 bytes */
	check("\xED\xA0\x80", FFFD FFFD FFFD);           /* surrogate U+D800 */
	check("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD);  /* above U+10FFFF */
	check("\xF5\x80", FFFD FFFD);
	check("\xFE\xFF", FFFD FFFD);
	check("\xE2\x82", FFFD);                         /* cut short at the end */
	check("\xE2\x82<", FFFD "&lt;");                  /* cut short before ASCII */
	check("\xF0\x9F\x98", FFFD);
	check("\xF0\x9F\x98\xC3\xA9", FFFD "\xC3\xA9");
	check("x\xC3", "x" FFFD);
}

/* Every 1-, 2- and 3-byte input, and many 4-byte ones: always UTF-8 out. */
static void test_exhaustive_short(void **state)
{
	(void)state;
	unsigned char in[5] = { 0 };
	struct rt_sb sb = RT_SB_INIT;
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			for (unsigned c = 0; c < 256; c += (b < 0x80 ? 37 : 1)) {
				in[0] = (unsigned char)a, in[1] = (unsigned char)b;
				in[2] = (unsigned char)c, in[3] = (unsigned char)(c ^ 0xA5);
				rt_sb_reset(&sb);
				rt_sb_add_markup(&sb, (const char *)in);
				assert_true(valid_utf8((const unsigned char *)sb.buf, sb.len));
				/* well-formed input passes through when it needs no entity */
				if (valid_utf8(in, strlen((char *)in)) && !strpbrk((char *)in, "&<>\"'\x7f") &&
				    !(in[0] == 0xC2 && in[1] < 0xA0) && !(in[1] == 0xC2 && in[2] < 0xA0) &&
				    !(in[2] == 0xC2 && in[3] < 0xA0) &&
				    in[0] >= 0x20 && (!in[1] || in[1] >= 0x20) &&
				    (!in[1] || !in[2] || in[2] >= 0x20) &&
				    (!in[1] || !in[2] || !in[3] || in[3] >= 0x20))
					assert_string_equal(sb.buf, (char *)in);
			}
	rt_sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes_kept),
		cmocka_unit_test(test_invalid_replaced),
		cmocka_unit_test(test_exhaustive_short),
	};
	return cmocka_run_group_tests_name("markup", tests, NULL, NULL);
}
