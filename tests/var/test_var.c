/*
 * Tests of variants/: every kind applied and reverted on real files in a
 * temp folder (byte-identical originals afterwards, no temp files left),
 * CSV quoting kept, YAML round trip, a patch against a real git repository
 * made here, a failing build (RT_EPROC with its log), fingerprints, and the
 * exact describe strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/var/var_test.h"

/* no "*.ratchet-tmp.*" left anywhere in the folder */
static void assert_no_temp_files(const char *sub)
{
	char *p = xasprintf("%s%s%s", tmpdir, sub ? "/" : "", sub ? sub : "");
	DIR *d = opendir(p);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		assert_null(strstr(e->d_name, "ratchet-tmp"));
	closedir(d);
	free(p);
}

static struct var_ctx ctx_for(struct var_config *cfg, char **base_argv)
{
	return (struct var_ctx){ .workdir = tmpdir, .cfg = cfg, .base_argv = base_argv,
				 .exec = run_bcmd_exec_simple, .build_timeout_s = 30 };
}

/* plan, describe, apply; returns the description */
static char *do_apply(const struct var_def *v, struct var_ctx *ctx, struct var_plan *p,
		      int expect)
{
	const struct var_ops *ops = var_ops_for(v->kind);
	struct rt_sb err = RT_SB_INIT, d = RT_SB_INIT, log = RT_SB_INIT;
	int rc = ops->plan(v, ctx, p, &err);
	if (rc) {
		print_error("plan: %s\n", err.buf);
		assert_int_equal(rc, expect);
		rt_sb_release(&err);
		return NULL;
	}
	assert_int_equal(ops->describe(v, ctx, p, &d, &err), 0);
	rc = ops->apply(v, ctx, p, &log, &err);
	if (rc != expect)
		print_error("apply: %s\n", err.buf);
	assert_int_equal(rc, expect);
	rt_sb_release(&err);
	rt_sb_release(&log);
	return rt_sb_detach(&d, NULL);
}

static const char attn_json[] =
	"{\n"
	"    \"D_GEQ_512.Q_GEQ_256\": {\n"
	"        \"BLOCK_M\": 64,\n"
	"        \"BLOCK_N\": 32\n"
	"    },\n"
	"    \"D_GEQ_128.Q_GEQ_64\": {\n"
	"        \"BLOCK_M\": 16,\n"
	"        \"BLOCK_N\": 16\n"
	"    }\n"
	"}\n";

static void test_table_json(void **state)
{
	put_file("attn.json", attn_json);
	struct var_def v = { .name = "tile", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "attn.json", .op = VAR_TBL_SET,
					   .key = "D_GEQ_512.Q_GEQ_256",
					   .value = json_pack("{s:i}", "BLOCK_M", 128) };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "attn.json: \"D_GEQ_512.Q_GEQ_256\": BLOCK_M 64 -> 128");
	free(d);
	char *now = get_file("attn.json");
	assert_string_equal(now, "{\n"
				 "    \"D_GEQ_512.Q_GEQ_256\": {\n"
				 "        \"BLOCK_M\": 128,\n"
				 "        \"BLOCK_N\": 32\n"
				 "    },\n"
				 "    \"D_GEQ_128.Q_GEQ_64\": {\n"
				 "        \"BLOCK_M\": 16,\n"
				 "        \"BLOCK_N\": 16\n"
				 "    }\n"
				 "}\n");
	free(now);
	assert_no_temp_files(NULL);
	do_revert(&v, &ctx, &p);
	now = get_file("attn.json");
	assert_string_equal(now, attn_json);
	free(now);
	assert_no_temp_files(NULL);

	/* add a new entry, then delete an existing one */
	json_decref(v.table.value);
	v.table.key = "D_GEQ_1024.Q_GEQ_256";
	v.table.value = json_pack("{s:i}", "BLOCK_M", 256);
	d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "attn.json: + \"D_GEQ_1024.Q_GEQ_256\" {\"BLOCK_M\":256}");
	free(d);
	do_revert(&v, &ctx, &p);
	json_decref(v.table.value);
	v.table.value = NULL;
	v.table.op = VAR_TBL_DELETE;
	v.table.key = "D_GEQ_128.Q_GEQ_64";
	d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "attn.json: - \"D_GEQ_128.Q_GEQ_64\"");
	free(d);
	now = get_file("attn.json");
	assert_null(strstr(now, "D_GEQ_128"));
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("attn.json");
	assert_string_equal(now, attn_json);
	free(now);
}

