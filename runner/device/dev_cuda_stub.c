/* The cuda backend when it was not built (RATCHET_CUDA=OFF, or AUTO found no cuda.h). */
#include "runner/device/dev_stub.h"

DEV_STUB_OPS_MEM(cuda, "configure with -DRATCHET_CUDA=ON and the CUDA toolkit installed",
		 dev_nvml_proc_mem)
