// The SGEMM tile kernel shared by experiments/cuda-sgemm/sgemm.cu (a fixed
// list of tile shapes in one module) and experiments/search-h200-sgemm/
// sgemm_point.cu (one tile shape per module, compiled per point of the
// search space): C[M][N] = A[M][K] * B[K][N], row-major, shared-memory block
// tiles (BM x BN, BK deep), register tiles (TM x TN per thread), and the
// naive reference kernel sgemm_naive.
#pragma once

template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void sgemm_tile(const float *__restrict__ A, const float *__restrict__ B,
					   float *__restrict__ C, int M, int N, int K)
{
	constexpr int NT = (BM / TM) * (BN / TN);
	__shared__ float As[BK][BM + 4]; // A tile, transposed (k-major), padded
	__shared__ float Bs[BK][BN];
	const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
	const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
	float acc[TM][TN];
#pragma unroll
	for (int i = 0; i < TM; i++)
#pragma unroll
		for (int j = 0; j < TN; j++)
			acc[i][j] = 0.f;
	float ra[TM], rb[TN];
	for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
		for (int i = threadIdx.x; i < BM * BK; i += NT) {
			int r = i / BK, c = i % BK, gr = bm + r, gc = k0 + c;
			As[c][r] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.f;
		}
#pragma unroll
		for (int i = threadIdx.x; i < BK * BN; i += NT) {
			int r = i / BN, c = i % BN, gr = k0 + r, gc = bn + c;
			Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < BK; kk++) {
#pragma unroll
			for (int i = 0; i < TM; i++)
				ra[i] = As[kk][ty * TM + i];
#pragma unroll
			for (int j = 0; j < TN; j++)
				rb[j] = Bs[kk][tx * TN + j];
#pragma unroll
			for (int i = 0; i < TM; i++)
#pragma unroll
				for (int j = 0; j < TN; j++)
					acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < TM; i++) {
		int r = bm + ty * TM + i;
#pragma unroll
		for (int j = 0; j < TN; j++) {
			int c = bn + tx * TN + j;
			if (r < M && c < N)
				C[(size_t)r * N + c] = acc[i][j];
		}
	}
}

// Reference: one thread per output, K-loop in order.
extern "C" __global__ void sgemm_naive(const float *A, const float *B, float *C, int M, int N, int K)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
	if (r >= M || c >= N)
		return;
	float s = 0.f;
	for (int k = 0; k < K; k++)
		s = fmaf(A[(size_t)r * K + k], B[(size_t)k * N + c], s);
	C[(size_t)r * N + c] = s;
}