static void test_table_json_errors(void **state)
{
	put_file("attn.json", attn_json);
	put_file("bad.json", "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
	struct var_def v = { .name = "tile", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "attn.json", .op = VAR_TBL_DELETE, .key = "nope" };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_ENOENT);
	assert_string_equal(err.buf, "attn.json: table.key: key \"nope\" not found for delete");
	rt_sb_reset(&err);
	v.table.file = "bad.json";
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_EPARSE);
	assert_true(strncmp(err.buf, "bad.json:3:8: invalid JSON: ", 28) == 0);
	rt_sb_reset(&err);
	v.table.file = "missing.json";
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_ENOENT);
	assert_string_equal(err.buf, "missing.json: table.file: table file missing");
	rt_sb_release(&err);
	assert_int_equal(p.n, 0);
}

static const char tiles_csv[] =
	"M,N,K,tile,note\r\n"
	"1,2,3,64,\"a, b\"\r\n"
	"4,5,6,32,\"x \"\"y\"\"\"\r\n"
	"7,8,9,16,plain\r\n";

static void test_table_csv(void **state)
{
	put_file("tiles.csv", tiles_csv);
	char *cols[] = { "M", "N", "K", NULL };
	struct var_def v = { .name = "csv", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "tiles.csv", .op = VAR_TBL_SET, .key = "4,5,6",
					   .value = json_pack("{s:i}", "tile", 128),
					   .key_columns = { cols, 3 } };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "tiles.csv: \"4,5,6\": tile 32 -> 128");
	free(d);
	char *now = get_file("tiles.csv");
	assert_string_equal(now, "M,N,K,tile,note\r\n"
				 "1,2,3,64,\"a, b\"\r\n"
				 "4,5,6,128,\"x \"\"y\"\"\"\r\n"
				 "7,8,9,16,plain\r\n");
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("tiles.csv");
	assert_string_equal(now, tiles_csv);
	free(now);

	/* a cell that needs quoting gets it; a new key appends a row */
	json_decref(v.table.value);
	v.table.key = "10,11,12";
	v.table.value = json_pack("{s:i,s:s}", "tile", 8, "note", "c, d");
	d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "tiles.csv: + \"10,11,12\" {\"tile\":8,\"note\":\"c, d\"}");
	free(d);
	now = get_file("tiles.csv");
	assert_non_null(strstr(now, "7,8,9,16,plain\r\n10,11,12,8,\"c, d\"\r\n"));
	free(now);
	do_revert(&v, &ctx, &p);

	/* delete keeps every other byte */
	json_decref(v.table.value);
	v.table.value = NULL;
	v.table.op = VAR_TBL_DELETE;
	v.table.key = "1,2,3";
	d = do_apply(&v, &ctx, &p, 0);
	now = get_file("tiles.csv");
	assert_string_equal(now, "M,N,K,tile,note\r\n4,5,6,32,\"x \"\"y\"\"\"\r\n7,8,9,16,plain\r\n");
	free(now);
	free(d);
	do_revert(&v, &ctx, &p);
	now = get_file("tiles.csv");
	assert_string_equal(now, tiles_csv);
	free(now);

	/* key column not in header */
	char *bad[] = { "M", "N", "KK", NULL };
	v.table.key_columns = (struct rt_strv){ bad, 3 };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_table_ops.plan(&v, &ctx, &p, &err), RT_EINVAL);
	assert_string_equal(err.buf,
			    "tiles.csv: table.key_columns: column 'KK' not in header (did you mean 'K'?)");
	rt_sb_release(&err);
}

