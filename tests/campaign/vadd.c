/*
 * A tiny host-backend kernel for the campaign tests: z = x + y, split over
 * the grid. Self-contained (the ABI struct of runner/device/dev_host_kernel.h
 * is repeated) so the test can copy it anywhere.
 */
struct dev_host_launch {
	unsigned grid[3], block[3], block_idx[3], shared_bytes;
	void *shared;
	int worker;
};

void vadd(const struct dev_host_launch *l, void **args)
{
	float *z = *(float **)args[0];
	const float *x = *(float **)args[1], *y = *(float **)args[2];
	int n = *(int *)args[3];
	int per = (n + (int)l->grid[0] - 1) / (int)l->grid[0];
	int lo = per * (int)l->block_idx[0], hi = lo + per < n ? lo + per : n;
	for (int i = lo; i < hi; i++)
		z[i] = x[i] + y[i];
}

void vadd_ref(const struct dev_host_launch *l, void **args)
{
	if (l->block_idx[0] != 0)
		return;
	float *z = *(float **)args[0];
	const float *x = *(float **)args[1], *y = *(float **)args[2];
	int n = *(int *)args[3];
	for (int i = 0; i < n; i++)
		z[i] = x[i] + y[i];
}
