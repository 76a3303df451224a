/*
 * lm-evaluation-harness GSM8K scoring, checked case by case: strict-match
 * and flexible-extract on tricky responses, and the normalisation. Every
 * expected value was worked out by hand from the regexes and the rules in
 * ../shared/data/gsm8k/README.md (notes say why where it is not obvious).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "runner/gate/gsm8k.h"

#define INV GSM8K_INVALID

struct xcase {
	const char *response;
	enum spec_gsm8k_format fmt;
	const char *strict; /* raw strict-match extraction */
	const char *flex;   /* raw flexible-extract extraction */
	const char *target; /* reference answer (normalised form of the dataset's) */
	int ok_strict;      /* strict extraction == target after normalisation */
	int ok_flex;
};

static const struct xcase xcases[] = {
	/* 0 */ { "The answer is 18.", SPEC_GSM8K_COT, "18", "18.", "18", 1, 1 },
	{ "#### 18", SPEC_GSM8K, "18", "18", "18", 1, 1 },
	/* strict: greedy "1,000." then `.` has nothing left: backtrack to "1,000" */
	{ "The answer is 1,000.", SPEC_GSM8K_COT, "1,000", "1,000.", "1000", 1, 1 },
	/* strict's class has no '$'; flex keeps it, normalisation drops it */
	{ "The answer is $1,234.50.", SPEC_GSM8K_COT, INV, "$1,234.50.", "1234.5", 0, 0 },
	{ "18.00", SPEC_GSM8K, INV, "18.00", "18", 0, 0 },
	/* 5 */ { "#### 18.00", SPEC_GSM8K, "18.00", "18.00", "18", 0, 0 },
	/* "-5": alternative 1 needs two class chars after '-', so group 2 matches */
	{ "-5", SPEC_GSM8K, INV, "-5", "-5", 0, 1 },
	{ "-12", SPEC_GSM8K, INV, "-12", "-12", 0, 1 },
	{ "The temperature dropped to -3 degrees.", SPEC_GSM8K_COT, INV, "-3", "-3", 0, 1 },
	{ "I have 3 apples and 5 oranges", SPEC_GSM8K, INV, "5", "3", 0, 0 },
	/* 10 */ { "No number here", SPEC_GSM8K, INV, INV, "3", 0, 0 },
	{ "", SPEC_GSM8K_COT, INV, INV, "3", 0, 0 },
	/* strict: "42" leaves nothing for the final `.`, so it backtracks to "4" */
	{ "The answer is 42", SPEC_GSM8K_COT, "4", "42", "42", 0, 1 },
	/* strict: a single digit cannot give up a char to `.`: no match */
	{ "The answer is 7", SPEC_GSM8K_COT, INV, "7", "7", 0, 1 },
	/* strict takes the first; `.` does not match the newline */
	{ "The answer is 42.\nThe answer is 43.", SPEC_GSM8K_COT, "42", "43.", "43", 0, 1 },
	/* 15 */ { "#### 5\n#### 6", SPEC_GSM8K, "5", "6", "6", 0, 1 },
	{ "So she has 1,5 left", SPEC_GSM8K, INV, "1,5", "15", 0, 1 },
	{ "It costs $5", SPEC_GSM8K, INV, "$5", "5", 0, 1 },
	/* "$ 5": a lone '$' is one class char, too short; then "5" */
	{ "It costs $ 5", SPEC_GSM8K, INV, "5", "5", 0, 1 },
	{ "The answer is -8.", SPEC_GSM8K_COT, "-8", "-8.", "-8", 1, 1 },
	/* 20 */ { "It takes 3.5 hours", SPEC_GSM8K, INV, "3.5", "3.5", 0, 1 },
	{ "Total: 10. Then 20.", SPEC_GSM8K, INV, "20.", "20", 0, 1 },
	{ "#### 1,000,000", SPEC_GSM8K, "1,000,000", "1,000,000", "1000000", 1, 1 },
	/* "####18": strict needs the space */
	{ "####18", SPEC_GSM8K, INV, "18", "18", 0, 1 },
	{ "We get 12 and then #### 15 is the answer.", SPEC_GSM8K, "15", "15", "15", 1, 1 },
	/* 25: strict: greedy "5." and `.` takes the space */
	{ "The answer is 5. But wait, 6 is the answer", SPEC_GSM8K_COT, "5.", "6", "5", 1, 0 },
	{ "The answer is 18.5.", SPEC_GSM8K_COT, "18.5", "18.5.", "18.5", 1, 1 },
	/* strict is case-sensitive */
	{ "the answer is 18.", SPEC_GSM8K_COT, INV, "18.", "18", 0, 1 },
	{ "The answer is: 18.", SPEC_GSM8K_COT, INV, "18.", "18", 0, 1 },
	{ "version 1.2.3", SPEC_GSM8K, INV, "1.2.3", "1.2.3", 0, 1 },
	/* 30: three dots are three class chars; normalisation drops one */
	{ "well...", SPEC_GSM8K, INV, "...", "...", 0, 1 }, /* both sides become ".." */
	{ "Answer: 24,", SPEC_GSM8K, INV, "24,", "24", 0, 1 },
	{ "value is .5", SPEC_GSM8K, INV, ".5", ".5", 0, 1 },
	/* "$$" normalises to the empty string */
	{ "$$", SPEC_GSM8K, INV, "$$", "18", 0, 0 },
	{ "--5", SPEC_GSM8K, INV, "-5", "-5", 0, 1 },
	/* 35: "5", then "-3" (group 2), then "2" */
	{ "5-3=2", SPEC_GSM8K, INV, "2", "2", 0, 1 },
	{ "The answer is 1,000,000.00.", SPEC_GSM8K_COT, "1,000,000.00", "1,000,000.00.", "1000000", 0, 0 },
	{ "#### -12", SPEC_GSM8K, "-12", "-12", "-12", 1, 1 },
	{ "#### $12", SPEC_GSM8K, INV, "$12", "12", 0, 1 },
	{ "#### 10 #### 20", SPEC_GSM8K, "10", "20", "10", 1, 0 },
	/* 40: strict: greedy "6." and `.` takes the 'T' */
	{ "The answer is 6.The answer is 7.", SPEC_GSM8K_COT, "6.", "7.", "7", 0, 1 },
	{ "12 then \\boxed{15}", SPEC_GSM8K, INV, "15", "15", 0, 1 },
	/* "2024", "-01", "-05" */
	{ "on 2024-01-05", SPEC_GSM8K, INV, "-05", "5", 0, 0 },
	{ "In 3 days, she earns $1,200.", SPEC_GSM8K_COT, INV, "$1,200.", "1200", 0, 1 },
	/* chat format scores with the cot strict regex */
	{ "Step by step... The answer is 72.", SPEC_GSM8K_CHAT, "72", "72.", "72", 1, 1 },
	/* 45 */ { "#### 72", SPEC_GSM8K_CHAT, INV, "72", "72", 0, 1 },
	{ "The answer is 0.", SPEC_GSM8K_COT, "0", "0.", "0", 1, 1 },
	/* "0" alone: a single digit only matches group 2 */
	{ "0", SPEC_GSM8K, INV, "0", "0", 0, 1 },
	{ "She pays 5 x $3 = $15 in total.\n#### 15", SPEC_GSM8K, "15", "15", "15", 1, 1 },
};

