/*
 * Unit tests of agents/holes.c at scale and against a brute-force reference:
 *   - the nearest entry of every hole is the one a scan of the whole table
 *     finds (shapes of one family by summed |log2| ratios, anything else 1000 +
 *     edit distance, the first in table order among equals), on tables full
 *     of ties, repeated keys, keys that are not shapes and mixed arities;
 *   - weights of repeated profile rows are summed, coverage counted;
 *   - 50,000 profile rows against 5,000 entries finish in seconds (the
 *     quadratic version took minutes; bench_scale times string keys too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/research/holes.h"
#include "scale_gen.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rt-test-holes-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);
	free(cmd);
	return rc ? -1 : 0;
}

static void write_file(const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	free(p);
}

/* ---- the reference: the definition, one scan per hole ---- */

/* The numbers of a key (log2) and its family, written plainly: with commas,
 * each part that is wholly a finite positive number; without, each run of
 * digits. */
static size_t ref_shape(const char *key, double *x, char *family)
{
	size_t n = 0, f = 0;
	bool parts = strchr(key, ',') != NULL;
	const char *p = key;
	while (*p) {
		size_t len = parts ? strcspn(p, ",") : isdigit((unsigned char)*p) ? strspn(p, "0123456789") : 0;
		char part[256] = "";
		char *end = NULL;
		double v = 0;
		if (len && len < sizeof(part) && !isspace((unsigned char)*p)) {
			memcpy(part, p, len);
			part[len] = 0;
			v = strtod(part, &end);
		}
		if (end && !*end && v > 0 && isfinite(v) && n < 64) {
			x[n++] = log2(v);
			family[f++] = '#';
		} else {
			len = len ? len : 1;
			memcpy(family + f, p, len);
			f += len;
		}
		p += len;
		if (parts && *p == ',')
			family[f++] = *p++;
	}
	family[f] = 0;
	return n;
}

static double ref_distance(const char *a, const char *b)
{
	double x[64], y[64];
	char fa[512], fb[512];
	size_t n = ref_shape(a, x, fa), m = ref_shape(b, y, fb);
	if (n && n == m && !strcmp(fa, fb)) {
		double d = 0;
		for (size_t i = 0; i < n; i++)
			d += fabs(x[i] - y[i]);
		return d;
	}
	return 1000.0 + (double)rt_edit_distance(a, b);
}

static const char *ref_nearest(const char *key, char *const *entries, size_t n)
{
	const char *best = NULL;
	double bd = INFINITY;
	for (size_t i = 0; i < n; i++) {
		double d = ref_distance(key, entries[i]);
		if (d < bd)
			bd = d, best = entries[i];
	}
	return best;
}

/* Every hole's nearest entry is the reference's. */
static void check_nearest(const struct research_holes *h, char *const *entries, size_t n)
{
	for (size_t i = 0; i < h->n; i++) {
		const char *want = ref_nearest(h->v[i].key, entries, n);
		if (!want != !h->v[i].nearest || (want && strcmp(want, h->v[i].nearest)))
			fail_msg("hole %s: nearest %s, the scan says %s", h->v[i].key,
				 h->v[i].nearest ? h->v[i].nearest : "(none)", want ? want : "(none)");
	}
}

/* Write table and profile, find the holes, check each one's nearest entry
 * against the scan; frees entries[0..ne) and the texts. */
static void find_and_check(const char *table, struct rt_sb *t, const char *profile,
			   struct rt_sb *p, const char *const *kc, size_t nkc, const char *weight,
			   char **entries, size_t ne, struct research_holes *h)
{
	write_file(table, t->buf);
	write_file(profile, p->buf);
	struct rt_sb err = RT_SB_INIT;
	int rc;
	scale_find_holes(dir, table, profile, kc, nkc, weight, h, &rc, &err);
	if (rc)
		fail_msg("%s", err.buf);
	assert_true(h->n > 1000);
	check_nearest(h, entries, ne);
	for (size_t i = 0; i < ne; i++)
		free(entries[i]);
	rt_sb_release(t);
	rt_sb_release(p);
	rt_sb_release(&err);
}

/* A CSV table of shapes on a grid of powers of two (ties everywhere), with
 * repeated keys and keys that are not shapes; a profile around it. */
