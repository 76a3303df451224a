/*
 * The gate's GSM8K prompts against lm-evaluation-harness v0.4.12's, from
 * the fixture tests/gate/lmeval_gsm8k_v0.4.12.txt (made by
 * `lmeval_gsm8k.py fixture DATA LM_EVAL_SRC` from lm-eval's own
 * samplers.py, api/utils.py and task YAMLs; see its header): for the first
 * 100 test questions, the train indexes of the 5 shots lm-eval draws and
 * the sha256 of each prompt (gsm8k), the sha256 of each gsm8k_cot prompt,
 * and both tasks' stop sequences. The request body (seed, temperature,
 * stops with an EOS string) is checked here too; test_gate_run and
 * gate_lmeval_cli replay the same prompts over HTTP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/gate/gsm8k.h"
#include "fixture_lines.h"

static char *fixture;
static struct gsm8k_set test, train;

static int setup(void **state)
{
	(void)state;
	const char *dir = getenv("RATCHET_GSM8K_DIR");
	fixture = fixture_read("lmeval_gsm8k_v0.4.12.txt");
	struct rt_sb err = RT_SB_INIT;
	int rc = fixture ? 0 : -1;
	if (!rc)
		rc = gsm8k_find("test", dir, &test, &err);
	if (!rc)
		rc = gsm8k_find("train", dir, &train, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.buf);
	rt_sb_release(&err);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	free(fixture);
	gsm8k_set_release(&test);
	gsm8k_set_release(&train);
	return 0;
}

static int each_line(const char *tag, void (*fn)(char **w, size_t n))
{
	return fixture_each(fixture, tag, fn);
}

static size_t *draws; /* lm-eval's shots for questions 0..99, 5 each */

static void check_gsm8k(char **w, size_t n)
{
	size_t doc = strtoul(w[0], NULL, 10);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(draws[doc * 5 + i], strtoul(w[2 + i], NULL, 10));
	char *p = gsm8k_prompt(SPEC_GSM8K, SPEC_API_COMPLETIONS, &train, draws + doc * 5, 5,
			       test.v[doc].question);
	char sha[65];
	rt_sha256_hex(p, strlen(p), sha);
	if (strcmp(sha, w[1]))
		fprintf(stderr, "question %zu: prompt differs from lm-eval's; ours starts:\n%.300s\n",
			doc, p);
	assert_string_equal(sha, w[1]);
	free(p);
}

static void check_cot(char **w, size_t n)
{
	assert_int_equal(n, 2);
	size_t doc = strtoul(w[0], NULL, 10);
	char *p = gsm8k_prompt(SPEC_GSM8K_COT, SPEC_API_COMPLETIONS, NULL, NULL, 8,
			       test.v[doc].question);
	char sha[65];
	rt_sha256_hex(p, strlen(p), sha);
	assert_string_equal(sha, w[1]);
	free(p);
}

static void check_stops(char **w, size_t n)
{
	enum spec_gsm8k_format f;
	assert_int_equal(gsm8k_format_parse(w[0], &f), 0);
	const char *const *st = gsm8k_stops(f);
	size_t i = 1;
	for (; st[i - 1]; i++) {
		assert_true(i < n);
		char *q = xasprintf("\"%s\"", st[i - 1]); /* the fixture's are JSON strings */
		assert_string_equal(q, w[i]);
		free(q);
	}
	assert_int_equal(i, n);
}

static void test_fewshot_draws(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(gsm8k_fewshot_draws(train.n, 5, 100, &draws, &err), 0);
	assert_int_equal(each_line("gsm8k", check_gsm8k), 100);
	free(draws);
	assert_int_equal(gsm8k_fewshot_draws(4, 5, 1, &draws, &err), RT_EUSAGE);
	rt_sb_release(&err);
}

static void test_cot_prompts(void **state)
{
	(void)state;
	assert_int_equal(each_line("gsm8k_cot", check_cot), 100);
}

static void test_stops(void **state)
{
	(void)state;
	assert_int_equal(each_line("stop", check_stops), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fewshot_draws), /* 100 questions: shots and prompt bytes */
		cmocka_unit_test(test_cot_prompts),   /* 100 gsm8k_cot prompts */
		cmocka_unit_test(test_stops),         /* until of both tasks */
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
