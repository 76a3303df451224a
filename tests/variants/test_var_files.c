/*
 * Tests of which files a change touches and how they come back (issue 17):
 * every path of a patch is planned (both names of a rename, copies,
 * deletions, mode changes, binary files), a patch folder inside a larger
 * git work tree, symbolic links (tables write through them, patches refuse
 * them), and two input bugs found by the adversarial pass: a typo in a
 * table variant's keys and an unterminated CSV quote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/spec/spec.h"
#include "tests/variants/var_test.h"

static void assert_file(const char *rel, const char *want, size_t want_len)
{
	size_t n;
	char *now = get_bytes(rel, &n);
	assert_non_null(now);
	assert_int_equal(n, want_len);
	assert_memory_equal(now, want, n);
	free(now);
}

/* Run argv in tmpdir/cwd; its output, which the caller frees. */
static char *run_in(const char *cwd, char **argv)
{
	char *dir = at_tmp(cwd);
	struct rt_sb out = RT_SB_INIT;
	int st = -1;
	assert_int_equal(run_bcmd_exec_simple(argv, dir, 30, &out, &st, NULL), 0);
	if (st)
		print_error("%s: %s\n", argv[0], out.buf);
	assert_int_equal(st, 0);
	free(dir);
	return rt_sb_detach(&out, NULL);
}

static void sh(const char *cwd, const char *script)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	free(run_in(cwd, argv));
}

static struct var_ctx ctx_here(void)
{
	return (struct var_ctx){ .workdir = tmpdir, .exec = run_bcmd_exec_simple, .build_timeout_s = 30 };
}

static bool plan_has(const struct var_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->files[i].rel, rel))
			return true;
	return false;
}

static int plan_apply(const struct var_def *v, struct var_ctx *ctx, struct var_plan *p,
		      struct rt_sb *err)
{
	const struct var_ops *ops = var_ops_for(v->kind);
	int rc = ops->plan(v, ctx, p, err);
	if (!rc)
		rc = ops->apply(v, ctx, p, NULL, err);
	if (rc)
		print_error("%s\n", err->buf);
	return rc;
}

#define GIT_COMMIT "git -c user.name=t -c user.email=t@t commit -qm"

static const char bin_before[] = { 0, 1, 2, 3, (char)0xff };
static const char bin_after[] = { 0, 9, 8, (char)0xfe };

/* Issue 17.1: git 2.39's `--numstat -z` names only the new path of a
 * rename, so the old file was never planned and a revert lost it. */
static void test_patch_every_path(void **state)
{
	char *mk[] = { "mkdir", "-p", "src", NULL };
	free(run_in("", mk));
	put_file("src/old.c", "int old = 1;\n");
	put_file("src/gone.c", "int gone = 1;\n");
	put_file("src/base.c", "int base = 1;\nint more = 2;\nint most = 3;\n");
	put_file("src/run.sh", "echo run\n");
	put_bytes("src/bin.dat", bin_before, sizeof(bin_before));
	sh("src", "git init -q . && git add . && " GIT_COMMIT " init");
	put_bytes("src/bin.dat", bin_after, sizeof(bin_after));
	sh("src", "git mv old.c new.c && git rm -q gone.c && chmod +x run.sh && cp base.c copy.c && "
		  "git add -A && git diff --cached -M -C --find-copies-harder --binary > ../all.diff && "
		  "git reset -q --hard");
	struct var_def v = { .name = "all", .kind = VAR_KIND_PATCH, .patch = { "all.diff", "src" } };
	struct var_ctx ctx = ctx_here();
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(plan_apply(&v, &ctx, &p, &err), 0);
	const char *want[] = { "new.c", "old.c", "gone.c", "run.sh", "bin.dat", "copy.c" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(want); i++) {
		if (!plan_has(&p, want[i]))
			print_error("not planned: %s\n", want[i]);
		assert_true(plan_has(&p, want[i]));
	}
	assert_null(get_file("src/old.c")); /* the patch ran */
	assert_file("src/bin.dat", bin_after, sizeof(bin_after));
	do_revert(&v, &ctx, &p);
	assert_file("src/old.c", "int old = 1;\n", 13);
	assert_file("src/gone.c", "int gone = 1;\n", 14);
	assert_file("src/bin.dat", bin_before, sizeof(bin_before));
	assert_null(get_file("src/new.c"));
	assert_null(get_file("src/copy.c"));
	char *status[] = { "git", "status", "--porcelain", "--untracked-files=all", NULL };
	char *st = run_in("src", status);
	assert_string_equal(st, " M run.sh\n"); /* a mode is not bytes: see docs/variants.md */
	free(st);
	rt_sb_release(&err);
}

/* Issue 17.2: git names paths from the top of the work tree ("sub/k.c"), and
 * ratchet joined them to the patch folder ("sub/sub/k.c"). */