static const char tiles_yaml[] = "a:\n  BLOCK_M: 64\n  BLOCK_N: 32\nb:\n  BLOCK_M: 16\n";

static void test_table_yaml(void **state)
{
	put_file("tiles.yaml", tiles_yaml);
	struct var_def v = { .name = "yaml", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "tiles.yaml", .op = VAR_TBL_SET, .key = "a",
					   .value = json_pack("{s:i,s:s}", "BLOCK_M", 128, "mode", "1") };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "tiles.yaml: \"a\": BLOCK_M 64 -> 128, mode unset -> 1");
	free(d);
	char *now = get_file("tiles.yaml");
	/* the string "1" stays a string */
	assert_string_equal(now, "a:\n  BLOCK_M: 128\n  BLOCK_N: 32\n  mode: \"1\"\nb:\n  BLOCK_M: 16\n");
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("tiles.yaml");
	assert_string_equal(now, tiles_yaml);
	free(now);
	json_decref(v.table.value);
	/* replace, then delete */
	v.table.op = VAR_TBL_REPLACE;
	v.table.key = "b";
	v.table.value = json_pack("{s:i}", "BLOCK_K", 4);
	d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "tiles.yaml: \"b\": BLOCK_M 16 -> unset, BLOCK_K unset -> 4");
	free(d);
	now = get_file("tiles.yaml");
	assert_string_equal(now, "a:\n  BLOCK_M: 64\n  BLOCK_N: 32\nb:\n  BLOCK_K: 4\n");
	free(now);
	do_revert(&v, &ctx, &p);
	json_decref(v.table.value);
	v.table.value = NULL;
	v.table.op = VAR_TBL_DELETE;
	v.table.key = "a";
	free(do_apply(&v, &ctx, &p, 0));
	now = get_file("tiles.yaml");
	assert_string_equal(now, "b:\n  BLOCK_M: 16\n");
	free(now);
	do_revert(&v, &ctx, &p);
}

/* A YAML table's entry is read with the spec's typing rule (rt_yaml): the
 * table converter used to read every scalar as a string, so a set that
 * changes nothing was described as "R 1.50 -> 1.5, X ~ -> ". */
static void test_table_yaml_types(void **state)
{
	static const char typed_yaml[] = "a:\n  N: 64\n  R: 1.50\n  X: ~\n  S: \"64\"\n";
	put_file("typed.yaml", typed_yaml);
	struct var_def v = { .name = "yaml-types", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "typed.yaml", .op = VAR_TBL_SET, .key = "a",
					   .value = json_pack("{s:i,s:f,s:n}", "N", 64, "R", 1.5, "X") };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "typed.yaml: \"a\": no change");
	free(d);
	do_revert(&v, &ctx, &p);
	json_decref(v.table.value);
	/* the quoted "64" is a string: setting the number 64 is a change */
	v.table.value = json_pack("{s:i}", "S", 64);
	d = do_apply(&v, &ctx, &p, 0);
	char *now = get_file("typed.yaml");
	assert_string_equal(now, "a:\n  N: 64\n  R: 1.50\n  X: ~\n  S: 64\n");
	free(now);
	free(d);
	do_revert(&v, &ctx, &p);
	json_decref(v.table.value);
}

