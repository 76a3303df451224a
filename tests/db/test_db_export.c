/*
 * Unit tests of db/export.c: the fixture campaign (tests/fixtures/
 * small_campaign.sql) exported as JSON and CSV, then read back: every table
 * of the schema is there, row counts and values match, blobs are sha256 +
 * size or base64, CSV quoting follows RFC 4180 (checked by a reader here),
 * and a text cell a spreadsheet would run as a formula is quoted behind a
 * single quote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_int.h"
#include "db/export.h"

struct fx {
	char dir[64];  /* temporary folder */
	struct db *db; /* the fixture campaign */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rt-test-export-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char *path = xasprintf("%s/ratchet.db", f->dir);
	const char *src = getenv("RATCHET_SRC");
	char *fixture = xasprintf("%s/tests/fixtures/small_campaign.sql", src ? src : ".");
	struct rt_sb err = RT_SB_INIT;
	char *sql;
	size_t len;
	int rc = db_open(path, &f->db, &err);
	if (!rc)
		rc = rt_read_file(fixture, &sql, &len, &err);
	if (!rc) {
		rc = sqlite3_exec(db_sqlite(f->db), sql, NULL, NULL, NULL);
		free(sql);
	}
	if (rc)
		fprintf(stderr, "setup: %s %s\n", err.buf, db_sqlite(f->db) ? sqlite3_errmsg(db_sqlite(f->db)) : "");
	free(path);
	free(fixture);
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

static json_t *export_json(struct db *db, const char *table, bool blobs, struct db_export_count *c)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	struct rt_sb err = RT_SB_INIT;
	struct db_export_opts o = { .table = table, .blobs = blobs };
	assert_int_equal(db_export_json(db, &o, m, c, &err), 0);
	fclose(m);
	json_error_t je;
	json_t *root = json_loadb(buf, n, 0, &je);
	if (!root)
		fprintf(stderr, "json: %s at line %d\n%s\n", je.text, je.line, buf);
	assert_non_null(root);
	free(buf);
	rt_sb_release(&err);
	return root;
}

static void test_tables_are_the_schema(void **state)
{
	struct fx *f = *state;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), "SELECT name FROM sqlite_master WHERE "
					    "type = 'table' AND name NOT LIKE 'sqlite_%'", -1, &st,
					    NULL), SQLITE_OK);
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (!db_export_known(name))
			fail_msg("table %s is not exported", name);
		n++;
	}
	sqlite3_finalize(st);
	assert_int_equal(n, db_export_ntables);
	assert_false(db_export_known("sqlite_master"));
}

static void test_json_all(void **state)
{
	struct fx *f = *state;
	struct db_export_count c;
	json_t *root = export_json(f->db, NULL, false, &c);
	assert_int_equal(json_object_size(root), db_export_ntables);
	assert_int_equal(c.tables, db_export_ntables);
	size_t total = 0;
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v) {
		assert_true(json_is_array(v));
		total += json_array_size(v);
	}
	assert_int_equal(c.rows, total);
	assert_int_equal(json_array_size(json_object_get(root, "iterations")), 9);
	assert_int_equal(json_array_size(json_object_get(root, "notes")), 3);
	assert_int_equal(json_array_size(json_object_get(root, "gate_answers")), 6);
	assert_int_equal(json_array_size(json_object_get(root, "findings")), 1);
	/* Values keep their types; NULL is null; reals read back exactly. */
	json_t *it = json_array_get(json_object_get(root, "iterations"), 1);
	assert_int_equal(json_integer_value(json_object_get(it, "seq")), 1);
	assert_string_equal(json_string_value(json_object_get(it, "variant")), "graphs-256");
	assert_true(json_real_value(json_object_get(it, "obj_delta")) == 0.061);
	json_t *base = json_array_get(json_object_get(root, "iterations"), 0);
	assert_true(json_is_null(json_object_get(base, "parent_id")));
	assert_true(json_is_real(json_object_get(base, "obj_cand")));
	json_t *ms = json_array_get(json_object_get(root, "metric_stats"), 0);
	assert_true(json_real_value(json_object_get(ms, "ratio")) == 1.061);
	/* Multi-line text with quotes survives. */
	json_t *ga = json_array_get(json_object_get(root, "gate_answers"), 2);
	assert_string_equal(json_string_value(json_object_get(ga, "response")),
			    "She pays 5 + 3 = \"8\" dollars,\nso the answer is #### 8");
	/* A blob is its sha256 and size. */
	json_t *orig = json_array_get(json_object_get(root, "originals"), 1);
	json_t *blob = json_object_get(orig, "content");
	assert_true(json_is_object(blob));
	assert_int_equal(json_integer_value(json_object_get(blob, "size")), 8);
	char sha[65];
	rt_sha256_hex("\x7f" "ELF\x02\x01\x01\x00", 8, sha);
	assert_string_equal(json_string_value(json_object_get(blob, "sha256")), sha);
	assert_null(json_object_get(blob, "base64"));
	json_decref(root);
}

