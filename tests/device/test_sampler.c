/*
 * The telemetry sampler (runner/device/sampler.h) on the host backend's
 * stand-in (RATCHET_TELEMETRY_FAKE): the period is honoured within a
 * tolerance, medians, the throttle flag and fraction, a device that cannot
 * be read leaves host readings, CPU frequency from a cpufreq-like tree, the
 * RSS of a process, and the stand-in's parsing.
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

#include "runner/device/sampler.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char p[128], tmp[140];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rename(tmp, p), 0); /* the sampler never reads half a file */
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/rt-sampler-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char p[128];
	snprintf(p, sizeof(p), "%s/readings", dir);
	setenv("RATCHET_TELEMETRY_FAKE", p, 1);
	write_file("readings", "sm_clock_mhz=1980 mem_clock_mhz=2619 max_clock_mhz=1980 power_w=400 "
			       "temp_c=60 mem_used_bytes=1e9 throttle=none\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("RATCHET_TELEMETRY_FAKE");
	return 0;
}

static struct dev_sampler *start(int64_t period_ns)
{
	struct dev_sampler_cfg cfg = { .backend = "host", .index = 0, .period_ns = period_ns };
	struct dev_sampler *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_sampler_start(&cfg, &s, &err), 0);
	rt_sb_release(&err);
	return s;
}

/* 20 ms for 400 ms: about 21 ticks (one at start), evenly spaced. */
static void test_period(void **state)
{
	struct dev_sampler *s = start(20 * 1000000LL);
	rt_sleep_ns(400 * 1000000LL);
	struct dev_tel_summary sum;
	dev_sampler_stop(s, &sum);
	assert_true(sum.ticks >= 15 && sum.ticks <= 23);
	assert_true(sum.interval_s > 0.018 && sum.interval_s < 0.027);
	size_t n;
	const struct dev_tick *t = dev_sampler_ticks(s, &n);
	assert_int_equal(n, sum.ticks);
	for (size_t i = 1; i < n; i++)
		assert_true(t[i].t_ns > t[i - 1].t_ns);
	assert_string_equal(sum.why, "");
	assert_true(sum.sm_clock_mhz == 1980 && sum.power_w == 400 && sum.temp_c == 60);
	assert_true(sum.mem_clock_mhz == 2619 && sum.max_clock_mhz == 1980 && sum.mem_used_bytes == 1e9);
	assert_true(sum.throttle_known && !sum.throttled && sum.throttle == 0 && sum.throttled_frac == 0);
	dev_sampler_free(s);
	/* a zero period is refused */
	struct dev_sampler_cfg cfg = { .backend = "host" };
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_sampler_start(&cfg, &s, &err), RT_EINVAL);
	rt_sb_release(&err);
}

static struct dev_tick tick_of(double clk, double temp, uint64_t thr, bool known)
{
	struct dev_tick t;
	memset(&t, 0, sizeof(t));
	dev_telemetry_clear(&t.dev);
	t.dev.clock_mhz = clk;
	t.dev.temp_c = temp;
	t.dev.throttle = thr;
	t.dev.throttle_known = known;
	t.cpu_mhz = NAN;
	t.rss_bytes = NAN;
	return t;
}

/* Medians skip what a tick could not read; even counts average the middle. */
static void test_median(void **state)
{
	struct dev_tick t[5] = {
		tick_of(1000, 50, 0, true), tick_of(1400, NAN, 0, true), tick_of(1200, 70, 0, true),
		tick_of(NAN, 60, 0, true), tick_of(1300, 90, 0, true),
	};
	for (int i = 0; i < 5; i++)
		t[i].t_ns = i * 100000000LL;
	struct dev_tel_summary sum;
	dev_tel_summarise(t, 5, &sum);
	assert_int_equal(sum.ticks, 5);
	assert_true(fabs(sum.sm_clock_mhz - 1250) < 1e-9); /* 1000 1200 1300 1400 */
	assert_true(fabs(sum.temp_c - 65) < 1e-9);         /* 50 60 70 90 */
	assert_true(isnan(sum.power_w) && isnan(sum.cpu_mhz) && isnan(sum.rss_bytes));
	assert_true(fabs(sum.interval_s - 0.1) < 1e-9);
	dev_tel_summarise(t, 1, &sum);
	assert_true(sum.sm_clock_mhz == 1000 && isnan(sum.interval_s));
	dev_tel_summarise(NULL, 0, &sum);
	assert_true(isnan(sum.sm_clock_mhz) && !sum.throttle_known && isnan(sum.throttled_frac));
}

