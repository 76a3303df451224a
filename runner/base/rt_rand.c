/*
 * The one pseudo-random generator (see rand.h): splitmix64, xoshiro256**
 * and the uniform, bounded and normal draws built on it.
 */
#include "runner/base/rand.h"

#include <math.h>

uint64_t rt_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += RT_SPLITMIX64_GAMMA);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double rt_unit_double(uint64_t x)
{
	return (double)(x >> 11) * 0x1.0p-53;
}

void rt_rand_seed(struct rt_rand *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = rt_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rt_rand_next(struct rt_rand *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double rt_rand_uniform(struct rt_rand *r)
{
	return rt_unit_double(rt_rand_next(r));
}

uint64_t rt_rand_below(struct rt_rand *r, uint64_t n)
{
	/* rejection sampling on the top of the range removes modulo bias */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;
	do
		v = rt_rand_next(r);
	while (v >= limit);
	return v % n;
}

double rt_rand_normal(struct rt_rand *r)
{
	double u1 = rt_rand_uniform(r), u2 = rt_rand_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
