/*
 * Table edits keep every byte they do not change (issue 17.16): a set,
 * replace, add or delete on a JSON or YAML table rewrites only the entry
 * (for a set, only the fields) it changes. Before, the whole document was
 * re-serialized: JSON 0.1 became 0.10000000000000001, compact entries were
 * re-indented, an integer beyond 64 bits made the table unusable, YAML
 * lost its comments and read `!!str 123` back as an integer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/variants/var_test.h"

/* The bytes a table edit plans for file (holding text): op on key with
 * value (JSON text, NULL for delete). The caller frees them. */
static char *edit(const char *file, const char *text, enum var_table_op op, const char *key,
		  const char *value)
{
	char *path = xasprintf("%s/%s", tmpdir, file);
	assert_int_equal(rt_write_file_atomic(path, text, strlen(text), 0644, NULL), 0);
	struct var_def v = { .name = "t", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = (char *)file, .op = op, .key = (char *)key };
	if (value)
		assert_non_null(v.table.value = json_loads(value, JSON_DECODE_ANY, NULL));
	struct var_ctx ctx = { .workdir = tmpdir };
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	int rc = var_table_ops.plan(&v, &ctx, &p, &err);
	if (rc)
		print_error("plan: %s\n", err.buf);
	assert_int_equal(rc, 0);
	char *after = xstrndup(p.files[0].after, p.files[0].after_len);
	var_plan_release(&p);
	json_decref(v.table.value);
	rt_sb_release(&err);
	free(path);
	return after;
}

static void expect(char *got, const char *want)
{
	if (strcmp(got, want))
		print_error("got:\n%s\nwant:\n%s\n", got, want);
	assert_string_equal(got, want);
	free(got);
}

/* got must be doc with its first `from` replaced by `to`: every other byte kept. */
static void expect_splice(char *got, const char *doc, const char *from, const char *to)
{
	const char *p = strstr(doc, from);
	assert_non_null(p);
	char *want = xasprintf("%.*s%s%s", (int)(p - doc), doc, to, p + strlen(from));
	expect(got, want);
	free(want);
}

static const char tiles_json[] =
	"{\n"
	"    \"a\": {\n"
	"        \"BLOCK_M\": 64,\n"
	"        \"ratio\": 0.1\n"
	"    },\n"
	"    \"compact\": {\"BLOCK_M\": 16,\"BLOCK_N\": 16},\n"
	"    \"big\": {\"seed\": 18446744073709551616}\n"
	"}\n";

static void test_json_keeps_bytes(void **state)
{
	const char *t = tiles_json;
	/* one field of a pretty entry: 0.1, the compact entry and the big
	 * integer are copied */
	expect_splice(edit("t.json", t, VAR_TBL_SET, "a", "{\"BLOCK_M\": 128}"), t, "64", "128");
	/* a compact entry stays compact; a new field follows the last one */
	expect_splice(edit("t.json", t, VAR_TBL_SET, "compact", "{\"BLOCK_N\": 32, \"r\": 0.3}"), t,
		      "\"BLOCK_N\": 16}", "\"BLOCK_N\": 32,\"r\": 0.3}");
	expect_splice(edit("t.json", t, VAR_TBL_SET, "a", "{\"tiles\": [1, 2]}"), t, "0.1\n",
		      "0.1,\n        \"tiles\": [1, 2]\n");
	/* a set on the entry holding the big integer: the integer is kept */
	expect_splice(edit("t.json", t, VAR_TBL_SET, "big", "{\"n\": 1}"), t, "551616}",
		      "551616, \"n\": 1}");
	/* replace: a pretty entry stays pretty, in the file's indent */
	expect_splice(edit("t.json", t, VAR_TBL_REPLACE, "a", "{\"BLOCK_K\": 4, \"r\": 0.1}"), t,
		      "\"BLOCK_M\": 64,\n        \"ratio\"", "\"BLOCK_K\": 4,\n        \"r\"");
	/* a new entry is laid out like the last one */
	expect_splice(edit("t.json", t, VAR_TBL_SET, "new", "{\"BLOCK_M\": 8}"), t, "551616}",
		      "551616},\n    \"new\": {\"BLOCK_M\": 8}");
	/* delete: the entry and its separator */
	expect_splice(edit("t.json", t, VAR_TBL_DELETE, "compact", NULL), t,
		      "    \"compact\": {\"BLOCK_M\": 16,\"BLOCK_N\": 16},\n", "");
	expect_splice(edit("t.json", t, VAR_TBL_DELETE, "big", NULL), t,
		      ",\n    \"big\": {\"seed\": 18446744073709551616}", "");
	/* one line, no spaces; empty objects; CRLF */
	expect(edit("t.json", "{\"a\":{\"x\":1},\"b\":2}", VAR_TBL_SET, "b", "3.5"),
	       "{\"a\":{\"x\":1},\"b\":3.5}");
	expect(edit("t.json", "{}\n", VAR_TBL_SET, "k", "{\"x\": 0.1}"), "{\"k\": {\"x\": 0.1}}\n");
	expect(edit("t.json", "{\"k\": 1}\n", VAR_TBL_DELETE, "k", NULL), "{}\n");
	expect(edit("t.json", "{\"a\":{}}", VAR_TBL_SET, "a", "{\"x\": 2}"), "{\"a\":{\"x\":2}}");
	expect(edit("t.json", "{\r\n  \"a\": 1\r\n}\r\n", VAR_TBL_SET, "b", "{\"x\": 2}"),
	       "{\r\n  \"a\": 1,\r\n  \"b\": {\"x\": 2}\r\n}\r\n");
}