/* Power or heat mark a sample; a clock held by a setting does not. */
static void test_throttle_flag(void **state)
{
	struct dev_tick t[4] = {
		tick_of(1980, 60, 0, true), tick_of(1500, 90, DEV_THR_THERMAL, true),
		tick_of(1700, 80, DEV_THR_APP, true), tick_of(1980, 60, 0, false),
	};
	struct dev_tel_summary sum;
	dev_tel_summarise(t, 4, &sum);
	assert_true(sum.throttled);
	assert_true(fabs(sum.throttled_frac - 1.0 / 3) < 1e-9); /* of the 3 that told */
	assert_int_equal(sum.throttle, DEV_THR_THERMAL | DEV_THR_APP);
	char names[64];
	dev_throttle_names(sum.throttle, names, sizeof(names));
	assert_string_equal(names, "thermal,app-clocks");
	dev_throttle_names(0, names, sizeof(names));
	assert_string_equal(names, "none");
	t[1].dev.throttle = DEV_THR_APP | DEV_THR_HW;
	dev_tel_summarise(t, 4, &sum);
	assert_false(sum.throttled);
	assert_true(sum.throttled_frac == 0);
}

/* A throttled stretch in the middle of a run: some ticks, not all. */
static void test_throttled_stretch(void **state)
{
	struct dev_sampler *s = start(10 * 1000000LL);
	rt_sleep_ns(100 * 1000000LL);
	write_file("readings", "sm_clock_mhz=1400 temp_c=92 power_w=700 throttle=thermal,power\n");
	rt_sleep_ns(100 * 1000000LL);
	write_file("readings", "sm_clock_mhz=1980 temp_c=60 power_w=400 throttle=none\n");
	rt_sleep_ns(100 * 1000000LL);
	struct dev_tel_summary sum;
	dev_sampler_stop(s, &sum);
	dev_sampler_free(s);
	assert_true(sum.throttled);
	assert_int_equal(sum.throttle, DEV_THR_THERMAL | DEV_THR_POWER);
	assert_true(sum.throttled_frac > 0.1 && sum.throttled_frac < 0.6);
	assert_true(sum.sm_clock_mhz == 1980); /* most ticks were cool */
}

/* The stand-in's words; a bad one is named. */
static void test_fake_parse(void **state)
{
	struct dev_telemetry t;
	struct rt_sb err = RT_SB_INIT;
	char p[128];
	snprintf(p, sizeof(p), "%s/readings", dir);
	write_file("readings", "temp_c=71.5\npower_w=300 throttle=hw-slowdown,other\n");
	assert_int_equal(dev_telemetry_fake(p, &t, &err), 0);
	assert_true(t.temp_c == 71.5 && t.power_w == 300 && isnan(t.clock_mhz));
	assert_true(t.throttle_known && t.throttle == (DEV_THR_HW | DEV_THR_OTHER));
	write_file("readings", "temp_c=hot\n");
	assert_int_equal(dev_telemetry_fake(p, &t, &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "bad word 'temp_c=hot'"));
	rt_sb_reset(&err);
	write_file("readings", "throttle=sleepy\n");
	assert_int_equal(dev_telemetry_fake(p, &t, &err), RT_EINVAL);
	rt_sb_reset(&err);
	/* through the registry, as the sampler reads it */
	write_file("readings", "sm_clock_mhz=1755\n");
	assert_int_equal(dev_telemetry_read("host", 0, &t, &err), 0);
	assert_true(t.clock_mhz == 1755 && !t.throttle_known);
	assert_int_equal(dev_telemetry_fake("/nonexistent/readings", &t, &err), RT_EIO);
	rt_sb_release(&err);
}

