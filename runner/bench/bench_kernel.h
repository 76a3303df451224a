/*
 * The `kernel:` benchmark: run one kernel on one device (any backend of
 * runner/device/dev.h), check that it wrote every element of its outputs and
 * that they match a reference, then time it NVBench-style: warm up, repeat
 * until the relative standard deviation of the samples is below target_rsd
 * (after at least min_samples) or max_time_s has passed, and report the
 * median. Effective GB/s and GFLOP/s come from the declared bytes and FLOPs;
 * percent of peak from the device's row in device_peaks.
 *
 * Correctness, on every call, before timing:
 *  - every output buffer is poisoned with 0xFF bytes (a NaN for floats),
 *    the kernel runs once, and an element still all-0xFF was not written:
 *    RT_ECHECK "... 12 of 65536 elements not written (first at index 5)";
 *  - each output is compared with its reference_file bytes, or with the
 *    output of the reference kernel (ref_module/ref_name, launched with the
 *    spec's own geometry, never the launch table's) by relative L2 error
 *    ||out - ref|| / ||ref||; above max_rel_l2 it is RT_ECHECK.
 * Inputs are filled from a seeded PRNG (same bytes on every run), zeros, a
 * value or a file. Outputs must be write-only (they are poisoned).
 */
#ifndef RT_BENCH_KERNEL_H
#define RT_BENCH_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "runner/device/dev.h"
#include "runner/spec/spec.h"

struct db;

#define RUN_BKERNEL_MAX_FACTS 16

struct run_bkernel_result {
	double time;               /* median seconds per launch */
	double time_min;           /* fastest launch, seconds */
	double gbps;               /* declared bytes / median / 1e9; NAN when bytes not declared */
	double gflops;             /* declared flops / median / 1e9; NAN when flops not declared */
	double pct_peak_bw;        /* gbps as percent of the stored copy peak; NAN when none */
	double pct_peak_flops;     /* gflops as percent of the stored compute peak; NAN when none */
	double peak_gbps;          /* the copy peak used, NAN when none */
	double peak_gflops;        /* the compute peak used, NAN when none */
	double rsd;                /* relative standard deviation of the samples (fraction) */
	int samples;               /* timed launches */
	bool converged;            /* rsd reached target_rsd (false: stopped by max_time_s) */
	double *sample_s;          /* every sample in seconds, in order (owned) */
	double rel_l2;             /* worst relative L2 error over the outputs, NAN when unchecked */
	bool checked;              /* a reference was compared */
	struct dev_launch launch;  /* geometry actually used */
	struct dev_info info;      /* the device */
	char identity[192];        /* dev_identity(): compare before comparing measurements */
	struct dev_fact facts[RUN_BKERNEL_MAX_FACTS]; /* device identity facts */
	size_t n_facts;
};

/* Frees sample_s and zeroes the result. */
void run_bkernel_result_release(struct run_bkernel_result *r);

/*
 * Run the benchmark. Paths (module, ref_module, init_file, reference_file,
 * launch_table) expand {workdir} {port} {nonce} {iteration} and are taken
 * relative to vars->workdir when relative (vars may be NULL). db may be NULL
 * (no percent of peak). Returns 0, RT_ECHECK (wrong or unwritten output:
 * err names the output, the error and the threshold), RT_ENODEV /
 * RT_ENOTBUILT (backend), RT_EINVAL (bad spec), RT_EIO.
 */
int run_bkernel_run(const struct spec_kernel *k, const struct spec_vars *vars, struct db *db,
		    struct run_bkernel_result *out, struct rt_sb *err);

/* Identity of the device the benchmark would run on, without running it:
 * fills info and identity (dev_identity). */
int run_bkernel_device(const struct spec_kernel *k, struct dev_info *info, char *identity,
		       size_t n, struct rt_sb *err);

/* The metrics of a result, named as in runner/spec.h: time, time_min, gbps,
 * gflops, pct_peak_bw, pct_peak_flops, rsd, samples. Ones that are NAN are
 * left out. Returns how many were written to out (at most 8). */
struct run_bkernel_metric {
	const char *name;          /* metric name */
	double value;              /* base units */
	const char *unit;          /* s, GB/s, GFLOP/s, %, fraction, count */
};
size_t run_bkernel_metrics(const struct run_bkernel_result *r, struct run_bkernel_metric out[8]);

/* ---- element types (bench_kernel_dtype.c) ---- */
/* Bytes of one element of a dtype. */
size_t run_bkernel_dtype_size(enum spec_dtype t);
/* f16, bf16, f32 and f64 (not the integer types). */
bool run_bkernel_dtype_float(enum spec_dtype t);
/* Element i of buffer p of dtype t, as a double. */
double run_bkernel_elem_get(const void *p, enum spec_dtype t, size_t i);
/* Set element i of buffer p of dtype t to v, converted (f16 and bf16 round
 * to nearest even, integers truncate). */
void run_bkernel_elem_set(void *p, enum spec_dtype t, size_t i, double v);

#endif
