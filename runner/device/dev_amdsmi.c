/*
 * The hip backend's telemetry through AMD SMI, with libamd_smi.so opened at
 * first use (built or not: a machine without ROCm answers RT_ENODEV with
 * dlopen's reason). Follows amdsmi.h of ROCm 6.x (ROCm/amdsmi, read through
 * its header as stored for lib version 23.1 and the 6.x signatures):
 *   amdsmi_init(AMDSMI_INIT_AMD_GPUS = 1 << 1);
 *   amdsmi_get_socket_handles(uint32_t *count, amdsmi_socket_handle *);
 *   amdsmi_get_processor_handles(socket, uint32_t *count, amdsmi_processor_handle *);
 *   amdsmi_get_clock_info(handle, amdsmi_clk_type_t, amdsmi_clk_info_t *): the
 *     current clock is the first uint32_t of amdsmi_clk_info_t, the maximum
 *     the third (6.x: clk, min_clk, max_clk, ...); CLK_TYPE_GFX 0, CLK_TYPE_MEM 4;
 *   amdsmi_get_temp_metric(handle, TEMPERATURE_TYPE_JUNCTION 1, AMDSMI_TEMP_CURRENT 0,
 *     int64_t *) in degrees C;
 *   amdsmi_get_energy_count(handle, uint64_t *energy, float *resolution_uJ,
 *     uint64_t *timestamp_ns): power is the difference of two readings,
 *     since amdsmi_power_info_t's layout changed between releases;
 *   amdsmi_get_gpu_vram_usage(handle, amdsmi_vram_usage_t *): { vram_total,
 *     vram_used } in MB, uint32_t each;
 *   amdsmi_get_gpu_device_bdf(handle, amdsmi_bdf_t *): a union of one
 *     uint64_t whose bit fields are, from the lowest bit, function_number
 *     (3 bits), device_number (5), bus_number (8), domain_number (48).
 * The GPU is found by the PCI bus id HIP gives for its index, since
 * amdsmi's order is its own and ignores the *_VISIBLE_DEVICES pinning.
 * Throttle reasons are not read: they sit in amdsmi_gpu_metrics_t
 * (throttle_status), whose layout differs between releases, so
 * throttle_known stays false rather than guessing an offset.
 */
#include "runner/device/dev.h"

#include <math.h>
#include <string.h>

typedef int amd_ret;
typedef void *amd_handle;
#define AMD_OK 0
#define AMD_GPUS (1u << 1)
#define AMD_CLK_GFX 0
#define AMD_CLK_MEM 4
#define AMD_TEMP_JUNCTION 1
#define AMD_TEMP_CURRENT 0
#define AMD_MAX_GPUS 64

static amd_ret (*a_init)(uint64_t);
static amd_ret (*a_sockets)(uint32_t *, amd_handle *);
static amd_ret (*a_procs)(amd_handle, uint32_t *, amd_handle *);
static amd_ret (*a_clock)(amd_handle, int, uint32_t *);
static amd_ret (*a_temp)(amd_handle, int, int, int64_t *);
static amd_ret (*a_energy)(amd_handle, uint64_t *, float *, uint64_t *);
static amd_ret (*a_vram)(amd_handle, uint32_t *);
static amd_ret (*a_bdf)(amd_handle, uint64_t *);

static amd_handle gpus[AMD_MAX_GPUS]; /* every GPU, sockets in order */

static struct dev_energy last[AMD_MAX_GPUS]; /* per GPU, for power by difference */

static void amd_load(void);
static struct dev_driver amd = { .once = PTHREAD_ONCE_INIT, .load = amd_load };

