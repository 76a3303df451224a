/*
 * Golden-file tests of the report views on tests/fixtures/report_campaign.sql:
 * the Markdown journal, `log`, `show` of a corrected and a correcting
 * iteration, and `regressions` (no colour), each compared byte for byte with
 * tests/rep/golden/<name>. RATCHET_REGEN=1 rewrites the golden files instead
 * (then review the diff with git).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "reports/rep.h"
#include "rep_fixture.h"

static struct db *db;
static char dir[64];

static void compare(const char *name, const char *got, size_t len)
{
	const char *src = getenv("RATCHET_SRC");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/rep/golden/%s", src && *src ? src : REP_SRC_DIR, name);
	const char *regen = getenv("RATCHET_REGEN");
	struct rt_sb err = RT_SB_INIT;
	if (regen && *regen && strcmp(regen, "0")) {
		assert_int_equal(rt_write_file_atomic(path, got, len, 0644, &err), 0);
		fprintf(stderr, "rewrote %s\n", path);
		return;
	}
	char *want = NULL;
	size_t wlen = 0;
	if (rt_read_file(path, &want, &wlen, &err))
		fail_msg("%s (RATCHET_REGEN=1 creates it)", err.buf);
	if (wlen != len || memcmp(want, got, len)) {
		size_t i = 0;
		while (i < len && i < wlen && want[i] == got[i])
			i++;
		size_t line = 1;
		for (size_t k = 0; k < i; k++)
			line += got[k] == '\n';
		fprintf(stderr, "%s differs from the output at line %zu:\n--- want\n%.200s\n--- got\n%.200s\n",
			path, line, want + (i > 40 ? i - 40 : 0), got + (i > 40 ? i - 40 : 0));
		free(want);
		fail_msg("%s: output differs (RATCHET_REGEN=1 rewrites it)", name);
	}
	free(want);
	rt_sb_release(&err);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/rep-golden-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char path[96];
	snprintf(path, sizeof(path), "%s/r.db", dir);
	db = rep_fixture_open(path);
	return db ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	db_close(db);
	char p[128];
	const char *sfx[] = { "r.db", "r.db-wal", "r.db-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
	return 0;
}

static void test_md(void **state)
{
	(void)state;
	struct rt_sb out = RT_SB_INIT;
	assert_int_equal(rep_report(db, 0, REP_MD, &out, NULL), 0);
	compare("report_campaign.md", out.buf, out.len);
	rt_sb_release(&out);
}

enum view { LOG, SHOW4, SHOW9, REGR };

static void run_view(enum view v, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct rep_log_opts o = { .limit = 50 };
	int rc = v == LOG ? rep_log(db, m, &o, NULL)
		 : v == SHOW4 ? rep_show(db, m, 4, false, false, NULL)
		 : v == SHOW9 ? rep_show(db, m, 9, false, false, NULL)
			      : rep_regressions(db, m, 0, false, false, NULL);
	fclose(m);
	assert_int_equal(rc, 0);
	compare(name, buf, len);
	free(buf);
}

static void test_log(void **state)
{
	(void)state;
	run_view(LOG, "log.txt");
}

static void test_show_corrected(void **state)
{
	(void)state;
	run_view(SHOW4, "show_4.txt");
}

static void test_show_corrects(void **state)
{
	(void)state;
	run_view(SHOW9, "show_9.txt");
}

static void test_regressions(void **state)
{
	(void)state;
	run_view(REGR, "regressions.txt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_show_corrected),
		cmocka_unit_test(test_show_corrects),
		cmocka_unit_test(test_regressions),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
