/*
 * Python's random module, as far as lm-evaluation-harness's few-shot
 * sampler uses it: random.Random(int) (MT19937 seeded with init_by_array
 * over the integer's 32-bit words, as Modules/_randommodule.c's
 * random_seed does), getrandbits, _randbelow (getrandbits rejection) and
 * sample()'s selection algorithm, both branches (Lib/random.py). Followed:
 * CPython 3.11.7; the algorithms are the same from 3.2 to 3.13. Pinned by
 * tests/gate/test_gate_pyrandom.c against vectors made by CPython.
 * Nothing here is for secrets. The GSM8K shots are its only user: every
 * other stream of ratchet's uses runner/base/rand.h.
 */
#ifndef RT_GATE_PYRANDOM_H
#define RT_GATE_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

/* MT19937's size. */
#define PYRAND_N 624

/* A generator: the state of one random.Random. */
struct pyrand {
	uint32_t mt[PYRAND_N]; /* the state words */
	int mti;               /* next word to temper; PYRAND_N: regenerate first */
};

/* random.Random(seed) for a non-negative integer seed (Python takes abs() of
 * a negative one: pass its magnitude). */
void pyrand_seed(struct pyrand *r, uint64_t seed);
/* getrandbits(32). */
uint32_t pyrand_u32(struct pyrand *r);
/* getrandbits(k) for k in [0, 64]. */
uint64_t pyrand_getrandbits(struct pyrand *r, int k);
/* _randbelow(n): uniform in [0, n), n > 0. */
uint64_t pyrand_below(struct pyrand *r, uint64_t n);
/*
 * sample(range(n), k) into out[0..k): the indexes Python's sample() picks
 * from a population of n, in its order (k <= n). One draw advances r as
 * Python's does, so successive calls give Python's successive samples.
 */
void pyrand_sample(struct pyrand *r, size_t n, size_t k, size_t *out);

#endif
