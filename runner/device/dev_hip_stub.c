/* The hip backend when it was not built (RATCHET_HIP=OFF, or AUTO found no HIP headers). */
#include "runner/device/dev_stub.h"

/* Without HIP there is no bus id to look up: amdsmi's order. */
static int stub_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	return dev_amdsmi_telemetry(NULL, index, out, err);
}

DEV_STUB_OPS_MEM(hip, "configure with -DRATCHET_HIP=ON and libamdhip64-dev installed", NULL, stub_telemetry)
