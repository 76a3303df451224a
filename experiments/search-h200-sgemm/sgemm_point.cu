// One point of the H200 SGEMM search space: the tile kernel of
// ../cuda-sgemm/sgemm_tile.cuh instantiated for the tile shape given on the
// command line, as one extern "C" kernel named sgemm_point, plus the naive
// reference. Compiled once per point:
//   nvcc -arch=sm_90 -cubin -O3 -DP_BM=128 -DP_BN=128 -DP_BK=8 -DP_TM=8 -DP_TN=8 \
//        -o p_128_128_8_8_8.cubin sgemm_point.cu
// (P_ because the template's own parameters are named BM ... TN.)
// Launch: block = (BM/TM)*(BN/TN) threads, grid = (N/BN, M/BM).
#include "../cuda-sgemm/sgemm_tile.cuh"

#if !defined(P_BM) || !defined(P_BN) || !defined(P_BK) || !defined(P_TM) || !defined(P_TN)
#error "define P_BM, P_BN, P_BK, P_TM and P_TN (see the comment at the top)"
#endif

extern "C" __global__ void __launch_bounds__((P_BM / P_TM) * (P_BN / P_TN))
	sgemm_point(const float *A, const float *B, float *C, int M, int N, int K)
{
	sgemm_tile<P_BM, P_BN, P_BK, P_TM, P_TN>(A, B, C, M, N, K);
}
