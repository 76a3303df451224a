/*
 * The kernel benchmark on the host backend: a correct kernel is timed and
 * its metrics computed; a wrong one is caught by the L2 check (RT_ECHECK,
 * with the error); one that leaves elements unwritten is caught by the
 * poison check (how many, first index); reference files, launch tables,
 * input rotation, L2 flush, and percent of peak from device_peaks.
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

#include "db/db.h"
#include "db/devices.h"
#include "runner/bench/bench_kernel.h"

#define N 100000

static struct spec_karg saxpy_args[5];

/* A saxpy spec: z (output), x, y (random inputs), a = 2.5, n. */
static struct spec_kernel saxpy_spec(const char *name)
{
	memset(saxpy_args, 0, sizeof(saxpy_args));
	saxpy_args[0] = (struct spec_karg){ .name = "z", .kind = SPEC_KARG_BUFFER,
					    .dtype = SPEC_DT_F32, .count = N, .output = true };
	saxpy_args[1] = (struct spec_karg){ .name = "x", .kind = SPEC_KARG_BUFFER,
					    .dtype = SPEC_DT_F32, .count = N,
					    .init = SPEC_INIT_RANDOM };
	saxpy_args[2] = (struct spec_karg){ .name = "y", .kind = SPEC_KARG_BUFFER,
					    .dtype = SPEC_DT_F32, .count = N,
					    .init = SPEC_INIT_RANDOM };
	saxpy_args[3] = (struct spec_karg){ .name = "a", .kind = SPEC_KARG_SCALAR,
					    .dtype = SPEC_DT_F32, .value = 2.5 };
	saxpy_args[4] = (struct spec_karg){ .name = "n", .kind = SPEC_KARG_SCALAR,
					    .dtype = SPEC_DT_I32, .value = N };
	struct spec_kernel k = {
		.backend = "host",
		.module = TEST_KERNELS_SO,
		.name = (char *)name,
		.args = saxpy_args,
		.n_args = 5,
		.grid = { 4, 1, 1 },
		.bytes = 3.0 * 4 * N,
		.flops = 2.0 * N,
		.ref_name = "saxpy_ref",
		.max_rel_l2 = 1e-6,
		.warmup = 2,
		.target_rsd = 0.5,
		.max_time_s = 0.25,
		.min_samples = 5,
	};
	return k;
}

static void test_correct(void **state)
{
	struct spec_kernel k = saxpy_spec("saxpy");
	struct run_bkernel_result r;
	struct rt_sb err = RT_SB_INIT;
	int rc = run_bkernel_run(&k, NULL, NULL, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.buf);
	assert_int_equal(rc, 0);
	assert_true(r.checked);
	assert_true(r.rel_l2 <= 1e-6);
	assert_true(r.samples >= 5);
	assert_true(r.time > 0 && r.time_min <= r.time);
	assert_true(fabs(r.gbps - k.bytes / r.time / 1e9) < 1e-9 * r.gbps + 1e-12);
	assert_true(r.gflops > 0);
	assert_true(isnan(r.pct_peak_bw)); /* no db */
	assert_int_equal(r.launch.grid[0], 4);
	assert_non_null(strstr(r.identity, "host:0"));
	assert_true(r.n_facts > 5);
	struct run_bkernel_metric m[8];
	size_t nm = run_bkernel_metrics(&r, m);
	assert_int_equal(nm, 6); /* time time_min gbps gflops rsd samples */
	assert_string_equal(m[0].name, "time");
	assert_string_equal(m[nm - 1].name, "samples");
	assert_true(m[nm - 1].value == r.samples);
	run_bkernel_result_release(&r);
	rt_sb_release(&err);
}

/* Run the saxpy spec with kernel `name` and no workdir or db; the result
 * is released, err keeps the message. Returns run_bkernel_run's code. */
static int run_saxpy(const char *name, struct rt_sb *err)
{
	struct spec_kernel k = saxpy_spec(name);
	struct run_bkernel_result r;
	int rc = run_bkernel_run(&k, NULL, NULL, &r, err);
	assert_null(r.sample_s); /* nothing is timed after a failed check */
	run_bkernel_result_release(&r);
	return rc;
}

static void test_wrong_output(void **state)
{
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_saxpy("saxpy_wrong", &err), RT_ECHECK);
	assert_non_null(strstr(err.buf, "kernel 'saxpy_wrong': output 'z': relative L2 error "));
	assert_non_null(strstr(err.buf, "> max 1e-06"));
	assert_non_null(strstr(err.buf, "reference kernel saxpy_ref"));
	rt_sb_release(&err);
}

static void test_unwritten(void **state)
{
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_saxpy("saxpy_holes", &err), RT_ECHECK);
	assert_string_equal(err.buf, "kernel 'saxpy_holes': output 'z': 100 of 100000 elements "
				     "not written (first at index 999)");
	rt_sb_release(&err);
}

