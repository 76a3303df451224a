/*
 * Host-backend test kernels for tests/device/test_dev.c and
 * tests/bench/test_bench_kernel.c: a correct z = a*x + y, its naive
 * reference, one that writes wrong values, one that leaves elements
 * unwritten, and one that uses shared memory and the block index. Built as a
 * shared object.
 */
#include "runner/device/dev_host_kernel.h"

#include <stddef.h>
#include <stdint.h>

/* The saxpy kernels' arguments (float *z, const float *x, const float *y,
 * float a, int32 n) and this block's [lo, hi) share of the n items. */
struct saxpy {
	float *z;                   /* output */
	const float *x, *y;         /* inputs */
	float a;                    /* scale of x */
	size_t n;                   /* items */
	size_t lo, hi;              /* this block's share */
};

static struct saxpy saxpy_unpack(const struct dev_host_launch *l, void **args)
{
	struct saxpy s = {
		.z = *(float **)args[0],
		.x = *(const float **)args[1],
		.y = *(const float **)args[2],
		.a = *(const float *)args[3],
		.n = (size_t)*(const int32_t *)args[4],
	};
	size_t nb = (size_t)l->grid[0], b = l->block_idx[0];
	s.lo = s.n * b / nb;
	s.hi = s.n * (b + 1) / nb;
	return s;
}

void saxpy(const struct dev_host_launch *l, void **args)
{
	struct saxpy s = saxpy_unpack(l, args);
	for (size_t i = s.lo; i < s.hi; i++)
		s.z[i] = s.a * s.x[i] + s.y[i];
}

/* The reference: one block does everything, element by element. */
void saxpy_ref(const struct dev_host_launch *l, void **args)
{
	if (l->block_idx[0] != 0)
		return;
	struct saxpy s = saxpy_unpack(l, args);
	for (size_t i = 0; i < s.n; i++)
		s.z[i] = s.a * s.x[i] + s.y[i];
}

/* Wrong: forgets to scale x. */
void saxpy_wrong(const struct dev_host_launch *l, void **args)
{
	struct saxpy s = saxpy_unpack(l, args);
	for (size_t i = s.lo; i < s.hi; i++)
		s.z[i] = s.x[i] + s.y[i];
}

/* Unwritten: every element i with i % 1000 == 999 is never written. */
void saxpy_holes(const struct dev_host_launch *l, void **args)
{
	struct saxpy s = saxpy_unpack(l, args);
	for (size_t i = s.lo; i < s.hi; i++)
		if (i % 1000 != 999)
			s.z[i] = s.a * s.x[i] + s.y[i];
}

/* Shared-memory user: stages x through l->shared, one block per 1024 items. */
void scale_shared(const struct dev_host_launch *l, void **args)
{
	float *z = *(float **)args[0];
	const float *x = *(const float **)args[1];
	int32_t n = *(const int32_t *)args[2];
	float *sh = l->shared;
	size_t per = l->shared_bytes / sizeof(float);
	size_t lo = (size_t)l->block_idx[0] * per, hi = lo + per;
	if (hi > (size_t)n)
		hi = (size_t)n;
	for (size_t i = lo; i < hi; i++)
		sh[i - lo] = x[i];
	for (size_t i = lo; i < hi; i++)
		z[i] = 2.0f * sh[i - lo];
}
