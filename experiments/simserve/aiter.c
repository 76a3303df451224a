/*
 * AITER's tuned GEMM tables, as the ROCm vLLM personality reads them. AITER
 * (ROCm/aiter, aiter/tuned_gemm.py get_GEMM_A16W16_config and
 * aiter/jit/core.py AITER_CONFIGS, main branch of 2025-2026) reads the BF16
 * GEMM table from the file the environment variable AITER_CONFIG_GEMM_BF16
 * names (several files joined with ':' are merged), keyed by
 *   gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle
 * (older tables have no gfx column) with the chosen solution in
 *   libtype,solidx,splitK,kernelName
 * and measured columns (us, err_ratio, tflops, bw) that the dispatch never
 * reads. A shape without a row falls back to torch.mm.
 *
 * The simulated model has one GEMM shape, N = K = 4096, looked up at one M
 * per shape class (decode batch 8, 32, 128; prefill 512, 2048 tokens) on
 * SIMSERVE_GFX (default gfx942) with SIMSERVE_CU_NUM compute units (default
 * 304, an MI300X). Each class has a hidden best (libtype, splitK); a row
 * costs 1.0 at the best, more for another libtype or another split, 1.6 for
 * torch (as a missing row does), and a split-K of 16 or more on a decode
 * class is fast but numerically broken (GSM8K answers go wrong).
 */
#include "simserve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_N "4096"
#define GEMM_K "4096"

/* The lookup of one shape class and its hidden best solution. */
static const struct {
	const char *m;       /* M looked up */
	const char *lib;     /* best libtype */
	long split;          /* best splitK */
} look[SS_NCLASS] = {
	[SS_DEC_BS_LE_8] = { "8", "asm", 4 },
	[SS_DEC_BS_LE_32] = { "32", "asm", 2 },
	[SS_DEC_BS_GT_32] = { "128", "hipblaslt", 0 },
	[SS_PRE_T_LE_512] = { "512", "hipblaslt", 0 },
	[SS_PRE_T_GT_512] = { "2048", "asm", 0 },
};

/* Key columns AITER indexes by, in order; gfx may be absent. */
static const char *const key_cols[] = { "gfx", "cu_num", "M", "N", "K", "bias", "dtype",
					"outdtype", "scaleAB", "bpreshuffle" };
enum { K_GFX, K_CU, K_M, K_N, K_K, K_BIAS, K_DTYPE, K_ODTYPE, K_SCALE, K_PRESHUF, NKEY };

/* Split one CSV line in place on commas (AITER's tables quote nothing). */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;
	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line; n < max;) {
		f[n++] = p;
		char *q = strchr(p, ',');
		if (!q)
			break;
		*q = '\0';
		p = q + 1;
	}
	return n;
}

static double row_factor(enum ss_class c, const char *lib, long split_k, bool *broken)
{
	*broken = c <= SS_DEC_BS_GT_32 && split_k >= 16;
	if (!strcmp(lib, "torch"))
		return 1.6;
	double f = strcmp(lib, look[c].lib) ? 1.3 : 1.0;
	return f + 0.15 * fabs(log2((double)split_k + 1) - log2((double)look[c].split + 1));
}

/* Read one file into the classes that have no row yet (the first row found
 * for a shape wins, files in the order given). */
static int load_file(const char *path, struct ss_tiles *t, bool *have, struct rt_sb *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return 0; /* AITER: os.path.exists() false, so no tuned rows */
	char line[4096];
	char *f[64];
	long col[NKEY + 3];
	for (size_t i = 0; i < RT_ARRAY_SIZE(col); i++)
		col[i] = -1;
	if (!fgets(line, sizeof(line), fp)) {
		fclose(fp);
		return 0;
	}
	size_t nh = split(line, f, 64);
	static const char *const sol[] = { "libtype", "splitK", "solidx" };
	for (size_t j = 0; j < nh; j++) {
		for (int k = 0; k < NKEY; k++)
			if (!strcmp(f[j], key_cols[k]))
				col[k] = (long)j;
		for (int k = 0; k < 3; k++)
			if (!strcmp(f[j], sol[k]))
				col[NKEY + k] = (long)j;
	}
	for (int k = 1; k < NKEY + 3; k++) {
		if (col[k] < 0) {
			fclose(fp);
			return rt_errf(err, RT_EPARSE, "%s: AITER tuned GEMM table has no '%s' column", path,
				       k < NKEY ? key_cols[k] : sol[k - NKEY]);
		}
	}
	const char *gfx = getenv("SIMSERVE_GFX") ? getenv("SIMSERVE_GFX") : "gfx942";
	const char *cu = getenv("SIMSERVE_CU_NUM") ? getenv("SIMSERVE_CU_NUM") : "304";
	const char *want[NKEY] = { gfx, cu, NULL, GEMM_N, GEMM_K, "False", "torch.bfloat16",
				   "torch.bfloat16", "False", "False" };
	for (long ln = 2; fgets(line, sizeof(line), fp); ln++) {
		size_t n = split(line, f, 64);
		if (n < nh)
			continue;
		bool match = true;
		for (int k = 0; k < NKEY && match; k++)
			if (k != K_M && col[k] >= 0)
				match = !strcmp(f[col[k]], want[k]);
		if (!match)
			continue;
		for (int c = 0; c < SS_NCLASS; c++) {
			if (have[c] || strcmp(f[col[K_M]], look[c].m))
				continue;
			bool broken;
			double x = row_factor((enum ss_class)c, f[col[NKEY]], atol(f[col[NKEY + 1]]), &broken);
			ss_tiles_set(t, (enum ss_class)c, x, broken);
			have[c] = true;
		}
	}
	fclose(fp);
	return 0;
}

int ss_aiter_load(const char *paths, struct ss_tiles *t, struct rt_sb *log, struct rt_sb *err)
{
	bool have[SS_NCLASS] = { false };
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < SS_NCLASS; c++)
		t->factor[c] = 1.6; /* torch.mm fallback */
	char *list = xstrdup(paths && *paths ? paths : "");
	int rc = 0;
	for (char *save = NULL, *p = strtok_r(list, ":", &save); p && !rc; p = strtok_r(NULL, ":", &save))
		rc = load_file(p, t, have, err);
	free(list);
	for (int c = 0; c < SS_NCLASS && !rc; c++)
		if (!have[c])
			rt_sb_addf(log, "[aiter] shape is M:%s, N:%s, K:%s, not found tuned config in %s, "
					"will use default config!\n", look[c].m, GEMM_N, GEMM_K,
				   paths && *paths ? paths : "(AITER_CONFIG_GEMM_BF16 unset)");
	return rc;
}
