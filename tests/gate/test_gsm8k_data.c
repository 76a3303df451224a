/*
 * The GSM8K dataset side: the real files load with their sha256 and targets,
 * a bad JSONL line is named file:line, subsets are stable and seeded, the
 * prompts have lm-eval's layout, and with no dataset, no cache and no
 * network the error says where to put the file; a download from a local
 * mirror with a wrong sha256 is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/gate/gsm8k.h"

static char dir[512];

static void test_real_files(void **state)
{
	(void)state;
	struct gsm8k_set s;
	struct rt_sb err = RT_SB_INIT;
	char p[600];
	snprintf(p, sizeof(p), "%s/test.jsonl", dir);
	assert_int_equal(gsm8k_load(p, &s, &err), 0);
	assert_int_equal(s.n, 1319);
	assert_string_equal(s.sha256, GSM8K_TEST_SHA256);
	assert_string_equal(s.v[0].target, "18"); /* Janet's ducks */
	gsm8k_set_release(&s);
	/* A folder works too, and train is found beside it. */
	assert_int_equal(gsm8k_find("train", dir, &s, &err), 0);
	assert_int_equal(s.n, 7473);
	assert_string_equal(s.sha256, GSM8K_TRAIN_SHA256);
	assert_string_equal(s.v[0].target, "72");
	gsm8k_set_release(&s);
	const struct gsm8k_set *cot = gsm8k_cot_exemplars();
	assert_int_equal(cot->n, 8);
	assert_string_equal(cot->v[0].target, "6");
	assert_string_equal(cot->v[7].target, "8");
}

static void test_bad_lines(void **state)
{
	(void)state;
	struct gsm8k_set s;
	struct rt_sb err = RT_SB_INIT;
	const char *t1 = "{\"question\": \"a\", \"answer\": \"x\\n#### 1\"}\n\n{\"question\": \"b\"\n";
	assert_int_equal(gsm8k_parse("d.jsonl", t1, strlen(t1), false, &s, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "d.jsonl:3:"));
	rt_sb_reset(&err);
	const char *t2 = "{\"question\": \"a\", \"answer\": \"x\\n#### 1\"}\n{\"question\": \"b\", \"answer\": 5}\n";
	assert_int_equal(gsm8k_parse("d.jsonl", t2, strlen(t2), false, &s, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "d.jsonl:2: expected an object"));
	rt_sb_reset(&err);
	const char *t3 = "{\"question\": \"a\", \"answer\": \"no final line\"}\n";
	assert_int_equal(gsm8k_parse("d.jsonl", t3, strlen(t3), false, &s, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "d.jsonl:1: answer: no final '#### N'"));
	rt_sb_release(&err);
}

static void test_select(void **state)
{
	(void)state;
	size_t *a, *b, na, nb;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(gsm8k_select(1319, 10, 5, 0, &a, &na, &err), 0);
	assert_int_equal(na, 5);
	assert_int_equal(a[0], 10);
	assert_int_equal(a[4], 14);
	free(a);
	assert_int_equal(gsm8k_select(1319, 0, 100, 7, &a, &na, &err), 0);
	assert_int_equal(gsm8k_select(1319, 0, 100, 7, &b, &nb, &err), 0);
	assert_int_equal(na, 100);
	assert_memory_equal(a, b, 100 * sizeof(size_t)); /* stable */
	for (size_t i = 1; i < na; i++)
		assert_true(a[i] > a[i - 1]); /* ascending, distinct */
	assert_true(a[99] > 100);         /* a spread, not the first 100 */
	free(b);
	assert_int_equal(gsm8k_select(1319, 0, 100, 8, &b, &nb, &err), 0);
	assert_true(memcmp(a, b, 100 * sizeof(size_t)) != 0); /* another seed, another subset */
	free(a);
	free(b);
	/* pinned: the subset of a seed must not change across releases */
	assert_int_equal(gsm8k_select(1319, 0, 8, 7, &a, &na, &err), 0);
	const size_t want[] = { 36, 93, 242, 383, 517, 690, 757, 1182 };
	assert_memory_equal(a, want, sizeof(want));
	free(a);
	assert_int_equal(gsm8k_select(1319, 0, 0, 0, &a, &na, &err), 0);
	assert_int_equal(na, 1319);
	free(a);
	assert_int_equal(gsm8k_select(1319, 1319, 0, 0, &a, &na, &err), RT_EUSAGE);
	rt_sb_release(&err);
}

