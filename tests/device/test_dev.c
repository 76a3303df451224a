/*
 * Device layer: the registry, the host backend (identity, memory, copies,
 * launches over a grid with shared memory and several threads, timing, the
 * .c-module compile path, peaks), and the no-device / not-built answers of
 * cuda, hip and ze.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/device/dev.h"

static void test_registry(void **state)
{
	size_t n = 0;
	const struct dev_ops *const *all = dev_backends(&n);
	assert_int_equal(n, 4);
	assert_string_equal(all[0]->name, "host");
	assert_true(all[0]->built);
	struct rt_sb err = RT_SB_INIT;
	assert_null(dev_backend_find("cudaa", &err));
	assert_non_null(strstr(err.buf, "did you mean 'cuda'"));
	rt_sb_release(&err);
	assert_ptr_equal(dev_backend_find("ze", NULL), &dev_ze_ops);
}

static void test_host_identity(void **state)
{
	struct dev *d = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_open("host", 0, &d, &err), 0);
	assert_string_equal(d->info.backend, "host");
	assert_true(d->info.name[0]);
	assert_true(d->info.compute_units >= 1);
	assert_true(d->info.mem_bytes > 0);
	char id[192];
	dev_identity(&d->info, id, sizeof(id));
	assert_non_null(strstr(id, "host:0 "));
	struct dev_fact f[16];
	size_t nf = dev_facts(&d->info, f, 16);
	assert_true(nf >= 10);
	assert_string_equal(f[0].key, "device.identity");
	assert_string_equal(f[0].value, id);
	struct dev_telemetry t;
	assert_int_equal(dev_telemetry(d, &t, &err), 0);
	dev_close(d);
	/* no device 3 on the host backend */
	assert_int_equal(dev_open("host", 3, &d, &err), RT_ENODEV);
	assert_non_null(strstr(err.buf, "host: no device 3"));
	rt_sb_release(&err);
}

static void test_host_memory(void **state)
{
	struct dev *d = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_open("host", 0, &d, &err), 0);
	dev_ptr a, b;
	assert_int_equal(dev_alloc(d, 4096, &a, &err), 0);
	assert_int_equal(dev_alloc(d, 4096, &b, &err), 0);
	unsigned char buf[4096], back[4096];
	for (int i = 0; i < 4096; i++)
		buf[i] = (unsigned char)(i * 7);
	assert_int_equal(dev_h2d(d, a, buf, sizeof(buf), &err), 0);
	assert_int_equal(dev_d2d(d, b, a, sizeof(buf), &err), 0);
	assert_int_equal(dev_d2h(d, back, b, sizeof(back), &err), 0);
	assert_memory_equal(buf, back, sizeof(buf));
	assert_int_equal(dev_fill(d, b, 0xab, 100, &err), 0);
	assert_int_equal(dev_d2h(d, back, b, sizeof(back), &err), 0);
	assert_int_equal(back[0], 0xab);
	assert_int_equal(back[99], 0xab);
	assert_int_equal(back[100], buf[100]);
	dev_free(d, a);
	dev_free(d, b);
	dev_close(d);
	rt_sb_release(&err);
}

