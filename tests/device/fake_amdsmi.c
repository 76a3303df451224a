/*
 * A stand-in for AMD SMI's libamd_smi.so, for test_amdsmi (no AMD GPU
 * here). It exports the calls runner/device/dev_amdsmi.c makes, with the
 * signatures and the count-then-fill behaviour of amdsmi.h in ROCm 6.x
 * (ROCm/amdsmi, include/amd_smi/amdsmi.h): amdsmi_init,
 * amdsmi_get_socket_handles, amdsmi_get_processor_handles,
 * amdsmi_get_clock_info (amdsmi_clk_info_t: clk, min_clk, max_clk, ...),
 * amdsmi_get_temp_metric, amdsmi_get_energy_count, amdsmi_get_gpu_vram_usage
 * (vram_total, vram_used in MB) and amdsmi_get_gpu_device_bdf (the union of
 * one uint64_t: function 3 bits, device 5, bus 8, domain 48, from the
 * lowest bit). Two GPUs on one socket, listed in an order that is not their
 * bus order, each with readings of its own, so that a test can tell which
 * one was read.
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define OK 0
#define INVAL 1

struct gpu {
	uint64_t bdf;      /* as amdsmi_bdf_t.as_uint */
	uint32_t clk_mhz;  /* GFX clock */
	uint32_t max_mhz;
	uint32_t mem_mhz;
	int64_t temp_c;
	uint32_t vram_used_mb;
	double watts;      /* the energy counter grows at this rate */
};

/* amdsmi's order: 0000:c1:00.0 first, then 0000:03:00.0 */
static struct gpu gpus[2] = {
	{ (0xc1u << 8) | (0u << 3) | 0u, 2100, 2400, 1300, 61, 1000, 300 },
	{ (0x03u << 8) | (0u << 3) | 0u, 1500, 2400, 1300, 41, 2000, 150 },
};
static char socket0;

static struct gpu *gpu_of(void *h)
{
	for (size_t i = 0; i < 2; i++)
		if (h == &gpus[i])
			return &gpus[i];
	return NULL;
}

int amdsmi_init(uint64_t flags)
{
	return flags & (1u << 1) ? OK : INVAL; /* AMDSMI_INIT_AMD_GPUS */
}

int amdsmi_get_socket_handles(uint32_t *count, void **sockets)
{
	if (!count)
		return INVAL;
	if (sockets && *count >= 1)
		sockets[0] = &socket0;
	*count = 1;
	return OK;
}

int amdsmi_get_processor_handles(void *socket, uint32_t *count, void **handles)
{
	if (socket != &socket0 || !count)
		return INVAL;
	uint32_t n = *count < 2 ? *count : 2;
	for (uint32_t i = 0; handles && i < n; i++)
		handles[i] = &gpus[i];
	*count = handles ? n : 2;
	return OK;
}

int amdsmi_get_clock_info(void *h, int type, uint32_t *info)
{
	struct gpu *g = gpu_of(h);
	if (!g || !info)
		return INVAL;
	info[0] = type == 4 ? g->mem_mhz : g->clk_mhz; /* CLK_TYPE_MEM 4, GFX 0 */
	info[1] = 100;
	info[2] = type == 4 ? g->mem_mhz : g->max_mhz;
	return OK;
}

int amdsmi_get_temp_metric(void *h, int sensor, int metric, int64_t *value)
{
	struct gpu *g = gpu_of(h);
	(void)sensor, (void)metric;
	if (!g || !value)
		return INVAL;
	*value = g->temp_c;
	return OK;
}

int amdsmi_get_energy_count(void *h, uint64_t *energy, float *resolution_uj, uint64_t *timestamp_ns)
{
	struct gpu *g = gpu_of(h);
	if (!g || !energy || !resolution_uj || !timestamp_ns)
		return INVAL;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	*timestamp_ns = ns;
	*resolution_uj = 1.0f;
	*energy = (uint64_t)(g->watts * (double)ns / 1e3); /* microjoules */
	return OK;
}

int amdsmi_get_gpu_vram_usage(void *h, uint32_t *usage)
{
	struct gpu *g = gpu_of(h);
	if (!g || !usage)
		return INVAL;
	usage[0] = 196608;
	usage[1] = g->vram_used_mb;
	return OK;
}

int amdsmi_get_gpu_device_bdf(void *h, uint64_t *bdf)
{
	struct gpu *g = gpu_of(h);
	if (!g || !bdf)
		return INVAL;
	*bdf = g->bdf;
	return OK;
}
