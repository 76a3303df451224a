/*
 * Fuzz harness: the restriction language of search spaces (agents/expr.c).
 * The input is one line of up to three JSON values for the parameters a, b
 * and c (a number, a string or a boolean each; missing ones are 0), then
 * the expression's text:
 *
 *     [6, "fast", true]
 *     a * 2 <= 16 && b == 'fast'
 *
 * The promises: compile returns a tree, or NULL with one message; a tree
 * evaluates the same twice; text that compiles has the same value in
 * parentheses; text that does not may compile in parentheses only when it
 * closes a parenthesis it never opened ("a)%(9" becomes "(a)%(9)"); a name
 * the tree uses appears in the text; and depth never overflows the stack:
 * the text inside 300 more parentheses is refused, with the depth named.
 */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <string.h>

#include "agents/space.h"
#include "runner/base/rt.h"

static const char *const names[] = { "a", "b", "c" };

/* Whether text closes a parenthesis it did not open, outside its quoted
 * strings (a quote runs to the next of the same kind, as the lexer reads). */
static int closes_unopened(const char *text)
{
	int depth = 0;
	for (const char *c = text; *c; c++) {
		if (*c == '\'' || *c == '"') {
			const char *end = strchr(c + 1, *c);
			if (!end)
				return 0;
			c = end;
		} else if (*c == '(') {
			depth++;
		} else if (*c == ')' && --depth < 0) {
			return 1;
		}
	}
	return 0;
}

/* Compile text and evaluate it on vals: 1 true, 0 false, -1 refused. */
static int value(const char *text, json_t *const *vals)
{
	struct rt_sb err = RT_SB_INIT;
	struct agent_expr *e = agent_expr_compile(text, names, 3, &err);
	FUZZ_CHECK(e || err.len, "refused without a message: %s", text);
	FUZZ_CHECK(!e || !err.len, "compiled with a message: %s", err.buf);
	int r = -1;
	if (e) {
		r = agent_expr_true(e, vals);
		FUZZ_CHECK(r == agent_expr_true(e, vals), "two evaluations differ");
		for (size_t i = 0; i < 3; i++)
			FUZZ_CHECK(!agent_expr_uses(e, i) || strstr(text, names[i]),
				   "uses '%s', which the text does not name", names[i]);
	}
	agent_expr_free(e);
	rt_sb_release(&err);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[2];
	fuzz_split(data, size, "\n", part, 2);
	char *line = fuzz_str(part[0]), *text = fuzz_str(part[1]);
	json_t *arr = json_loads(line, JSON_DECODE_ANY, NULL);
	json_t *vals[3];
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_array_get(arr, i);
		vals[i] = json_is_number(v) || json_is_string(v) || json_is_boolean(v) ? json_incref(v)
											  : json_integer(0);
	}
	/* The text stops at its first NUL, as a spec's string would. */
	int bare = value(text, vals);
	char *wrapped = xasprintf("(%s)", text);
	int w = value(wrapped, vals);
	FUZZ_CHECK(bare < 0 ? w < 0 || closes_unopened(text) : w == bare,
		   "'%s' is %d, in parentheses %d", text, bare, w);
	struct rt_sb deep = RT_SB_INIT;
	for (int i = 0; i < 300; i++)
		rt_sb_addc(&deep, '(');
	rt_sb_adds(&deep, text);
	for (int i = 0; i < 300; i++)
		rt_sb_addc(&deep, ')');
	struct rt_sb err = RT_SB_INIT;
	struct agent_expr *e = agent_expr_compile(deep.buf, names, 3, &err);
	FUZZ_CHECK(!e && err.len, "300 parentheses deep was not refused");
	rt_sb_release(&err);
	rt_sb_release(&deep);
	free(wrapped);
	for (size_t i = 0; i < 3; i++)
		json_decref(vals[i]);
	json_decref(arr);
	free(line);
	free(text);
	return 0;
}
