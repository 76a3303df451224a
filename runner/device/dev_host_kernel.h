/*
 * The ABI of a host-backend kernel: a function in a shared object, loaded
 * with dlopen. Self-contained (no ratchet headers) so kernel sources can
 * include it by a relative path and be built by anything.
 *
 *   void my_kernel(const struct dev_host_launch *l, void **args);
 *
 * The host backend calls the kernel once per block of the grid (block_idx
 * tells which), like a GPU runs one thread block; a kernel splits its work
 * by block_idx / grid. args[i] points at argument i's value: a buffer
 * argument's value is its address, so `float *x = *(float **)args[0]`.
 * Blocks may run on several threads at once (RATCHET_HOST_THREADS).
 *
 * A module may also export `int ratchet_host_init(const char *module_path)`:
 * called once after loading, with the path the module was loaded from (the
 * source path when the backend compiled a .c file); non-zero fails the load.
 */
#ifndef RT_DEV_HOST_KERNEL_H
#define RT_DEV_HOST_KERNEL_H

struct dev_host_launch {
	unsigned grid[3];      /* blocks per dimension */
	unsigned block[3];     /* threads per block (a hint for splitting work) */
	unsigned block_idx[3]; /* this call's block */
	unsigned shared_bytes; /* size of shared */
	void *shared;          /* scratch of shared_bytes for this call, or NULL */
	int worker;            /* index of the host thread running this block */
};

typedef void (*dev_host_kernel_fn)(const struct dev_host_launch *l, void **args);
typedef int (*dev_host_init_fn)(const char *module_path);

#endif
