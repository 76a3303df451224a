/*
 * cuda_sweep: the GPU kernel campaign's measurements without the campaign
 * loop. For the memory-bound saxpy (experiments/cuda-saxpy) and the
 * compute-bound SGEMM (experiments/cuda-sgemm) it
 *  1. measures the device's copy and FMA ceilings (stored in a scratch
 *     database so the benchmark reports percent of peak),
 *  2. runs the kernel benchmark (run_bkernel_run) over the whole tuning
 *     space: every launch-table entry in the experiment's sweep list,
 *  3. replays the campaign's list strategy (baseline, then each variant of
 *     campaign.yaml on top of the best so far, kept when it gains more than
 *     min_gain), so the campaign's choice can be compared with the sweep's
 *     best,
 *  4. repeats the best saxpy configuration to show run-to-run noise.
 * Writes one JSON line per measurement to OUT/sweep.jsonl and a summary to
 * stdout. Usage:
 *   cuda_sweep OUT_DIR SAXPY_CUBIN SGEMM_CUBIN [--quick] [--backend cuda]
 */
#include "db/db.h"
#include "db/devices.h"
#include "runner/bench/bench_kernel.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfg {
	const char *key;        /* launch-table key */
	const char *kernel;     /* function */
	unsigned grid[3];       /* blocks */
	unsigned block;         /* threads per block (x) */
};

static FILE *jsonl;
static struct db *db;
static const char *backend = "cuda";
static int sms = 132;

/* Run one configuration; returns the objective (gbps or gflops), NAN on failure. */
static double run_one(const char *exp, const char *phase, struct spec_kernel *k, const char *table,
		      const struct cfg *c, bool gemm)
{
	json_t *t = json_load_file(table, 0, NULL);
	if (!t)
		t = json_object();
	json_object_set_new(t, c->key,
			    json_pack("{s:s, s:[i,i,i], s:i}", "kernel", c->kernel, "grid", c->grid[0],
				      c->grid[1], c->grid[2], "block", c->block));
	json_dump_file(t, table, JSON_INDENT(1));
	json_decref(t);
	k->launch_table = (char *)table;
	k->launch_key = (char *)c->key;
	struct run_bkernel_result r;
	struct rt_sb err = RT_SB_INIT;
	int rc = run_bkernel_run(k, NULL, db, &r, &err);
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:[i,i,i], s:i}", "experiment", exp, "phase",
			      phase, "config", c->key, "kernel", c->kernel, "grid", c->grid[0],
			      c->grid[1], c->grid[2], "block", c->block);
	double obj = NAN;
	if (rc) {
		json_object_set_new(j, "status", json_string(rt_strerror(rc)));
		json_object_set_new(j, "error", json_string(err.buf));
		printf("  %-28s %-22s REJECTED: %s\n", c->key, c->kernel, err.buf);
	} else {
		struct run_bkernel_metric m[8];
		size_t n = run_bkernel_metrics(&r, m);
		for (size_t i = 0; i < n; i++)
			json_object_set_new(j, m[i].name, json_real(m[i].value));
		json_object_set_new(j, "status", json_string("ok"));
		json_object_set_new(j, "converged", json_boolean(r.converged));
		json_object_set_new(j, "rel_l2", isfinite(r.rel_l2) ? json_real(r.rel_l2) : json_null());
		json_object_set_new(j, "identity", json_string(r.identity));
		obj = gemm ? r.gflops : r.gbps;
		printf("  %-28s %-22s %9.1f us  %8.1f GB/s  %8.1f GFLOP/s  %5.1f%% peak  rsd %.2f%%  n=%d%s\n",
		       c->key, c->kernel, r.time * 1e6, r.gbps, isfinite(r.gflops) ? r.gflops : 0,
		       gemm ? r.pct_peak_flops : r.pct_peak_bw, 100 * r.rsd, r.samples,
		       r.converged ? "" : " (time budget)");
	}
	char *s = json_dumps(j, JSON_COMPACT);
	fprintf(jsonl, "%s\n", s);
	fflush(jsonl);
	fflush(stdout);
	free(s);
	json_decref(j);
	run_bkernel_result_release(&r);
	rt_sb_release(&err);
	return obj;
}

