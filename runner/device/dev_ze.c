/*
 * The ze backend: oneAPI Level Zero. libze_loader is opened with dlopen at
 * first use, so the binary starts anywhere and says "ze: no device: ..."
 * where there is no loader or driver. Devices are every GPU of every driver,
 * in order. Each opened device gets a context and a synchronous immediate
 * command list; modules are SPIR-V files (zeModuleCreate); launches need
 * the byte size of each argument (struct dev_launch.arg_sizes); timing
 * appends two global timestamps around the launch. Identity comes from
 * zeDeviceGetProperties. Telemetry comes from Sysman (zes_api.h of
 * level-zero 1.8, API 1.4): the GPU and memory frequency domains
 * (zesFrequencyGetProperties type and max, zesFrequencyGetState actual and
 * throttleReasons), the first temperature sensor, memory modules' state
 * (size - free) and power as the difference of two
 * zesPowerGetEnergyCounter readings (microjoules over microseconds).
 */
#include "runner/device/dev.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ze_api.h>
#include <zes_api.h>

#define ZE_STR_(x) #x
#define ZE_STR(x) ZE_STR_(x)

#define ZE_FUNCS(X)                                                               \
	X(zeInit) X(zeDriverGet) X(zeDriverGetApiVersion) X(zeDriverGetProperties) \
	X(zeDeviceGet) X(zeDeviceGetProperties) X(zeDeviceGetMemoryProperties)    \
	X(zeContextCreate) X(zeContextDestroy) X(zeCommandListCreateImmediate)    \
	X(zeCommandListDestroy) X(zeModuleCreate) X(zeModuleDestroy)              \
	X(zeModuleBuildLogGetString) X(zeModuleBuildLogDestroy) X(zeKernelCreate) \
	X(zeKernelDestroy) X(zeKernelSetGroupSize) X(zeKernelSetArgumentValue)    \
	X(zeCommandListAppendLaunchKernel) X(zeMemAllocDevice) X(zeMemAllocHost)  \
	X(zeMemFree) X(zeCommandListAppendMemoryCopy)                             \
	X(zeCommandListAppendMemoryFill) X(zeCommandListAppendBarrier)            \
	X(zeCommandListAppendWriteGlobalTimestamp)                                \
	X(zesDeviceEnumTemperatureSensors) X(zesTemperatureGetState)              \
	X(zesDeviceEnumFrequencyDomains) X(zesFrequencyGetState)                  \
	X(zesFrequencyGetProperties) X(zesDeviceEnumPowerDomains)                 \
	X(zesPowerGetEnergyCounter) X(zesDeviceEnumMemoryModules) X(zesMemoryGetState)

static struct {
#define ZE_FIELD(f) __typeof__(&f) f;
	ZE_FUNCS(ZE_FIELD)
#undef ZE_FIELD
} ze;

#define ZE_MAX_DEVS 64
static void ze_load(void);
static struct dev_driver ze_loader = { .once = PTHREAD_ONCE_INIT, .load = ze_load };
static ze_driver_handle_t ze_drv[ZE_MAX_DEVS];   /* each device's driver */
static ze_device_handle_t ze_devs[ZE_MAX_DEVS];  /* the devices */

static int ze_fail(struct rt_sb *err, ze_result_t r, const char *what)
{
	return rt_errf(err, r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ? RT_ENOMEM : RT_EIO,
		       "ze: %s: result 0x%x", what, (unsigned)r);
}

