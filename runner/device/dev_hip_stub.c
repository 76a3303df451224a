/* The hip backend when it was not built (RATCHET_HIP=OFF, or AUTO found no HIP headers). */
#include "runner/device/dev_stub.h"

DEV_STUB_OPS_MEM(hip, "configure with -DRATCHET_HIP=ON and libamdhip64-dev installed", NULL,
		 dev_amdsmi_telemetry)
