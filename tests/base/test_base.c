/*
 * Unit tests of runner/base/: the string buffer and its cap, did-you-mean,
 * typed option parsing, atomic writes, sha256, process start and stop by
 * group, secret redaction, the error list and the pinned PRNG sequences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/base/opt.h"
#include "runner/base/proc.h"
#include "runner/base/rand.h"
#include "runner/base/rt.h"

static void test_sb_cap(void **state)
{
	(void)state;
	struct rt_sb sb;
	rt_sb_init(&sb, 8);
	assert_string_equal(sb.buf, "");
	assert_int_equal(rt_sb_adds(&sb, "12345"), 0);
	assert_int_equal(rt_sb_adds(&sb, "6789"), RT_ETOOBIG); /* would be 9 > 8: nothing added */
	assert_string_equal(sb.buf, "12345");
	assert_int_equal(rt_sb_addf(&sb, "%d", 678), 0);
	assert_string_equal(sb.buf, "12345678");
	size_t len;
	char *p = rt_sb_detach(&sb, &len);
	assert_int_equal(len, 8);
	assert_string_equal(p, "12345678");
	assert_string_equal(sb.buf, ""); /* never NULL after detach */
	free(p);
	rt_sb_release(&sb);
}

static void test_did_you_mean(void **state)
{
	(void)state;
	const char *const keys[] = { "concurrency", "rate", "requests", "prompt_tokens" };
	assert_string_equal(rt_did_you_mean("concurency", keys, 4), "concurrency");
	assert_string_equal(rt_did_you_mean("reqests", keys, 4), "requests");
	assert_null(rt_did_you_mean("banana", keys, 4));
	assert_int_equal(rt_edit_distance("kitten", "sitting"), 3);
}

static void test_opt_parse(void **state)
{
	(void)state;
	bool flag = false;
	const char *str = NULL;
	long n = 0;
	double d = 0;
	const struct rt_opt opts[] = {
		{ "resume", 0, RT_OPT_FLAG, &flag, NULL, "resume" },
		{ "db", 0, RT_OPT_STR, &str, "FILE", "database" },
		{ "limit", 'n', RT_OPT_INT, &n, "N", "limit" },
		{ "ratio", 0, RT_OPT_DBL, &d, "X", "ratio" },
		{ 0 },
	};
	const struct rt_cmd_help help = { "t [options] ARGS", "test", NULL };
	char *argv1[] = { "t", "a", "--resume", "--db=x.db", "b", "-n", "7", "--ratio", "0.5", "--", "--c", NULL };
	int npos = 0;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rt_opt_parse(opts, &help, 11, argv1, &npos, &err), 0);
	assert_true(flag);
	assert_string_equal(str, "x.db");
	assert_int_equal(n, 7);
	assert_true(d == 0.5);
	assert_int_equal(npos, 3); /* a, b, and --c after "--" */
	assert_string_equal(argv1[1], "a");
	assert_string_equal(argv1[2], "b");
	assert_string_equal(argv1[3], "--c");

	char *argv2[] = { "t", "--limt", "3", NULL };
	assert_int_equal(rt_opt_parse(opts, &help, 3, argv2, &npos, &err), RT_EUSAGE);
	assert_string_equal(err.buf, "unknown option '--limt' (did you mean '--limit'?)");
	rt_sb_reset(&err);
	char *argv3[] = { "t", "--limit", "x", NULL };
	assert_int_equal(rt_opt_parse(opts, &help, 3, argv3, &npos, &err), RT_EUSAGE);
	assert_string_equal(err.buf, "--limit: 'x' is not an integer");
	rt_sb_reset(&err);
	char *argv4[] = { "t", "--db", NULL };
	assert_int_equal(rt_opt_parse(opts, &help, 2, argv4, &npos, &err), RT_EUSAGE);
	assert_string_equal(err.buf, "--db needs a value (FILE)");
	rt_sb_reset(&err);
	char *argv5[] = { "t", "--resume=1", NULL };
	assert_int_equal(rt_opt_parse(opts, &help, 2, argv5, &npos, &err), RT_EUSAGE);
	assert_string_equal(err.buf, "--resume takes no value");
	rt_sb_release(&err);
}