static void ze_load(void)
{
	static const char *const libs[] = { "libze_loader.so.1" };
	static const struct dev_sym syms[] = {
#define ZE_SYM(f) { ZE_STR(f), (void **)&ze.f },
		ZE_FUNCS(ZE_SYM)
#undef ZE_SYM
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), ze_loader.why,
			sizeof(ze_loader.why)))
		return;
	/* Sysman handles are device handles only when this is set before zeInit. */
	setenv("ZES_ENABLE_SYSMAN", "1", 0);
	ze_result_t r = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
	if (r != ZE_RESULT_SUCCESS) {
		DEV_FMT(ze_loader.why, sizeof(ze_loader.why),
			"zeInit: result 0x%x (no Level Zero driver)", (unsigned)r);
		return;
	}
	uint32_t nd = 0;
	r = ze.zeDriverGet(&nd, NULL);
	ze_driver_handle_t drivers[16];
	if (nd > 16)
		nd = 16;
	if (r == ZE_RESULT_SUCCESS && nd)
		r = ze.zeDriverGet(&nd, drivers);
	for (uint32_t i = 0; r == ZE_RESULT_SUCCESS && i < nd; i++) {
		uint32_t n = 0;
		if (ze.zeDeviceGet(drivers[i], &n, NULL) != ZE_RESULT_SUCCESS)
			continue;
		if (n > (uint32_t)(ZE_MAX_DEVS - ze_loader.ndev))
			n = (uint32_t)(ZE_MAX_DEVS - ze_loader.ndev);
		if (ze.zeDeviceGet(drivers[i], &n, ze_devs + ze_loader.ndev) != ZE_RESULT_SUCCESS)
			continue;
		for (uint32_t k = 0; k < n; k++)
			ze_drv[ze_loader.ndev + (int)k] = drivers[i];
		ze_loader.ndev += (int)n;
	}
	if (!ze_loader.ndev)
		DEV_FMT(ze_loader.why, sizeof(ze_loader.why), "no GPU under any Level Zero driver");
}

static int ze_count(int *n, struct rt_sb *err)
{
	return dev_driver_count(&ze_loader, "ze", n, err);
}

static int ze_info(int index, struct dev_info *o, struct rt_sb *err)
{
	int rc = dev_driver_info_init(&ze_loader, "ze", index, o, err);
	if (rc)
		return rc;
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze_result_t r = ze.zeDeviceGetProperties(ze_devs[index], &p);
	if (r != ZE_RESULT_SUCCESS)
		return ze_fail(err, r, "zeDeviceGetProperties");
	DEV_FMT(o->name, sizeof(o->name), "%s", p.name);
	DEV_FMT(o->vendor, sizeof(o->vendor), p.vendorId == 0x8086 ? "Intel" : "0x%04x",
		 p.vendorId);
	DEV_FMT(o->arch, sizeof(o->arch), "device 0x%04x", p.deviceId);
	o->compute_units = (int)(p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice);
	o->clock_mhz = (int)p.coreClockRate;
	char *u = o->uuid;
	u += sprintf(u, "ZE-");
	for (int i = 0; i < 16; i++)
		u += sprintf(u, "%02x", p.uuid.id[i]);
	ze_driver_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES };
	if (ze.zeDriverGetProperties(ze_drv[index], &dp) == ZE_RESULT_SUCCESS)
		DEV_FMT(o->driver_version, sizeof(o->driver_version), "%u", dp.driverVersion);
	ze_api_version_t av;
	if (ze.zeDriverGetApiVersion(ze_drv[index], &av) == ZE_RESULT_SUCCESS)
		DEV_FMT(o->runtime_version, sizeof(o->runtime_version), "level zero %u.%u",
			 ZE_MAJOR_VERSION(av), ZE_MINOR_VERSION(av));
	uint32_t nm = 0;
	ze_device_memory_properties_t mp[8];
	if (ze.zeDeviceGetMemoryProperties(ze_devs[index], &nm, NULL) == ZE_RESULT_SUCCESS) {
		if (nm > 8)
			nm = 8;
		for (uint32_t i = 0; i < nm; i++) {
			memset(&mp[i], 0, sizeof(mp[i]));
			mp[i].stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
		}
		if (ze.zeDeviceGetMemoryProperties(ze_devs[index], &nm, mp) == ZE_RESULT_SUCCESS)
			for (uint32_t i = 0; i < nm; i++) {
				o->mem_bytes += mp[i].totalSize;
				if (mp[i].maxBusWidth)
					o->mem_bus_bits = (int)mp[i].maxBusWidth;
				if (mp[i].maxClockRate)
					o->mem_clock_mhz = (int)mp[i].maxClockRate;
			}
	}
	return 0;
}

struct ze_dev {
	int index;                     /* the device */
	ze_context_handle_t ctx;       /* its context */
	ze_command_list_handle_t cl;   /* synchronous immediate command list */
	uint64_t *ts;                  /* host memory: the two timestamps */
	double ns_per_tick;            /* timer resolution */
	uint64_t ts_mask;              /* valid timestamp bits */
};

