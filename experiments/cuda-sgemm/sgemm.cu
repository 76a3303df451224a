// A compute-bound kernel for the cuda backend: single-precision GEMM,
// C[M][N] = A[M][K] * B[K][N], row-major, with shared-memory block tiles
// (BM x BN, BK deep) and register tiles (TM x TN per thread). Each tile
// shape is one extern "C" kernel named sgemm_BMxBNxBK_TMxTN; launch.json
// picks one (kernel, block, grid), so a campaign tunes it as a table entry.
// sgemm_naive is the reference. Built with:
//   nvcc -arch=sm_90 -cubin -O3 -o sgemm.cubin sgemm.cu

#include "sgemm_tile.cuh"

#define SGEMM(BM, BN, BK, TM, TN)                                                              \
	extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))                    \
		sgemm_##BM##x##BN##x##BK##_##TM##x##TN(const float *A, const float *B, float *C, \
							int M, int N, int K)                    \
	{                                                                                      \
		sgemm_tile<BM, BN, BK, TM, TN>(A, B, C, M, N, K);                              \
	}

SGEMM(32, 32, 8, 2, 2)
SGEMM(64, 64, 8, 4, 4)
SGEMM(64, 64, 16, 4, 4)
SGEMM(128, 64, 8, 8, 4)
SGEMM(64, 128, 8, 4, 8)
SGEMM(128, 128, 8, 8, 8)
SGEMM(128, 128, 16, 8, 8)
SGEMM(128, 128, 8, 8, 4)
SGEMM(256, 128, 8, 8, 8)
