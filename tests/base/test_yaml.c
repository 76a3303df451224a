/*
 * Unit tests of runner/base/rt_yaml.c, the one YAML<->JSON converter: the
 * scalar-typing rule (YAML 1.2 core schema, decimal), the cautious writer
 * (every string that some reader could type reads back a string), errors
 * with their node, and the scalars on which the spec loader's converter and
 * the table variant's converter used to disagree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt_yaml.h"

/* Line of the last failed conversion's node (err->at dies with the document). */
static int err_line;

/* Parse text and convert its root; NULL with *err filled on failure. */
static json_t *load(const char *text, struct rt_yaml_err *err)
{
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	assert_true(yaml_parser_load(&p, &doc));
	json_t *j = rt_yaml_to_json(&doc, yaml_document_get_root_node(&doc), err);
	err_line = !j && err->at ? (int)err->at->start_mark.line + 1 : 0;
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return j;
}

static void test_typing(void **state)
{
	(void)state;
	struct rt_yaml_err err;
	json_t *j = load("i: 64\nneg: -3\nbig: 99999999999999999999\nr: 1.50\ne: 1e-6\nt: true\n"
			 "T: True\nf: FALSE\nn: null\ntilde: ~\nempty:\nq: \"64\"\nsq: 'true'\n"
			 "yes: yes\non: on\nhex: 0x10\noct: 0o17\ninf: .inf\nnan: .nan\n"
			 "date: 2024-01-02\nword: abc\nlit: |\n  12\n",
			 &err);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "i")), 64);
	assert_int_equal(json_integer_value(json_object_get(j, "neg")), -3);
	assert_true(json_is_real(json_object_get(j, "big"))); /* does not fit in 64 bits */
	assert_true(json_real_value(json_object_get(j, "r")) == 1.5);
	assert_true(json_real_value(json_object_get(j, "e")) == 1e-6);
	assert_true(json_is_true(json_object_get(j, "t")));
	assert_true(json_is_true(json_object_get(j, "T")));
	assert_true(json_is_false(json_object_get(j, "f")));
	assert_true(json_is_null(json_object_get(j, "n")));
	assert_true(json_is_null(json_object_get(j, "tilde")));
	assert_true(json_is_null(json_object_get(j, "empty")));
	/* quoted and block scalars, and what the core schema leaves alone, are strings */
	static const char *const strings[][2] = {
		{ "q", "64" },	    { "sq", "true" },	{ "yes", "yes" },   { "on", "on" },
		{ "hex", "0x10" },  { "oct", "0o17" },	{ "inf", ".inf" },  { "nan", ".nan" },
		{ "date", "2024-01-02" }, { "word", "abc" }, { "lit", "12\n" },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(strings); i++) {
		json_t *v = json_object_get(j, strings[i][0]);
		if (!json_is_string(v) || strcmp(json_string_value(v), strings[i][1]))
			fail_msg("%s: want the string '%s'", strings[i][0], strings[i][1]);
	}
	json_decref(j);
}

/*
 * The table variant's converter made every scalar a string and the spec's
 * typed them, so an entry read from a YAML table never equalled the same
 * entry written in the spec: {N: 64} was {"N": "64"} on one side and
 * {"N": 64} on the other, 1.50 stayed "1.50" against 1.5, and ~ stayed "~"
 * against null. One converter now reads both.
 */
static void test_used_to_disagree(void **state)
{
	(void)state;
	struct rt_yaml_err err;
	json_t *table = load("{N: 64, R: 1.50, X: ~, on: true, s: \"8\"}", &err);
	json_t *spec = json_pack("{s:i,s:f,s:n,s:b,s:s}", "N", 64, "R", 1.5, "X", "on", 1, "s", "8");
	assert_non_null(table);
	assert_true(json_equal(table, spec));
	json_decref(table);
	json_decref(spec);
}

/* JSON -> YAML text -> JSON gives the same value, tricky strings included. */
static void test_round_trip(void **state)
{
	(void)state;
	json_t *v = json_pack("{s:[s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s],s:{s:i,s:f,s:f,s:b,s:n},s:[],s:{},"
			      "s:[i,i,i],s:s}",
			      "strings", "", "null", "NULL", "~", "true", "yes", "No", "on", "y", "n",
			      "64", "-1", "1.5", ".5", "0x1F", "2024-01-02", "a: b", "{port}",
			      "nums", "i", 3, "r", 0.1, "w", 2.0, "b", 0, "z",
			      "empty_list", "empty_map", "short", 1, 2, 4,
			      "multi", "line one\nline two\n\ttab and \"quotes\" and é");
	json_t *deep = json_object();
	json_object_set_new(deep, "key with spaces", json_string("value: with colon"));
	json_object_set_new(deep, "123", json_string("numeric key"));
	json_object_set_new(deep, "true", json_string("boolean key"));
	json_object_set_new(v, "keys", deep);
	struct rt_sb out = RT_SB_INIT;
	assert_int_equal(rt_yaml_from_json(v, &out, NULL), 0);
	struct rt_yaml_err err;
	json_t *back = load(out.buf, &err);
	if (!back || !json_equal(v, back)) {
		char *a = json_dumps(v, JSON_ENCODE_ANY), *b = back ? json_dumps(back, 0) : NULL;
		fail_msg("round trip differs:\n%s\n%s\n%s", out.buf, a, b ? b : "(null)");
	}
	/* reals keep a point; short scalar lists are flow style */
	assert_non_null(strstr(out.buf, "w: 2.0\n"));
	assert_non_null(strstr(out.buf, "short: [1, 2, 4]\n"));
	assert_non_null(strstr(out.buf, "\"yes\""));
	json_decref(back);
	json_decref(v);
	rt_sb_release(&out);
}

static void test_errors(void **state)
{
	(void)state;
	struct rt_yaml_err err;
	assert_null(load("a: 1\nb: 2\na: 3\n", &err));
	assert_string_equal(err.msg, "duplicate key 'a' (first at 1:1)");
	assert_int_equal(err_line, 3);
	assert_null(load("? [1, 2]\n: x\n", &err));
	assert_string_equal(err.msg, "keys must be strings");
	/* an alias cycle ends at the depth limit */
	assert_null(load("&a [*a]\n", &err));
	assert_string_equal(err.msg, "nested too deep");
	char buf[32];
	rt_yaml_real_text(0.1, buf, sizeof(buf));
	assert_string_equal(buf, "0.1");
	rt_yaml_real_text(300, buf, sizeof(buf));
	assert_string_equal(buf, "300");
	rt_yaml_real_text(1e-6, buf, sizeof(buf));
	assert_true(strtod(buf, NULL) == 1e-6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typing),
		cmocka_unit_test(test_used_to_disagree),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_typing            null, booleans, integers, reals; quoted, block and 1.1-only scalars stay strings
 *   test_used_to_disagree  a table entry and the same entry in a spec convert to equal JSON
 *   test_round_trip        JSON -> YAML -> JSON is the identity, strings that look typed included
 *   test_errors            duplicate and non-string keys, alias cycles; shortest real text
 */