/* The campaign's list strategy: keep a variant when it beats the best by min_gain. */
static void replay_campaign(const char *exp, struct spec_kernel *k, const char *table,
			    const struct cfg *base, const struct cfg *vars, size_t nv, bool gemm,
			    const char *sweep_best, double sweep_obj)
{
	printf("campaign replay (%s): list strategy, min_gain 2%%\n", exp);
	const double min_gain = 0.02;
	double best = run_one(exp, "campaign", k, table, base, gemm);
	const char *best_key = base->key;
	for (size_t i = 0; i < nv; i++) {
		double v = run_one(exp, "campaign", k, table, &vars[i], gemm);
		const char *d;
		if (isnan(v))
			d = "rejected (check failed)";
		else if (!(best > 0) || v > best * (1 + min_gain)) {
			d = "kept";
			best = v;
			best_key = vars[i].key;
		} else {
			d = "reverted";
		}
		printf("    -> %s: %s\n", vars[i].key, d);
	}
	printf("campaign %s chose %s: %.1f %s; exhaustive sweep best %s: %.1f %s (campaign at %.1f%% of sweep best)\n",
	       exp, best_key, best, gemm ? "GFLOP/s" : "GB/s", sweep_best, sweep_obj,
	       gemm ? "GFLOP/s" : "GB/s", 100 * best / sweep_obj);
	fprintf(jsonl,
		"{\"experiment\":\"%s\",\"phase\":\"summary\",\"campaign_choice\":\"%s\",\"campaign_value\":%.3f,"
		"\"sweep_best\":\"%s\",\"sweep_value\":%.3f}\n",
		exp, best_key, best, sweep_best, sweep_obj);
}

/* Run every configuration; returns the best objective, its key in *best_key. */
static double sweep_all(const char *exp, struct spec_kernel *k, const char *table,
			const struct cfg *c, size_t n, bool gemm, const char **best_key)
{
	double best = -1;
	*best_key = "";
	for (size_t i = 0; i < n; i++) {
		double v = run_one(exp, "sweep", k, table, &c[i], gemm);
		if (v > best) {
			best = v;
			*best_key = c[i].key;
		}
	}
	return best;
}

/* 1. identity and ceilings, stored so the benchmark reports percent of peak.
 * Says what failed on stderr and returns 3, or returns 0. */
static int measure_peaks(bool quick, struct rt_sb *err)
{
	struct dev *d = NULL;
	if (dev_open(backend, 0, &d, err)) {
		fprintf(stderr, "cuda_sweep: %s\n", err->buf);
		return 3;
	}
	char id[192], key[128];
	dev_identity(&d->info, id, sizeof(id));
	dev_peak_key(&d->info, key, sizeof(key));
	sms = d->info.compute_units > 0 ? d->info.compute_units : 1;
	printf("device: %s\n  %s, %d SMs, %d MHz, %.1f GiB, L2 %.0f MiB, mem clock %d MHz, bus %d bits\n",
	       id, d->info.arch, sms, d->info.clock_mhz, d->info.mem_bytes / 1073741824.0,
	       d->info.l2_bytes / 1048576.0, d->info.mem_clock_mhz, d->info.mem_bus_bits);
	struct dev_peak pk;
	int rc = dev_peak_measure(d, quick ? (64u << 20) : (1u << 30), &pk, err);
	dev_close(d);
	if (rc) {
		fprintf(stderr, "cuda_sweep: peak: %s\n", err->buf);
		return 3;
	}
	db_device_peak_add(db, backend, key, "", "copy_gbps", pk.copy_gbps, err);
	if (isfinite(pk.gflops))
		db_device_peak_add(db, backend, key, "", "gflops", pk.gflops, err);
	printf("peak: d2d copy %.1f GB/s (read + written, 1 GiB), fp32 FMA loop %.1f GFLOP/s\n",
	       pk.copy_gbps, pk.gflops);
	fprintf(jsonl, "{\"phase\":\"peak\",\"identity\":\"%s\",\"copy_gbps\":%.3f,\"gflops\":%.3f}\n", id,
		pk.copy_gbps, pk.gflops);
	return 0;
}

static struct spec_karg saxpy_args[5], gemm_args[6];

/* The saxpy tuning space: block sizes for the plain and float4 kernels, and
 * grid-stride float4 with 1..32 waves of SMs. names holds the keys. */
static size_t saxpy_configs(int n, struct cfg sx[64], char names[64][48])
{
	static const unsigned blocks[] = { 64, 128, 256, 512, 1024 };
	size_t nsx = 0;
	for (size_t b = 0; b < 5; b++) {
		snprintf(names[nsx], 48, "saxpy_b%u", blocks[b]);
		sx[nsx] = (struct cfg){ names[nsx], "saxpy", { (unsigned)((n + blocks[b] - 1) / blocks[b]), 1, 1 }, blocks[b] };
		nsx++;
		snprintf(names[nsx], 48, "saxpy_v4_b%u", blocks[b]);
		sx[nsx] = (struct cfg){ names[nsx], "saxpy_v4", { (unsigned)((n / 4 + blocks[b] - 1) / blocks[b]), 1, 1 }, blocks[b] };
		nsx++;
	}
	static const unsigned waves[] = { 1, 2, 4, 8, 16, 32 };
	for (size_t b = 2; b < 5; b++)
		for (size_t w = 0; w < 6; w++) {
			snprintf(names[nsx], 48, "saxpy_v4_gs_b%u_w%u", blocks[b], waves[w]);
			sx[nsx] = (struct cfg){ names[nsx], "saxpy_v4_gs", { (unsigned)sms * waves[w], 1, 1 }, blocks[b] };
			nsx++;
		}
	return nsx;
}