static int ze_open(int index, void **d, struct rt_sb *err)
{
	struct ze_dev *z = xcalloc(1, sizeof(*z));
	z->index = index;
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_result_t r = ze.zeContextCreate(ze_drv[index], &cd, &z->ctx);
	if (r != ZE_RESULT_SUCCESS) {
		free(z);
		return ze_fail(err, r, "zeContextCreate");
	}
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				       .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS };
	r = ze.zeCommandListCreateImmediate(z->ctx, ze_devs[index], &qd, &z->cl);
	ze_host_mem_alloc_desc_t hd = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	if (r == ZE_RESULT_SUCCESS)
		r = ze.zeMemAllocHost(z->ctx, &hd, 2 * sizeof(uint64_t), 8, (void **)&z->ts);
	if (r != ZE_RESULT_SUCCESS) {
		if (z->cl)
			ze.zeCommandListDestroy(z->cl);
		ze.zeContextDestroy(z->ctx);
		free(z);
		return ze_fail(err, r, "command list");
	}
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	ze.zeDeviceGetProperties(ze_devs[index], &p);
	z->ns_per_tick = p.timerResolution ? (double)p.timerResolution : 1.0;
	z->ts_mask = p.timestampValidBits >= 64 || !p.timestampValidBits
			     ? UINT64_MAX
			     : ((uint64_t)1 << p.timestampValidBits) - 1;
	*d = z;
	return 0;
}

static void ze_close(void *d)
{
	struct ze_dev *z = d;
	ze.zeMemFree(z->ctx, z->ts);
	ze.zeCommandListDestroy(z->cl);
	ze.zeContextDestroy(z->ctx);
	free(z);
}

static int ze_module_load(void *d, const char *path, void **mod, struct rt_sb *err)
{
	struct ze_dev *z = d;
	char *il = NULL;
	size_t len = 0;
	int rc = rt_read_file(path, &il, &len, err);
	if (rc)
		return rt_errf(err, rc, "ze: module %s: cannot read", path);
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				.format = ZE_MODULE_FORMAT_IL_SPIRV,
				.inputSize = len,
				.pInputModule = (const uint8_t *)il };
	ze_module_handle_t m;
	ze_module_build_log_handle_t log = NULL;
	ze_result_t r = ze.zeModuleCreate(z->ctx, ze_devs[z->index], &md, &m, &log);
	free(il);
	if (r != ZE_RESULT_SUCCESS) {
		char text[1024] = "";
		size_t tl = sizeof(text);
		if (log) {
			ze.zeModuleBuildLogGetString(log, &tl, text);
			ze.zeModuleBuildLogDestroy(log);
		}
		return rt_errf(err, RT_EIO, "ze: zeModuleCreate %s: result 0x%x: %s", path,
			       (unsigned)r, text);
	}
	if (log)
		ze.zeModuleBuildLogDestroy(log);
	*mod = m;
	return 0;
}

static void ze_module_free(void *d, void *mod)
{
	if (mod)
		ze.zeModuleDestroy(mod);
}

static int ze_kernel_get(void *d, void *mod, const char *name, void **kern, struct rt_sb *err)
{
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name };
	ze_kernel_handle_t k;
	ze_result_t r = ze.zeKernelCreate(mod, &kd, &k);
	if (r != ZE_RESULT_SUCCESS) {
		char what[300];
		snprintf(what, sizeof(what), "kernel '%.200s'", name);
		return ze_fail(err, r, what);
	}
	/* The kernel handle is kept for the module's life; Level Zero frees
	 * kernels with their module's context. */
	*kern = k;
	return 0;
}

static int ze_alloc(void *d, size_t n, dev_ptr *out, struct rt_sb *err)
{
	struct ze_dev *z = d;
	ze_device_mem_alloc_desc_t ad = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	void *p = NULL;
	ze_result_t r = ze.zeMemAllocDevice(z->ctx, &ad, n, 64, ze_devs[z->index], &p);
	if (r != ZE_RESULT_SUCCESS)
		return ze_fail(err, r, "zeMemAllocDevice");
	*out = (dev_ptr)(uintptr_t)p;
	return 0;
}

static void ze_free_(void *d, dev_ptr p)
{
	ze.zeMemFree(((struct ze_dev *)d)->ctx, (void *)(uintptr_t)p);
}

static int ze_copy(struct ze_dev *z, void *dst, const void *src, size_t n, struct rt_sb *err)
{
	ze_result_t r = ze.zeCommandListAppendMemoryCopy(z->cl, dst, src, n, NULL, 0, NULL);
	return r == ZE_RESULT_SUCCESS ? 0 : ze_fail(err, r, "zeCommandListAppendMemoryCopy");
}

