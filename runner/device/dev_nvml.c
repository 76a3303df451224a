/*
 * Per-process device memory on NVIDIA through NVML (the cuda backend's
 * proc_mem op), with libnvidia-ml.so.1 opened at first use: no toolkit is
 * needed to build it, and a machine without the driver answers RT_ENODEV
 * with dlopen's reason. Follows nvml.h of the R510+ drivers (CUDA 11.6 and
 * later): nvmlDeviceGetComputeRunningProcesses_v3 fills nvmlProcessInfo_t { pid, usedGpuMemory, gpuInstanceId,
 * computeInstanceId }, and answer NVML_ERROR_INSUFFICIENT_SIZE (7) with the
 * count needed. usedGpuMemory is NVML_VALUE_NOT_AVAILABLE (all ones) where
 * the driver cannot tell, such as inside a container without the host's
 * PID namespace: that is RT_EIO, never a zero. Pids are the host's. Only
 * compute contexts are counted (an engine has no graphics context; a
 * process with both is listed twice by NVML).
 *
 * Also the cuda backend's telemetry: SM and memory clocks
 * (nvmlDeviceGetClockInfo, NVML_CLOCK_SM 1 and NVML_CLOCK_MEM 2), the
 * nominal maximum SM clock (nvmlDeviceGetMaxClockInfo), board power in mW
 * (nvmlDeviceGetPowerUsage), the GPU die temperature
 * (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU 0), memory used
 * (nvmlDeviceGetMemoryInfo: nvmlMemory_t { total, free, used }) and the
 * clocks event reasons. Followed: nvml.h of nvidia-nvml-dev-cu12 12.2.81
 * (CUDA 12.2, read as its diff from 12.1.55), where the throttle reasons
 * became "clocks event reasons" with the same bits:
 * nvmlDeviceGetCurrentClocksEventReasons where the driver has it (R535+),
 * else its older name nvmlDeviceGetCurrentClocksThrottleReasons. Where
 * nvml.h is on the include path (the toolkit's /usr/local/cuda/include)
 * the constants and layouts written here are checked against it.
 */
#include "runner/device/dev.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* nvml.h's types, as the driver's ABI defines them. */
typedef int nvml_ret;
typedef void *nvml_dev;
struct nvml_proc {
	unsigned int pid;                /* host pid */
	unsigned long long used;         /* bytes, or all ones when not available */
	unsigned int gpu_instance;       /* MIG instance, or all ones */
	unsigned int compute_instance;   /* MIG compute instance, or all ones */
};
struct nvml_mem {
	unsigned long long total;        /* bytes */
	unsigned long long free;         /* bytes */
	unsigned long long used;         /* bytes */
};
#define RTNV_OK 0
#define RTNV_INSUFFICIENT_SIZE 7
#define RTNV_NOT_AVAILABLE (~0ULL)
#define RTNV_CLK_SM 1
#define RTNV_CLK_MEM 2
#define RTNV_TEMP_GPU 0
/* nvml.h's clocks event (throttle) reason bits. */
#define RTNV_R_IDLE 0x1ULL
#define RTNV_R_APP_CLOCKS 0x2ULL
#define RTNV_R_SW_POWER_CAP 0x4ULL
#define RTNV_R_HW_SLOWDOWN 0x8ULL
#define RTNV_R_SYNC_BOOST 0x10ULL
#define RTNV_R_SW_THERMAL 0x20ULL
#define RTNV_R_HW_THERMAL 0x40ULL
#define RTNV_R_HW_POWER_BRAKE 0x80ULL
#define RTNV_R_DISPLAY_CLOCKS 0x100ULL

#if defined(__has_include)
#if __has_include(<nvml.h>)
#include <nvml.h>
_Static_assert(NVML_SUCCESS == RTNV_OK && NVML_ERROR_INSUFFICIENT_SIZE == RTNV_INSUFFICIENT_SIZE,
	       "nvml return codes");
_Static_assert(NVML_CLOCK_SM == RTNV_CLK_SM && NVML_CLOCK_MEM == RTNV_CLK_MEM, "nvml clock ids");
_Static_assert(NVML_TEMPERATURE_GPU == RTNV_TEMP_GPU, "nvml sensor id");
_Static_assert(sizeof(nvmlMemory_t) == sizeof(struct nvml_mem), "nvmlMemory_t layout");
/* 12.2 renamed most reasons to nvmlClocksEventReason* (the old names kept
 * as aliases) but not all: each is checked under whichever name it has. */
