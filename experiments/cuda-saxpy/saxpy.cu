// Memory-bound kernels for the cuda backend: z = a*x + y and a plain copy,
// each in a one-element-per-thread form, a float4 form and a grid-stride
// form. Which one runs, and its block and grid, come from launch.json
// (kernel, block, grid), so a campaign tunes them as table entries.
// Built with: nvcc -arch=sm_90 -cubin -O3 -o saxpy.cubin saxpy.cu
extern "C" __global__ void saxpy(float *z, const float *x, const float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = a * x[i] + y[i];
}

// The reference: the same arithmetic, obviously right.
extern "C" __global__ void saxpy_ref(float *z, const float *x, const float *y, float a, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

// Four elements per thread through 16-byte loads; n must be a multiple of 4.
extern "C" __global__ void saxpy_v4(float *z, const float *x, const float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 4) {
		float4 xv = reinterpret_cast<const float4 *>(x)[i];
		float4 yv = reinterpret_cast<const float4 *>(y)[i];
		float4 r = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);
		reinterpret_cast<float4 *>(z)[i] = r;
	}
}

// Grid-stride float4: a fixed grid (a few blocks per SM) walks the array.
extern "C" __global__ void saxpy_v4_gs(float *z, const float *x, const float *y, float a, int n)
{
	int n4 = n / 4;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
		float4 xv = __ldg(reinterpret_cast<const float4 *>(x) + i);
		float4 yv = __ldg(reinterpret_cast<const float4 *>(y) + i);
		float4 r = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);
		__stcs(reinterpret_cast<float4 *>(z) + i, r);
	}
}

// Copy, for comparison with the device-to-device copy ceiling.
extern "C" __global__ void copy_v4(float *z, const float *x, const float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 4)
		reinterpret_cast<float4 *>(z)[i] = reinterpret_cast<const float4 *>(x)[i];
}