static void test_extract_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(xcases) / sizeof(xcases[0]); i++) {
		const struct xcase *c = &xcases[i];
		char *s = gsm8k_extract_strict(c->fmt, c->response);
		char *f = gsm8k_extract_flex(c->response);
		if (strcmp(s, c->strict) || strcmp(f, c->flex) ||
		    gsm8k_match(s, c->target) != (bool)c->ok_strict ||
		    gsm8k_match(f, c->target) != (bool)c->ok_flex)
			fail_msg("case %zu (%s): strict '%s' (want '%s', ok %d), flex '%s' (want '%s', ok %d)",
				 i, c->response, s, c->strict, c->ok_strict, f, c->flex, c->ok_flex);
		free(s);
		free(f);
	}
	assert_true(sizeof(xcases) / sizeof(xcases[0]) >= 40);
}

struct ncase {
	const char *in;
	const char *out;
};

static const struct ncase ncases[] = {
	{ "18", "18" },
	{ "18.", "18" },
	{ "18..", "18." },          /* one trailing period only */
	{ "$1,000.00", "1000.00" },
	{ "1,234,567", "1234567" },
	{ "18.00", "18.00" },       /* no numeric equivalence */
	{ "ABC", "abc" },
	{ "a #### b #### 7", "7" }, /* up to the last "#### " */
	{ "####7", "####7" },       /* needs the space */
	{ "Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72", "72" },
	{ "so $<<1+2=3>>3\n#### 1,000", "1000" },
	{ "#### -3", "-3" },
	{ "$", "" },
	{ "-5.", "-5" },
	{ "[invalid]", "[invalid]" },
};

static void test_normalize_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ncases) / sizeof(ncases[0]); i++) {
		char *n = gsm8k_normalize(ncases[i].in);
		if (strcmp(n, ncases[i].out))
			fail_msg("normalize case %zu '%s': got '%s', want '%s'", i, ncases[i].in, n,
				 ncases[i].out);
		free(n);
	}
}

static void test_match(void **state)
{
	(void)state;
	assert_false(gsm8k_match("18.00", "18"));
	assert_true(gsm8k_match("$18", "18"));
	assert_true(gsm8k_match("18.", "18"));
	assert_true(gsm8k_match("1,000", "1000"));
	assert_true(gsm8k_match("1,000", "Some work\n#### 1000"));
	assert_false(gsm8k_match(GSM8K_INVALID, "18"));
	assert_false(gsm8k_match("-18", "18"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extract_table),   /* strict + flexible on 49 responses */
		cmocka_unit_test(test_normalize_table), /* normalisation order and edge cases */
		cmocka_unit_test(test_match),           /* exact comparison after normalisation */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
