/*
 * sweep_points: the exhaustive sweep of a GPU kernel's search space, one
 * module per point (built beforehand with nvcc). Two spaces:
 *   sgemm  experiments/search-h200-sgemm: "BM BN BK TM TN" per line, module
 *          CUBIN_DIR/p_BM_BN_BK_TM_TN.cubin, kernel sgemm_point (SIZE^3
 *          SGEMM), checked against sgemm_naive;
 *   conv   experiments/search-cuda-conv: "BX BY TX TY PAD RO" per line,
 *          module CUBIN_DIR/p_BX_BY_TX_TY_PAD_RO.cubin, kernel conv_point
 *          (a 15x15 filter over SIZE x SIZE outputs), checked against
 *          conv_naive; a point whose module is missing did not compile, and
 *          its CUBIN_DIR/p_....err holds the compiler's message.
 * Each point is measured with the campaign's kernel benchmark
 * (run_bkernel_run: output poisoned, checked against the reference, then
 * timed NVBench-style), REPEATS times, the check on the first only (the
 * naive reference costs more than the timing). With REPEATS 0 it is
 * measured once and every timed launch is a value (as Kernel Tuner's cache
 * keeps a point's "times"). Each point is one JSON line on OUT:
 *   {"point": {"BM":128, ...}, "values": [GFLOP/s per repeat or launch],
 *    "rsd": [...], "status": "ok"}
 * or "status" "compile" / "check" / "error" with "error": the message (no
 * values: the point is infeasible). The values are what the offline replay
 * (tests/perf/bench_search.c) draws its noise from. Past DEADLINE seconds
 * of wall time it stops before the next point, so a device call that has a
 * time limit returns what it measured.
 * Usage: sweep_points SPACE OUT.jsonl CUBIN_DIR POINTS [SIZE] [REPEATS] [DEADLINE]
 */
#include "runner/bench/bench_kernel.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PARAMS 6

static struct spec_karg args[6];

struct space {
	const char *name;
	int n;                            /* parameters per point */
	const char *names[MAX_PARAMS];
	/* the benchmark of one point: module, launch table file, SIZE, point */
	struct spec_kernel (*kernel)(const char *module, const char *table, int m, const int *p);
};

static void write_table(const char *table, const char *fn, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
	json_t *t = json_pack("{s:{s:s, s:[i,i,i], s:[i,i,i]}}", "P", "kernel", fn, "grid", gx, gy, 1, "block", bx,
			      by, 1);
	json_dump_file(t, table, JSON_INDENT(1));
	json_decref(t);
}

static struct spec_karg buffer(const char *name, uint64_t count, bool output)
{
	return (struct spec_karg){ .name = (char *)name, .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
				   .count = count, .output = output };
}

static struct spec_karg scalar(const char *name, int v)
{
	return (struct spec_karg){ .name = (char *)name, .kind = SPEC_KARG_SCALAR, .dtype = SPEC_DT_I32, .value = v };
}

/* SIZE^3 SGEMM. The spec's own geometry (16x16 blocks over SIZE x SIZE) is
 * the reference's; the tile kernel's block and grid come from the launch
 * table, entry "P", as in a campaign. */
static struct spec_kernel sgemm_kernel(const char *module, const char *table, int m, const int *p)
{
	write_table(table, "sgemm_point", m / p[1], m / p[0], (p[0] / p[3]) * (p[1] / p[4]), 1);
	args[0] = buffer("A", (uint64_t)m * m, false);
	args[1] = buffer("B", (uint64_t)m * m, false);
	args[2] = buffer("C", (uint64_t)m * m, true);
	args[3] = scalar("M", m);
	args[4] = scalar("N", m);
	args[5] = scalar("K", m);
	return (struct spec_kernel){
		.backend = "cuda", .module = (char *)module, .name = "sgemm_point", .args = args,
		.n_args = 6, .block = { 16, 16, 1 }, .items = { (uint64_t)m, (uint64_t)m, 1 },
		.launch_table = (char *)table, .launch_key = "P",
		.bytes = 3.0 * 4 * m * (double)m, .flops = 2.0 * m * (double)m * m,
		.ref_name = "sgemm_naive", .max_rel_l2 = 1e-5, .warmup = 2, .target_rsd = 0.01,
		.max_time_s = 0.25, .min_samples = 10,
	};
}

/* A 15x15 filter over SIZE x SIZE outputs (conv_point.cu). */
#define CONV_F 15
static struct spec_kernel conv_kernel(const char *module, const char *table, int m, const int *p)
{
	unsigned tw = (unsigned)(p[0] * p[2]), th = (unsigned)(p[1] * p[3]);
	write_table(table, "conv_point", (m + tw - 1) / tw, (m + th - 1) / th, p[0], p[1]);
	uint64_t in = (uint64_t)(m + CONV_F - 1) * (m + CONV_F - 1);
	args[0] = buffer("in", in, false);
	args[1] = buffer("filt", CONV_F * CONV_F, false);
	args[2] = buffer("out", (uint64_t)m * m, true);
	args[3] = scalar("W", m);
	args[4] = scalar("H", m);
	return (struct spec_kernel){
		.backend = "cuda", .module = (char *)module, .name = "conv_point", .args = args,
		.n_args = 5, .block = { 16, 16, 1 }, .items = { (uint64_t)m, (uint64_t)m, 1 },
		.launch_table = (char *)table, .launch_key = "P",
		.bytes = 4.0 * ((double)in + (double)m * m), .flops = 2.0 * CONV_F * CONV_F * m * (double)m,
		.ref_name = "conv_naive", .max_rel_l2 = 1e-6, .warmup = 2, .target_rsd = 0.01,
		.max_time_s = 0.05, .min_samples = 15,
	};
}

