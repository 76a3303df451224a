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
 */
#include "runner/device/dev.h"

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
#define NVML_SUCCESS 0
#define NVML_INSUFFICIENT_SIZE 7
#define NVML_NOT_AVAILABLE (~0ULL)

static nvml_ret (*p_init)(void);
static nvml_ret (*p_count)(unsigned int *);
static nvml_ret (*p_handle)(unsigned int, nvml_dev *);
static nvml_ret (*p_compute)(nvml_dev, unsigned int *, struct nvml_proc *);

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
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), nvml.why, sizeof(nvml.why)))
		return;
	unsigned int n = 0;
	nvml_ret r = p_init();
	if (r == NVML_SUCCESS)
		r = p_count(&n);
	if (r != NVML_SUCCESS)
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
		if (r == NVML_SUCCESS)
			return 0;
		if (r != NVML_INSUFFICIENT_SIZE)
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
			if (p[i].used == NVML_NOT_AVAILABLE)
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
		if (p_handle((unsigned int)d, &h) != NVML_SUCCESS)
			rc = rt_errf(err, RT_EIO, "cuda: NVML has no handle for device %d", d);
		if (!rc && !(rc = list_procs(h, &p, &np, err)))
			rc = add_used(p, np, pids, n, bytes, err);
	}
	free(p);
	return rc;
}
