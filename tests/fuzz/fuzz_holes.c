/*
 * Fuzz harness: the holes research's inputs (agents/holes.c), a tuned table
 * and a profile of shapes. The input is three lines, then the table and the
 * profile separated by a line "===":
 *
 *     csv|json                    the table's format
 *     M,N,K                       key columns (empty: none)
 *     weight                      the profile's weight column (empty: none)
 *     <table bytes>
 *     ===
 *     <profile bytes (CSV)>
 *
 * The promises: it answers or says why; the counts add up (covered +
 * holes = observed keys), shares lie in [0, 1] and sum to 1 with the
 * covered share, holes come largest share first, and every hole of a
 * non-empty table names its nearest entry and that entry's fields as JSON.
 */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "agents/research/holes.h"

static void check(const struct research_holes *h)
{
	FUZZ_CHECK(h->covered <= h->observed && h->n == h->observed - h->covered,
		   "%zu holes, %zu covered of %zu observed", h->n, h->covered, h->observed);
	FUZZ_CHECK(h->covered_share >= 0 && h->covered_share <= 1, "covered share %g",
		   h->covered_share);
	double sum = h->covered_share;
	for (size_t i = 0; i < h->n; i++) {
		const struct research_hole *x = &h->v[i];
		FUZZ_CHECK(x->key, "hole %zu has no key", i);
		FUZZ_CHECK(x->share >= 0 && x->share <= 1, "hole %s: share %g", x->key, x->share);
		FUZZ_CHECK(!i || h->v[i - 1].share >= x->share, "holes out of order at %zu", i);
		sum += x->share;
		if (h->entries) {
			FUZZ_CHECK(x->nearest && x->fields_json, "hole %s: no nearest entry of %zu",
				   x->key, h->entries);
			json_error_t je;
			json_t *j = json_loads(x->fields_json, JSON_DECODE_ANY, &je);
			FUZZ_CHECK(j, "hole %s: fields are not JSON: %s", x->key, x->fields_json);
			json_decref(j);
		}
	}
	FUZZ_CHECK(h->observed == 0 || !isfinite(sum) || fabs(sum - 1) < 1e-6 || sum == 0,
		   "shares sum to %g", sum);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part head[4], files[2];
	fuzz_split(data, size, "\n", head, 4);
	fuzz_split((const uint8_t *)head[3].p, head[3].n, "\n===\n", files, 2);
	bool csv = head[0].n >= 3 && !memcmp(head[0].p, "csv", 3);
	char *cols = fuzz_str(head[1]), *weight = fuzz_str(head[2]);
	const char *kc[8];
	size_t nkc = 0;
	for (char *p = cols, *q; *p && nkc < 8; p = q + 1) {
		kc[nkc++] = p;
		if (!(q = strchr(p, ',')))
			break;
		*q = 0;
	}
	char *table = fuzz_write(csv ? "t.csv" : "t.json", files[0].p, files[0].n);
	char *profile = fuzz_write("profile.csv", files[1].p, files[1].n);
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	int rc = research_holes_find(table, profile, kc, nkc, *weight ? weight : NULL, &h, &err);
	FUZZ_CHECK(rc == 0 || err.len, "returned %d without a message", rc);
	if (rc == 0)
		check(&h);
	research_holes_release(&h);
	rt_sb_release(&err);
	free(table);
	free(profile);
	free(cols);
	free(weight);
	return 0;
}