static void test_atomic_write(void **state)
{
	(void)state;
	char dir[] = "/tmp/ratchet-util-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/f.json", dir);
	assert_int_equal(rt_write_file_atomic(path, "one", 3, 0600, NULL), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600); /* mode of a new file */
	chmod(path, 0640);
	assert_int_equal(rt_write_file_atomic(path, "two!", 4, 0600, NULL), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* an existing file keeps its mode */
	char *got;
	size_t len;
	assert_int_equal(rt_read_file(path, &got, &len, NULL), 0);
	assert_int_equal(len, 4);
	assert_string_equal(got, "two!");
	free(got);
	char *cmd = xasprintf("test $(ls -A %s | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0); /* no temp file left */
	free(cmd);
	struct rt_sb err = RT_SB_INIT;
	char *bad = xasprintf("%s/missing/f", dir);
	assert_int_equal(rt_write_file_atomic(bad, "x", 1, 0644, &err), RT_EIO);
	assert_non_null(strstr(err.buf, "cannot create"));
	rt_sb_release(&err);
	unlink(path);
	rmdir(dir);
	free(bad);
	free(path);
}

static void test_sha256(void **state)
{
	(void)state;
	char hex[65];
	rt_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	rt_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(rt_sha256_file("/nonexistent/file", hex, NULL), RT_ENOENT);
}

static void test_spawn(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	pid_t pid;
	char *nope[] = { "ratchet-no-such-program", NULL };
	assert_int_equal(rt_spawn(nope, NULL, &pid, &err), RT_ENOENT);
	assert_string_equal(err.buf, "ratchet-no-such-program: command not found in PATH");
	rt_sb_reset(&err);
	/* env changes and cwd reach the child; it runs in its own process group */
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	struct rt_envmod env[] = { { "RT_TEST_A", "hello" }, { "HOME", NULL } };
	struct rt_spawn_opts o = { env, 2, "/tmp", -1, pp[1], pp[1] };
	char *sh[] = { "sh", "-c", "echo \"$RT_TEST_A ${HOME:-unset} $(pwd) $(($$ == $(ps -o pgid= $$)))\"", NULL };
	assert_int_equal(rt_spawn(sh, &o, &pid, &err), 0);
	close(pp[1]);
	char buf[256] = "";
	ssize_t n = read(pp[0], buf, sizeof(buf) - 1);
	close(pp[0]);
	assert_true(n > 0);
	buf[n] = 0;
	int st;
	assert_int_equal(rt_wait_timeout(pid, 10, &st), 1);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(buf, "hello unset /tmp 1\n");
	rt_sb_release(&err);
}

/* The launcher prefix wraps measured processes only (a Slurm step for the
 * benchmark and the engine; git and probes still run here). */
static char *spawn_output(char *const *argv, bool measured)
{
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	struct rt_spawn_opts o = { NULL, 0, NULL, -1, pp[1], -1, .measured = measured };
	pid_t pid;
	assert_int_equal(rt_spawn(argv, &o, &pid, NULL), 0);
	close(pp[1]);
	static char buf[128];
	ssize_t n = read(pp[0], buf, sizeof(buf) - 1);
	close(pp[0]);
	buf[n > 0 ? n : 0] = 0;
	int st;
	assert_int_equal(rt_wait_timeout(pid, 5, &st), 1);
	return buf;
}

static void test_spawn_launcher(void **state)
{
	(void)state;
	char *const pre[] = { "echo", "via", NULL };
	char *const argv[] = { "echo", "here", NULL };
	rt_spawn_set_launcher(pre);
	assert_string_equal(spawn_output(argv, true), "via echo here\n");
	assert_string_equal(spawn_output(argv, false), "here\n");
	rt_spawn_set_launcher(NULL);
	assert_string_equal(spawn_output(argv, true), "here\n");
}

static void test_stop_group(void **state)
{
	(void)state;
	/* A child that ignores SIGTERM, with a grandchild: both die by group. */
	char *sh[] = { "sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait", NULL };
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	struct rt_spawn_opts o = { NULL, 0, NULL, -1, pp[1], -1 };
	pid_t pid;
	assert_int_equal(rt_spawn(sh, &o, &pid, NULL), 0);
	close(pp[1]);
	char buf[32] = "";
	ssize_t n = read(pp[0], buf, sizeof(buf) - 1);
	close(pp[0]);
	assert_true(n > 0);
	pid_t grandchild = (pid_t)atoi(buf);
	int64_t t0 = rt_now_ns();
	int st = rt_stop_group(pid, 0.3);
	double took = (double)(rt_now_ns() - t0) / 1e9;
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(took >= 0.25 && took < 5);
	/* The grandchild is gone too: no such process, or a zombie waiting for
	 * a reaper (PID 1 in a container may be slow to reap). */
	rt_sleep_ns(50000000);
	char path[64], stat[256] = "";
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)grandchild);
	FILE *f = fopen(path, "r");
	if (f) {
		size_t got = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[got] = 0;
		char *close_paren = strrchr(stat, ')');
		assert_non_null(close_paren);
		assert_int_equal(close_paren[2], 'Z');
	}
	char d[96];
	rt_describe_status(st, d, sizeof(d));
	assert_string_equal(d, "killed by signal 9 (Killed)");
}

