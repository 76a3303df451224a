/*
 * The cuda backend: the CUDA Driver API. libcuda is opened with dlopen at
 * first use (libcuda.so.1, then libcuda.so), so the ratchet binary starts on
 * machines without the driver and says "cuda: no device: ..." instead. Each
 * opened device uses its primary context; modules are .cubin, .ptx or
 * .fatbin files (cuModuleLoad), launches go through cuLaunchKernel on the
 * default stream, and timing uses two CUDA events. `devices --peak` uses a
 * built-in FMA kernel written in PTX (JIT-compiled by the driver).
 */
#include "runner/device/dev.h"

#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x) /* expands cuda.h's _v2 renames first */

/* Every driver entry point the backend uses, resolved with dlsym. */
#define CU_FUNCS(X)                                                              \
	X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)    \
	X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)                    \
	X(cuDeviceTotalMem) X(cuDeviceGetAttribute) X(cuDeviceGetUuid)           \
	X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain)                       \
	X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)      \
	X(cuModuleLoad) X(cuModuleLoadData) X(cuModuleUnload)                    \
	X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuMemAlloc) X(cuMemFree)  \
	X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8)            \
	X(cuLaunchKernel) X(cuEventCreate) X(cuEventRecord)                      \
	X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)            \
	X(cuMemGetInfo)

static struct {
#define CU_FIELD(f) __typeof__(&f) f;
	CU_FUNCS(CU_FIELD)
#undef CU_FIELD
} cu;

static void cu_load(void);
static struct dev_driver cu_loader = { .once = PTHREAD_ONCE_INIT, .load = cu_load };

static const char *cu_name(CUresult r)
{
	const char *s = NULL;
	if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	/* The toolkit's stub libcuda cannot name its own errors. */
	switch (r) {
	case CUDA_ERROR_STUB_LIBRARY:
		return "CUDA_ERROR_STUB_LIBRARY (libcuda is the toolkit's stub, not a driver)";
	case CUDA_ERROR_NO_DEVICE:
		return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
		return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
	default:
		return "unnamed CUDA error";
	}
}

static int cu_fail(struct rt_sb *err, CUresult r, const char *what)
{
	const char *desc = NULL;
	if (cu.cuGetErrorString)
		cu.cuGetErrorString(r, &desc);
	return rt_errf(err, r == CUDA_ERROR_OUT_OF_MEMORY ? RT_ENOMEM : RT_EIO,
		       "cuda: %s: %s (%s)", what, cu_name(r), desc ? desc : "no description");
}

static void cu_load(void)
{
	static const char *const libs[] = { "libcuda.so.1", "libcuda.so" };
	static const struct dev_sym syms[] = {
#define CU_SYM(f) { CU_STR(f), (void **)&cu.f },
		CU_FUNCS(CU_SYM)
#undef CU_SYM
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), cu_loader.why,
			sizeof(cu_loader.why)))
		return;
	CUresult r = cu.cuInit(0);
	if (r != CUDA_SUCCESS) {
		DEV_FMT(cu_loader.why, sizeof(cu_loader.why), "cuInit: error %d: %s", (int)r, cu_name(r));
		return;
	}
	r = cu.cuDeviceGetCount(&cu_loader.ndev);
	if (r != CUDA_SUCCESS)
		DEV_FMT(cu_loader.why, sizeof(cu_loader.why), "cuDeviceGetCount: %s", cu_name(r));
	else if (cu_loader.ndev == 0)
		DEV_FMT(cu_loader.why, sizeof(cu_loader.why), "the driver found no GPU");
}

static int cuda_count(int *n, struct rt_sb *err)
{
	return dev_driver_count(&cu_loader, "cuda", n, err);
}

