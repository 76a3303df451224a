/* The hip backend when it was not built (RATCHET_HIP=OFF, or AUTO found no HIP headers). */
#include "runner/device/dev_stub.h"

DEV_STUB_OPS(hip, "configure with -DRATCHET_HIP=ON and libamdhip64-dev installed")
