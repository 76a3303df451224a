/*
 * Vendor peaks per datatype (dense, without structured sparsity), by
 * device name, each row with the document its figures come from: what
 * `ratchet devices` shows next to the ceilings it measures (device_peaks),
 * and what "percent of peak" means for a datatype the FMA loop does not
 * run. A figure is NAN where the chip has no such datapath (no FP4 before
 * Blackwell and CDNA 4). Vendors quote the sparse figure first; the dense
 * one is half of it, and that is what is written here. The clock these
 * figures assume is the chip's maximum boost clock, so the percentage at
 * the clock actually held scales them by held / maximum (telemetry).
 */
#include "runner/device/dev.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[DEV_DT_N] = { "fp8", "bf16", "fp16", "fp32", "mxfp4" };

/* Rows are matched in order on a substring of the device's name, so the
 * more specific name (H100 PCIe) comes before the general one (H100). */
static const struct dev_peak_row rows[] = {
	{ "H100 PCIe", "NVIDIA H100 PCIe", { 1513, 756, 756, 51, NAN },
	  "NVIDIA H100 Tensor Core GPU datasheet (PCIe column), "
	  "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet" },
	{ "H100", "NVIDIA H100 SXM5", { 1979, 989, 989, 67, NAN },
	  "NVIDIA H100 Tensor Core GPU datasheet (SXM column), "
	  "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet" },
	{ "H200", "NVIDIA H200 SXM", { 1979, 989, 989, 67, NAN },
	  "NVIDIA H200 Tensor Core GPU datasheet (SXM column), "
	  "https://www.nvidia.com/en-us/data-center/h200/" },
	{ "B200", "NVIDIA B200 (HGX B200, per GPU)", { 4500, 2250, 2250, 75, 9000 },
	  "NVIDIA HGX B200 specifications (8-GPU figures / 8), "
	  "https://www.nvidia.com/en-us/data-center/hgx/" },
	{ "MI300X", "AMD Instinct MI300X", { 2614.9, 1307.4, 1307.4, 163.4, NAN },
	  "AMD Instinct MI300X data sheet, "
	  "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf" },
	{ "MI355X", "AMD Instinct MI355X", { 5000, 2500, 2500, 157.3, 10000 },
	  "AMD Instinct MI355X product page (figures as AMD rounds them), "
	  "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html" },
};

const char *dev_dtype_name(enum dev_dtype t)
{
	return t < DEV_DT_N ? dtype_names[t] : "?";
}

const struct dev_peak_row *dev_peak_rows(size_t *n)
{
	*n = RT_ARRAY_SIZE(rows);
	return rows;
}

const struct dev_peak_row *dev_peak_lookup(const char *name)
{
	for (size_t i = 0; name && i < RT_ARRAY_SIZE(rows); i++)
		if (strstr(name, rows[i].match))
			return &rows[i];
	return NULL;
}