static void test_flag(void **state)
{
	char *base[] = { "simserve", "--port", "8000", "--max-graph-bs", "8", "--mode=fast", NULL };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx ctx = ctx_for(&cfg, base);
	char *g1[] = { "--max-graph-bs", "16", NULL };
	char *g2[] = { "--mode", "slow", "--enforce-eager", "--delta", "-1", NULL };
	struct var_def v1 = { .name = "bs16", .kind = VAR_KIND_FLAG, .flag = { g1, 2 } };
	struct var_def v2 = { .name = "mode", .kind = VAR_KIND_FLAG, .flag = { g2, 5 } };
	struct var_plan p1 = { 0 }, p2 = { 0 };
	char *d = do_apply(&v1, &ctx, &p1, 0);
	assert_string_equal(d, "--max-graph-bs 8 -> 16");
	free(d);
	d = do_apply(&v2, &ctx, &p2, 0);
	assert_string_equal(d, "--mode fast -> slow, + --enforce-eager, --delta unset -> -1");
	free(d);
	char **argv = var_config_argv(&cfg, base);
	const char *want[] = { "simserve", "--port", "8000", "--max-graph-bs", "16", "--mode=slow",
			       "--enforce-eager", "--delta", "-1", NULL };
	for (size_t i = 0; want[i] || argv[i]; i++) {
		assert_non_null(argv[i]);
		assert_string_equal(argv[i], want[i]);
	}
	rt_argv_free(argv);
	do_revert(&v1, &ctx, &p1);
	argv = var_config_argv(&cfg, base);
	assert_string_equal(argv[4], "8");
	assert_string_equal(argv[5], "--mode=slow");
	rt_argv_free(argv);
	do_revert(&v2, &ctx, &p2);
	assert_int_equal(cfg.n_flags, 0);
	var_config_release(&cfg);
}

/* No engine: the flags go to the first command benchmark (llama-bench), and
 * the description reads the value there (-t 2 -> 1, not unset -> 1). */
static void test_flag_no_engine(void **state)
{
	char *bench[] = { "llama-bench", "-m", "m.gguf", "-t", "2", NULL };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx ctx = ctx_for(&cfg, NULL);
	ctx.flag_argv = bench;
	char *g[] = { "-t", "1", NULL };
	struct var_def v = { .name = "t1", .kind = VAR_KIND_FLAG, .flag = { g, 2 } };
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "-t 2 -> 1");
	free(d);
	do_revert(&v, &ctx, &p);
	var_config_release(&cfg);
}

static void test_env(void **state)
{
	struct rt_env be[] = { { "VLLM_X", "1" } };
	struct rt_envv base = { be, 1 };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx ctx = ctx_for(&cfg, NULL);
	ctx.base_env = &base;
	unsetenv("SIMSERVE_CHUNKED_PREFILL");
	struct rt_env e1[] = { { "SIMSERVE_CHUNKED_PREFILL", "4096" } };
	struct rt_env e2[] = { { "VLLM_X", NULL } };
	struct var_def v1 = { .name = "chunk", .kind = VAR_KIND_ENV, .env = { e1, 1 } };
	struct var_def v2 = { .name = "nox", .kind = VAR_KIND_ENV, .env = { e2, 1 } };
	struct var_plan p = { 0 };
	char *d = do_apply(&v1, &ctx, &p, 0);
	assert_string_equal(d, "SIMSERVE_CHUNKED_PREFILL unset -> 4096");
	free(d);
	d = do_apply(&v2, &ctx, &p, 0);
	assert_string_equal(d, "VLLM_X 1 -> unset");
	free(d);
	struct rt_envv eff;
	var_config_env(&cfg, &base, &eff);
	assert_int_equal(eff.n, 2);
	assert_string_equal(eff.v[0].name, "SIMSERVE_CHUNKED_PREFILL");
	assert_string_equal(eff.v[0].value, "4096");
	assert_string_equal(eff.v[1].name, "VLLM_X");
	assert_null(eff.v[1].value);
	rt_envv_release(&eff);
	do_revert(&v1, &ctx, &p);
	do_revert(&v2, &ctx, &p);
	assert_int_equal(cfg.n_env, 0);
	var_config_release(&cfg);
}

static void run_ok(const char *cwd, char **argv)
{
	struct rt_sb out = RT_SB_INIT;
	int st = -1;
	assert_int_equal(run_bcmd_exec_simple(argv, cwd, 30, &out, &st, NULL), 0);
	if (st)
		print_error("%s: %s\n", argv[0], out.buf);
	assert_int_equal(st, 0);
	rt_sb_release(&out);
}

