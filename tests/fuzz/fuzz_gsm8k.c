/*
 * Fuzz harness: the GSM8K answer extraction and normalisation
 * (runner/gate/gsm8k_extract.c). The input is a model's response, then
 * optionally a line "===" and a reference answer. The promises: the strict
 * extraction of each format is "[invalid]" or a number its marker ("#### ",
 * "The answer is ") precedes in the response; the flexible one is
 * "[invalid]" or a piece of the response its pattern allows; normalising
 * removes every ',' and '$' and lowercases; comparing is symmetric and a
 * string matches itself.
 */
#include "tests/fuzz/fuzz.h"

#include <ctype.h>
#include <string.h>

#include "runner/gate/gsm8k.h"

static bool invalid(const char *s)
{
	return !strcmp(s, GSM8K_INVALID);
}

/* s is "-?[chars]+" with at least min characters after the sign. */
static bool number_of(const char *s, const char *chars, size_t min)
{
	if (*s == '-')
		s++;
	return strlen(s) >= min && strspn(s, chars) == strlen(s);
}

static void check_strict(enum spec_gsm8k_format fmt, const char *resp)
{
	char *x = gsm8k_extract_strict(fmt, resp);
	if (!invalid(x)) {
		FUZZ_CHECK(number_of(x, "0123456789.,", 1), "strict gave '%s'", x);
		char *marked = xasprintf("%s%s", fmt == SPEC_GSM8K ? "#### " : "The answer is ", x);
		FUZZ_CHECK(strstr(resp, marked), "strict gave '%s', not in the response", x);
		free(marked);
	}
	free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[2];
	fuzz_split(data, size, "\n===\n", part, 2);
	char *resp = fuzz_str(part[0]), *target = fuzz_str(part[1]);
	check_strict(SPEC_GSM8K, resp);
	check_strict(SPEC_GSM8K_COT, resp);
	check_strict(SPEC_GSM8K_CHAT, resp);
	char *flex = gsm8k_extract_flex(resp);
	if (!invalid(flex)) {
		FUZZ_CHECK(number_of(flex, "$0123456789.,", 2) || number_of(flex, "0123456789", 1),
			   "flexible gave '%s'", flex);
		FUZZ_CHECK(strstr(resp, flex), "flexible gave '%s', not in the response", flex);
	}
	char *norm = gsm8k_normalize(resp);
	FUZZ_CHECK(strlen(norm) <= strlen(resp), "normalising grew '%s'", resp);
	FUZZ_CHECK(!strpbrk(norm, ",$"), "normalised '%s' keeps ',' or '$'", norm);
	for (const char *p = norm; *p; p++)
		FUZZ_CHECK(!isupper((unsigned char)*p), "normalised '%s' keeps upper case", norm);
	FUZZ_CHECK(gsm8k_match(flex, flex) && gsm8k_match(resp, resp), "a string does not match itself");
	FUZZ_CHECK(gsm8k_match(flex, target) == gsm8k_match(target, flex), "match is not symmetric");
	free(norm);
	free(flex);
	free(resp);
	free(target);
	return 0;
}
