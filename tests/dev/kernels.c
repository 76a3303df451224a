/*
 * Host-backend test kernels for tests/unit/test_dev*.c and
 * test_bench_kernel*.c: a correct z = a*x + y, its naive reference, one that
 * writes wrong values, one that leaves elements unwritten, and one that
 * uses shared memory and the block index. Built as a shared object.
 */
#include "runner/device/dev_host_kernel.h"

#include <stddef.h>
#include <stdint.h>

/* This block's [lo, hi) share of n items. */
static void share(const struct dev_host_launch *l, size_t n, size_t *lo, size_t *hi)
{
	size_t nb = (size_t)l->grid[0], b = l->block_idx[0];
	*lo = n * b / nb;
	*hi = n * (b + 1) / nb;
}

/* args: float *z, const float *x, const float *y, float a, int32 n */
void saxpy(const struct dev_host_launch *l, void **args)
{
	float *z = *(float **)args[0];
	const float *x = *(const float **)args[1], *y = *(const float **)args[2];
	float a = *(const float *)args[3];
	int32_t n = *(const int32_t *)args[4];
	size_t lo, hi;
	share(l, (size_t)n, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		z[i] = a * x[i] + y[i];
}

/* The reference: one block does everything, element by element. */
void saxpy_ref(const struct dev_host_launch *l, void **args)
{
	if (l->block_idx[0] != 0)
		return;
	float *z = *(float **)args[0];
	const float *x = *(const float **)args[1], *y = *(const float **)args[2];
	float a = *(const float *)args[3];
	int32_t n = *(const int32_t *)args[4];
	for (int32_t i = 0; i < n; i++)
		z[i] = a * x[i] + y[i];
}

/* Wrong: forgets to scale x. */
void saxpy_wrong(const struct dev_host_launch *l, void **args)
{
	float *z = *(float **)args[0];
	const float *x = *(const float **)args[1], *y = *(const float **)args[2];
	int32_t n = *(const int32_t *)args[4];
	size_t lo, hi;
	share(l, (size_t)n, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		z[i] = x[i] + y[i];
}

/* Unwritten: every element i with i % 1000 == 999 is never written. */
void saxpy_holes(const struct dev_host_launch *l, void **args)
{
	float *z = *(float **)args[0];
	const float *x = *(const float **)args[1], *y = *(const float **)args[2];
	float a = *(const float *)args[3];
	int32_t n = *(const int32_t *)args[4];
	size_t lo, hi;
	share(l, (size_t)n, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		if (i % 1000 != 999)
			z[i] = a * x[i] + y[i];
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