/* Reference file in the workdir ({workdir} and relative paths), plus a launch table. */
static void test_reference_file_and_table(void **state)
{
	char dir[] = "/tmp/rt-bktest-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct spec_kernel k = saxpy_spec("saxpy");
	k.ref_name = NULL;
	k.launch_table = "{workdir}/launch.json";
	k.launch_key = "N_100000";
	char *tbl = xasprintf("%s/launch.json", dir);
	FILE *f = fopen(tbl, "w");
	fputs("{\"N_100000\": {\"grid\": [7], \"block\": 1}, \"other\": {\"grid\": 2}}", f);
	fclose(f);
	struct spec_vars vars = { .workdir = dir };
	struct run_bkernel_result r;
	struct rt_sb err = RT_SB_INIT;
	/* Without a reference only the poison check runs. */
	assert_int_equal(run_bkernel_run(&k, &vars, NULL, &r, &err), 0);
	assert_false(r.checked);
	assert_int_equal(r.launch.grid[0], 7);
	run_bkernel_result_release(&r);
	/* A reference file of zeros: the output does not match it. */
	float *ref = malloc(sizeof(float) * N);
	for (int i = 0; i < N; i++)
		ref[i] = 0;
	char *rp = xasprintf("%s/z.bin", dir);
	f = fopen(rp, "wb");
	fwrite(ref, sizeof(float), N, f);
	fclose(f);
	saxpy_args[0].reference_file = "z.bin"; /* relative: in the workdir */
	assert_int_equal(run_bkernel_run(&k, &vars, NULL, &r, &err), RT_ECHECK);
	assert_non_null(strstr(err.buf, "reference file "));
	assert_non_null(strstr(err.buf, "z.bin"));
	run_bkernel_result_release(&r);
	/* A missing table entry names the file and the key. */
	saxpy_args[0].reference_file = NULL;
	k.launch_key = "N_1";
	rt_sb_reset(&err);
	assert_int_equal(run_bkernel_run(&k, &vars, NULL, &r, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "launch.json: kernel 'saxpy': launch_table has no entry 'N_1'"));
	run_bkernel_result_release(&r);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(tbl);
	free(rp);
	free(ref);
	rt_sb_release(&err);
}

/* Rotation and flush still give correct, timed runs; percent of peak comes from the db. */
static void test_rotate_flush_peak(void **state)
{
	char dir[] = "/tmp/rt-bkdb-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/r.db", dir);
	struct db *db = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_open(path, &db, &err), 0);
	struct spec_kernel k = saxpy_spec("saxpy");
	k.rotate = 3;
	k.flush_l2 = true;
	struct dev_info info;
	char id[192];
	assert_int_equal(run_bkernel_device(&k, &info, id, sizeof(id), &err), 0);
	char key[128];
	dev_peak_key(&info, key, sizeof(key));
	assert_int_equal(db_device_peak_add(db, "host", key, info.name, "copy_gbps", 1.0, &err), 0);
	assert_int_equal(db_device_peak_add(db, "host", key, info.name, "copy_gbps", 2.0, &err), 0);
	assert_int_equal(db_device_peak_add(db, "host", key, info.name, "gflops", 4.0, &err), 0);
	struct run_bkernel_result r;
	int rc = run_bkernel_run(&k, NULL, db, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.buf);
	assert_int_equal(rc, 0);
	assert_string_equal(r.identity, id);
	assert_true(r.peak_gbps == 2.0); /* the newest row */
	assert_true(fabs(r.pct_peak_bw - 100.0 * r.gbps / 2.0) < 1e-9);
	assert_true(fabs(r.pct_peak_flops - 100.0 * r.gflops / 4.0) < 1e-9);
	struct run_bkernel_metric m[8];
	assert_int_equal(run_bkernel_metrics(&r, m), 8);
	run_bkernel_result_release(&r);
	db_close(db);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
	rt_sb_release(&err);
}

static void test_bad_spec(void **state)
{
	struct spec_kernel k = saxpy_spec("saxpy");
	struct run_bkernel_result r;
	struct rt_sb err = RT_SB_INIT;
	k.backend = "cuad";
	assert_int_equal(run_bkernel_run(&k, NULL, NULL, &r, &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "did you mean 'cuda'"));
	rt_sb_reset(&err);
	k.backend = "host";
	k.module = "/nonexistent.so";
	assert_int_equal(run_bkernel_run(&k, NULL, NULL, &r, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "/nonexistent.so"));
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_correct),
		cmocka_unit_test(test_wrong_output),
		cmocka_unit_test(test_unwritten),
		cmocka_unit_test(test_reference_file_and_table),
		cmocka_unit_test(test_rotate_flush_peak),
		cmocka_unit_test(test_bad_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_correct                   checked against the reference kernel, timed, metrics and facts
 *   test_wrong_output              wrong values: RT_ECHECK naming output, L2 error and threshold
 *   test_unwritten                 holes: RT_ECHECK "100 of 100000 elements not written (first at index 999)"
 *   test_reference_file_and_table  launch table entry sets the grid; reference file relative to workdir; missing key
 *   test_rotate_flush_peak         rotation + L2 flush; pct_peak_* from the newest device_peaks rows
 *   test_bad_spec                  unknown backend (did you mean), missing module
 */