static int ze_h2d(void *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err)
{
	return ze_copy(d, (void *)(uintptr_t)dst, src, n, err);
}

static int ze_d2h(void *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	return ze_copy(d, dst, (const void *)(uintptr_t)src, n, err);
}

static int ze_d2d(void *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	return ze_copy(d, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, err);
}

static int ze_fill(void *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err)
{
	struct ze_dev *z = d;
	ze_result_t r = ze.zeCommandListAppendMemoryFill(z->cl, (void *)(uintptr_t)dst, &byte, 1,
							 n, NULL, 0, NULL);
	return r == ZE_RESULT_SUCCESS ? 0 : ze_fail(err, r, "zeCommandListAppendMemoryFill");
}

static int ze_launch(void *d, void *kern, const struct dev_launch *l, void **args, size_t nargs,
		     struct rt_sb *err)
{
	struct ze_dev *z = d;
	if (nargs && !l->arg_sizes)
		return rt_errf(err, RT_EINVAL, "ze: launch needs the size of each argument");
	if (l->shared_bytes)
		return rt_errf(err, RT_ENOTSUP,
			       "ze: dynamic shared memory is not supported (declare it in the kernel)");
	ze_result_t r = ze.zeKernelSetGroupSize(kern, l->block[0], l->block[1], l->block[2]);
	for (size_t i = 0; r == ZE_RESULT_SUCCESS && i < nargs; i++)
		r = ze.zeKernelSetArgumentValue(kern, (uint32_t)i, l->arg_sizes[i], args[i]);
	ze_group_count_t g = { l->grid[0], l->grid[1], l->grid[2] };
	if (r == ZE_RESULT_SUCCESS)
		r = ze.zeCommandListAppendLaunchKernel(z->cl, kern, &g, NULL, 0, NULL);
	return r == ZE_RESULT_SUCCESS ? 0 : ze_fail(err, r, "launch");
}

static int ze_sync(void *d, struct rt_sb *err)
{
	/* The immediate command list is synchronous: every append has finished. */
	return 0;
}

static int ze_timer_begin(void *d, struct rt_sb *err)
{
	struct ze_dev *z = d;
	ze_result_t r = ze.zeCommandListAppendWriteGlobalTimestamp(z->cl, &z->ts[0], NULL, 0, NULL);
	return r == ZE_RESULT_SUCCESS ? 0 : ze_fail(err, r, "timestamp");
}

static int ze_timer_end(void *d, double *seconds, struct rt_sb *err)
{
	struct ze_dev *z = d;
	ze_result_t r = ze.zeCommandListAppendBarrier(z->cl, NULL, 0, NULL);
	if (r == ZE_RESULT_SUCCESS)
		r = ze.zeCommandListAppendWriteGlobalTimestamp(z->cl, &z->ts[1], NULL, 0, NULL);
	if (r != ZE_RESULT_SUCCESS)
		return ze_fail(err, r, "timestamp");
	uint64_t ticks = (z->ts[1] - z->ts[0]) & z->ts_mask;
	*seconds = (double)ticks * z->ns_per_tick / 1e9;
	return 0;
}

/* Sysman's throttle reasons onto DEV_THR_*. */
static uint64_t ze_reasons(zes_freq_throttle_reason_flags_t r)
{
	uint64_t m = 0;
	if (r & (ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP | ZES_FREQ_THROTTLE_REASON_FLAG_BURST_PWR_CAP |
		 ZES_FREQ_THROTTLE_REASON_FLAG_CURRENT_LIMIT | ZES_FREQ_THROTTLE_REASON_FLAG_PSU_ALERT))
		m |= DEV_THR_POWER;
	if (r & ZES_FREQ_THROTTLE_REASON_FLAG_THERMAL_LIMIT)
		m |= DEV_THR_THERMAL;
	if (r & ZES_FREQ_THROTTLE_REASON_FLAG_HW_RANGE)
		m |= DEV_THR_HW;
	if (r & ZES_FREQ_THROTTLE_REASON_FLAG_SW_RANGE)
		m |= DEV_THR_APP;
	return m;
}

