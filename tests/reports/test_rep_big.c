/*
 * A 20,000-iteration campaign's report (not timed): the HTML stays under
 * 1 MB, a bound that scales to the 5 MB allowed at 100,000 iterations; every
 * kept iteration appears (in the kept changes); the entries beyond the
 * first and last 100 are counted in a table with the way to see one; the
 * Markdown report is paged the same way.
 */
#include "reports/rep.h"
#include "tests/reports/rep_big.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define N_ITER 20000

static size_t count(const char *hay, const char *needle)
{
	size_t c = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		c++;
	return c;
}

static void check(struct db *db, enum rep_format fmt, size_t bound)
{
	struct rt_sb out = RT_SB_INIT, err = RT_SB_INIT;
	assert_int_equal(rep_report(db, 0, fmt, &out, &err), 0);
	assert_true(out.len < bound);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db), "SELECT seq, variant FROM iterations "
					    "WHERE state = 'kept' ORDER BY seq", -1, &st, NULL), SQLITE_OK);
	size_t nkept = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		char ref[96];
		snprintf(ref, sizeof(ref), fmt == REP_HTML ? "iteration 1:%d, <code>%s</code>" :
			 "iteration 1:%d, `%s`", sqlite3_column_int(st, 0),
			 (const char *)sqlite3_column_text(st, 1));
		if (!strstr(out.buf, ref))
			fail_msg("kept iteration missing: %s", ref);
		nkept++;
	}
	sqlite3_finalize(st);
	assert_true(nkept > 1000);
	assert_non_null(strstr(out.buf, "Showing the first 100 and the last 100 of 20000 iterations"));
	assert_non_null(strstr(out.buf, "ratchet show 1:SEQ"));
	/* full entries: the first and last 100 only */
	assert_int_equal(count(out.buf, fmt == REP_HTML ? "<h3 id=\"it-" : "\n### 1:"), 200);
	rt_sb_release(&out);
	rt_sb_release(&err);
}

static void test_big(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-rep-big-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/b.db", dir);
	struct rt_sb err = RT_SB_INIT;
	struct db *db;
	assert_int_equal(db_open(path, &db, &err), 0);
	rep_big_build(db, N_ITER);
	check(db, REP_HTML, 1000 * 1000);
	check(db, REP_MD, 1000 * 1000);
	db_close(db);
	const char *sfx[] = { "b.db", "b.db-wal", "b.db-shm" };
	for (int i = 0; i < 3; i++) {
		char p[96];
		snprintf(p, sizeof(p), "%s/%s", dir, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_big) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