static void test_json_one_table_base64(void **state)
{
	struct fx *f = *state;
	struct db_export_count c;
	json_t *root = export_json(f->db, "originals", true, &c);
	assert_int_equal(json_object_size(root), 1);
	assert_int_equal(c.tables, 1);
	assert_int_equal(c.rows, 2);
	json_t *blob = json_object_get(json_array_get(json_object_get(root, "originals"), 1), "content");
	const char *b64 = json_string_value(json_object_get(blob, "base64"));
	assert_string_equal(b64, "f0VMRgIBAQA=");
	unsigned char out[16];
	assert_int_equal(EVP_DecodeBlock(out, (const unsigned char *)b64, (int)strlen(b64)), 9);
	assert_memory_equal(out, "\x7f" "ELF\x02\x01\x01\x00", 8);
	json_decref(root);

	struct rt_sb err = RT_SB_INIT;
	struct db_export_opts o = { .table = "iteration" };
	FILE *m = fopen("/dev/null", "w");
	assert_int_equal(db_export_json(f->db, &o, m, NULL, &err), RT_EINVAL);
	fclose(m);
	assert_non_null(strstr(err.buf, "no table 'iteration' (did you mean 'iterations'?)"));
	rt_sb_release(&err);
}

/* A small RFC 4180 reader: records of fields; returns the number of records. */
static size_t csv_read(const char *s, char *fields[][32], size_t *nf, size_t max)
{
	size_t rec = 0, fi = 0;
	struct rt_sb cur = RT_SB_INIT;
	bool any = false;
	while (*s && rec < max) {
		any = true;
		if (*s == '"') {
			for (s++; *s; s++) {
				if (*s == '"' && s[1] == '"') {
					rt_sb_addc(&cur, '"');
					s++;
				} else if (*s == '"') {
					s++;
					break;
				} else {
					rt_sb_addc(&cur, *s);
				}
			}
		}
		while (*s && *s != ',' && *s != '\r')
			rt_sb_addc(&cur, *s++);
		fields[rec][fi++] = rt_sb_detach(&cur, NULL);
		if (*s == ',') {
			s++;
		} else if (*s == '\r') {
			assert_int_equal(s[1], '\n');
			s += 2;
			nf[rec++] = fi;
			fi = 0;
			any = false;
		}
	}
	assert_false(any); /* every record ends with CRLF */
	return rec;
}

/* One table as CSV (the caller frees it); *rows: its rows. */
static char *export_csv(struct db *db, const char *table, bool blobs, size_t *rows)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_export_csv(db, table, blobs, m, rows, &err), 0);
	fclose(m);
	rt_sb_release(&err);
	return buf;
}

