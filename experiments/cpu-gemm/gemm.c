/*
 * A blocked single-precision GEMM for the host backend, C = A * B (row-major,
 * C is M x N, A is M x K, B is K x N), tuned by a table of tile sizes keyed
 * by shape class. This is the kernel of the CPU demo campaign: the campaign
 * edits tiles.json one entry at a time and measures.
 *
 * Blocking (the usual five loops): N in NC columns, K in KC deep slices, M
 * in MC rows; packed A panels of MR rows and B panels of NR columns feed an
 * MR x NR register micro-kernel. tiles.json (next to this file, or
 * $CPU_GEMM_TABLE) is read at module load:
 *   {"M_LE_256": {"MC": 64, "NC": 256, "KC": 128, "MR": 4, "NR": 8}, ...}
 * Shape classes: M_LE_256 (M <= 256) and M_GT_256. A class missing from the
 * table falls back to a slow default tile (16 x 16 x 16, 4 x 4), the hole a
 * campaign should find. PACK_BF16: 1 rounds packed A to bfloat16 (less
 * memory traffic, but wrong to fp32 accuracy: the check rejects it).
 * Supported MR x NR: 4x4 4x8 4x16 6x16 8x8 8x16; others use 4x4.
 *
 * Kernels (host ABI, runner/device/dev_host_kernel.h), args (C, A, B, M, N, K):
 *   sgemm       the blocked GEMM; the grid splits M across blocks
 *   sgemm_ref   naive triple loop in double precision, the reference
 *
 * ratchet-host-libs: -ljansson
 */
#include "../../runner/device/dev_host_kernel.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tiles {
	int MC, NC, KC, MR, NR; /* block sizes */
	int pack_bf16;          /* round packed A to bfloat16 */
};

static const struct tiles slow_default = { 16, 16, 16, 4, 4, 0 };
static struct tiles t_le = { 16, 16, 16, 4, 4, 0 }, t_gt = { 16, 16, 16, 4, 4, 0 };

static int get_int(json_t *e, const char *k, int dflt, int lo, int hi)
{
	json_t *v = json_object_get(e, k);
	if (!json_is_integer(v))
		return dflt;
	long long x = json_integer_value(v);
	return x < lo ? lo : x > hi ? hi : (int)x;
}

static void load_class(json_t *root, const char *key, struct tiles *t)
{
	json_t *e = json_object_get(root, key);
	*t = slow_default;
	if (!json_is_object(e))
		return;
	t->MC = get_int(e, "MC", 16, 1, 4096);
	t->NC = get_int(e, "NC", 16, 1, 8192);
	t->KC = get_int(e, "KC", 16, 1, 4096);
	t->MR = get_int(e, "MR", 4, 1, 16);
	t->NR = get_int(e, "NR", 4, 1, 16);
	t->pack_bf16 = get_int(e, "PACK_BF16", 0, 0, 1);
}

int ratchet_host_init(const char *module_path)
{
	const char *env = getenv("CPU_GEMM_TABLE");
	char path[4096];
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		const char *slash = strrchr(module_path, '/');
		int n = slash ? (int)(slash - module_path) : 1;
		snprintf(path, sizeof(path), "%.*s/tiles.json", n, slash ? module_path : ".");
	}
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		fprintf(stderr, "cpu-gemm: %s:%d: %s\n", path, je.line, je.text);
		return 1;
	}
	load_class(root, "M_LE_256", &t_le);
	load_class(root, "M_GT_256", &t_gt);
	json_decref(root);
	return 0;
}

static float to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy(&x, &u, 4);
	return x;
}

/* Pack an mc x kc block of A into MR-row panels: Ap[panel][k][0..MR). */
static void pack_a(const float *A, int lda, int mc, int kc, int MR, int bf16, float *Ap)
{
	for (int i0 = 0; i0 < mc; i0 += MR)
		for (int k = 0; k < kc; k++)
			for (int i = 0; i < MR; i++) {
				float v = i0 + i < mc ? A[(size_t)(i0 + i) * lda + k] : 0.f;
				*Ap++ = bf16 ? to_bf16(v) : v;
			}
}

/* Pack a kc x nc block of B into NR-column panels: Bp[panel][k][0..NR). */
static void pack_b(const float *B, int ldb, int kc, int nc, int NR, float *Bp)
{
	for (int j0 = 0; j0 < nc; j0 += NR)
		for (int k = 0; k < kc; k++)
			for (int j = 0; j < NR; j++)
				*Bp++ = j0 + j < nc ? B[(size_t)k * ldb + j0 + j] : 0.f;
}

/* MR x NR micro-kernels with compile-time sizes so the compiler keeps the
 * accumulators in vector registers. */
