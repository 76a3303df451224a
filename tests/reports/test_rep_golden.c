/*
 * Golden-file tests of the report views on tests/fixtures/report_campaign.sql:
 * the Markdown and HTML journals (the HTML with its version masked), `log`,
 * `show` of a corrected and a correcting iteration, and `regressions` (kept
 * changes only, and --all), without and with colour, each compared byte for byte with tests/reports/golden/<name>.
 * RATCHET_REGEN=1 rewrites the golden files instead (then review the diff
 * with git).
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
	snprintf(path, sizeof(path), "%s/tests/reports/golden/%s", src && *src ? src : REP_SRC_DIR, name);
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

/* One golden file: which view writes it. */
struct golden {
	const char *name; /* file under tests/reports/golden/ */
	enum { MD, HTML, LOG, SHOW, REGR } view;
	int64_t id;       /* SHOW: the iteration */
	bool color;       /* ANSI colours (LOG, SHOW, REGR) */
	bool all;         /* REGR: --all; SHOW: --full */
};

/* The HTML names the ratchet version; the golden file says VERSION instead. */
static void mask_version(struct rt_sb *sb)
{
	const char *v = "ratchet " RATCHET_VERSION "\"";
	char *at = strstr(sb->buf, v);
	assert_non_null(at);
	struct rt_sb t = RT_SB_INIT;
	rt_sb_add(&t, sb->buf, (size_t)(at - sb->buf));
	rt_sb_adds(&t, "ratchet VERSION\"");
	rt_sb_adds(&t, at + strlen(v));
	rt_sb_reset(sb);
	rt_sb_add(sb, t.buf, t.len);
	rt_sb_release(&t);
}

static void test_golden(void **state)
{
	const struct golden *g = *state;
	struct rt_sb out = RT_SB_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct rep_log_opts o = { .limit = 50, .color = g->color };
	struct rep_regr_opts ro = { .all = g->all, .color = g->color };
	int rc = g->view == MD ? rep_report(db, 0, REP_MD, &out, NULL)
		 : g->view == HTML ? rep_report(db, 0, REP_HTML, &out, NULL)
		 : g->view == LOG ? rep_log(db, m, &o, NULL)
		 : g->view == SHOW ? rep_show(db, m, g->id, &(struct rep_show_opts){ .color = g->color, .full = g->all }, NULL)
				   : rep_regressions(db, m, &ro, NULL);
	fclose(m);
	assert_int_equal(rc, 0);
	rt_sb_add(&out, buf, len);
	if (g->view == HTML)
		mask_version(&out);
	compare(g->name, out.buf, out.len);
	free(buf);
	rt_sb_release(&out);
}

static const struct golden cases[] = {
	{ "report_campaign.md", MD, 0, false },
	{ "report_campaign.html", HTML, 0, false },
	{ "log.txt", LOG, 0, false },
	{ "log.color.txt", LOG, 0, true },
	{ "show_4.txt", SHOW, 4, false },  /* corrected by iteration 9 */
	{ "show_4.full.txt", SHOW, 4, false, true },
	{ "show_9.txt", SHOW, 9, false },  /* corrects iteration 4 */
	{ "show_4.color.txt", SHOW, 4, true },
	{ "regressions.txt", REGR, 0, false },
	{ "regressions_all.txt", REGR, 0, false, true },
};

int main(void)
{
	struct CMUnitTest tests[RT_ARRAY_SIZE(cases)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++)
		tests[i] = (struct CMUnitTest){ .name = cases[i].name, .test_func = test_golden,
						.initial_state = (void *)&cases[i] };
	return cmocka_run_group_tests_name("rep_golden", tests, setup, teardown);
}