static void test_redact(void **state)
{
	(void)state;
	setenv("RT_TEST_API_KEY", "sk-test-1234567890", 1);
	setenv("RT_TEST_SHORT_TOKEN", "abc", 1);  /* too short to redact safely */
	setenv("RT_TEST_PLAIN", "sk-test-1234567890-plain", 1);
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, "auth sk-test-1234567890 then sk-test-1234567890; abc stays");
	assert_int_equal(rt_redact_secrets(&sb), 2);
	assert_string_equal(sb.buf, "auth [redacted] then [redacted]; abc stays");
	assert_int_equal(rt_redact_secrets(&sb), 0);
	rt_sb_release(&sb);
	unsetenv("RT_TEST_API_KEY");
	unsetenv("RT_TEST_SHORT_TOKEN");
	unsetenv("RT_TEST_PLAIN");
}

static void test_durations(void **state)
{
	(void)state;
	char b[32];
	rt_fmt_duration(0.000812, b, sizeof(b));
	assert_string_equal(b, "812us");
	rt_fmt_duration(0.0032, b, sizeof(b));
	assert_string_equal(b, "3.20ms");
	rt_fmt_duration(4, b, sizeof(b));
	assert_string_equal(b, "4.00s");
	rt_fmt_duration(125, b, sizeof(b));
	assert_string_equal(b, "2m05s");
	rt_fmt_duration(3720, b, sizeof(b));
	assert_string_equal(b, "1h02m");
}

static void test_read_line(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "hello\nwor", 9), 9);
	char line[16];
	assert_int_equal(rt_read_line_timeout(p[0], line, sizeof(line), 1), 5);
	assert_string_equal(line, "hello");
	double t0 = rt_now_s();
	assert_int_equal(rt_read_line_timeout(p[0], line, sizeof(line), 0.2), -1); /* no newline yet */
	assert_true(rt_now_s() - t0 >= 0.15);
	assert_string_equal(line, "wor");
	assert_int_equal(write(p[1], "0123456789abcdefgh\n", 19), 19);
	assert_int_equal(rt_read_line_timeout(p[0], line, 8, 1), -1); /* longer than the buffer */
	assert_string_equal(line, "0123456");
	assert_int_equal(rt_read_line_timeout(p[0], line, sizeof(line), 1), 11); /* the rest */
	assert_string_equal(line, "789abcdefgh");
	close(p[1]);
	assert_int_equal(rt_read_line_timeout(p[0], line, sizeof(line), 1), -1); /* end of file */
	close(p[0]);
}

static void test_proc_stat(void **state)
{
	(void)state;
	struct rt_proc_stat st;
	assert_int_equal(rt_proc_stat(getpid(), &st), 0);
	assert_int_equal(st.ppid, getppid());
	assert_int_equal(st.pgrp, getpgrp());
	assert_string_equal(st.comm, "test_base");
	assert_true(st.cpu_s >= 0 && st.cpu_s < 3600);
	assert_int_equal(rt_proc_stat(0x7ffffff0, &st), RT_ENOENT);
}

/* Every code of RT_ERR_MAP has its own name and message; the values the
 * database and tests rely on stay put; unknown codes get fixed text. */
static void test_errors(void **state)
{
	(void)state;
	static const int codes[] = {
#define CODE(name, value, msg) RT_##name,
		RT_ERR_MAP(CODE)
#undef CODE
	};
	size_t n = RT_ARRAY_SIZE(codes);
	assert_int_equal(n, 21);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(codes[i], -(int)i); /* 0, -1, ... in order */
		assert_string_not_equal(rt_strerror(codes[i]), "unknown error");
		assert_int_equal(strncmp(rt_err_name(codes[i]), "RT_", 3), 0);
		for (size_t j = 0; j < i; j++) {
			assert_string_not_equal(rt_strerror(codes[i]), rt_strerror(codes[j]));
			assert_string_not_equal(rt_err_name(codes[i]), rt_err_name(codes[j]));
		}
	}
	assert_int_equal(RT_ESCHEMA, -9);
	assert_int_equal(RT_EUSAGE, -20);
	assert_string_equal(rt_err_name(RT_ENOENT), "RT_ENOENT");
	assert_string_equal(rt_err_name(RT_OK), "RT_OK");
	assert_string_equal(rt_strerror(RT_ESCHEMA), "database written by a newer ratchet");
	assert_string_equal(rt_strerror(-999), "unknown error");
	assert_string_equal(rt_strerror(1), "unknown error");
	assert_string_equal(rt_err_name(-999), "RT_E?");
}

