/* The cuda backend when it was not built (RATCHET_CUDA=OFF, or AUTO found no cuda.h). */
#include "runner/device/dev_stub.h"

/* Without the driver API there is no CUDA order to map: NVML's index. */
static int cuda_stub_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	return dev_nvml_telemetry(NULL, index, out, err);
}

DEV_STUB_OPS_MEM(cuda, "configure with -DRATCHET_CUDA=ON and the CUDA toolkit installed",
		 dev_nvml_proc_mem, cuda_stub_telemetry)