#if defined(nvmlClocksEventReasonSwThermalSlowdown)
_Static_assert(nvmlClocksEventReasonSwThermalSlowdown == RTNV_R_SW_THERMAL, "nvml reason bit");
#elif defined(nvmlClocksThrottleReasonSwThermalSlowdown)
_Static_assert(nvmlClocksThrottleReasonSwThermalSlowdown == RTNV_R_SW_THERMAL, "nvml reason bit");
#endif
#if defined(nvmlClocksEventReasonSwPowerCap)
_Static_assert(nvmlClocksEventReasonSwPowerCap == RTNV_R_SW_POWER_CAP, "nvml reason bit");
#elif defined(nvmlClocksThrottleReasonSwPowerCap)
_Static_assert(nvmlClocksThrottleReasonSwPowerCap == RTNV_R_SW_POWER_CAP, "nvml reason bit");
#endif
#if defined(nvmlClocksEventReasonHwPowerBrakeSlowdown)
_Static_assert(nvmlClocksEventReasonHwPowerBrakeSlowdown == RTNV_R_HW_POWER_BRAKE, "nvml reason bit");
#elif defined(nvmlClocksThrottleReasonHwPowerBrakeSlowdown)
_Static_assert(nvmlClocksThrottleReasonHwPowerBrakeSlowdown == RTNV_R_HW_POWER_BRAKE, "nvml reason bit");
#endif
#if defined(nvmlClocksThrottleReasonHwThermalSlowdown)
_Static_assert(nvmlClocksThrottleReasonHwThermalSlowdown == RTNV_R_HW_THERMAL, "nvml reason bit");
#endif
#endif
#endif

static nvml_ret (*p_init)(void);
static nvml_ret (*p_count)(unsigned int *);
static nvml_ret (*p_handle)(unsigned int, nvml_dev *);
static nvml_ret (*p_compute)(nvml_dev, unsigned int *, struct nvml_proc *);
static nvml_ret (*p_by_uuid)(const char *, nvml_dev *);
static nvml_ret (*p_clock)(nvml_dev, int, unsigned int *);
static nvml_ret (*p_max_clock)(nvml_dev, int, unsigned int *);
static nvml_ret (*p_power)(nvml_dev, unsigned int *);
static nvml_ret (*p_temp)(nvml_dev, int, unsigned int *);
static nvml_ret (*p_meminfo)(nvml_dev, struct nvml_mem *);
static nvml_ret (*p_reasons)(nvml_dev, unsigned long long *);

static void nvml_load(void);
static struct dev_driver nvml = { .once = PTHREAD_ONCE_INIT, .load = nvml_load };

static void nvml_load(void)
{
	static const char *const libs[] = { "libnvidia-ml.so.1", "libnvidia-ml.so" };
	const struct dev_sym syms[] = {
		{ "nvmlInit_v2", (void **)&p_init },
		{ "nvmlDeviceGetCount_v2", (void **)&p_count },
		{ "nvmlDeviceGetHandleByIndex_v2", (void **)&p_handle },
		{ "nvmlDeviceGetComputeRunningProcesses_v3", (void **)&p_compute },
		{ "nvmlDeviceGetHandleByUUID", (void **)&p_by_uuid },
		{ "nvmlDeviceGetClockInfo", (void **)&p_clock },
		{ "nvmlDeviceGetMaxClockInfo", (void **)&p_max_clock },
		{ "nvmlDeviceGetPowerUsage", (void **)&p_power },
		{ "nvmlDeviceGetTemperature", (void **)&p_temp },
		{ "nvmlDeviceGetMemoryInfo", (void **)&p_meminfo },
		{ "nvmlDeviceGetCurrentClocksThrottleReasons", (void **)&p_reasons },
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), nvml.why, sizeof(nvml.why)))
		return;
	/* The newer name of the same call, where the driver has it. */
	void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *ev = dl ? dlsym(dl, "nvmlDeviceGetCurrentClocksEventReasons") : NULL;
	if (ev)
		*(void **)&p_reasons = ev;
	unsigned int n = 0;
	nvml_ret r = p_init();
	if (r == RTNV_OK)
		r = p_count(&n);
	if (r != RTNV_OK)
		DEV_FMT(nvml.why, sizeof(nvml.why), "nvmlInit_v2 or nvmlDeviceGetCount_v2 answered %d", r);
	nvml.ndev = (int)n;
}

/* One device's compute processes, the array grown as NVML asks. */
static int list_procs(nvml_dev h, struct nvml_proc **out, unsigned int *n, struct rt_sb *err)
{
	unsigned int cap = 16;
	for (int attempt = 0; attempt < 4; attempt++) {
		*out = xrealloc(*out, cap * sizeof(**out));
		*n = cap;
		nvml_ret r = p_compute(h, n, *out);
		if (r == RTNV_OK)
			return 0;
		if (r != RTNV_INSUFFICIENT_SIZE)
			return rt_errf(err, RT_EIO, "cuda: NVML running processes answered %d", r);
		cap = *n > cap ? *n + 8 : 2 * cap;
	}
	return rt_errf(err, RT_EIO, "cuda: NVML process list kept growing");
}

