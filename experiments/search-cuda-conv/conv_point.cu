// One point of the GPU 2D convolution search space (experiments/
// search-cuda-conv): a 15x15 single-precision convolution of a
// (W+14) x (H+14) image into W x H, written for this project.
//   conv_point  the tuned kernel: a block of P_BX x P_BY threads computes an
//               output tile of (P_BX*P_TX) x (P_BY*P_TY); the input tile it
//               needs (plus the filter's 14-wide halo) is staged in static
//               shared memory, each row padded by P_PAD floats; each thread
//               keeps P_TX x P_TY accumulators, P_BX (P_BY) apart so that a
//               warp's loads stay consecutive; P_RO reads the image and the
//               filter through the read-only data cache (__ldg), else with
//               plain loads (no __restrict__, so the compiler may not).
//   conv_naive  the reference: one thread per output, the same order of
//               fused multiply-adds (filter row, then column), so a correct
//               point matches it to the bit.
// Compiled once per point:
//   nvcc -arch=sm_90 -cubin -O3 -DP_BX=32 -DP_BY=8 -DP_TX=2 -DP_TY=2 -DP_PAD=1 \
//        -DP_RO=1 -o p_32_8_2_2_1_1.cubin conv_point.cu
// Launch: block (P_BX, P_BY), grid (ceil(W / (P_BX*P_TX)), ceil(H / (P_BY*P_TY))).
// No restriction is written into the kernel: a point whose tile needs more
// than 48 KiB of static shared memory does not compile, and one of more
// than 1024 threads (or more registers than the SM has for its block) does
// not launch. Those are the space's infeasible points.
#define F 15

#if !defined(P_BX) || !defined(P_BY) || !defined(P_TX) || !defined(P_TY) || !defined(P_PAD) || !defined(P_RO)
#error "define P_BX, P_BY, P_TX, P_TY, P_PAD and P_RO (see the comment at the top)"
#endif

#if P_RO
#define LD(p) __ldg(p)
#else
#define LD(p) (*(p))
#endif

extern "C" __global__ void conv_point(const float *in, const float *filt, float *out, int W, int H)
{
	constexpr int TW = P_BX * P_TX, TH = P_BY * P_TY; // outputs per block
	constexpr int LW = TW + F - 1, SH = TH + F - 1;   // the input tile
	__shared__ float tile[SH][LW + P_PAD];
	const int iw = W + F - 1, ih = H + F - 1;
	const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
	const int tid = threadIdx.y * P_BX + threadIdx.x;
	for (int i = tid; i < SH * LW; i += P_BX * P_BY) {
		int r = i / LW, c = i % LW, gy = y0 + r, gx = x0 + c;
		tile[r][c] = (gy < ih && gx < iw) ? LD(&in[(size_t)gy * iw + gx]) : 0.f;
	}
	__syncthreads();
	float acc[P_TY][P_TX];
#pragma unroll
	for (int i = 0; i < P_TY; i++)
#pragma unroll
		for (int j = 0; j < P_TX; j++)
			acc[i][j] = 0.f;
	for (int fy = 0; fy < F; fy++) {
#pragma unroll
		for (int fx = 0; fx < F; fx++) {
			float w = LD(&filt[fy * F + fx]);
#pragma unroll
			for (int i = 0; i < P_TY; i++)
#pragma unroll
				for (int j = 0; j < P_TX; j++)
					acc[i][j] = fmaf(tile[threadIdx.y + i * P_BY + fy][threadIdx.x + j * P_BX + fx], w,
							 acc[i][j]);
		}
	}
#pragma unroll
	for (int i = 0; i < P_TY; i++) {
		int y = y0 + threadIdx.y + i * P_BY;
#pragma unroll
		for (int j = 0; j < P_TX; j++) {
			int x = x0 + threadIdx.x + j * P_BX;
			if (x < W && y < H)
				out[(size_t)y * W + x] = acc[i][j];
		}
	}
}

extern "C" __global__ void conv_naive(const float *in, const float *filt, float *out, int W, int H)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= W || y >= H)
		return;
	const int iw = W + F - 1;
	float s = 0.f;
	for (int fy = 0; fy < F; fy++)
		for (int fx = 0; fx < F; fx++)
			s = fmaf(in[(size_t)(y + fy) * iw + x + fx], filt[fy * F + fx], s);
	out[(size_t)y * W + x] = s;
}