static void test_patch(void **state)
{
	char *src = xasprintf("%s/src", tmpdir);
	assert_int_equal(rt_mkdirs(src, NULL), 0);
	put_file("src/kernel.c", "int tile = 64;\nint other = 1;\n");
	char *init[] = { "git", "init", "-q", ".", NULL };
	run_ok(src, init);
	char *add[] = { "git", "add", "kernel.c", NULL };
	run_ok(src, add);
	char *commit[] = { "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base", NULL };
	run_ok(src, commit);
	put_file("src/kernel.c", "int tile = 128;\nint other = 1;\n");
	put_file("src/new.h", "#define NEW 1\n");
	char *addn[] = { "git", "add", "-N", "new.h", NULL };
	run_ok(src, addn);
	struct rt_sb diff = RT_SB_INIT;
	char *dargv[] = { "git", "diff", NULL };
	int st;
	assert_int_equal(run_bcmd_exec_simple(dargv, src, 30, &diff, &st, NULL), 0);
	put_file("tile.diff", diff.buf);
	rt_sb_release(&diff);
	char *rm[] = { "git", "rm", "-q", "--cached", "new.h", NULL };
	run_ok(src, rm);
	char *co[] = { "git", "checkout", "-q", "kernel.c", NULL };
	run_ok(src, co);
	char *newh = xasprintf("%s/src/new.h", tmpdir);
	unlink(newh);
	free(newh);

	char *build[] = { "sh", "-c", "echo building; cat kernel.c > build.log", NULL };
	struct var_def v = { .name = "tile", .kind = VAR_KIND_PATCH,
				  .patch = { "tile.diff", "src" }, .build = { build, 3 } };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "tile.diff:\n"
			       " kernel.c |    2 +-\n"
			       " new.h    |    1 +\n"
			       " 2 files changed, 2 insertions(+), 1 deletion(-)");
	free(d);
	assert_int_equal(p.n, 2);
	char *now = get_file("src/kernel.c");
	assert_string_equal(now, "int tile = 128;\nint other = 1;\n");
	free(now);
	now = get_file("src/build.log");
	assert_string_equal(now, "int tile = 128;\nint other = 1;\n");
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("src/kernel.c");
	assert_string_equal(now, "int tile = 64;\nint other = 1;\n");
	free(now);
	assert_null(get_file("src/new.h"));
	now = get_file("src/build.log"); /* the build ran again after revert */
	assert_string_equal(now, "int tile = 64;\nint other = 1;\n");
	free(now);
	assert_no_temp_files("src");

	/* a failing build is RT_EPROC with its log */
	char *fail[] = { "sh", "-c", "echo compiling kernel.c; echo 'error: boom' >&2; exit 2", NULL };
	v.build = (struct rt_strv){ fail, 3 };
	struct rt_sb err = RT_SB_INIT, log = RT_SB_INIT;
	assert_int_equal(var_patch_ops.plan(&v, &ctx, &p, &err), 0);
	assert_int_equal(var_patch_ops.apply(&v, &ctx, &p, &log, &err), RT_EPROC);
	assert_string_equal(log.buf, "compiling kernel.c\nerror: boom\n");
	assert_string_equal(err.buf, "tile: build: sh exited with status 2");
	rt_sb_reset(&err);
	v.build = (struct rt_strv){ NULL, 0 };
	do_revert(&v, &ctx, &p);
	now = get_file("src/kernel.c");
	assert_string_equal(now, "int tile = 64;\nint other = 1;\n");
	free(now);

	/* a patch that does not apply: git's message is kept */
	put_file("src/kernel.c", "int tile = 32;\n");
	assert_int_equal(var_patch_ops.plan(&v, &ctx, &p, &err), RT_EPROC);
	assert_non_null(strstr(err.buf, "tile.diff: patch does not apply in src: "));
	assert_non_null(strstr(err.buf, "error: patch failed: kernel.c:1"));
	rt_sb_release(&err);
	rt_sb_release(&log);
	free(src);
}