static void test_patch_subfolder(void **state)
{
	char *mk[] = { "mkdir", "-p", "repo/sub", NULL };
	free(run_in("", mk));
	put_file("repo/sub/k.c", "int x = 1;\n");
	put_file("repo/top.c", "int top = 1;\n");
	sh("repo", "git init -q . && git add . && " GIT_COMMIT " init && echo 'int x = 2;' > sub/k.c && "
		   "git diff > ../k.diff && git checkout -q .");
	struct var_def v = { .name = "k", .kind = VAR_KIND_PATCH, .patch = { "k.diff", "repo/sub" } };
	struct var_ctx ctx = ctx_here();
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(plan_apply(&v, &ctx, &p, &err), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.files[0].rel, "k.c");
	char *want = at_tmp("repo/sub/k.c");
	assert_string_equal(p.files[0].path, want);
	free(want);
	assert_true(p.files[0].existed);
	assert_file("repo/sub/k.c", "int x = 2;\n", 11);
	do_revert(&v, &ctx, &p);
	assert_file("repo/sub/k.c", "int x = 1;\n", 11);
	assert_null(get_file("repo/sub/sub/k.c"));

	/* a plain diff names k.c: git reads it from the folder, and names it sub/k.c */
	sh("repo/sub", "echo 'int x = 3;' > k.new; diff -u k.c k.new | "
		       "sed -e '1s|.*|--- a/k.c|' -e '2s|.*|+++ b/k.c|' > ../../plain.diff; rm k.new");
	v.patch.file = "plain.diff";
	assert_int_equal(plan_apply(&v, &ctx, &p, &err), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.files[0].rel, "k.c");
	assert_file("repo/sub/k.c", "int x = 3;\n", 11);
	do_revert(&v, &ctx, &p);
	assert_file("repo/sub/k.c", "int x = 1;\n", 11);
	rt_sb_release(&err);
}

/* Issue 17.8: a table that is a symbolic link was replaced by a regular
 * file. The edit now goes through the link to its target. */
static void test_table_symlink(void **state)
{
	char *mk[] = { "mkdir", "-p", "real", NULL };
	free(run_in("", mk));
	static const char before[] = "{\"k\": {\"BLOCK_M\": 64}}\n";
	put_file("real/t.json", before);
	char *target = at_tmp("real/t.json"), *link = at_tmp("t.json");
	assert_int_equal(symlink(target, link), 0);
	struct var_def v = { .name = "tile", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "t.json", .op = VAR_TBL_SET, .key = "k",
					   .value = json_pack("{s:i}", "BLOCK_M", 128) };
	struct var_ctx ctx = ctx_here();
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(plan_apply(&v, &ctx, &p, &err), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* still a link */
	assert_string_equal(p.files[0].path, target); /* the target is planned */
	assert_file("real/t.json", "{\"k\": {\"BLOCK_M\": 128}}\n", 24);
	do_revert(&v, &ctx, &p);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_file("real/t.json", before, strlen(before));

	/* a link whose target is missing is refused, naming the table */
	unlink(target);
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "t.json: a symbolic link whose target is missing"));
	json_decref(v.table.value);
	free(target);
	free(link);
	rt_sb_release(&err);
}

/* A patch over a symbolic link is refused: restoring bytes would replace
 * the link with a regular file. */
static void test_patch_symlink_refused(void **state)
{
	char *mk[] = { "mkdir", "-p", "src", NULL };
	free(run_in("", mk));
	sh("src", "echo a > a.txt && echo b > b.txt && ln -s a.txt l && git init -q . && git add . && "
		  GIT_COMMIT " init && rm l && ln -s b.txt l && git diff > ../l.diff && git checkout -q .");
	struct var_def v = { .name = "l", .kind = VAR_KIND_PATCH, .patch = { "l.diff", "src" } };
	struct var_ctx ctx = ctx_here();
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_patch_ops.plan(&v, &ctx, &p, &err), RT_EINVAL);
	assert_string_equal(err.buf, "l: a symbolic link; a change that replaces links is not supported");
	assert_int_equal(p.n, 0);
	rt_sb_release(&err);
}

/* Issue 17.6: tbl_ops[] had no NULL terminator but was read as a list of
 * keys until NULL; a typo made the did-you-mean read past it (ASan). */
static void test_spec_table_typo(void **state)
{
	static const char spec[] =
		"name: typo\n"
		"benchmarks:\n"
		"  - name: app\n"
		"    command: [sh, -c, \"echo '{\\\"x\\\": 1}'\"]\n"
		"    metrics: {x: {pointer: /x, better: higher}}\n"
		"objective: {metric: app.x, goal: max}\n"
		"variants:\n"
		"  - name: t\n"
		"    table: {file: t.json, sett: {k: {a: 1}}}\n";
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_not_equal(spec_load_text("typo.yaml", spec, strlen(spec), &s, &err), 0);
	if (!strstr(err.buf, "unknown key 'sett' (did you mean 'set'?)"))
		print_error("%s\n", err.buf);
	assert_non_null(strstr(err.buf, "unknown key 'sett' (did you mean 'set'?)"));
	spec_free(s);
	rt_sb_release(&err);
}

/* Issue 17.15: the rows parsed before an unterminated quote leaked; on
 * error the result is now empty. */
static void test_csv_unterminated(void **state)
{
	static const char text[] = "M,N\n1,2\n3,4\n5,\"never closed\n";
	struct var_csv c;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_csv_parse("t.csv", text, strlen(text), &c, &err), RT_EPARSE);
	assert_string_equal(err.buf, "t.csv:4: unterminated quoted field");
	assert_int_equal(c.n, 0);
	assert_null(c.rows);
	var_csv_release(&c);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_patch_every_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_subfolder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_symlink_refused, setup, teardown),
		cmocka_unit_test(test_spec_table_typo),
		cmocka_unit_test(test_csv_unterminated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_patch_every_path       rename (both names), copy, deletion, mode change, binary: planned, reverted
 *   test_patch_subfolder        dir below the top of a work tree: paths from dir, revert puts k.c back
 *   test_table_symlink          a table behind a link: the target is written and restored, the link stays
 *   test_patch_symlink_refused  a patch over a link is refused with a message
 *   test_spec_table_typo        `sett:` in a table variant: did-you-mean without reading past tbl_ops
 *   test_csv_unterminated       an unterminated quote: error, nothing left to release (no leak)
 */