static void test_json_duplicate_key(void **state)
{
	char *path = xasprintf("%s/d.json", tmpdir);
	static const char text[] = "{\"k\": 1, \"k\": 2}\n";
	assert_int_equal(rt_write_file_atomic(path, text, strlen(text), 0644, NULL), 0);
	struct var_def v = { .name = "t", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "d.json", .op = VAR_TBL_DELETE, .key = "k" };
	struct var_ctx ctx = { .workdir = tmpdir };
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_EPARSE);
	assert_string_equal(err.buf, "d.json: key \"k\" appears 2 times");
	rt_sb_release(&err);
	free(path);
}

static const char tiles_yaml[] =
	"# tuned on MI300\n"
	"note: \"h\xc3\xa9llo\"\n"
	"a:\n"
	"  BLOCK_M: 64   # best so far\n"
	"  ratio: 0.10\n"
	"  name: !!str 123\n"
	"compact: {BLOCK_M: 16, BLOCK_N: 16}\n"
	"list:\n"
	"- 1\n"
	"- 2\n"
	"b:\n"
	"  BLOCK_M: 16\n";

static void test_yaml_keeps_bytes(void **state)
{
	const char *t = tiles_yaml;
	/* one field: the comments, 0.10, the tag and the other entries stay */
	expect_splice(edit("t.yaml", t, VAR_TBL_SET, "a", "{\"BLOCK_M\": 128, \"ratio\": 0.1}"), t,
		      "64   #", "128   #");
	/* a new field on its own line; a string that reads like a number is quoted */
	expect_splice(edit("t.yaml", t, VAR_TBL_SET, "a", "{\"mode\": \"1\", \"tiles\": {\"x\": 2}}"), t,
		      "123\n", "123\n  mode: \"1\"\n  tiles:\n    x: 2\n");
	/* a flow entry stays a flow entry */
	expect_splice(edit("t.yaml", t, VAR_TBL_SET, "compact", "{\"BLOCK_N\": 32, \"NEW\": 1}"), t,
		      "BLOCK_N: 16}", "BLOCK_N: 32, NEW: 1}");
	/* replace a block sequence by a scalar, and a block mapping by a new one */
	expect_splice(edit("t.yaml", t, VAR_TBL_REPLACE, "list", "5"), t, "list:\n- 1\n- 2\n",
		      "list: 5\n");
	expect_splice(edit("t.yaml", t, VAR_TBL_REPLACE, "b", "{\"BLOCK_K\": 4, \"tiles\": [1, 2]}"), t,
		      "b:\n  BLOCK_M: 16\n", "b:\n  BLOCK_K: 4\n  tiles: [1, 2]\n");
	/* a new entry at the end, a deleted one takes only its own lines */
	expect_splice(edit("t.yaml", t, VAR_TBL_SET, "c", "{\"BLOCK_M\": 8}"), t, "b:\n  BLOCK_M: 16\n",
		      "b:\n  BLOCK_M: 16\nc:\n  BLOCK_M: 8\n");
	expect_splice(edit("t.yaml", t, VAR_TBL_DELETE, "a", NULL), t,
		      "a:\n  BLOCK_M: 64   # best so far\n  ratio: 0.10\n  name: !!str 123\n", "");
	/* no final line break, a flow root, a null value */
	expect(edit("t.yaml", "a: 1", VAR_TBL_SET, "b", "2"), "a: 1\nb: 2\n");
	expect(edit("t.yaml", "{a: 1, b: 2}\n", VAR_TBL_DELETE, "a", NULL), "{b: 2}\n");
	expect(edit("t.yaml", "{a: 1}\n", VAR_TBL_SET, "c", "{\"x\": 1}"), "{a: 1, c: {x: 1}}\n");
	expect(edit("t.yaml", "a:\nb: 1\n", VAR_TBL_SET, "a", "true"), "a: true\nb: 1\n");
	/* new lines end like the file's */
	expect(edit("t.yaml", "a:\r\n  x: 1\r\nb: 2\r\n", VAR_TBL_SET, "a", "{\"q\": 0.5}"),
	       "a:\r\n  x: 1\r\n  q: 0.5\r\nb: 2\r\n");
	/* an entry read through an alias elsewhere is not edited in place */
	char *path = xasprintf("%s/alias.yaml", tmpdir);
	static const char alias[] = "base: &b {x: 1}\na: *b\n";
	assert_int_equal(rt_write_file_atomic(path, alias, strlen(alias), 0644, NULL), 0);
	struct var_def v = { .name = "t", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "alias.yaml", .op = VAR_TBL_SET, .key = "a",
					   .value = json_pack("{s:i}", "x", 2) };
	struct var_ctx ctx = { .workdir = tmpdir };
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_EINVAL);
	assert_string_equal(err.buf, "alias.yaml: entry \"a\" is also read through a YAML alias; edit it by hand");
	json_decref(v.table.value);
	rt_sb_release(&err);
	free(path);
}