static void test_prompts(void **state)
{
	(void)state;
	struct gsm8k_set train;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(gsm8k_find("train", dir, &train, &err), 0);
	const size_t shots[] = { 3, 0 };
	char *p = gsm8k_prompt(SPEC_GSM8K, SPEC_API_COMPLETIONS, &train, shots, 2, "What is 1+1?");
	char *want = xasprintf("Question: %s\nAnswer: %s\n\nQuestion: %s\nAnswer: %s\n\n"
			       "Question: What is 1+1?\nAnswer:",
			       train.v[3].question, train.v[3].answer, train.v[0].question,
			       train.v[0].answer);
	assert_string_equal(p, want);
	free(p);
	free(want);
	p = gsm8k_prompt(SPEC_GSM8K_COT, SPEC_API_COMPLETIONS, NULL, NULL, 8, "Q1?");
	assert_true(!strncmp(p, "Q: There are 15 trees", 21));
	assert_non_null(strstr(p, "The answer is 8.\n\nQ: Q1?\nA:"));
	assert_int_equal(strlen(strstr(p, "Q: Q1?\nA:")), strlen("Q: Q1?\nA:"));
	free(p);
	/* lm-eval's first_n: --num-fewshot 2 keeps the first two exemplars */
	p = gsm8k_prompt(SPEC_GSM8K_COT, SPEC_API_COMPLETIONS, NULL, NULL, 2, "Q1?");
	assert_non_null(strstr(p, "3 + 2 = 5. The answer is 5.\n\nQ: Q1?\nA:"));
	assert_null(strstr(p, "Leah"));
	free(p);
	p = gsm8k_prompt(SPEC_GSM8K_CHAT, SPEC_API_CHAT, NULL, NULL, 0, "Q1?");
	assert_true(p[0] == '[');
	assert_non_null(strstr(p, "Olivia"));
	assert_non_null(strstr(p, "{\"role\":\"user\",\"content\":\"Q: Q1?\\nA:\"}]"));
	free(p);
	assert_string_equal(gsm8k_stops(SPEC_GSM8K)[0], "Question:");
	assert_string_equal(gsm8k_stops(SPEC_GSM8K_COT)[0], "Q:");
	gsm8k_set_release(&train);
	rt_sb_release(&err);
}

static void test_missing_everywhere(void **state)
{
	(void)state;
	char tmp[] = "/tmp/rt-gsm8k-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	setenv("XDG_CACHE_HOME", tmp, 1);
	unsetenv("RATCHET_GSM8K");
	setenv("RATCHET_GSM8K_URL", "http://127.0.0.1:1/nothing", 1); /* refused: no network */
	struct gsm8k_set s;
	struct rt_sb err = RT_SB_INIT;
	assert_true(gsm8k_find("test", NULL, &s, &err) < 0);
	char *where = xasprintf("put the file at %s/ratchet/gsm8k/test.jsonl", tmp);
	assert_non_null(strstr(err.buf, where));
	assert_non_null(strstr(err.buf, GSM8K_TEST_SHA256));
	free(where);
	rt_sb_reset(&err);
	/* A mirror serving bytes with the wrong sha256 is refused, nothing cached. */
	char mirror[600];
	snprintf(mirror, sizeof(mirror), "file://%s", dir);
	setenv("RATCHET_GSM8K_URL", mirror, 1);
	assert_int_equal(gsm8k_find("cot_exemplars", NULL, &s, &err) < 0, 1);
	assert_non_null(strstr(err.buf, "sha256"));
	rt_sb_reset(&err);
	/* The real file from the mirror is verified and cached atomically. */
	assert_int_equal(gsm8k_find("test", NULL, &s, &err), 0);
	assert_int_equal(s.n, 1319);
	gsm8k_set_release(&s);
	char *cached = xasprintf("%s/ratchet/gsm8k/test.jsonl", tmp);
	assert_true(rt_file_exists(cached));
	unsetenv("RATCHET_GSM8K_URL");
	assert_int_equal(gsm8k_find("test", NULL, &s, &err), 0); /* from the cache now */
	assert_string_equal(s.path, cached);
	gsm8k_set_release(&s);
	free(cached);
	rt_sb_release(&err);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const char *d = getenv("RATCHET_GSM8K_DIR");
	snprintf(dir, sizeof(dir), "%s", d ? d : "../shared/data/gsm8k");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_files),         /* sha256, counts, targets, train beside test */
		cmocka_unit_test(test_bad_lines),          /* file:line in errors */
		cmocka_unit_test(test_select),             /* offset/limit, seeded and stable */
		cmocka_unit_test(test_prompts),            /* lm-eval layouts and stops */
		cmocka_unit_test(test_missing_everywhere), /* where to put it; sha check; cache */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