/* 2. saxpy: z = a*x + y over n floats; sweep, copy kernel, campaign replay, noise. */
static void saxpy_phase(const char *module, const char *table, bool quick)
{
	const int n = quick ? (1 << 22) : (1 << 26);
	saxpy_args[0] = (struct spec_karg){ .name = "z", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					    .count = (uint64_t)n, .output = true };
	saxpy_args[1] = (struct spec_karg){ .name = "x", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					    .count = (uint64_t)n };
	saxpy_args[2] = (struct spec_karg){ .name = "y", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					    .count = (uint64_t)n };
	saxpy_args[3] = (struct spec_karg){ .name = "a", .kind = SPEC_KARG_SCALAR, .dtype = SPEC_DT_F32,
					    .value = 2.5 };
	saxpy_args[4] = (struct spec_karg){ .name = "n", .kind = SPEC_KARG_SCALAR, .dtype = SPEC_DT_I32,
					    .value = n };
	struct spec_kernel ks = {
		.backend = (char *)backend, .module = (char *)module, .name = "saxpy", .args = saxpy_args,
		.n_args = 5, .block = { 256, 1, 1 }, .items = { (uint64_t)n, 1, 1 },
		.bytes = 12.0 * n, .flops = 2.0 * n, .ref_name = "saxpy_ref", .max_rel_l2 = 1e-6,
		.warmup = 5, .target_rsd = 0.005, .max_time_s = quick ? 0.5 : 2.0, .min_samples = 20,
	};
	struct cfg sx[64];
	char names[64][48];
	size_t nsx = saxpy_configs(n, sx, names);
	printf("saxpy sweep: n = %d floats (%.0f MiB per buffer), bytes = 12n, %zu configurations\n", n,
	       n * 4.0 / 1048576, nsx);
	const char *best_key;
	double best = sweep_all("cuda-saxpy", &ks, table, sx, nsx, false, &best_key);
	/* copy, for comparison with the copy ceiling: 8n bytes, no reference */
	struct spec_kernel kc = ks;
	kc.bytes = 8.0 * n;
	kc.flops = 0;
	kc.ref_name = NULL;
	struct cfg cc = { "copy_v4_b256", "copy_v4", { (unsigned)((n / 4 + 255) / 256), 1, 1 }, 256 };
	printf("copy kernel (8n bytes):\n");
	run_one("cuda-copy", "sweep", &kc, table, &cc, false);

	/* campaign replay: the variants of experiments/cuda-saxpy/campaign.yaml */
	const struct cfg sbase = { "N_LARGE", "saxpy", { (unsigned)((n + 63) / 64), 1, 1 }, 64 };
	const struct cfg svars[] = {
		{ "N_LARGE", "saxpy", { (unsigned)((n + 255) / 256), 1, 1 }, 256 },
		{ "N_LARGE", "saxpy", { (unsigned)((n + 1023) / 1024), 1, 1 }, 1024 },
		{ "N_LARGE", "saxpy_v4", { (unsigned)((n / 4 + 255) / 256), 1, 1 }, 256 },
		{ "N_LARGE", "saxpy_v4_gs", { (unsigned)sms * 4, 1, 1 }, 256 },
		{ "N_LARGE", "saxpy_v4_gs", { (unsigned)sms * 16, 1, 1 }, 512 },
		{ "N_LARGE", "saxpy_v4", { (unsigned)((n / 4 + 255) / 256) / 2, 1, 1 }, 256 }, /* half grid: breaks */
	};
	replay_campaign("cuda-saxpy", &ks, table, &sbase, svars, RT_ARRAY_SIZE(svars), false, best_key, best);

	/* noise: the best saxpy configuration five more times */
	printf("noise: %s five more times\n", best_key);
	for (size_t i = 0; i < nsx; i++)
		if (!strcmp(sx[i].key, best_key))
			for (int r = 0; r < 5; r++)
				run_one("cuda-saxpy", "noise", &ks, table, &sx[i], false);
}