/* The PRNG's sequences are pinned: the GSM8K subset (splitmix64 from the
 * seed), kernel inputs and simserve filler (splitmix64) and the bootstrap
 * (xoshiro256** seeded through splitmix64) must not change across releases. */
static void test_rand(void **state)
{
	(void)state;
	uint64_t s = 0;
	assert_true(rt_splitmix64(&s) == 0xe220a8397b1dcdafULL); /* the reference value */
	assert_true(rt_splitmix64(&s) == 0x6e789e6aa1b965f4ULL);
	s = 7;
	assert_true(rt_splitmix64(&s) == 0x63cbe1e459320dd7ULL);
	assert_true(rt_splitmix64(&s) == 0x044c3cd7f43c661cULL);
	assert_true(rt_splitmix64(&s) == 0xe6984080bab12a02ULL);
	assert_true(s == 7 + 3 * RT_SPLITMIX64_GAMMA);
	assert_true(rt_unit_double(0) == 0.0);
	assert_true(rt_unit_double(UINT64_MAX) == 1.0 - 0x1.0p-53);

	struct rt_rand r, r2;
	rt_rand_seed(&r, 42);
	assert_true(r.s[0] == 0xbdd732262feb6e95ULL && r.s[3] == 0x581ce1ff0e4ae394ULL);
	assert_true(rt_rand_next(&r) == 0x15780b2e0c2ec716ULL);
	assert_true(rt_rand_next(&r) == 0x6104d9866d113a7eULL);
	assert_true(rt_rand_next(&r) == 0xae17533239e499a1ULL);
	assert_true(rt_rand_next(&r) == 0xecb8ad4703b360a1ULL);
	rt_rand_seed(&r, 7);
	static const uint64_t below[] = { 4, 4, 8, 4, 4, 1 };
	for (size_t i = 0; i < RT_ARRAY_SIZE(below); i++)
		assert_true(rt_rand_below(&r, 10) == below[i]);
	assert_true(rt_rand_uniform(&r) == 0.060752079492816136);
	assert_true(fabs(rt_rand_normal(&r) - -1.7483113292867853) < 1e-12);

	/* the same seed, the same stream; another seed, another */
	rt_rand_seed(&r, 42);
	rt_rand_seed(&r2, 42);
	for (int i = 0; i < 100; i++)
		assert_true(rt_rand_next(&r) == rt_rand_next(&r2));
	rt_rand_seed(&r2, 43);
	assert_true(rt_rand_next(&r) != rt_rand_next(&r2));
	double sum = 0, sum2 = 0;
	for (int i = 0; i < 20000; i++) {
		double z = rt_rand_normal(&r);
		sum += z;
		sum2 += z * z;
		double u = rt_rand_uniform(&r);
		assert_true(u >= 0 && u < 1);
		assert_true(rt_rand_below(&r, 7) < 7);
	}
	assert_true(fabs(sum / 20000) <= 0.05);
	assert_true(fabs(sum2 / 20000 - 1) <= 0.05);
}

static void test_small_helpers(void **state)
{
	(void)state;
	double v[] = { 3, -1, 2.5, 0 };
	qsort(v, 4, sizeof(double), rt_cmp_double);
	assert_true(v[0] == -1 && v[1] == 0 && v[2] == 2.5 && v[3] == 3);
	assert_int_equal(rt_count_words(NULL), 0);
	assert_int_equal(rt_count_words(""), 0);
	assert_int_equal(rt_count_words("  \n\t "), 0);
	assert_int_equal(rt_count_words("one"), 1);
	assert_int_equal(rt_count_words(" a  b\tc\nd "), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_cap),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_opt_parse),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_spawn_launcher),
		cmocka_unit_test(test_stop_group),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_read_line),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_rand),
		cmocka_unit_test(test_small_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_sb_cap         the cap refuses a whole append; detach leaves "" behind
 *   test_did_you_mean   nearest key within the distance limit, none beyond
 *   test_opt_parse      flags, values, aliases, positionals, unknown-flag error
 *   test_atomic_write   new file mode, existing mode kept, no temp left, error names the file
 *   test_sha256         known digests of bytes and of a file
 *   test_spawn          argv start with env changes and cwd, command not found
 *   test_stop_group     SIGTERM then SIGKILL reaches the whole group; status text
 *   test_read_line      one line from a pipe; timeout, overlong line, end of file
 *   test_proc_stat      parent, group, name and CPU time from /proc; a missing process
 *   test_redact         secret-looking variables' values replaced
 *   test_durations      human-readable durations
 *   test_errors         one name and message per RT_ERR_MAP code, fixed values, unknown codes
 *   test_rand           pinned splitmix64 and xoshiro256** sequences, moments of normal()
 *   test_small_helpers  whitespace-separated words, NULL and blank input; rt_cmp_double
 */