static void test_file(void **state)
{
	put_file("kernel.so", "old kernel bytes");
	put_file("kernel-v2.so", "new kernel bytes");
	struct var_def v = { .name = "swap", .kind = VAR_KIND_FILE,
				  .file = { "kernel.so", "kernel-v2.so" } };
	struct var_ctx ctx = ctx_for(NULL, NULL);
	struct var_plan p = { 0 };
	char a[65], b[65], want[128];
	rt_sha256_hex("old kernel bytes", 16, a);
	rt_sha256_hex("new kernel bytes", 16, b);
	snprintf(want, sizeof(want), "kernel.so: sha256 %.8s.. -> %.8s..", a, b);
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, want);
	free(d);
	char *now = get_file("kernel.so");
	assert_string_equal(now, "new kernel bytes");
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("kernel.so");
	assert_string_equal(now, "old kernel bytes");
	free(now);
	assert_no_temp_files(NULL);
	v.file.source = "nope.so";
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_file_ops.plan(&v, &ctx, &p, &err), RT_ENOENT);
	assert_string_equal(err.buf, "nope.so: file.source: source file missing");
	rt_sb_release(&err);
}

static void test_fingerprints(void **state)
{
	put_file("fp.json", "{\"k\": {\"BLOCK_M\": 64, \"BLOCK_N\": 32}}\n");
	struct var_ctx ctx = ctx_for(NULL, NULL);
	/* set BLOCK_M, or replace the entry with the same result: same file */
	struct var_def vs = { .name = "set", .kind = VAR_KIND_TABLE };
	vs.table = (struct var_def_table){ .file = "fp.json", .op = VAR_TBL_SET, .key = "k",
					    .value = json_pack("{s:i}", "BLOCK_M", 128) };
	struct var_def vr = { .name = "replace", .kind = VAR_KIND_TABLE };
	vr.table = (struct var_def_table){ .file = "fp.json", .op = VAR_TBL_REPLACE, .key = "k",
					    .value = json_pack("{s:i,s:i}", "BLOCK_M", 128, "BLOCK_N", 32) };
	char f1[65], f2[65], f3[65], c1[65], c2[65], c0[65];
	assert_int_equal(var_table_ops.fingerprint(&vs, &ctx, f1, NULL), 0);
	assert_int_equal(var_table_ops.fingerprint(&vr, &ctx, f2, NULL), 0);
	assert_string_not_equal(f1, f2);
	json_t *same = json_pack("{s:i}", "BLOCK_M", 128);
	struct var_def vs2 = vs;
	vs2.table.value = same;
	assert_int_equal(var_table_ops.fingerprint(&vs2, &ctx, f3, NULL), 0);
	assert_string_equal(f1, f3);
	json_decref(same);

	char *path = xasprintf("%s/fp.json", tmpdir);
	struct var_fp_file paths[] = { { path, NULL } };
	char *argv[] = { "simserve", "--port", "0", NULL };
	struct rt_env ea[] = { { "A", "1" }, { "B", "2" } }, eb[] = { { "B", "2" }, { "A", "1" } };
	struct rt_envv enva = { ea, 2 }, envb = { eb, 2 };
	assert_int_equal(var_config_fingerprint(paths, 1, argv, &enva, c0, NULL), 0);
	struct var_plan p = { 0 };
	free(do_apply(&vs, &ctx, &p, 0));
	assert_int_equal(var_config_fingerprint(paths, 1, argv, &enva, c1, NULL), 0);
	do_revert(&vs, &ctx, &p);
	free(do_apply(&vr, &ctx, &p, 0));
	assert_int_equal(var_config_fingerprint(paths, 1, argv, &envb, c2, NULL), 0);
	assert_string_equal(c1, c2);     /* same bytes, same env in another order */
	assert_string_not_equal(c0, c1); /* the table changed */
	do_revert(&vr, &ctx, &p);
	assert_int_equal(var_config_fingerprint(paths, 1, argv, &enva, c2, NULL), 0);
	assert_string_equal(c0, c2);
	char *argv2[] = { "simserve", "--port", "1", NULL };
	assert_int_equal(var_config_fingerprint(paths, 1, argv2, &enva, c2, NULL), 0);
	assert_string_not_equal(c0, c2);
	free(path);
	json_decref(vs.table.value);
	json_decref(vr.table.value);

	/* env: unset differs from empty; order of variables does not matter */
	struct rt_env u[] = { { "X", NULL } }, e[] = { { "X", "" } };
	struct var_def vu = { .name = "u", .kind = VAR_KIND_ENV, .env = { u, 1 } };
	struct var_def ve = { .name = "e", .kind = VAR_KIND_ENV, .env = { e, 1 } };
	assert_int_equal(var_env_ops.fingerprint(&vu, &ctx, f1, NULL), 0);
	assert_int_equal(var_env_ops.fingerprint(&ve, &ctx, f2, NULL), 0);
	assert_string_not_equal(f1, f2);
	struct var_def va = { .name = "a", .kind = VAR_KIND_ENV, .env = { ea, 2 } };
	struct var_def vb = { .name = "b", .kind = VAR_KIND_ENV, .env = { eb, 2 } };
	assert_int_equal(var_env_ops.fingerprint(&va, &ctx, f1, NULL), 0);
	assert_int_equal(var_env_ops.fingerprint(&vb, &ctx, f2, NULL), 0);
	assert_string_equal(f1, f2);
}

