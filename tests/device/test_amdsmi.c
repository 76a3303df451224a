/*
 * The hip backend's telemetry through amdsmi finds the GPU by PCI bus id:
 * amdsmi lists every GPU in its own order, while a pool worker pinned with
 * ROCR_VISIBLE_DEVICES sees its one GPU as HIP device 0. Runs against
 * tests/device/fake_amdsmi.c (libamd_smi.so on LD_LIBRARY_PATH, set by
 * tests/device.cmake): GPU 0000:c1:00.0 listed first (2100 MHz, 61 C, 300 W),
 * 0000:03:00.0 second (1500 MHz, 41 C, 150 W).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>
#include <time.h>

#include "runner/device/dev.h"

static void read_ok(const char *pci, int index, struct dev_telemetry *t)
{
	struct rt_sb err = RT_SB_INIT;
	int rc = dev_amdsmi_telemetry(pci, index, t, &err);
	if (rc)
		fail_msg("dev_amdsmi_telemetry(%s, %d): %s", pci ? pci : "NULL", index, err.buf);
	rt_sb_release(&err);
}

/* HIP's device 0 in a worker pinned to the GPU at 0000:03:00.0 reads that
 * GPU, not amdsmi's first; the bus id's case does not matter. */
static void test_by_bus_id(void **state)
{
	(void)state;
	struct dev_telemetry t;
	read_ok("0000:03:00.0", 0, &t);
	assert_true(t.clock_mhz == 1500 && t.temp_c == 41);
	assert_true(fabs(t.mem_used_bytes - 2000.0 * 1024 * 1024) < 1);
	read_ok("0000:C1:00.0", 1, &t);
	assert_true(t.clock_mhz == 2100 && t.temp_c == 61 && t.max_clock_mhz == 2400);
}

/* Without a bus id (HIP not built): amdsmi's own order. */
static void test_by_index(void **state)
{
	(void)state;
	struct dev_telemetry t;
	read_ok(NULL, 1, &t);
	assert_true(t.clock_mhz == 1500);
	read_ok("", 0, &t);
	assert_true(t.clock_mhz == 2100);
}

/* A bus id amdsmi does not list: refused, naming it, never another GPU. */
static void test_unknown_bus_id(void **state)
{
	(void)state;
	struct dev_telemetry t;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_amdsmi_telemetry("0000:44:00.0", 0, &t, &err), RT_ENODEV);
	assert_non_null(strstr(err.buf, "no GPU at PCI 0000:44:00.0 (device 0; 2 found)"));
	rt_sb_release(&err);
	assert_int_equal(dev_amdsmi_telemetry(NULL, 2, &t, &err), RT_ENODEV);
	rt_sb_release(&err);
}

/* Power comes from each GPU's own energy counter: the second reading of
 * the GPU at 0000:03:00.0 gives its 150 W, whatever was read between. */
static void test_power_per_gpu(void **state)
{
	(void)state;
	struct dev_telemetry t;
	read_ok("0000:03:00.0", 0, &t);
	read_ok("0000:c1:00.0", 0, &t);
	struct timespec d = { 0, 20000000 };
	nanosleep(&d, NULL);
	read_ok("0000:03:00.0", 0, &t);
	assert_true(fabs(t.power_w - 150) < 3);
	read_ok("0000:c1:00.0", 0, &t);
	assert_true(fabs(t.power_w - 300) < 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_bus_id),
		cmocka_unit_test(test_by_index),
		cmocka_unit_test(test_unknown_bus_id),
		cmocka_unit_test(test_power_per_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