/* Launch scale_shared over 10 blocks of 1024 floats on 3 threads. */
static void test_host_launch(void **state)
{
	setenv("RATCHET_HOST_THREADS", "3", 1);
	struct dev *d = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_open("host", 0, &d, &err), 0);
	struct dev_module *m = NULL;
	assert_int_equal(dev_module_load(d, TEST_KERNELS_SO, &m, &err), 0);
	struct dev_kernel *k = NULL;
	assert_int_equal(dev_kernel_get(m, "no_such_kernel", &k, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "'no_such_kernel' not found"));
	assert_int_equal(dev_kernel_get(m, "scale_shared", &k, &err), 0);
	int32_t n = 10000;
	float *x = malloc(sizeof(float) * (size_t)n), *z = malloc(sizeof(float) * (size_t)n);
	for (int i = 0; i < n; i++)
		x[i] = (float)i;
	dev_ptr dx, dz;
	assert_int_equal(dev_alloc(d, sizeof(float) * (size_t)n, &dx, &err), 0);
	assert_int_equal(dev_alloc(d, sizeof(float) * (size_t)n, &dz, &err), 0);
	assert_int_equal(dev_h2d(d, dx, x, sizeof(float) * (size_t)n, &err), 0);
	void *args[] = { &dz, &dx, &n };
	struct dev_launch l = { { 10, 1, 1 }, { 1, 1, 1 }, 1024 * sizeof(float), NULL };
	assert_int_equal(dev_timer_begin(d, &err), 0);
	assert_int_equal(dev_launch(d, k, &l, args, 3, &err), 0);
	double s = -1;
	assert_int_equal(dev_timer_end(d, &s, &err), 0);
	assert_true(s >= 0 && s < 10);
	assert_int_equal(dev_d2h(d, z, dz, sizeof(float) * (size_t)n, &err), 0);
	for (int i = 0; i < n; i++)
		assert_true(z[i] == 2.0f * (float)i);
	/* a zero grid is refused */
	struct dev_launch bad = { { 0, 1, 1 }, { 1, 1, 1 }, 0, NULL };
	assert_int_equal(dev_launch(d, k, &bad, args, 3, &err), RT_EINVAL);
	dev_kernel_free(k);
	dev_module_free(m);
	dev_free(d, dx);
	dev_free(d, dz);
	dev_close(d);
	free(x);
	free(z);
	rt_sb_release(&err);
	unsetenv("RATCHET_HOST_THREADS");
}

/* A .c module is compiled on load; a broken one says what the compiler said. */
static void test_host_c_module(void **state)
{
	char dir[] = "/tmp/rt-devtest-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("TMPDIR", dir, 1);
	char *good = xasprintf("%s/k.c", dir), *bad = xasprintf("%s/bad.c", dir);
	FILE *f = fopen(good, "w");
	fprintf(f, "#include \"%s/runner/device/dev_host_kernel.h\"\n"
		   "static int inited;\n"
		   "int ratchet_host_init(const char *p) { inited = 41; return 0; }\n"
		   "void k(const struct dev_host_launch *l, void **a) { **(int **)a[0] = inited + 1; }\n",
		TEST_SRC_DIR);
	fclose(f);
	f = fopen(bad, "w");
	fprintf(f, "void k(void) { this is not c }\n");
	fclose(f);
	struct dev *d = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_open("host", 0, &d, &err), 0);
	struct dev_module *m = NULL;
	assert_int_equal(dev_module_load(d, good, &m, &err), 0);
	struct dev_kernel *k = NULL;
	assert_int_equal(dev_kernel_get(m, "k", &k, &err), 0);
	dev_ptr p;
	assert_int_equal(dev_alloc(d, sizeof(int), &p, &err), 0);
	void *args[] = { &p };
	struct dev_launch l = { { 1, 1, 1 }, { 1, 1, 1 }, 0, NULL };
	assert_int_equal(dev_launch(d, k, &l, args, 1, &err), 0);
	int v = 0;
	assert_int_equal(dev_d2h(d, &v, p, sizeof(v), &err), 0);
	assert_int_equal(v, 42); /* ratchet_host_init ran */
	dev_free(d, p);
	dev_kernel_free(k);
	dev_module_free(m);
	struct dev_module *m2 = NULL;
	assert_int_equal(dev_module_load(d, bad, &m2, &err), RT_EPROC);
	assert_non_null(strstr(err.buf, "bad.c"));
	assert_non_null(strstr(err.buf, "failed"));
	rt_sb_reset(&err);
	assert_int_equal(dev_module_load(d, "/nonexistent/k.so", &m2, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "host: module /nonexistent/k.so: no such file"));
	rt_sb_reset(&err);
	assert_int_equal(dev_module_load(d, "/nonexistent/k.c", &m2, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "host: module /nonexistent/k.c: no such file"));
	dev_close(d);
	rt_sb_release(&err);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(good);
	free(bad);
	unsetenv("TMPDIR");
}