/* 3. sgemm: M = N = K = m over the register-tile space, then the campaign replay. */
static void sgemm_phase(const char *module, const char *table, bool quick)
{
	const int m = quick ? 1024 : 4096;
	gemm_args[0] = (struct spec_karg){ .name = "A", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					   .count = (uint64_t)m * m };
	gemm_args[1] = (struct spec_karg){ .name = "B", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					   .count = (uint64_t)m * m };
	gemm_args[2] = (struct spec_karg){ .name = "C", .kind = SPEC_KARG_BUFFER, .dtype = SPEC_DT_F32,
					   .count = (uint64_t)m * m, .output = true };
	for (int i = 3; i < 6; i++)
		gemm_args[i] = (struct spec_karg){ .name = i == 3 ? "M" : i == 4 ? "N" : "K",
						   .kind = SPEC_KARG_SCALAR, .dtype = SPEC_DT_I32, .value = m };
	struct spec_kernel kg = {
		.backend = (char *)backend, .module = (char *)module, .name = "sgemm_64x64x8_4x4",
		.args = gemm_args, .n_args = 6, .block = { 16, 16, 1 }, .items = { (uint64_t)m, (uint64_t)m, 1 },
		.bytes = 3.0 * 4 * m * (double)m, .flops = 2.0 * m * (double)m * m,
		.ref_name = "sgemm_naive", .max_rel_l2 = 1e-5, .warmup = 3, .target_rsd = 0.005,
		.max_time_s = quick ? 0.5 : 2.0, .min_samples = 10,
	};
	static const int tiles[][5] = {
		{ 32, 32, 8, 2, 2 }, { 64, 64, 8, 4, 4 }, { 64, 64, 16, 4, 4 }, { 128, 64, 8, 8, 4 },
		{ 64, 128, 8, 4, 8 }, { 128, 128, 8, 8, 8 }, { 128, 128, 16, 8, 8 }, { 128, 128, 8, 8, 4 },
		{ 256, 128, 8, 8, 8 },
	};
	struct cfg gc[16];
	char gk[16][48], gn[16][48];
	size_t ngc = 0;
	for (size_t t = 0; t < RT_ARRAY_SIZE(tiles); t++) {
		const int *x = tiles[t];
		snprintf(gn[ngc], 48, "sgemm_%dx%dx%d_%dx%d", x[0], x[1], x[2], x[3], x[4]);
		memcpy(gk[ngc], gn[ngc], sizeof(gk[ngc]));
		gc[ngc] = (struct cfg){ gk[ngc], gn[ngc], { (unsigned)(m / x[1]), (unsigned)(m / x[0]), 1 },
					(unsigned)((x[0] / x[3]) * (x[1] / x[4])) };
		ngc++;
	}
	printf("sgemm sweep: M = N = K = %d, %zu tile configurations\n", m, ngc);
	const char *best_key;
	double best = sweep_all("cuda-sgemm", &kg, table, gc, ngc, true, &best_key);
	/* campaign replay: the variants of experiments/cuda-sgemm/campaign.yaml */
	const struct cfg gbase = { "MNK_4096", "sgemm_32x32x8_2x2", { (unsigned)(m / 32), (unsigned)(m / 32), 1 }, 256 };
	const struct cfg gvars[] = {
		{ "MNK_4096", "sgemm_64x64x8_4x4", { (unsigned)(m / 64), (unsigned)(m / 64), 1 }, 256 },
		{ "MNK_4096", "sgemm_128x128x8_8x8", { (unsigned)(m / 128), (unsigned)(m / 128), 1 }, 256 },
		{ "MNK_4096", "sgemm_128x128x16_8x8", { (unsigned)(m / 128), (unsigned)(m / 128), 1 }, 256 },
		{ "MNK_4096", "sgemm_128x64x8_8x4", { (unsigned)(m / 64), (unsigned)(m / 128), 1 }, 256 },
		{ "MNK_4096", "sgemm_256x128x8_8x8", { (unsigned)(m / 128), (unsigned)(m / 256), 1 }, 512 },
		{ "MNK_4096", "sgemm_128x128x8_8x8", { (unsigned)(m / 128), (unsigned)(m / 256), 1 }, 256 }, /* half grid: breaks */
	};
	replay_campaign("cuda-sgemm", &kg, table, &gbase, gvars, RT_ARRAY_SIZE(gvars), true, best_key, best);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: cuda_sweep OUT_DIR SAXPY_CUBIN SGEMM_CUBIN [--quick] [--backend B]\n");
		return 2;
	}
	const char *out = argv[1];
	bool quick = false;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			backend = argv[++i];
	}
	struct rt_sb err = RT_SB_INIT;
	char *p = xasprintf("%s/sweep.jsonl", out);
	jsonl = fopen(p, "w");
	free(p);
	p = xasprintf("%s/sweep.db", out);
	if (!jsonl || db_open(p, &db, &err)) {
		fprintf(stderr, "cuda_sweep: %s\n", err.buf);
		return 3;
	}
	free(p);
	if (measure_peaks(quick, &err))
		return 3;
	char *table = xasprintf("%s/launch.json", out);
	remove(table);
	saxpy_phase(argv[2], table, quick);
	sgemm_phase(argv[3], table, quick);
	free(table);
	fclose(jsonl);
	db_close(db);
	rt_sb_release(&err);
	return 0;
}