/* Add what the listed processes among pids hold. */
static int add_used(const struct nvml_proc *p, unsigned int np, const pid_t *pids, size_t n,
		    uint64_t *bytes, struct rt_sb *err)
{
	for (unsigned int i = 0; i < np; i++)
		for (size_t k = 0; k < n; k++) {
			if ((pid_t)p[i].pid != pids[k])
				continue;
			if (p[i].used == RTNV_NOT_AVAILABLE)
				return rt_errf(err, RT_EIO, "cuda: NVML cannot tell the memory of pid %u", p[i].pid);
			*bytes += p[i].used;
		}
	return 0;
}

int dev_nvml_proc_mem(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *err)
{
	int nd;
	int rc = dev_driver_count(&nvml, "cuda", &nd, err);
	*bytes = 0;
	struct nvml_proc *p = NULL;
	for (int d = 0; d < nd && !rc; d++) {
		nvml_dev h;
		unsigned int np;
		if (p_handle((unsigned int)d, &h) != RTNV_OK)
			rc = rt_errf(err, RT_EIO, "cuda: NVML has no handle for device %d", d);
		if (!rc && !(rc = list_procs(h, &p, &np, err)))
			rc = add_used(p, np, pids, n, bytes, err);
	}
	free(p);
	return rc;
}

/* NVML's reasons onto DEV_THR_* (idle and display clocks are no throttle). */
static uint64_t map_reasons(unsigned long long r)
{
	uint64_t m = 0;
	if (r & (RTNV_R_SW_POWER_CAP | RTNV_R_HW_POWER_BRAKE))
		m |= DEV_THR_POWER;
	if (r & (RTNV_R_SW_THERMAL | RTNV_R_HW_THERMAL))
		m |= DEV_THR_THERMAL;
	if (r & RTNV_R_HW_SLOWDOWN)
		m |= DEV_THR_HW;
	if (r & (RTNV_R_APP_CLOCKS | RTNV_R_SYNC_BOOST))
		m |= DEV_THR_APP;
	unsigned long long known = RTNV_R_IDLE | RTNV_R_APP_CLOCKS | RTNV_R_SW_POWER_CAP |
				   RTNV_R_HW_SLOWDOWN | RTNV_R_SYNC_BOOST | RTNV_R_SW_THERMAL |
				   RTNV_R_HW_THERMAL | RTNV_R_HW_POWER_BRAKE | RTNV_R_DISPLAY_CLOCKS;
	if (r & ~known)
		m |= DEV_THR_OTHER;
	return m;
}

int dev_nvml_telemetry(const char *uuid, int index, struct dev_telemetry *out, struct rt_sb *err)
{
	int nd;
	dev_telemetry_clear(out);
	int rc = dev_driver_count(&nvml, "cuda", &nd, err);
	if (rc)
		return rc;
	nvml_dev h;
	nvml_ret r = uuid && uuid[0] ? p_by_uuid(uuid, &h) : p_handle((unsigned int)index, &h);
	if (r != RTNV_OK)
		return rt_errf(err, RT_ENODEV, "cuda: NVML has no device %s (answered %d)",
			       uuid && uuid[0] ? uuid : "at that index", r);
	unsigned int v;
	if (p_clock(h, RTNV_CLK_SM, &v) == RTNV_OK)
		out->clock_mhz = v;
	if (p_clock(h, RTNV_CLK_MEM, &v) == RTNV_OK)
		out->mem_clock_mhz = v;
	if (p_max_clock(h, RTNV_CLK_SM, &v) == RTNV_OK)
		out->max_clock_mhz = v;
	if (p_power(h, &v) == RTNV_OK)
		out->power_w = v / 1000.0;
	if (p_temp(h, RTNV_TEMP_GPU, &v) == RTNV_OK)
		out->temp_c = v;
	struct nvml_mem m;
	if (p_meminfo(h, &m) == RTNV_OK)
		out->mem_used_bytes = (double)m.used;
	unsigned long long reasons;
	if (p_reasons(h, &reasons) == RTNV_OK) {
		out->throttle = map_reasons(reasons);
		out->throttle_known = true;
	}
	if (isnan(out->clock_mhz) && isnan(out->power_w) && isnan(out->temp_c))
		return rt_errf(err, RT_EIO, "cuda: NVML answered no clock, power or temperature");
	return 0;
}