static void test_host_peak(void **state)
{
	struct dev *d = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_open("host", 0, &d, &err), 0);
	struct dev_peak p;
	assert_int_equal(dev_peak_measure(d, 8u << 20, &p, &err), 0);
	assert_true(p.copy_gbps > 0.05 && p.copy_gbps < 10000);
	assert_true(p.gflops > 0.01 && p.gflops < 100000);
	dev_close(d);
	rt_sb_release(&err);
}

/* cuda, hip and ze have no device on CI machines: each answers clearly, either
 * "not built" (stub) or "no device: <reason>". */
static void test_gpu_backends_absent(void **state)
{
	static const char *const names[] = { "cuda", "hip", "ze" };
	for (size_t i = 0; i < 3; i++) {
		const struct dev_ops *ops = dev_backend_find(names[i], NULL);
		assert_non_null(ops);
		struct rt_sb err = RT_SB_INIT;
		int n = -1;
		int rc = ops->count(&n, &err);
		if (rc == 0 && n > 0) { /* a machine with a real GPU: nothing to check here */
			rt_sb_release(&err);
			continue;
		}
		assert_int_equal(n, 0);
		char want[64];
		if (ops->built) {
			assert_int_equal(rc, RT_ENODEV);
			snprintf(want, sizeof(want), "%s: no device: ", names[i]);
		} else {
			assert_int_equal(rc, RT_ENOTBUILT);
			snprintf(want, sizeof(want), "%s: not built", names[i]);
		}
		assert_non_null(strstr(err.buf, want));
		/* dev_open says the same */
		struct dev *d = NULL;
		rt_sb_reset(&err);
		assert_int_equal(dev_open(names[i], 0, &d, &err), rc);
		assert_null(d);
		assert_non_null(strstr(err.buf, want));
		rt_sb_release(&err);
	}
}

/* What the dlopen'ed backends share: opening the first library that loads,
 * resolving every symbol or naming the missing one, and the GPU UUID form. */
static void test_backend_helpers(void **state)
{
	void *cos_p = NULL, *none_p = NULL;
	const struct dev_sym syms[] = { { "cos", &cos_p }, { "ratchet_no_such_symbol", &none_p } };
	const char *const libs[] = { "libratchet-no-such.so", "libm.so.6" };
	char why[512] = "";
	assert_int_equal(dev_dl_open(libs, 2, syms, 1, why, sizeof(why)), 0);
	assert_non_null(cos_p);
	assert_string_equal(why, "");
	assert_int_equal(dev_dl_open(libs, 2, syms, 2, why, sizeof(why)), RT_ENODEV);
	assert_string_equal(why, "libm.so.6 has no ratchet_no_such_symbol (driver too old)");
	assert_int_equal(dev_dl_open(libs, 1, syms, 1, why, sizeof(why)), RT_ENODEV);
	assert_non_null(strstr(why, "libratchet-no-such.so")); /* the first library's reason */

	const unsigned char b[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
				      0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };
	char uuid[64];
	dev_fmt_gpu_uuid(uuid, sizeof(uuid), b);
	assert_string_equal(uuid, "GPU-01234567-89ab-cdef-fedc-ba9876543210");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_host_identity),
		cmocka_unit_test(test_host_memory),
		cmocka_unit_test(test_host_launch),
		cmocka_unit_test(test_host_c_module),
		cmocka_unit_test(test_host_peak),
		cmocka_unit_test(test_gpu_backends_absent),
		cmocka_unit_test(test_backend_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_registry              four backends, host first and built; did-you-mean on a typo
 *   test_host_identity         name, CPUs, memory, identity line, facts, telemetry; bad index
 *   test_host_memory           h2d / d2d / d2h round trip, partial fill
 *   test_host_launch           grid of 10 blocks, shared memory, 3 threads, timer; zero grid refused
 *   test_host_c_module         .c module compiled on load, ratchet_host_init runs; compile error; missing .so and .c
 *   test_host_peak             copy GB/s and FMA GFLOP/s are measured and plausible
 *   test_gpu_backends_absent   cuda/hip/ze: "X: no device: ..." (built) or "X: not built" (stub)
 *   test_backend_helpers       dev_dl_open: first library that loads, missing symbol named; GPU UUID form
 */
