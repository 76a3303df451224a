/*
 * Unit tests of what db/export.c keeps out of a CSV file: text cells that a
 * spreadsheet would run as a formula (=, +, -, @, tab, carriage return first)
 * are written quoted behind a single quote; numbers and plain text are
 * written as they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_int.h"
#include "db/export.h"

struct fx {
	char dir[64];  /* temporary folder */
	struct db *db; /* an empty store with one campaign and one iteration */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rt-test-export-safe-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char *path = xasprintf("%s/ratchet.db", f->dir);
	struct rt_sb err = RT_SB_INIT;
	int rc = db_open(path, &f->db, &err);
	if (!rc)
		rc = sqlite3_exec(db_sqlite(f->db),
				  "INSERT INTO campaigns (id, name, spec_path, spec_text, spec_sha256, "
				  "workdir, created_at) VALUES (1, 'c', 's.yaml', '', '', '/tmp', 0);"
				  "INSERT INTO iterations (id, campaign_id, seq, variant, kind, "
				  "change_text, state, started_at) VALUES (1, 1, 0, 'baseline', "
				  "'baseline', '', 'kept', 0);",
				  NULL, NULL, NULL);
	if (rc)
		fprintf(stderr, "setup: %s %s\n", err.buf, sqlite3_errmsg(db_sqlite(f->db)));
	free(path);
	rt_sb_release(&err);
	*state = f;
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(cmd);
	free(f);
	return rc ? -1 : 0;
}

static void add_note(struct fx *f, const char *text)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
					    "INSERT INTO notes (iteration_id, kind, text, author, "
					    "created_at) VALUES (1, 'note', ?1, 'me', -7)",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

/* The notes table as CSV; the caller frees it. */
static char *notes_csv(struct fx *f)
{
	char *buf = NULL;
	size_t n = 0, rows = 0;
	FILE *m = open_memstream(&buf, &n);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_export_csv(f->db, "notes", false, m, &rows, &err), 0);
	fclose(m);
	rt_sb_release(&err);
	return buf;
}

static void test_formula_cells_are_quoted(void **state)
{
	struct fx *f = *state;
	add_note(f, "=HYPERLINK(\"http://x/\",\"y\")");
	add_note(f, "+1+cmd|' /C calc'!A0");
	add_note(f, "-2+3");
	add_note(f, "@SUM(A1:A2)");
	add_note(f, "\t=1");
	add_note(f, "\r=1");
	add_note(f, "a = b + c");
	char *csv = notes_csv(f);
	assert_non_null(strstr(csv, ",\"'=HYPERLINK(\"\"http://x/\"\",\"\"y\"\")\","));
	assert_non_null(strstr(csv, ",\"'+1+cmd|' /C calc'!A0\","));
	assert_non_null(strstr(csv, ",\"'-2+3\","));
	assert_non_null(strstr(csv, ",\"'@SUM(A1:A2)\","));
	assert_non_null(strstr(csv, ",\"'\t=1\","));
	assert_non_null(strstr(csv, ",\"'\r=1\","));
	/* Text that does not start a formula, and numbers, stay as they were. */
	assert_non_null(strstr(csv, ",a = b + c,me,-7\r\n"));
	assert_null(strstr(csv, ",=HYPERLINK"));
	free(csv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_formula_cells_are_quoted, setup, teardown),
	};
	return cmocka_run_group_tests_name("db_export_safe", tests, NULL, NULL);
}
