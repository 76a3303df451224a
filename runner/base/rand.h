/*
 * The one pseudo-random generator: splitmix64 (Steele, Lea and Flood) and
 * xoshiro256** (Blackman and Vigna), seeded, the same on every machine.
 * Nothing here is for secrets.
 *
 * splitmix64 alone serves the streams that need one 64-bit state and must
 * not change (the GSM8K subset shuffle, kernel benchmark inputs, simserve's
 * filler text). xoshiro256**, seeded through splitmix64, serves the
 * statistics (the bootstrap). Every sequence is pinned by tests/base.
 */
#ifndef RT_RAND_H
#define RT_RAND_H

#include <stdint.h>

/* splitmix64's increment (2^64 / golden ratio), also a good odd multiplier
 * for turning a small seed into a spread-out state. */
#define RT_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ULL

/* Advance *state by RT_SPLITMIX64_GAMMA and return the mixed value. */
uint64_t rt_splitmix64(uint64_t *state);

/* A double in [0, 1) from the top 53 bits of x. */
double rt_unit_double(uint64_t x);

/* xoshiro256** state; rt_rand_seed() fills it (never all zero). */
struct rt_rand {
	uint64_t s[4]; /* the four state words */
};

/* Seed from one word: the state is four splitmix64 outputs from seed. */
void rt_rand_seed(struct rt_rand *r, uint64_t seed);
/* Next 64-bit output. */
uint64_t rt_rand_next(struct rt_rand *r);
/* Uniform in [0, 1): rt_unit_double(rt_rand_next(r)). */
double rt_rand_uniform(struct rt_rand *r);
/* Uniform integer in [0, n), without modulo bias; n must be > 0. */
uint64_t rt_rand_below(struct rt_rand *r, uint64_t n);
/* Standard normal deviate (Box-Muller; two uniforms per call). */
double rt_rand_normal(struct rt_rand *r);

#endif