static void test_csv_matches_the_scan(void **state)
{
	(void)state;
	struct rt_rand r;
	rt_rand_seed(&r, 5);
	static const char *const odd[] = { "abc", "0", "-4", "1.5", "x2", "1e3", "inf", "nan" };
	struct rt_sb t = RT_SB_INIT, p = RT_SB_INIT;
	char *entries[700];
	size_t ne = 0;
	rt_sb_adds(&t, "M,N,K,tile\n");
	for (; ne < 700; ne++) {
		char m[16];
		if (rt_rand_below(&r, 10) == 0)
			snprintf(m, sizeof(m), "%s", odd[rt_rand_below(&r, 8)]);
		else
			snprintf(m, sizeof(m), "%d", 1 << rt_rand_below(&r, 14));
		entries[ne] = xasprintf("%s,%d,%d", m, 256 << rt_rand_below(&r, 4),
					256 << rt_rand_below(&r, 4));
		rt_sb_addf(&t, "%s,%zu\n", entries[ne], ne);
	}
	rt_sb_adds(&p, "M,N,K,time_us\n");
	for (int i = 0; i < 6000; i++) {
		uint64_t k = rt_rand_below(&r, 20);
		if (k == 0)
			rt_sb_addf(&p, "%s,%d\n", entries[rt_rand_below(&r, ne)], 3);
		else if (k == 1)
			rt_sb_addf(&p, "%s,%d,%d,1\n", odd[rt_rand_below(&r, 8)],
				   128 << rt_rand_below(&r, 6), 128 << rt_rand_below(&r, 6));
		else
			rt_sb_addf(&p, "%d,%d,%d,%d\n", 1 + (int)rt_rand_below(&r, 20000),
				   128 << rt_rand_below(&r, 6), 128 << rt_rand_below(&r, 6),
				   (int)rt_rand_below(&r, 5));
	}
	static const char *const mnk[] = { "M", "N", "K" };
	struct research_holes h;
	find_and_check("t.csv", &t, "p.csv", &p, mnk, 3, "time_us", entries, ne, &h);
	assert_true(h.covered > 10);
	for (size_t i = 1; i < h.n; i++) /* largest share first */
		assert_true(h.v[i - 1].share >= h.v[i].share);
	research_holes_release(&h);
}

/* A JSON table with keys of every arity and string keys. */
static void test_json_matches_the_scan(void **state)
{
	(void)state;
	struct rt_rand r;
	rt_rand_seed(&r, 6);
	static const char *const words[] = { "bf16", "fp8", "i8", "fp16" };
	struct rt_sb t = RT_SB_INIT, p = RT_SB_INIT;
	char *entries[600];
	size_t ne = 0;
	rt_sb_adds(&t, "{");
	for (; ne < 600; ne++) {
		switch (rt_rand_below(&r, 4)) {
		case 0:
			entries[ne] = xasprintf("%s_%d_%zu", words[rt_rand_below(&r, 4)],
						1 << rt_rand_below(&r, 10), ne);
			break;
		case 1:
			entries[ne] = xasprintf("%d,%d", 1 << rt_rand_below(&r, 12), 64 << rt_rand_below(&r, 3));
			break;
		case 2:
			entries[ne] = xasprintf("%d", 1 + (int)rt_rand_below(&r, 5000) * 7 + (int)ne);
			break;
		default:
			entries[ne] = xasprintf("%d,%d,%zu", 1 << rt_rand_below(&r, 8), 16 << rt_rand_below(&r, 3), ne);
		}
		rt_sb_addf(&t, "%s\"%s\": {\"tile\": %zu}", ne ? ", " : "", entries[ne], ne);
	}
	rt_sb_adds(&t, "}\n");
	rt_sb_adds(&p, "key\n");
	for (int i = 0; i < 3000; i++) {
		switch (rt_rand_below(&r, 5)) {
		case 0:
			rt_sb_addf(&p, "%s_%d_%d\n", words[rt_rand_below(&r, 4)],
				   1 << rt_rand_below(&r, 11), (int)rt_rand_below(&r, 700));
			break;
		case 1:
			rt_sb_addf(&p, "\"%d,%d\"\n", 1 + (int)rt_rand_below(&r, 5000), 64 << rt_rand_below(&r, 4));
			break;
		case 2:
			rt_sb_addf(&p, "%d\n", 1 + (int)rt_rand_below(&r, 40000));
			break;
		case 3:
			rt_sb_addf(&p, "\"%d,%d,%d,%d\"\n", 1 << rt_rand_below(&r, 8), 2, 3, 4);
			break;
		default:
			rt_sb_addf(&p, "\"%s\"\n", entries[rt_rand_below(&r, ne)]);
		}
	}
	struct research_holes h;
	find_and_check("t.json", &t, "k.csv", &p, NULL, 0, NULL, entries, ne, &h);
	research_holes_release(&h);
}

/* AITER's tuned GEMM CSV (aiter/configs/a8w8_tuned_gemm.csv layout): keyed by
 * cu_num,M,N,K plus categorical columns, with the kernel it picked and what
 * it measured (us, tflops, bw, errRatio). The nearest entry is found on the
 * numbers within the same categorical family, not by edit distance, and the
 * suggestion never carries a measured column. Found by issue 11. */