#define MICRO(MR, NR)                                                                       \
	static void micro_##MR##x##NR(int kc, const float *a, const float *b, float *C,      \
				      int ldc, int mr, int nr, int first)                    \
	{                                                                                   \
		float acc[MR][NR] = { { 0 } };                                              \
		for (int k = 0; k < kc; k++, a += MR, b += NR)                              \
			for (int i = 0; i < MR; i++)                                        \
				for (int j = 0; j < NR; j++)                                \
					acc[i][j] += a[i] * b[j];                           \
		for (int i = 0; i < mr; i++)                                                \
			for (int j = 0; j < nr; j++)                                        \
				C[(size_t)i * ldc + j] = first ? acc[i][j]                  \
							       : C[(size_t)i * ldc + j] + acc[i][j]; \
	}
MICRO(4, 4)
MICRO(4, 8)
MICRO(4, 16)
MICRO(6, 16)
MICRO(8, 8)
MICRO(8, 16)

typedef void (*micro_fn)(int, const float *, const float *, float *, int, int, int, int);

static micro_fn pick(struct tiles *t)
{
	static const struct {
		int mr, nr;
		micro_fn f;
	} m[] = { { 4, 4, micro_4x4 }, { 4, 8, micro_4x8 }, { 4, 16, micro_4x16 },
		  { 6, 16, micro_6x16 }, { 8, 8, micro_8x8 }, { 8, 16, micro_8x16 } };
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].mr == t->MR && m[i].nr == t->NR)
			return m[i].f;
	t->MR = t->NR = 4;
	return micro_4x4;
}

/* The kernels' arguments (C, A, B, M, N, K) and this block's rows [r0, r1). */
struct gemm {
	float *C;              /* output, M x N */
	const float *A, *B;    /* inputs, M x K and K x N */
	int M, N, K;           /* sizes */
	int r0, r1;            /* this block's rows */
};

static struct gemm gemm_unpack(const struct dev_host_launch *l, void **args)
{
	struct gemm g = {
		.C = *(float **)args[0],
		.A = *(const float **)args[1],
		.B = *(const float **)args[2],
		.M = *(const int32_t *)args[3],
		.N = *(const int32_t *)args[4],
		.K = *(const int32_t *)args[5],
	};
	g.r0 = (int)((long)g.M * l->block_idx[0] / l->grid[0]);
	g.r1 = (int)((long)g.M * (l->block_idx[0] + 1) / l->grid[0]);
	return g;
}

void sgemm(const struct dev_host_launch *l, void **args)
{
	struct gemm g = gemm_unpack(l, args);
	float *C = g.C;
	const float *A = g.A, *B = g.B;
	int M = g.M, N = g.N, K = g.K, r0 = g.r0, r1 = g.r1;
	struct tiles t = M <= 256 ? t_le : t_gt;
	micro_fn micro = pick(&t);
	int MR = t.MR, NR = t.NR;
	int mcp = (t.MC + MR - 1) / MR * MR, ncp = (t.NC + NR - 1) / NR * NR;
	float *Ap = aligned_alloc(64, ((size_t)mcp * t.KC * 4 + 63) / 64 * 64);
	float *Bp = aligned_alloc(64, ((size_t)ncp * t.KC * 4 + 63) / 64 * 64);
	for (int jc = 0; jc < N; jc += t.NC) {
		int nc = N - jc < t.NC ? N - jc : t.NC;
		for (int pc = 0; pc < K; pc += t.KC) {
			int kc = K - pc < t.KC ? K - pc : t.KC;
			pack_b(B + (size_t)pc * N + jc, N, kc, nc, NR, Bp);
			for (int ic = r0; ic < r1; ic += t.MC) {
				int mc = r1 - ic < t.MC ? r1 - ic : t.MC;
				pack_a(A + (size_t)ic * K + pc, K, mc, kc, MR, t.pack_bf16, Ap);
				for (int jr = 0; jr < nc; jr += NR)
					for (int ir = 0; ir < mc; ir += MR)
						micro(kc, Ap + (size_t)ir * kc, Bp + (size_t)jr * kc,
						      C + (size_t)(ic + ir) * N + jc + jr, N,
						      mc - ir < MR ? mc - ir : MR,
						      nc - jr < NR ? nc - jr : NR, pc == 0);
			}
		}
	}
	free(Ap);
	free(Bp);
}

void sgemm_ref(const struct dev_host_launch *l, void **args)
{
	struct gemm g = gemm_unpack(l, args);
	for (int i = g.r0; i < g.r1; i++)
		for (int j = 0; j < g.N; j++) {
			double s = 0;
			for (int k = 0; k < g.K; k++)
				s += (double)g.A[(size_t)i * g.K + k] * g.B[(size_t)k * g.N + j];
			g.C[(size_t)i * g.N + j] = (float)s;
		}
}