static void test_csv_quoting(void **state)
{
	struct fx *f = *state;
	size_t rows = 0;
	char *buf = export_csv(f->db, "gate_answers", false, &rows);
	assert_int_equal(rows, 6);
	assert_non_null(strstr(buf, "\"She pays 5 + 3 = \"\"8\"\" dollars,\nso the answer is #### 8\""));
	static char *fields[16][32];
	size_t nf[16];
	size_t rec = csv_read(buf, fields, nf, 16);
	assert_int_equal(rec, 7);
	assert_string_equal(fields[0][0], "id");
	assert_string_equal(fields[0][4], "response");
	for (size_t r = 0; r < rec; r++)
		assert_int_equal(nf[r], nf[0]);
	assert_string_equal(fields[3][4], "She pays 5 + 3 = \"8\" dollars,\nso the answer is #### 8");
	assert_string_equal(fields[1][4], "");          /* NULL */
	assert_string_equal(fields[1][17], "1.21");      /* latency_s, shortest form */
	assert_string_equal(fields[6][16], "http 503: overloaded");
	for (size_t r = 0; r < rec; r++)
		for (size_t i = 0; i < nf[r]; i++)
			free(fields[r][i]);
	free(buf);
}

static void test_csv_blobs_and_dir(void **state)
{
	struct fx *f = *state;
	char *buf = NULL;
	size_t n = 0, rows = 0;
	FILE *m = open_memstream(&buf, &n);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_export_csv(f->db, "originals", false, m, &rows, &err), 0);
	fclose(m);
	char sha[65], want[128];
	rt_sha256_hex("\x7f" "ELF\x02\x01\x01\x00", 8, sha);
	snprintf(want, sizeof(want), ",size=8 sha256=%s,", sha);
	assert_non_null(strstr(buf, want));
	free(buf);
	m = open_memstream(&buf, &n);
	assert_int_equal(db_export_csv(f->db, "originals", true, m, &rows, &err), 0);
	fclose(m);
	assert_non_null(strstr(buf, ",f0VMRgIBAQA=,"));
	free(buf);

	char *dir = xasprintf("%s/out/csv", f->dir);
	struct db_export_opts o = { 0 };
	struct db_export_count c;
	assert_int_equal(db_export_csv_dir(f->db, &o, dir, &c, &err), 0);
	assert_int_equal(c.tables, db_export_ntables);
	for (size_t i = 0; i < db_export_ntables; i++) {
		char *p = xasprintf("%s/%s.csv", dir, db_export_tables[i]);
		char *tmp = xasprintf("%s.tmp", p);
		assert_true(rt_file_exists(p));
		assert_false(rt_file_exists(tmp));
		free(p);
		free(tmp);
	}
	char *notes;
	size_t len;
	char *p = xasprintf("%s/notes.csv", dir);
	assert_int_equal(rt_read_file(p, &notes, &len, &err), 0);
	assert_non_null(strstr(notes, "id,iteration_id,kind,by_iteration_id,text,author,created_at\r\n"));
	assert_non_null(strstr(notes, ",correction,4,"));
	free(notes);
	free(p);
	free(dir);
	rt_sb_release(&err);
}

/* ---- what a CSV keeps out: formulas ---- */

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

/* Text cells that a spreadsheet would run as a formula (=, +, -, @, tab,
 * carriage return first) are written quoted behind a single quote; numbers
 * and plain text are written as they were. */
static void test_csv_formula_cells_are_quoted(void **state)
{
	struct fx *f = *state;
	add_note(f, "=HYPERLINK(\"http://x/\",\"y\")");
	add_note(f, "+1+cmd|' /C calc'!A0");
	add_note(f, "-2+3");
	add_note(f, "@SUM(A1:A2)");
	add_note(f, "\t=1");
	add_note(f, "\r=1");
	add_note(f, "a = b + c");
	size_t rows;
	char *csv = export_csv(f->db, "notes", false, &rows);
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
		cmocka_unit_test_setup_teardown(test_tables_are_the_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_one_table_base64, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_blobs_and_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_formula_cells_are_quoted, setup, teardown),
	};
	return cmocka_run_group_tests_name("db_export", tests, NULL, NULL);
}

/*
 * Cases:
 *   test_tables_are_the_schema         every table of the schema is exported, nothing else
 *   test_json_all                      all tables as JSON: counts match the rows
 *   test_json_one_table_base64         one table; blobs as base64 with --blobs
 *   test_csv_quoting                   RFC 4180 quoting, read back by a reader here
 *   test_csv_blobs_and_dir             blobs in CSV; one file per table, no temp left
 *   test_csv_formula_cells_are_quoted  cells a spreadsheet would run are quoted behind '
 */
