/*
 * The hip backend: the HIP runtime on AMD GPUs. libamdhip64 is opened with
 * dlopen at first use, so the binary starts anywhere and says "hip: no
 * device: ..." where there is no runtime or GPU. Modules are code objects
 * (hipModuleLoad), launches go through hipModuleLaunchKernel on the null
 * stream, timing uses two hipEvents. Compiled with __HIP_PLATFORM_AMD__
 * (cmake/device.cmake sets it).
 */
#include "runner/device/dev.h"

#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIP_STR_(x) #x
#define HIP_STR(x) HIP_STR_(x)

#define HIP_FUNCS(X)                                                             \
	X(hipInit) X(hipDriverGetVersion) X(hipRuntimeGetVersion)                \
	X(hipGetErrorName) X(hipGetErrorString) X(hipGetDeviceCount)             \
	X(hipDeviceGet) X(hipDeviceGetName) X(hipDeviceTotalMem)                 \
	X(hipDeviceGetAttribute) X(hipDeviceGetUuid) X(hipDeviceGetPCIBusId)     \
	X(hipSetDevice) X(hipModuleLoad) X(hipModuleUnload)                      \
	X(hipModuleGetFunction) X(hipMalloc) X(hipFree) X(hipMemcpyHtoD)         \
	X(hipMemcpyDtoH) X(hipMemcpyDtoD) X(hipMemsetD8) X(hipModuleLaunchKernel) \
	X(hipDeviceSynchronize) X(hipEventCreate) X(hipEventRecord)              \
	X(hipEventSynchronize) X(hipEventElapsedTime) X(hipEventDestroy)         \
	X(hipMemGetInfo)

static struct {
#define HIP_FIELD(f) __typeof__(&f) f;
	HIP_FUNCS(HIP_FIELD)
#undef HIP_FIELD
} hip;

static void hip_load(void);
static struct dev_driver hip_loader = { .once = PTHREAD_ONCE_INIT, .load = hip_load };

static int hip_fail(struct rt_sb *err, hipError_t r, const char *what)
{
	return rt_errf(err, r == hipErrorOutOfMemory ? RT_ENOMEM : RT_EIO, "hip: %s: %s (%s)", what,
		       hip.hipGetErrorName(r), hip.hipGetErrorString(r));
}

static void hip_load(void)
{
	static const char *const libs[] = { "libamdhip64.so", "libamdhip64.so.6",
					    "libamdhip64.so.5" };
	static const struct dev_sym syms[] = {
#define HIP_SYM(f) { HIP_STR(f), (void **)&hip.f },
		HIP_FUNCS(HIP_SYM)
#undef HIP_SYM
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), hip_loader.why,
			sizeof(hip_loader.why)))
		return;
	const char *what = "hipInit";
	hipError_t r = hip.hipInit(0);
	if (r == hipSuccess) {
		what = "hipGetDeviceCount";
		r = hip.hipGetDeviceCount(&hip_loader.ndev);
	}
	if (r != hipSuccess)
		DEV_FMT(hip_loader.why, sizeof(hip_loader.why), "%s: %s", what, hip.hipGetErrorName(r));
	else if (hip_loader.ndev == 0)
		DEV_FMT(hip_loader.why, sizeof(hip_loader.why), "the runtime found no GPU");
}

static int hip_count(int *n, struct rt_sb *err)
{
	return dev_driver_count(&hip_loader, "hip", n, err);
}

static int hattr(int dev, hipDeviceAttribute_t a)
{
	int v = 0;
	if (hip.hipDeviceGetAttribute(&v, a, dev) != hipSuccess)
		return 0;
	return v;
}

static int hip_info(int index, struct dev_info *o, struct rt_sb *err)
{
	int rc = dev_driver_info_init(&hip_loader, "hip", index, o, err);
	if (rc)
		return rc;
	hipDevice_t dev;
	hipError_t r = hip.hipDeviceGet(&dev, index);
	if (r != hipSuccess)
		return hip_fail(err, r, "hipDeviceGet");
	hip.hipDeviceGetName(o->name, (int)sizeof(o->name), dev);
	DEV_FMT(o->vendor, sizeof(o->vendor), "AMD");
	int v = 0;
	hip.hipDriverGetVersion(&v);
	DEV_FMT(o->driver_version, sizeof(o->driver_version), "hip driver %d", v);
	v = 0;
	hip.hipRuntimeGetVersion(&v);
	DEV_FMT(o->runtime_version, sizeof(o->runtime_version), "hip runtime %d", v);
	size_t mem = 0;
	hip.hipDeviceTotalMem(&mem, dev);
	o->mem_bytes = mem;
	o->l2_bytes = (uint64_t)hattr(index, hipDeviceAttributeL2CacheSize);
	o->compute_units = hattr(index, hipDeviceAttributeMultiprocessorCount);
	o->clock_mhz = hattr(index, hipDeviceAttributeClockRate) / 1000;
	o->mem_clock_mhz = hattr(index, hipDeviceAttributeMemoryClockRate) / 1000;
	o->mem_bus_bits = hattr(index, hipDeviceAttributeMemoryBusWidth);
	hipUUID u;
	if (hip.hipDeviceGetUuid(&u, dev) == hipSuccess)
		dev_fmt_gpu_uuid(o->uuid, sizeof(o->uuid), (const unsigned char *)u.bytes);
	hip.hipDeviceGetPCIBusId(o->pci_id, (int)sizeof(o->pci_id), dev);
	return 0;
}