/* One key inside a JSON-valued flag: the other keys stay, the = form stays,
 * an absent flag starts from {}, a pointer reaches a nested key, revert
 * pops it, and a value that is not an object is refused when planned. */
static void test_flag_key(void **state)
{
	char *base[] = { "vllm", "serve", "m", "--compilation-config={\"level\":3,\"cudagraph_capture_sizes\":[1,2,4]}",
			 NULL };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx ctx = ctx_for(&cfg, base);
	struct var_def v1 = { .name = "cg8", .kind = VAR_KIND_FLAG,
			      .flag_key = { "--compilation-config", "cudagraph_capture_sizes",
					    json_pack("[iiii]", 1, 2, 4, 8) } };
	struct var_def v2 = { .name = "kc", .kind = VAR_KIND_FLAG,
			      .flag_key = { "--kernel-config", "/moe/block~1m", json_real(0.1) } };
	struct var_plan p1 = { 0 }, p2 = { 0 };
	char *d = do_apply(&v1, &ctx, &p1, 0);
	assert_string_equal(d, "--compilation-config .cudagraph_capture_sizes: [1,2,4] -> [1,2,4,8]");
	free(d);
	d = do_apply(&v2, &ctx, &p2, 0);
	assert_string_equal(d, "--kernel-config /moe/block~1m: unset -> 0.1");
	free(d);
	char **argv = var_config_argv(&cfg, base);
	assert_string_equal(argv[3], "--compilation-config={\"level\":3,\"cudagraph_capture_sizes\":[1,2,4,8]}");
	assert_string_equal(argv[4], "--kernel-config");
	assert_string_equal(argv[5], "{\"moe\":{\"block/m\":0.1}}");
	assert_null(argv[6]);
	rt_argv_free(argv);
	/* the change fingerprint holds the key and the value */
	char f1[65], f2[65];
	assert_int_equal(var_flag_ops.fingerprint(&v1, &ctx, f1, NULL), 0);
	assert_int_equal(var_flag_ops.fingerprint(&v2, &ctx, f2, NULL), 0);
	assert_string_not_equal(f1, f2);
	do_revert(&v1, &ctx, &p1);
	argv = var_config_argv(&cfg, base);
	assert_string_equal(argv[3], base[3]);
	rt_argv_free(argv);
	do_revert(&v2, &ctx, &p2);
	/* a flag whose value is not a JSON object is refused, naming it */
	char *bad[] = { "vllm", "--compilation-config", "3", NULL };
	struct var_ctx bctx = ctx_for(&cfg, bad);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(var_flag_ops.plan(&v1, &bctx, &p1, &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "--compilation-config: its value is not a JSON object"));
	rt_sb_release(&err);
	json_decref(v1.flag_key.value);
	json_decref(v2.flag_key.value);
	var_config_release(&cfg);
}