static const struct space spaces[] = {
	{ "sgemm", 5, { "BM", "BN", "BK", "TM", "TN" }, sgemm_kernel },
	{ "conv", 6, { "BX", "BY", "TX", "TY", "PAD", "RO" }, conv_kernel },
};

/* The first line of the compiler's message for a point that did not
 * compile (MODULE with .err for .cubin), or NULL. */
static char *compile_error(const char *module)
{
	char path[600];
	snprintf(path, sizeof(path), "%.*s.err", (int)(strlen(module) - strlen(".cubin")), module);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char line[512] = "did not compile", best[512] = "";
	while (fgets(line, sizeof(line), f))
		if (!*best && strstr(line, "error"))
			snprintf(best, sizeof(best), "%s", line);
	fclose(f);
	char *s = strdup(*best ? best : line);
	s[strcspn(s, "\n")] = 0;
	return s;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Measures the point's kernel k into line's values and rsd; returns the
 * status. */
static const char *measure(struct spec_kernel *k, int reps, json_t *line, double *best)
{
	json_t *vals = json_object_get(line, "values"), *rsds = json_object_get(line, "rsd");
	char *ref = k->ref_name;
	for (int r = 0; r < (reps ? reps : 1); r++) {
		struct run_bkernel_result res;
		struct rt_sb err = RT_SB_INIT;
		k->ref_name = r == 0 ? ref : NULL; /* checked once per point */
		int rc = run_bkernel_run(k, NULL, NULL, &res, &err);
		k->ref_name = ref;
		if (rc) {
			json_object_set_new(line, "error", json_string(err.buf));
			rt_sb_release(&err);
			return rc == RT_ECHECK ? "check" : "error";
		}
		if (reps)
			json_array_append_new(vals, json_real(res.gflops));
		else
			for (int i = 0; i < res.samples; i++)
				json_array_append_new(vals, json_real(k->flops / res.sample_s[i] / 1e9));
		json_array_append_new(rsds, json_real(res.rsd));
		if (res.gflops > *best)
			*best = res.gflops;
		run_bkernel_result_release(&res);
		rt_sb_release(&err);
	}
	return "ok";
}

int main(int argc, char **argv)
{
	const struct space *sp = NULL;
	for (size_t i = 0; argc > 1 && i < sizeof(spaces) / sizeof(spaces[0]); i++)
		if (!strcmp(argv[1], spaces[i].name))
			sp = &spaces[i];
	if (argc < 5 || !sp) {
		fprintf(stderr, "usage: sweep_points sgemm|conv OUT.jsonl CUBIN_DIR POINTS [SIZE] [REPEATS] [DEADLINE]\n");
		return 2;
	}
	int m = argc > 5 ? atoi(argv[5]) : 2048, reps = argc > 6 ? atoi(argv[6]) : 3;
	double deadline = argc > 7 ? atof(argv[7]) : 0, t0 = now_s();
	FILE *out = fopen(argv[2], "w"), *in = fopen(argv[4], "r");
	if (!out || !in) {
		fprintf(stderr, "sweep_points: cannot open %s or %s\n", argv[2], argv[4]);
		return 3;
	}
	int p[MAX_PARAMS], n = 0, got;
	double best = 0;
	char table[600];
	snprintf(table, sizeof(table), "%s.launch.json", argv[2]);
	for (;;) {
		for (got = 0; got < sp->n && fscanf(in, "%d", &p[got]) == 1; got++)
			;
		if (got < sp->n)
			break;
		if (deadline > 0 && now_s() - t0 > deadline) {
			fprintf(stderr, "sweep_points: deadline of %.0f s reached after %d points\n", deadline, n);
			break;
		}
		char module[512];
		int len = snprintf(module, sizeof(module), "%s/p", argv[3]);
		for (int i = 0; i < sp->n; i++)
			len += snprintf(module + len, sizeof(module) - (size_t)len, "_%d", p[i]);
		snprintf(module + len, sizeof(module) - (size_t)len, ".cubin");
		struct spec_kernel k = sp->kernel(module, table, m, p);
		json_t *pt = json_object();
		for (int i = 0; i < sp->n; i++)
			json_object_set_new(pt, sp->names[i], json_integer(p[i]));
		json_t *line = json_pack("{s:o, s:[], s:[]}", "point", pt, "values", "rsd");
		char *cerr = compile_error(module);
		const char *status = "compile";
		if (cerr)
			json_object_set_new(line, "error", json_string(cerr));
		else
			status = measure(&k, reps, line, &best);
		free(cerr);
		json_object_set_new(line, "status", json_string(status));
		char *s = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(7));
		fprintf(out, "%s\n", s);
		fflush(out);
		free(s);
		json_decref(line);
		if (++n % 100 == 0)
			fprintf(stderr, "sweep_points: %d points, best %.1f GFLOP/s, %.0f s\n", n, best, now_s() - t0);
	}
	fclose(out);
	fclose(in);
	printf("sweep_points: %s, %d points at %d, %d repeats each, best %.1f GFLOP/s\n", sp->name, n, m, reps, best);
	return 0;
}