/* A device that cannot be read is said once; host readings go on. */
static void test_missing_device(void **state)
{
	write_file("cpu0", "2000000\n");
	write_file("cpu1", "3000000\n");
	char glob[128];
	snprintf(glob, sizeof(glob), "%s/cpu*", dir);
	pid_t me = getpid();
	struct dev_sampler_cfg cfg = { .backend = "ze", .index = 7, .period_ns = 10 * 1000000LL,
				       .pids = &me, .npids = 1, .cpufreq_glob = glob };
	struct dev_sampler *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(dev_sampler_start(&cfg, &s, &err), 0);
	rt_sleep_ns(50 * 1000000LL);
	struct dev_tel_summary sum;
	dev_sampler_stop(s, &sum);
	dev_sampler_free(s);
	assert_true(sum.why[0]); /* ze: not built, no device, or no device 7 */
	assert_non_null(strstr(sum.why, "ze"));
	assert_true(sum.ticks >= 2);
	assert_true(isnan(sum.sm_clock_mhz) && !sum.throttle_known);
	assert_true(fabs(sum.cpu_mhz - 2500) < 1e-9);
	assert_true(sum.rss_bytes > 1e5);
	/* no cpufreq at all: NAN, no error */
	assert_true(isnan(dev_cpu_mhz("/nonexistent/cpu*/scaling_cur_freq")));
	rt_sb_release(&err);
}

/* The vendor table: the specific name before the general one. */
static void test_peak_table(void **state)
{
	const struct dev_peak_row *r = dev_peak_lookup("NVIDIA H100 PCIe");
	assert_non_null(r);
	assert_true(r->tflops[DEV_DT_FP8] == 1513);
	r = dev_peak_lookup("NVIDIA H100 80GB HBM3");
	assert_non_null(r);
	assert_true(r->tflops[DEV_DT_BF16] == 989 && isnan(r->tflops[DEV_DT_MXFP4]));
	r = dev_peak_lookup("AMD Instinct MI355X");
	assert_non_null(r);
	assert_true(r->tflops[DEV_DT_MXFP4] == 10000);
	assert_null(dev_peak_lookup("Intel(R) Xeon(R) CPU"));
	size_t n;
	r = dev_peak_rows(&n);
	for (size_t i = 0; i < n; i++)
		assert_non_null(strstr(r[i].source, "https://"));
	assert_string_equal(dev_dtype_name(DEV_DT_MXFP4), "mxfp4");
}

/* Power from two energy readings (amdsmi, Sysman). */
static void test_energy_watts(void **state)
{
	struct dev_energy e = { 0 };
	assert_true(isnan(dev_energy_watts(&e, 1000, 10)));     /* the first */
	assert_true(fabs(dev_energy_watts(&e, 1100, 10.5) - 200) < 1e-9);
	assert_true(isnan(dev_energy_watts(&e, 50, 11)));       /* the counter wrapped */
	assert_true(isnan(dev_energy_watts(&e, 60, 11)));       /* no time passed */
	assert_true(fabs(dev_energy_watts(&e, 360, 12) - 300) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_period, setup, teardown),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_throttle_flag),
		cmocka_unit_test_setup_teardown(test_throttled_stretch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fake_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_device, setup, teardown),
		cmocka_unit_test(test_peak_table),
		cmocka_unit_test(test_energy_watts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_period             20 ms for 400 ms: 15-23 ticks, mean interval 18-27 ms; readings; period 0 refused
 *   test_median             medians skip NAN; even counts average the middle; 0 and 1 ticks
 *   test_throttle_flag      thermal/power mark, app-clocks/hw do not; fraction of ticks telling reasons; names
 *   test_throttled_stretch  a file change mid-run: throttled, fraction between, median of the cool ticks
 *   test_fake_parse         the stand-in's words, bad words named, read through the registry, missing file
 *   test_missing_device     an unreadable device is said once (why), CPU MHz from a cpufreq-like glob, RSS
 *   test_peak_table         vendor peaks by device name (PCIe before SXM), every row with a source
 *   test_energy_watts       power from energy counter differences; first reading, wrap, no time
 */
