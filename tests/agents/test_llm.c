/*
 * Unit tests of strategy llm's parts in agents/ (agents/llm.c): the
 * answer's envelope (JSON, one variant object, a rationale, a ```json
 * fence allowed, nothing else), the allowed kinds and files (globs,
 * relative to the workdir), and the prompt: built only from its input,
 * holding the journal, the findings, the space, the allowed lists and the
 * exact schema; the re-ask carries the error. The variant inside the
 * answer is read by the spec's parser (tests/agents/llm_e2e.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"

/* agent_llm_answer on text: its return code, the error in err. */
static int read_answer(const char *text, struct rt_sb *err)
{
	json_t *v = NULL;
	char *why = NULL;
	rt_sb_reset(err);
	int rc = agent_llm_answer(text, &v, &why, err);
	assert_true(rc ? !v && !why : v && why);
	json_decref(v);
	free(why);
	return rc;
}

static void test_answer_envelope(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\", \"flag\": [\"--x\"]}, \"rationale\": \"r\"}", &err), 0);
	assert_int_equal(read_answer("```json\n{\"variant\": {\"name\": \"a\"}, \"rationale\": \"r\"}\n```\n", &err), 0);
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "not JSON"));
	assert_int_equal(read_answer("", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "empty"));
	assert_int_equal(read_answer("[1]", &err), RT_EPARSE);
	assert_int_equal(read_answer("{\"variants\": [], \"rationale\": \"r\"}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "name exactly one change"));
	assert_int_equal(read_answer("{\"variant\": [{\"name\": \"a\"}], \"rationale\": \"r\"}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "variant: expected one object"));
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"}}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "rationale"));
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"}, \"rationale\": \"r\", \"x\": 1}", &err),
			 RT_EPARSE);
	assert_non_null(strstr(err.buf, "unexpected key 'x'"));
	assert_int_equal(read_answer("{\"variant\": {}, \"variant\": {}, \"rationale\": \"r\"}", &err), RT_EPARSE);
	rt_sb_release(&err);
}

static void test_allowed(void **state)
{
	(void)state;
	char *k[] = { "table", "flag", NULL }, *f[] = { "tiles.json", "kern/*.csv", NULL };
	struct rt_strv kinds = { k, 2 }, files = { f, 2 };
	struct var_def v;
	memset(&v, 0, sizeof(v));
	struct rt_sb err = RT_SB_INIT;
	v.kind = VAR_KIND_TABLE;
	v.table.file = "/w/tiles.json";
	assert_int_equal(agent_llm_allowed(&v, &kinds, &files, "/w", &err), 0);
	v.table.file = "/w/kern/a.csv";
	assert_int_equal(agent_llm_allowed(&v, &kinds, &files, "/w", &err), 0);
	v.table.file = "/w/other.json";
	assert_int_equal(agent_llm_allowed(&v, &kinds, &files, "/w", &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "file 'other.json' is not allowed (allowed: tiles.json, kern/*.csv)"));
	rt_sb_reset(&err);
	v.kind = VAR_KIND_ENV;
	assert_int_equal(agent_llm_allowed(&v, &kinds, &files, "/w", &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "kind 'env' is not allowed"));
	v.kind = VAR_KIND_FLAG;
	assert_int_equal(agent_llm_allowed(&v, &kinds, &files, "/w", &err), 0);
	assert_string_equal(agent_llm_relpath("/w/a/b", "/w"), "a/b");
	assert_string_equal(agent_llm_relpath("/wx/a", "/w"), "/wx/a");
	rt_sb_release(&err);
}

/* The content of message i. */
static const char *content(json_t *m, size_t i)
{
	return json_string_value(json_object_get(json_array_get(m, i), "content"));
}

static void test_prompt(void **state)
{
	(void)state;
	struct agent_llm_step j[] = {
		{ 0, "baseline", "baseline", "baseline", NAN, "baseline: median 10", NULL },
		{ 1, "graphs-16", "flag", "reverted", 0.004, "no gain", "flag --max-graph-bs 16" },
	};
	const char *fnd[] = { "hole: tiles.json has no entry for prefill.T_LE_512; bound 26.0%" };
	char *k[] = { "table", NULL }, *f[] = { "tiles.json", NULL };
	struct rt_strv kinds = { k, 1 }, files = { f, 1 };
	json_t *space = json_pack("{s:[s]}", "parameters", "BLOCK_M");
	struct agent_llm_view v = { .objective = "serve.tput, higher is better", .journal = j, .n_journal = 2,
				    .findings = fnd, .n_findings = 1, .space = space, .kinds = &kinds, .files = &files };
	json_t *a = agent_llm_messages(&v), *b = agent_llm_messages(&v);
	assert_true(json_equal(a, b)); /* the same input asks the same question */
	assert_int_equal(json_array_size(a), 2);
	assert_non_null(strstr(content(a, 0), "\"required\":[\"variant\",\"rationale\"]"));
	assert_non_null(strstr(content(a, 0), "\"additionalProperties\":false"));
	const char *u = content(a, 1);
	assert_non_null(strstr(u, "1. graphs-16 (flag): reverted, effect +0.40%; reason: no gain; change: flag"));
	assert_non_null(strstr(u, "1. hole: tiles.json has no entry for prefill.T_LE_512"));
	assert_non_null(strstr(u, "Kinds you may propose: table\n"));
	assert_non_null(strstr(u, "Files you may touch (globs): tiles.json\n"));
	assert_non_null(strstr(u, "BLOCK_M"));
	agent_llm_reask(a, "{bad", "the answer is not JSON");
	assert_int_equal(json_array_size(a), 4);
	assert_string_equal(content(a, 2), "{bad");
	assert_non_null(strstr(content(a, 3), "refused: the answer is not JSON"));
	json_decref(a);
	json_decref(b);
	json_decref(space);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_envelope),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_prompt),
	};
	return cmocka_run_group_tests_name("llm", tests, NULL, NULL);
}
