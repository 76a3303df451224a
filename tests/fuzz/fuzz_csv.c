/*
 * Fuzz harness: the CSV parser (variants/var_csv.c) that table edits and
 * the holes research read tables and profiles with. The input is the CSV
 * text. The promises: it parses or says why (and frees what it parsed:
 * the sanitizers' leak check runs on every input); the rows tile the text
 * exactly, each ending at its terminator; the fields tile their row, one
 * comma apart; an unquoted field's value is its raw bytes (up to a NUL);
 * rows start on increasing lines.
 */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "variants/var.h"

static void check_row(const char *d, size_t len, const struct var_csv_row *r)
{
	FUZZ_CHECK(r->start <= r->term && r->term <= r->end && r->end <= len,
		   "row bounds %zu %zu %zu", r->start, r->term, r->end);
	size_t tl = r->end - r->term;
	const char *t = d + r->term;
	FUZZ_CHECK((tl == 0 && r->end == len) || (tl == 1 && (*t == '\n' || *t == '\r')) ||
		   (tl == 2 && t[0] == '\r' && t[1] == '\n'), "row terminator of %zu bytes", tl);
	FUZZ_CHECK(r->n > 0, "a row without fields");
	FUZZ_CHECK(r->f[0].start == r->start, "the first field does not start the row");
	FUZZ_CHECK(r->f[r->n - 1].end == r->term, "the last field does not end the row");
	for (size_t j = 0; j < r->n; j++) {
		const struct var_csv_field *f = &r->f[j];
		FUZZ_CHECK(f->start <= f->end && f->end <= r->term, "field bounds");
		FUZZ_CHECK(f->value, "a field without a value");
		if (j + 1 < r->n)
			FUZZ_CHECK(d[f->end] == ',' && r->f[j + 1].start == f->end + 1,
				   "fields are not one comma apart");
		if (f->quoted) {
			FUZZ_CHECK(d[f->start] == '"', "a quoted field without its quote");
		} else { /* (up to a NUL byte: values are C strings) */
			size_t n = f->end - f->start, vl = strlen(f->value);
			FUZZ_CHECK((vl == n || (vl < n && !d[f->start + vl])) &&
				   !memcmp(f->value, d + f->start, vl),
				   "an unquoted field's value is not its bytes");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	struct var_csv c;
	struct rt_sb err = RT_SB_INIT;
	int rc = var_csv_parse("fuzz.csv", d, size, &c, &err);
	FUZZ_CHECK(rc == 0 || (rc == RT_EPARSE && err.len), "returned %d: %s", rc, err.buf);
	if (rc == 0) {
		FUZZ_CHECK((c.n == 0) == (size == 0), "%zu rows for %zu bytes", c.n, size);
		for (size_t i = 0; i < c.n; i++) {
			check_row(d, size, &c.rows[i]);
			FUZZ_CHECK(c.rows[i].start == (i ? c.rows[i - 1].end : 0),
				   "row %zu does not start where the previous one ended", i);
			FUZZ_CHECK(!i || c.rows[i].line > c.rows[i - 1].line, "row %zu: line %d", i,
				   c.rows[i].line);
		}
		FUZZ_CHECK(!c.n || c.rows[c.n - 1].end == size, "the rows do not reach the end");
		var_csv_release(&c);
	}
	rt_sb_release(&err);
	return 0;
}