static int attr(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;
	if (cu.cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

static int cuda_info(int index, struct dev_info *o, struct rt_sb *err)
{
	int rc = dev_driver_info_init(&cu_loader, "cuda", index, o, err);
	if (rc)
		return rc;
	CUdevice dev;
	CUresult r = cu.cuDeviceGet(&dev, index);
	if (r != CUDA_SUCCESS)
		return cu_fail(err, r, "cuDeviceGet");
	cu.cuDeviceGetName(o->name, (int)sizeof(o->name), dev);
	DEV_FMT(o->vendor, sizeof(o->vendor), "NVIDIA");
	int ver = 0;
	cu.cuDriverGetVersion(&ver);
	DEV_FMT(o->driver_version, sizeof(o->driver_version), "cuda %d.%d", ver / 1000,
		 ver % 1000 / 10);
	DEV_FMT(o->runtime_version, sizeof(o->runtime_version), "driver api %d.%d (built)",
		 CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
	DEV_FMT(o->arch, sizeof(o->arch), "sm_%d%d",
		 attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
		 attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
	size_t mem = 0;
	cu.cuDeviceTotalMem(&mem, dev);
	o->mem_bytes = mem;
	o->l2_bytes = (uint64_t)attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	o->compute_units = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	o->clock_mhz = attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
	o->mem_clock_mhz = attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000;
	o->mem_bus_bits = attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	CUuuid u;
	if (cu.cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS)
		dev_fmt_gpu_uuid(o->uuid, sizeof(o->uuid), (const unsigned char *)u.bytes);
	cu.cuDeviceGetPCIBusId(o->pci_id, (int)sizeof(o->pci_id), dev);
	return 0;
}

struct cu_dev {
	CUdevice dev;             /* the device */
	CUcontext ctx;            /* its primary context */
	CUevent start, stop;      /* timer events */
};

struct cu_mod {
	CUmodule m;               /* the module */
	CUdeviceptr scratch;      /* built-in FMA module: its buffer, else 0 */
	unsigned iters;           /* built-in FMA module: loop count argument */
};

static int cuda_open(int index, void **d, struct rt_sb *err)
{
	struct cu_dev *c = xcalloc(1, sizeof(*c));
	CUresult r = cu.cuDeviceGet(&c->dev, index);
	if (r == CUDA_SUCCESS)
		r = cu.cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
	if (r != CUDA_SUCCESS) {
		free(c);
		return cu_fail(err, r, "cuDevicePrimaryCtxRetain");
	}
	r = cu.cuCtxSetCurrent(c->ctx);
	if (r == CUDA_SUCCESS)
		r = cu.cuEventCreate(&c->start, CU_EVENT_DEFAULT);
	if (r == CUDA_SUCCESS)
		r = cu.cuEventCreate(&c->stop, CU_EVENT_DEFAULT);
	if (r != CUDA_SUCCESS) {
		cu.cuDevicePrimaryCtxRelease(c->dev);
		free(c);
		return cu_fail(err, r, "cuEventCreate");
	}
	*d = c;
	return 0;
}

static void cuda_close(void *d)
{
	struct cu_dev *c = d;
	cu.cuCtxSetCurrent(c->ctx);
	cu.cuEventDestroy(c->start);
	cu.cuEventDestroy(c->stop);
	cu.cuDevicePrimaryCtxRelease(c->dev);
	free(c);
}

static int cuda_module_load(void *d, const char *path, void **mod, struct rt_sb *err)
{
	struct cu_dev *c = d;
	cu.cuCtxSetCurrent(c->ctx);
	struct cu_mod *m = xcalloc(1, sizeof(*m));
	CUresult r = cu.cuModuleLoad(&m->m, path);
	if (r != CUDA_SUCCESS) {
		free(m);
		char what[600];
		snprintf(what, sizeof(what), "cuModuleLoad %s", path);
		return cu_fail(err, r, what);
	}
	*mod = m;
	return 0;
}

static void cuda_module_free(void *d, void *mod)
{
	struct cu_mod *m = mod;
	if (!m)
		return;
	if (m->scratch)
		cu.cuMemFree(m->scratch);
	cu.cuModuleUnload(m->m);
	free(m);
}

static int cuda_kernel_get(void *d, void *mod, const char *name, void **kern, struct rt_sb *err)
{
	struct cu_mod *m = mod;
	CUfunction f;
	CUresult r = cu.cuModuleGetFunction(&f, m->m, name);
	if (r != CUDA_SUCCESS) {
		char what[300];
		snprintf(what, sizeof(what), "kernel '%.200s'", name);
		return cu_fail(err, r, what);
	}
	*kern = f;
	return 0;
}

static int cuda_alloc(void *d, size_t n, dev_ptr *out, struct rt_sb *err)
{
	CUdeviceptr p;
	CUresult r = cu.cuMemAlloc(&p, n);
	if (r != CUDA_SUCCESS)
		return cu_fail(err, r, "cuMemAlloc");
	*out = (dev_ptr)p;
	return 0;
}

static void cuda_free(void *d, dev_ptr p)
{
	cu.cuMemFree((CUdeviceptr)p);
}

static int cuda_h2d(void *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err)
{
	CUresult r = cu.cuMemcpyHtoD((CUdeviceptr)dst, src, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuMemcpyHtoD");
}

static int cuda_d2h(void *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	CUresult r = cu.cuMemcpyDtoH(dst, (CUdeviceptr)src, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuMemcpyDtoH");
}

static int cuda_d2d(void *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	CUresult r = cu.cuMemcpyDtoD((CUdeviceptr)dst, (CUdeviceptr)src, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuMemcpyDtoD");
}

static int cuda_fill(void *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err)
{
	CUresult r = cu.cuMemsetD8((CUdeviceptr)dst, byte, n);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuMemsetD8");
}

static int cuda_launch(void *d, void *kern, const struct dev_launch *l, void **args, size_t nargs,
		       struct rt_sb *err)
{
	CUfunction f = kern;
	CUresult r;
	if (l->shared_bytes > 48 * 1024) {
		r = cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					  (int)l->shared_bytes);
		if (r != CUDA_SUCCESS)
			return cu_fail(err, r, "cuFuncSetAttribute(max dynamic shared)");
	}
	r = cu.cuLaunchKernel(f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
			      l->block[2], l->shared_bytes, NULL, args, NULL);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuLaunchKernel");
}

static int cuda_sync(void *d, struct rt_sb *err)
{
	CUresult r = cu.cuCtxSynchronize();
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuCtxSynchronize");
}

static int cuda_timer_begin(void *d, struct rt_sb *err)
{
	CUresult r = cu.cuEventRecord(((struct cu_dev *)d)->start, NULL);
	return r == CUDA_SUCCESS ? 0 : cu_fail(err, r, "cuEventRecord");
}

static int cuda_timer_end(void *d, double *seconds, struct rt_sb *err)
{
	struct cu_dev *c = d;
	CUresult r = cu.cuEventRecord(c->stop, NULL);
	if (r == CUDA_SUCCESS)
		r = cu.cuEventSynchronize(c->stop);
	float ms = 0;
	if (r == CUDA_SUCCESS)
		r = cu.cuEventElapsedTime(&ms, c->start, c->stop);
	if (r != CUDA_SUCCESS)
		return cu_fail(err, r, "event timing");
	*seconds = (double)ms / 1e3;
	return 0;
}

/* NVML's readings of the same GPU: CUDA's order (fastest first, and only
 * the CUDA_VISIBLE_DEVICES of this process) is not NVML's (PCI order, every
 * GPU), so the device is found by its UUID. */
static int cuda_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	static struct dev_id_cache ids = DEV_ID_CACHE_INIT;
	char uuid[64], pci[32];
	dev_ids_cached(&ids, cuda_info, index, uuid, pci);
	return dev_nvml_telemetry(uuid, index, out, err);
}

/* rt_fma(float *x, unsigned iters): 8 independent FMA chains per thread,
 * 4 rounds each per loop trip, so 32 FMAs (64 FLOPs) per trip and thread. */
static const char fma_ptx[] =
	".version 7.0\n"
	".target sm_60\n"
	".address_size 64\n"
	".visible .entry rt_fma(.param .u64 p_x, .param .u32 p_iters)\n"
	"{\n"
	"  .reg .pred %p<2>;\n"
	"  .reg .b32 %r<8>;\n"
	"  .reg .f32 %f<12>;\n"
	"  .reg .b64 %rd<6>;\n"
	"  ld.param.u64 %rd1, [p_x];\n"
	"  ld.param.u32 %r1, [p_iters];\n"
	"  cvta.to.global.u64 %rd2, %rd1;\n"
	"  mov.u32 %r2, %ctaid.x;\n"
	"  mov.u32 %r3, %ntid.x;\n"
	"  mov.u32 %r4, %tid.x;\n"
	"  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"  mul.wide.u32 %rd3, %r5, 4;\n"
	"  add.s64 %rd4, %rd2, %rd3;\n"
	"  ld.global.f32 %f1, [%rd4];\n"
	"  add.f32 %f2, %f1, 0f3F800000;\n"
	"  add.f32 %f3, %f2, 0f3F800000;\n"
	"  add.f32 %f4, %f3, 0f3F800000;\n"
	"  add.f32 %f5, %f4, 0f3F800000;\n"
	"  add.f32 %f6, %f5, 0f3F800000;\n"
	"  add.f32 %f7, %f6, 0f3F800000;\n"
	"  add.f32 %f8, %f7, 0f3F800000;\n"
	"  mov.u32 %r6, 0;\n"
	"LOOP:\n"
#define FMA8 \
	"  fma.rn.f32 %f1, %f1, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f2, %f2, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f3, %f3, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f4, %f4, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f5, %f5, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f6, %f6, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f7, %f7, 0f3F7FFFEF, 0f358637BD;\n" \
	"  fma.rn.f32 %f8, %f8, 0f3F7FFFEF, 0f358637BD;\n"
	FMA8 FMA8 FMA8 FMA8
#undef FMA8
	"  add.u32 %r6, %r6, 1;\n"
	"  setp.lt.u32 %p1, %r6, %r1;\n"
	"  @%p1 bra LOOP;\n"
	"  add.f32 %f9, %f1, %f2;\n"
	"  add.f32 %f9, %f9, %f3;\n"
	"  add.f32 %f9, %f9, %f4;\n"
	"  add.f32 %f9, %f9, %f5;\n"
	"  add.f32 %f9, %f9, %f6;\n"
	"  add.f32 %f9, %f9, %f7;\n"
	"  add.f32 %f9, %f9, %f8;\n"
	"  st.global.f32 [%rd4], %f9;\n"
	"  ret;\n"
	"}\n";

struct cu_fma_args {
	CUdeviceptr x;            /* args[0] value */
};

static int cuda_fma(void *d, void **mod, void **kern, struct dev_launch *l, void **args,
		    size_t *nargs, double *flops, struct rt_sb *err)
{
	struct cu_dev *c = d;
	int sms = attr(c->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	if (sms <= 0)
		sms = 1;
	struct cu_mod *m = xcalloc(1, sizeof(*m));
	CUresult r = cu.cuModuleLoadData(&m->m, fma_ptx);
	if (r != CUDA_SUCCESS) {
		free(m);
		return cu_fail(err, r, "cuModuleLoadData(fma ptx)");
	}
	CUfunction f;
	r = cu.cuModuleGetFunction(&f, m->m, "rt_fma");
	unsigned blocks = (unsigned)sms * 8, threads = 256;
	if (r == CUDA_SUCCESS)
		r = cu.cuMemAlloc(&m->scratch, (size_t)blocks * threads * sizeof(float));
	if (r == CUDA_SUCCESS)
		r = cu.cuMemsetD8(m->scratch, 0, (size_t)blocks * threads * sizeof(float));
	if (r != CUDA_SUCCESS) {
		cuda_module_free(d, m);
		return cu_fail(err, r, "fma kernel setup");
	}
	m->iters = 8192;
	*mod = m;
	*kern = f;
	memset(l, 0, sizeof(*l));
	l->grid[0] = blocks;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = threads;
	l->block[1] = l->block[2] = 1;
	args[0] = &m->scratch;
	args[1] = &m->iters;
	*nargs = 2;
	*flops = 64.0 * m->iters * (double)blocks * threads;
	return 0;
}

const struct dev_ops dev_cuda_ops = {
	.name = "cuda",
	.built = true,
	.count = cuda_count,
	.info = cuda_info,
	.open = cuda_open,
	.close = cuda_close,
	.module_load = cuda_module_load,
	.module_free = cuda_module_free,
	.kernel_get = cuda_kernel_get,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.h2d = cuda_h2d,
	.d2h = cuda_d2h,
	.d2d = cuda_d2d,
	.fill = cuda_fill,
	.launch = cuda_launch,
	.sync = cuda_sync,
	.timer_begin = cuda_timer_begin,
	.timer_end = cuda_timer_end,
	.telemetry = cuda_telemetry,
	.proc_mem = dev_nvml_proc_mem,
	.fma_kernel = cuda_fma,
};