static void test_aiter_keys_and_measured(void **state)
{
	(void)state;
	write_file("a.csv",
		   "gfx,cu_num,M,N,K,q_dtype_w,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
		   "gfx942,304,16,1280,8192,torch.float8_e4m3fnuz,12,0,9.8,a8w8_16x64,34.2,1090.1,0.0\n"
		   "gfx942,304,512,1280,8192,torch.float8_e4m3fnuz,40,1,31.5,a8w8_256x128,341.0,420.7,0.0\n"
		   "gfx942,304,1024,1280,8192,torch.int8,41,0,55.0,a8w8_i8_256x256,390.2,301.3,0.0\n"
		   "gfx950,256,128,1280,8192,torch.float8_e4m3fnuz,7,0,12.0,a8w8_950,190.5,900.0,0.0\n");
	/* M=600 (fp8 on gfx942) is numerically nearest M=512; by edit distance
	 * "gfx942,304,600,1280,8192,..." is as near to M=16's row. */
	write_file("ap.csv", "gfx,cu_num,M,N,K,q_dtype_w,time\n"
			     "gfx942,304,600,1280,8192,torch.float8_e4m3fnuz,5\n"
			     "gfx942,304,1024,1280,8192,torch.int8,1\n");
	static const char *const kc[] = { "gfx", "cu_num", "M", "N", "K", "q_dtype_w" };
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	char *t = xasprintf("%s/a.csv", dir), *p = xasprintf("%s/ap.csv", dir);
	if (research_holes_find(t, p, kc, 6, "time", &h, &err))
		fail_msg("%s", err.buf);
	assert_int_equal(h.n, 1);
	assert_string_equal(h.v[0].key, "gfx942,304,600,1280,8192,torch.float8_e4m3fnuz");
	assert_string_equal(h.v[0].nearest, "gfx942,304,512,1280,8192,torch.float8_e4m3fnuz");
	assert_string_equal(h.v[0].fields_json, "{\"kernelId\":40,\"kernelName\":\"a8w8_256x128\",\"splitK\":1}");
	research_holes_release(&h);
	/* a JSON table: measured fields are dropped from its entries too */
	write_file("a.json", "{\"decode.BS_LE_32\": {\"BLOCK_M\": 32, \"us\": 14.5, \"tflops\": 80},"
			     " \"prefill.T_GT_512\": {\"BLOCK_M\": 64, \"time_us\": 3}}");
	write_file("aj.csv", "key\ndecode.BS_LE_8\n");
	free(t);
	t = xasprintf("%s/a.json", dir);
	free(p);
	p = xasprintf("%s/aj.csv", dir);
	if (research_holes_find(t, p, NULL, 0, NULL, &h, &err))
		fail_msg("%s", err.buf);
	assert_string_equal(h.v[0].nearest, "decode.BS_LE_32"); /* 8 vs 32: numbers of one family */
	assert_string_equal(h.v[0].fields_json, "{\"BLOCK_M\":32}");
	research_holes_release(&h);
	free(t);
	free(p);
	rt_sb_release(&err);
}

static void test_weights_and_coverage(void **state)
{
	(void)state;
	write_file("t.csv", "M,N,K,tile\n16,4096,4096,2\n128,4096,4096,3\n1024,4096,4096,5\n");
	write_file("p.csv", "M,N,K,time_us\n16,4096,4096,120\n256,4096,4096,1500\n"
			    "8192,4096,4096,2000\n256,4096,4096,300\n128,4096,4096,800\n"
			    "256,4096,4096,0.5\n");
	char *tp = xasprintf("%s/t.csv", dir), *pp = xasprintf("%s/p.csv", dir);
	static const char *const mnk[] = { "M", "N", "K" };
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_holes_find(tp, pp, mnk, 3, "time_us", &h, &err), 0);
	assert_int_equal(h.observed, 4);
	assert_int_equal(h.covered, 2);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.v[0].key, "8192,4096,4096");
	assert_string_equal(h.v[0].nearest, "1024,4096,4096");
	assert_string_equal(h.v[1].key, "256,4096,4096");
	assert_float_equal(h.v[1].weight, 1800.5, 0);
	assert_string_equal(h.v[1].nearest, "128,4096,4096");
	assert_string_equal(h.v[1].fields_json, "{\"tile\":3}");
	assert_float_equal(h.covered_share, 920 / 4720.5, 1e-12);
	research_holes_release(&h);
	free(tp);
	free(pp);
	rt_sb_release(&err);
}

static double time_find(const char *table, const char *profile, const char *const *kc,
			size_t nkc, const char *weight, size_t want_observed)
{
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	int rc;
	double el = scale_find_holes(dir, table, profile, kc, nkc, weight, &h, &rc, &err);
	if (rc)
		fail_msg("%s", err.buf);
	assert_true(h.observed >= want_observed);
	research_holes_release(&h);
	rt_sb_release(&err);
	return el;
}

static void test_scale(void **state)
{
	(void)state;
	static const char *const mnk[] = { "M", "N", "K" };
	/* Sanitized builds check a fifth of the size and no time: their realloc
	 * copies every time, which the CSV reader's row list feels. */
	size_t rows = SCALE_TIMED ? 50000 : 10000;
	assert_int_equal(scale_holes_csv(dir, 5000, rows), 0);
	double el = time_find("table.csv", "profile.csv", mnk, 3, "time_us", rows * 49 / 50);
	printf("holes: %zu rows, 5000 entries: %.2f s\n", rows, el);
	assert_true(!SCALE_TIMED || el < 20); /* was minutes: every row against every entry */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_csv_matches_the_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_matches_the_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aiter_keys_and_measured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_weights_and_coverage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
	};
	return cmocka_run_group_tests_name("holes", tests, NULL, NULL);
}