/* libyaml writes a key longer than 128 characters as a complex key ("? 'key'"
 * then ": value"): a block holding one keeps the "?"'s column when it is
 * written again, and a field added after it lines up with the "?" (before,
 * both took the key's own column, two to the right). */
static void test_yaml_complex_key(void **state)
{
	(void)state;
	char longkey[140];
	memset(longkey, 'k', 130);
	longkey[130] = 0;
	char *value = xasprintf("{\"%s\": [1, 2], \"b\": null}", longkey);
	char *once = edit("c.yaml", "k:\n - a: 1\nj: 2\n", VAR_TBL_REPLACE, "k", value);
	/* the block goes where the sequence was (column 1), "?" first */
	char *want = xasprintf("k:\n ? %s\n : [1, 2]\n b: null\nj: 2\n", longkey);
	assert_string_equal(once, want);
	expect(edit("c.yaml", once, VAR_TBL_REPLACE, "k", value), once);
	char *added = xasprintf("%.*s c: 3\nj: 2\n", (int)(strlen(once) - strlen("j: 2\n")), once);
	expect(edit("c.yaml", once, VAR_TBL_SET, "k", "{\"c\": 3}"), added);
	free(added);
	free(want);
	free(once);
	free(value);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_keeps_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_duplicate_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yaml_keeps_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yaml_complex_key, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_json_keeps_bytes    0.1, compact entries and a 2^64 integer survive set/replace/add/delete
 *   test_json_duplicate_key  a key written twice is refused rather than half edited
 *   test_yaml_keeps_bytes    comments, tags, flow entries, UTF-8, CRLF and 0.10 survive every op;
 *                            an entry shared through an alias is refused
 */
