/*
 * runner/gate/gate_pyrandom.c against CPython: every line of
 * tests/gate/pyrandom_vectors.txt (made by `lmeval_gsm8k.py vectors` with
 * CPython 3.11.7) is replayed: getrandbits(32) after Random(seed) for seeds
 * of one and two words, getrandbits(k) for k from 1 to 64, _randbelow(n)
 * up to 2^63 + 7, sample(range(n), k) on both sides of sample()'s
 * set-or-pool rule, and 40 successive 5-of-7473 draws from Random(1234)
 * (the GSM8K shots of the first 40 questions).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"
#include "runner/gate/gate_pyrandom.h"
#include "fixture_lines.h"

/* The vectors file. */
static char *vectors;

static int load(void **state)
{
	(void)state;
	vectors = fixture_read("pyrandom_vectors.txt");
	return vectors ? 0 : -1;
}

static int unload(void **state)
{
	(void)state;
	free(vectors);
	return 0;
}

/* The numbers of each line tagged `tag`, one call of check() per line. */
static void (*check_fn)(const uint64_t *v, size_t n);

static void as_numbers(char **w, size_t n)
{
	uint64_t *v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = strtoull(w[i], NULL, 10);
	check_fn(v, n);
	free(v);
}

static int each_line(const char *tag, void (*check)(const uint64_t *v, size_t n))
{
	check_fn = check;
	return fixture_each(vectors, tag, as_numbers);
}

static void check_u32(const uint64_t *v, size_t n)
{
	struct pyrand r;
	pyrand_seed(&r, v[0]);
	for (size_t i = 1; i < n; i++)
		assert_int_equal(pyrand_u32(&r), v[i]);
}

static void check_bits(const uint64_t *v, size_t n)
{
	struct pyrand r;
	pyrand_seed(&r, v[0]);
	for (size_t i = 2; i < n; i++)
		assert_true(pyrand_getrandbits(&r, (int)v[1]) == v[i]);
}

static void check_below(const uint64_t *v, size_t n)
{
	struct pyrand r;
	pyrand_seed(&r, v[0]);
	for (size_t i = 2; i < n; i++)
		assert_true(pyrand_below(&r, v[1]) == v[i]);
}

static void check_sample(const uint64_t *v, size_t n)
{
	struct pyrand r;
	pyrand_seed(&r, v[0]);
	size_t k = (size_t)v[2];
	assert_int_equal(n, 3 + k);
	size_t *out = xcalloc(k + 1, sizeof(*out));
	pyrand_sample(&r, (size_t)v[1], k, out);
	for (size_t i = 0; i < k; i++)
		assert_int_equal(out[i], v[3 + i]);
	free(out);
}

static void check_draws(const uint64_t *v, size_t n)
{
	struct pyrand r;
	pyrand_seed(&r, v[0]);
	size_t k = (size_t)v[2], count = (size_t)v[3];
	assert_int_equal(n, 4 + k * count);
	size_t *out = xcalloc(k, sizeof(*out));
	for (size_t d = 0; d < count; d++) {
		pyrand_sample(&r, (size_t)v[1], k, out);
		for (size_t i = 0; i < k; i++)
			assert_int_equal(out[i], v[4 + d * k + i]);
	}
	free(out);
}

static void test_seed_and_words(void **state)
{
	(void)state;
	assert_int_equal(each_line("u32", check_u32), 9);
}

static void test_getrandbits(void **state)
{
	(void)state;
	assert_int_equal(each_line("bits", check_bits), 9);
}

static void test_randbelow(void **state)
{
	(void)state;
	assert_int_equal(each_line("below", check_below), 9);
}

static void test_sample_both_branches(void **state)
{
	(void)state;
	assert_int_equal(each_line("sample", check_sample), 17);
}

static void test_successive_draws(void **state)
{
	(void)state;
	assert_int_equal(each_line("draws", check_draws), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_and_words),       /* Random(seed).getrandbits(32), 1 and 2 key words */
		cmocka_unit_test(test_getrandbits),          /* k = 1 .. 64 */
		cmocka_unit_test(test_randbelow),            /* rejection on getrandbits(bit_length(n)) */
		cmocka_unit_test(test_sample_both_branches), /* pool (n <= setsize) and set */
		cmocka_unit_test(test_successive_draws),     /* lm-eval's per-document draws */
	};
	return cmocka_run_group_tests(tests, load, unload);
}
