/*
 * Python's random.Random (see gate_pyrandom.h): MT19937 as in
 * Modules/_randommodule.c (Matsumoto and Nishimura's reference
 * generator, init_genrand and init_by_array with its 19650218 seed) and
 * Lib/random.py's _randbelow_with_getrandbits and sample().
 */
#include "runner/gate/gate_pyrandom.h"

#include <math.h>
#include <stdlib.h>

#include "runner/base/rt.h"

#define PYRAND_M 397
#define UPPER_MASK 0x80000000U
#define LOWER_MASK 0x7fffffffU

static void init_genrand(struct pyrand *r, uint32_t s)
{
	r->mt[0] = s;
	for (int i = 1; i < PYRAND_N; i++)
		r->mt[i] = 1812433253U * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
	r->mti = PYRAND_N;
}

/* init_by_array: the key is the seed's 32-bit words, least significant first. */
static void init_by_array(struct pyrand *r, const uint32_t *key, int len)
{
	init_genrand(r, 19650218U);
	int i = 1, j = 0;
	for (int k = PYRAND_N > len ? PYRAND_N : len; k; k--) {
		r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525U)) + key[j] +
			   (uint32_t)j;
		i++;
		j++;
		if (i >= PYRAND_N) {
			r->mt[0] = r->mt[PYRAND_N - 1];
			i = 1;
		}
		if (j >= len)
			j = 0;
	}
	for (int k = PYRAND_N - 1; k; k--) {
		r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941U)) -
			   (uint32_t)i;
		i++;
		if (i >= PYRAND_N) {
			r->mt[0] = r->mt[PYRAND_N - 1];
			i = 1;
		}
	}
	r->mt[0] = 0x80000000U; /* MSB is 1; assuring non-zero initial array */
}

void pyrand_seed(struct pyrand *r, uint64_t seed)
{
	/* random_seed(): keyused = max(1, words of the integer's bit length). */
	uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
	init_by_array(r, key, key[1] ? 2 : 1);
}

static void regenerate(struct pyrand *r)
{
	static const uint32_t mag01[2] = { 0, 0x9908b0dfU };
	int kk = 0;
	uint32_t y;
	for (; kk < PYRAND_N - PYRAND_M; kk++) {
		y = (r->mt[kk] & UPPER_MASK) | (r->mt[kk + 1] & LOWER_MASK);
		r->mt[kk] = r->mt[kk + PYRAND_M] ^ (y >> 1) ^ mag01[y & 1U];
	}
	for (; kk < PYRAND_N - 1; kk++) {
		y = (r->mt[kk] & UPPER_MASK) | (r->mt[kk + 1] & LOWER_MASK);
		r->mt[kk] = r->mt[kk + (PYRAND_M - PYRAND_N)] ^ (y >> 1) ^ mag01[y & 1U];
	}
	y = (r->mt[PYRAND_N - 1] & UPPER_MASK) | (r->mt[0] & LOWER_MASK);
	r->mt[PYRAND_N - 1] = r->mt[PYRAND_M - 1] ^ (y >> 1) ^ mag01[y & 1U];
	r->mti = 0;
}

uint32_t pyrand_u32(struct pyrand *r)
{
	if (r->mti >= PYRAND_N)
		regenerate(r);
	uint32_t y = r->mt[r->mti++];
	y ^= (y >> 11);
	y ^= (y << 7) & 0x9d2c5680U;
	y ^= (y << 15) & 0xefc60000U;
	y ^= (y >> 18);
	return y;
}

uint64_t pyrand_getrandbits(struct pyrand *r, int k)
{
	if (k <= 0)
		return 0;
	if (k <= 32)
		return pyrand_u32(r) >> (32 - k);
	/* Wider: 32-bit words, least significant first; the last one keeps
	 * its top (k mod 32) bits. */
	uint64_t lo = pyrand_u32(r);
	uint64_t hi = pyrand_u32(r) >> (64 - k);
	return hi << 32 | lo;
}

static int bit_length(uint64_t n)
{
	int k = 0;
	for (; n; n >>= 1)
		k++;
	return k;
}

uint64_t pyrand_below(struct pyrand *r, uint64_t n)
{
	int k = bit_length(n); /* not n - 1: n can be 1 */
	uint64_t v = pyrand_getrandbits(r, k);
	while (v >= n)
		v = pyrand_getrandbits(r, k);
	return v;
}

/* sample()'s choice of branch: a list of n beats a set of k below this size. */
static size_t set_size(size_t k)
{
	size_t s = 21; /* size of a small set minus size of an empty list */
	if (k > 5)     /* table size for big sets: 4 ** ceil(log(3k, 4)), in doubles as Python */
		s += (size_t)pow(4, ceil(log((double)(k * 3)) / log(4)));
	return s;
}

void pyrand_sample(struct pyrand *r, size_t n, size_t k, size_t *out)
{
	if (n <= set_size(k)) {
		/* The pool: non-selected items live at pool[0 .. n-i). */
		size_t *pool = xcalloc(n ? n : 1, sizeof(*pool));
		for (size_t i = 0; i < n; i++)
			pool[i] = i;
		for (size_t i = 0; i < k; i++) {
			size_t j = (size_t)pyrand_below(r, n - i);
			out[i] = pool[j];
			pool[j] = pool[n - i - 1];
		}
		free(pool);
		return;
	}
	/* The set: draw from all n, redraw what was already selected. */
	unsigned char *selected = xcalloc(n / 8 + 1, 1);
	for (size_t i = 0; i < k; i++) {
		size_t j = (size_t)pyrand_below(r, n);
		while (selected[j / 8] & (1U << (j % 8)))
			j = (size_t)pyrand_below(r, n);
		selected[j / 8] |= (unsigned char)(1U << (j % 8));
		out[i] = j;
	}
	free(selected);
}