/* The GPU and memory frequency domains (the first of each). */
static void ze_freq(zes_device_handle_t sd, struct dev_telemetry *out)
{
	zes_freq_handle_t f[8];
	uint32_t n = 8;
	if (ze.zesDeviceEnumFrequencyDomains(sd, &n, f) != ZE_RESULT_SUCCESS)
		return;
	for (uint32_t i = 0; i < n && i < 8; i++) {
		zes_freq_properties_t p = { .stype = ZES_STRUCTURE_TYPE_FREQ_PROPERTIES };
		zes_freq_state_t s = { .stype = ZES_STRUCTURE_TYPE_FREQ_STATE };
		if (ze.zesFrequencyGetProperties(f[i], &p) != ZE_RESULT_SUCCESS ||
		    ze.zesFrequencyGetState(f[i], &s) != ZE_RESULT_SUCCESS)
			continue;
		if (p.type == ZES_FREQ_DOMAIN_GPU && isnan(out->clock_mhz)) {
			out->clock_mhz = s.actual;
			out->max_clock_mhz = p.max > 0 ? p.max : NAN;
			out->throttle = ze_reasons(s.throttleReasons);
			out->throttle_known = true;
		} else if (p.type == ZES_FREQ_DOMAIN_MEMORY && isnan(out->mem_clock_mhz)) {
			out->mem_clock_mhz = s.actual;
		}
	}
}

static struct dev_energy ze_energy[ZE_MAX_DEVS]; /* per device, for power by difference */

static double ze_power(int index, zes_device_handle_t sd)
{
	uint32_t n = 1;
	zes_pwr_handle_t p;
	zes_power_energy_counter_t e;
	if (ze.zesDeviceEnumPowerDomains(sd, &n, &p) != ZE_RESULT_SUCCESS || !n ||
	    ze.zesPowerGetEnergyCounter(p, &e) != ZE_RESULT_SUCCESS)
		return NAN;
	return dev_energy_watts(&ze_energy[index], (double)e.energy / 1e6, (double)e.timestamp / 1e6);
}

/* Memory in use over every memory module. */
static double ze_mem_used(zes_device_handle_t sd)
{
	zes_mem_handle_t m[8];
	uint32_t n = 8;
	if (ze.zesDeviceEnumMemoryModules(sd, &n, m) != ZE_RESULT_SUCCESS || !n)
		return NAN;
	double used = 0;
	for (uint32_t i = 0; i < n && i < 8; i++) {
		zes_mem_state_t s = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };
		if (ze.zesMemoryGetState(m[i], &s) != ZE_RESULT_SUCCESS)
			return NAN;
		used += (double)(s.size - s.free);
	}
	return used;
}

static int ze_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	int nd;
	int rc = dev_driver_count(&ze_loader, "ze", &nd, err);
	if (rc)
		return rc;
	if (index < 0 || index >= nd)
		return rt_errf(err, RT_ENODEV, "ze: no device %d (%d found)", index, nd);
	zes_device_handle_t sd = (zes_device_handle_t)ze_devs[index];
	uint32_t n = 1;
	zes_temp_handle_t t;
	if (ze.zesDeviceEnumTemperatureSensors(sd, &n, &t) == ZE_RESULT_SUCCESS && n) {
		double c;
		if (ze.zesTemperatureGetState(t, &c) == ZE_RESULT_SUCCESS)
			out->temp_c = c;
	}
	ze_freq(sd, out);
	out->power_w = ze_power(index, sd);
	out->mem_used_bytes = ze_mem_used(sd);
	if (isnan(out->clock_mhz) && isnan(out->temp_c))
		return rt_errf(err, RT_EIO, "ze: Sysman answered no frequency or temperature "
					    "(is ZES_ENABLE_SYSMAN=1 set?)");
	return 0;
}

const struct dev_ops dev_ze_ops = {
	.name = "ze",
	.built = true,
	.count = ze_count,
	.info = ze_info,
	.open = ze_open,
	.close = ze_close,
	.module_load = ze_module_load,
	.module_free = ze_module_free,
	.kernel_get = ze_kernel_get,
	.alloc = ze_alloc,
	.free = ze_free_,
	.h2d = ze_h2d,
	.d2h = ze_d2h,
	.d2d = ze_d2d,
	.fill = ze_fill,
	.launch = ze_launch,
	.sync = ze_sync,
	.timer_begin = ze_timer_begin,
	.timer_end = ze_timer_end,
	.telemetry = ze_telemetry,
};