/* atomic: two new entries and a changed one as one change: one write, one
 * revert, every other byte kept, each entry's before and after described. */
static void test_table_atomic(void **state)
{
	put_file("attn.json", attn_json);
	struct var_def_tbl_entry en[] = {
		{ "D_GEQ_1024.Q_GEQ_256", json_pack("{s:i}", "BLOCK_M", 256) },
		{ "D_GEQ_128.Q_GEQ_64", json_pack("{s:i}", "BLOCK_N", 32) },
		{ "D_GEQ_2048", json_pack("{s:i}", "BLOCK_M", 512) },
	};
	struct var_def v = { .name = "two-new", .kind = VAR_KIND_TABLE };
	v.table = (struct var_def_table){ .file = "attn.json", .op = VAR_TBL_SET, .atomic = true,
					  .entries = en, .n_entries = 3 };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx ctx = ctx_for(&cfg, NULL);
	struct var_plan p = { 0 };
	char *d = do_apply(&v, &ctx, &p, 0);
	assert_string_equal(d, "attn.json: 3 entries as one change\n"
			       "  attn.json: + \"D_GEQ_1024.Q_GEQ_256\" {\"BLOCK_M\":256}\n"
			       "  attn.json: \"D_GEQ_128.Q_GEQ_64\": BLOCK_N 16 -> 32\n"
			       "  attn.json: + \"D_GEQ_2048\" {\"BLOCK_M\":512}");
	free(d);
	assert_int_equal(p.n, 1); /* one file, one journaled write */
	char *now = get_file("attn.json");
	/* the untouched entry keeps its bytes */
	assert_non_null(strstr(now, "    \"D_GEQ_512.Q_GEQ_256\": {\n        \"BLOCK_M\": 64,\n        \"BLOCK_N\": 32\n    },"));
	assert_non_null(strstr(now, "\"D_GEQ_2048\""));
	free(now);
	do_revert(&v, &ctx, &p);
	now = get_file("attn.json");
	assert_string_equal(now, attn_json);
	free(now);
	/* one entry missing for a delete refuses the whole change, nothing written */
	struct var_def_tbl_entry del[] = { { "D_GEQ_128.Q_GEQ_64", NULL }, { "nope", NULL } };
	struct var_def vd = { .name = "del", .kind = VAR_KIND_TABLE };
	vd.table = (struct var_def_table){ .file = "attn.json", .op = VAR_TBL_DELETE, .atomic = true,
					   .entries = del, .n_entries = 2 };
	assert_null(do_apply(&vd, &ctx, &p, RT_ENOENT));
	now = get_file("attn.json");
	assert_string_equal(now, attn_json);
	free(now);
	for (size_t i = 0; i < 3; i++)
		json_decref(en[i].value);
	var_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_json_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_yaml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_yaml_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flag_no_engine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flag_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fingerprints, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_table_json         set/add/delete on dotted keys, exact bytes, revert identical, no temps
 *   test_table_json_errors  key not found, invalid JSON with line:col, missing file
 *   test_table_csv          CRLF + quoting kept, append row, delete row, bad key column
 *   test_table_yaml         libyaml round trip: set/replace/delete, strings stay strings
 *   test_table_yaml_types   entries read with the spec's typing rule: an unchanged set is "no change"
 *   test_flag               replace "--x v" and "--x=v", append lone flag, negative value, revert
 *   test_flag_no_engine     no engine: the description reads the benchmark command's value
 *   test_flag_key           one key in a JSON-valued flag: others kept, = form, pointer, revert, refusal
 *   test_table_atomic       several entries as one write: others byte-identical, described, reverted as one
 *   test_env                unset -> value, value -> unset, effective env, revert
 *   test_patch              real git repo: plan files, apply+build, revert+build, build failure, no-apply
 *   test_file               swap and restore, describe hashes, missing source
 *   test_fingerprints       change and config fingerprints: equal when reached differently
 */