static void amd_load(void)
{
	static const char *const libs[] = { "libamd_smi.so", "/opt/rocm/lib/libamd_smi.so" };
	const struct dev_sym syms[] = {
		{ "amdsmi_init", (void **)&a_init },
		{ "amdsmi_get_socket_handles", (void **)&a_sockets },
		{ "amdsmi_get_processor_handles", (void **)&a_procs },
		{ "amdsmi_get_clock_info", (void **)&a_clock },
		{ "amdsmi_get_temp_metric", (void **)&a_temp },
		{ "amdsmi_get_energy_count", (void **)&a_energy },
		{ "amdsmi_get_gpu_vram_usage", (void **)&a_vram },
		{ "amdsmi_get_gpu_device_bdf", (void **)&a_bdf },
	};
	if (dev_dl_open(libs, RT_ARRAY_SIZE(libs), syms, RT_ARRAY_SIZE(syms), amd.why, sizeof(amd.why)))
		return;
	amd_handle sockets[16];
	uint32_t ns = 16;
	amd_ret r = a_init(AMD_GPUS);
	if (r == AMD_OK)
		r = a_sockets(&ns, sockets);
	for (uint32_t s = 0; r == AMD_OK && s < ns && amd.ndev < AMD_MAX_GPUS; s++) {
		uint32_t np = (uint32_t)(AMD_MAX_GPUS - amd.ndev);
		r = a_procs(sockets[s], &np, gpus + amd.ndev);
		amd.ndev += (int)np;
	}
	if (r != AMD_OK)
		DEV_FMT(amd.why, sizeof(amd.why), "amdsmi_init or its handle listing answered %d", r);
	else if (!amd.ndev)
		DEV_FMT(amd.why, sizeof(amd.why), "amdsmi found no GPU");
}

/* Board power from the energy counter's difference since the last call. */
static double power_w(int index, amd_handle h)
{
	uint64_t e, ts;
	float res;
	if (a_energy(h, &e, &res, &ts) != AMD_OK)
		return NAN;
	return dev_energy_watts(&last[index], (double)e * res / 1e6, (double)ts / 1e9);
}

/* amdsmi's index of the GPU at PCI bus id pci ("DDDD:BB:DD.F", any case), or -1. */
static int by_bus_id(const char *pci, int nd)
{
	unsigned dom, bus, dev, fn;
	if (sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return -1;
	for (int i = 0; i < nd; i++) {
		uint64_t b = 0;
		if (a_bdf(gpus[i], &b) == AMD_OK && (b & 7) == fn && ((b >> 3) & 31) == dev &&
		    ((b >> 8) & 255) == bus && (b >> 16) == dom)
			return i;
	}
	return -1;
}

int dev_amdsmi_telemetry(const char *pci_id, int index, struct dev_telemetry *out, struct rt_sb *err)
{
	int nd;
	dev_telemetry_clear(out);
	int rc = dev_driver_count(&amd, "hip", &nd, err);
	if (rc)
		return rc;
	if (pci_id && *pci_id) {
		int at = by_bus_id(pci_id, nd);
		if (at < 0)
			return rt_errf(err, RT_ENODEV, "hip: amdsmi has no GPU at PCI %s (device %d; %d found)", pci_id,
				       index, nd);
		index = at;
	} else if (index < 0 || index >= nd) {
		return rt_errf(err, RT_ENODEV, "hip: amdsmi has no device %d (%d found)", index, nd);
	}
	amd_handle h = gpus[index];
	uint32_t clk[16] = { 0 }; /* room for any release's amdsmi_clk_info_t */
	if (a_clock(h, AMD_CLK_GFX, clk) == AMD_OK) {
		out->clock_mhz = clk[0];
		out->max_clock_mhz = clk[2] ? clk[2] : NAN;
	}
	memset(clk, 0, sizeof(clk));
	if (a_clock(h, AMD_CLK_MEM, clk) == AMD_OK)
		out->mem_clock_mhz = clk[0];
	int64_t t;
	if (a_temp(h, AMD_TEMP_JUNCTION, AMD_TEMP_CURRENT, &t) == AMD_OK)
		out->temp_c = (double)t;
	out->power_w = power_w(index, h);
	uint32_t vram[8] = { 0 };
	if (a_vram(h, vram) == AMD_OK)
		out->mem_used_bytes = (double)vram[1] * 1024.0 * 1024.0;
	if (isnan(out->clock_mhz) && isnan(out->temp_c))
		return rt_errf(err, RT_EIO, "hip: amdsmi answered no clock or temperature");
	return 0;
}