/* amdsmi's readings of the same GPU: HIP's index counts only the GPUs
 * ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES leave (a pool worker sees its
 * one GPU as 0), amdsmi's every GPU, so the GPU is found by its PCI bus id. */
static int hip_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	static struct dev_id_cache ids = DEV_ID_CACHE_INIT;
	char uuid[64], pci[32];
	dev_ids_cached(&ids, hip_info, index, uuid, pci);
	return dev_amdsmi_telemetry(pci, index, out, err);
}

struct hip_dev {
	int index;                /* the device */
	hipEvent_t start, stop;   /* timer events */
};

static int hip_open(int index, void **d, struct rt_sb *err)
{
	struct hip_dev *h = xcalloc(1, sizeof(*h));
	h->index = index;
	hipError_t r = hip.hipSetDevice(index);
	if (r == hipSuccess)
		r = hip.hipEventCreate(&h->start);
	if (r == hipSuccess)
		r = hip.hipEventCreate(&h->stop);
	if (r != hipSuccess) {
		free(h);
		return hip_fail(err, r, "open");
	}
	*d = h;
	return 0;
}

static void hip_close(void *d)
{
	struct hip_dev *h = d;
	hip.hipEventDestroy(h->start);
	hip.hipEventDestroy(h->stop);
	free(h);
}

static int hip_module_load(void *d, const char *path, void **mod, struct rt_sb *err)
{
	hipModule_t m;
	hipError_t r = hip.hipModuleLoad(&m, path);
	if (r != hipSuccess) {
		char what[600];
		snprintf(what, sizeof(what), "hipModuleLoad %s", path);
		return hip_fail(err, r, what);
	}
	*mod = m;
	return 0;
}

static void hip_module_free(void *d, void *mod)
{
	if (mod)
		hip.hipModuleUnload(mod);
}

static int hip_kernel_get(void *d, void *mod, const char *name, void **kern, struct rt_sb *err)
{
	hipFunction_t f;
	hipError_t r = hip.hipModuleGetFunction(&f, mod, name);
	if (r != hipSuccess) {
		char what[300];
		snprintf(what, sizeof(what), "kernel '%.200s'", name);
		return hip_fail(err, r, what);
	}
	*kern = f;
	return 0;
}

static int hip_alloc(void *d, size_t n, dev_ptr *out, struct rt_sb *err)
{
	void *p = NULL;
	hipError_t r = hip.hipMalloc(&p, n);
	if (r != hipSuccess)
		return hip_fail(err, r, "hipMalloc");
	*out = (dev_ptr)(uintptr_t)p;
	return 0;
}

static void hip_free_(void *d, dev_ptr p)
{
	hip.hipFree((void *)(uintptr_t)p);
}

static int hip_h2d(void *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err)
{
	hipError_t r = hip.hipMemcpyHtoD((hipDeviceptr_t)(uintptr_t)dst, (void *)src, n);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipMemcpyHtoD");
}

static int hip_d2h(void *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	hipError_t r = hip.hipMemcpyDtoH(dst, (hipDeviceptr_t)(uintptr_t)src, n);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipMemcpyDtoH");
}

static int hip_d2d(void *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	hipError_t r = hip.hipMemcpyDtoD((hipDeviceptr_t)(uintptr_t)dst,
					 (hipDeviceptr_t)(uintptr_t)src, n);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipMemcpyDtoD");
}

static int hip_fill(void *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err)
{
	hipError_t r = hip.hipMemsetD8((hipDeviceptr_t)(uintptr_t)dst, byte, n);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipMemsetD8");
}

static int hip_launch(void *d, void *kern, const struct dev_launch *l, void **args, size_t nargs,
		      struct rt_sb *err)
{
	hipError_t r = hip.hipModuleLaunchKernel(kern, l->grid[0], l->grid[1], l->grid[2],
						 l->block[0], l->block[1], l->block[2],
						 l->shared_bytes, NULL, args, NULL);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipModuleLaunchKernel");
}

static int hip_sync(void *d, struct rt_sb *err)
{
	hipError_t r = hip.hipDeviceSynchronize();
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipDeviceSynchronize");
}

static int hip_timer_begin(void *d, struct rt_sb *err)
{
	hipError_t r = hip.hipEventRecord(((struct hip_dev *)d)->start, NULL);
	return r == hipSuccess ? 0 : hip_fail(err, r, "hipEventRecord");
}

static int hip_timer_end(void *d, double *seconds, struct rt_sb *err)
{
	struct hip_dev *h = d;
	hipError_t r = hip.hipEventRecord(h->stop, NULL);
	if (r == hipSuccess)
		r = hip.hipEventSynchronize(h->stop);
	float ms = 0;
	if (r == hipSuccess)
		r = hip.hipEventElapsedTime(&ms, h->start, h->stop);
	if (r != hipSuccess)
		return hip_fail(err, r, "event timing");
	*seconds = (double)ms / 1e3;
	return 0;
}

const struct dev_ops dev_hip_ops = {
	.name = "hip",
	.built = true,
	.count = hip_count,
	.info = hip_info,
	.open = hip_open,
	.close = hip_close,
	.module_load = hip_module_load,
	.module_free = hip_module_free,
	.kernel_get = hip_kernel_get,
	.alloc = hip_alloc,
	.free = hip_free_,
	.h2d = hip_h2d,
	.d2h = hip_d2h,
	.d2d = hip_d2d,
	.fill = hip_fill,
	.launch = hip_launch,
	.sync = hip_sync,
	.timer_begin = hip_timer_begin,
	.timer_end = hip_timer_end,
	.telemetry = hip_telemetry,
};
