/*
 * sweep_points: the exhaustive sweep of the H200 SGEMM search space
 * (experiments/search-h200-sgemm). For every point "BM BN BK TM TN" read from
 * POINTS (see points.sh) it loads CUBIN_DIR/p_BM_BN_BK_TM_TN.cubin (one
 * module per point, built by run-sweep-on-h200.sh), and measures its
 * sgemm_point kernel REPEATS times with the campaign's kernel benchmark
 * (run_bkernel_run: output poisoned, checked against sgemm_naive, then timed
 * NVBench-style; the check on the first repeat only, since the naive
 * reference costs more than the timing), as a campaign would measure one
 * arm REPEATS times. Each
 * point is one JSON line on OUT:
 *   {"point": {"BM":128, ...}, "values": [GFLOP/s per repeat], "rsd": [...],
 *    "status": "ok"}                    or "status": "check" / "error" + "error"
 * The repeats are what the offline replay draws its noise from.
 * Usage: sweep_points OUT.jsonl CUBIN_DIR POINTS [SIZE] [REPEATS]
 */
#include "runner/bench/bench_kernel.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct spec_karg args[6];

/* The benchmark of one point: SIZE^3 SGEMM. The spec's own geometry (16x16
 * blocks over SIZE x SIZE) is the reference's; the tile kernel's block and
 * grid come from the launch table TABLE, entry "P", as in a campaign. */
static struct spec_kernel point_kernel(const char *module, const char *table, int m, const int p[5])
{
	json_t *t = json_pack("{s:{s:s, s:[i,i,i], s:i}}", "P", "kernel", "sgemm_point", "grid", m / p[1],
			      m / p[0], 1, "block", (p[0] / p[3]) * (p[1] / p[4]));
	json_dump_file(t, table, JSON_INDENT(1));
	json_decref(t);
	args[0] = (struct spec_karg){ .name = "A", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
				      .count = (uint64_t)m * m };
	args[1] = (struct spec_karg){ .name = "B", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
				      .count = (uint64_t)m * m };
	args[2] = (struct spec_karg){ .name = "C", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
				      .count = (uint64_t)m * m, .output = true };
	for (int i = 3; i < 6; i++)
		args[i] = (struct spec_karg){ .name = i == 3 ? "M" : i == 4 ? "N" : "K",
					      .kind = SPEC_KARG_SCALAR, .dtype = SPEC_DT_I32, .value = m };
	return (struct spec_kernel){
		.backend = "cuda", .module = (char *)module, .name = "sgemm_point", .args = args,
		.n_args = 6, .block = { 16, 16, 1 }, .items = { (uint64_t)m, (uint64_t)m, 1 },
		.launch_table = (char *)table, .launch_key = "P",
		.bytes = 3.0 * 4 * m * (double)m, .flops = 2.0 * m * (double)m * m,
		.ref_name = "sgemm_naive", .max_rel_l2 = 1e-5, .warmup = 2, .target_rsd = 0.01,
		.max_time_s = 0.25, .min_samples = 10,
	};
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sweep_points OUT.jsonl CUBIN_DIR POINTS [SIZE] [REPEATS]\n");
		return 2;
	}
	int m = argc > 4 ? atoi(argv[4]) : 2048, reps = argc > 5 ? atoi(argv[5]) : 3;
	FILE *out = fopen(argv[1], "w"), *in = fopen(argv[3], "r");
	if (!out || !in) {
		fprintf(stderr, "sweep_points: cannot open %s or %s\n", argv[1], argv[3]);
		return 3;
	}
	static const char *const names[5] = { "BM", "BN", "BK", "TM", "TN" };
	int p[5], n = 0;
	double best = 0;
	while (fscanf(in, "%d %d %d %d %d", &p[0], &p[1], &p[2], &p[3], &p[4]) == 5) {
		char module[512];
		snprintf(module, sizeof(module), "%s/p_%d_%d_%d_%d_%d.cubin", argv[2], p[0], p[1], p[2], p[3], p[4]);
		char table[600];
		snprintf(table, sizeof(table), "%s.launch.json", argv[1]);
		struct spec_kernel k = point_kernel(module, table, m, p);
		json_t *pt = json_object(), *vals = json_array(), *rsds = json_array();
		for (int i = 0; i < 5; i++)
			json_object_set_new(pt, names[i], json_integer(p[i]));
		json_t *line = json_pack("{s:o, s:o, s:o}", "point", pt, "values", vals, "rsd", rsds);
		const char *status = "ok";
		for (int r = 0; r < reps; r++) {
			struct run_bkernel_result res;
			struct rt_sb err = RT_SB_INIT;
			k.ref_name = r == 0 ? "sgemm_naive" : NULL; /* checked once per point */
			int rc = run_bkernel_run(&k, NULL, NULL, &res, &err);
			if (rc) {
				status = rc == RT_ECHECK ? "check" : "error";
				json_object_set_new(line, "error", json_string(err.buf));
				rt_sb_release(&err);
				break;
			}
			json_array_append_new(vals, json_real(res.gflops));
			json_array_append_new(rsds, json_real(res.rsd));
			if (res.gflops > best)
				best = res.gflops;
			run_bkernel_result_release(&res);
			rt_sb_release(&err);
		}
		json_object_set_new(line, "status", json_string(status));
		char *s = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(7));
		fprintf(out, "%s\n", s);
		free(s);
		json_decref(line);
		if (++n % 50 == 0)
			fprintf(stderr, "sweep_points: %d points, best %.1f GFLOP/s\n", n, best);
	}
	fclose(out);
	fclose(in);
	printf("sweep_points: %d points at %d^3, %d repeats each, best %.1f GFLOP/s\n", n, m, reps, best);
	return 0;
}
