/* The ze backend when it was not built (RATCHET_ZE=OFF, or AUTO found no ze_api.h). */
#include "runner/device/dev_stub.h"

DEV_STUB_OPS(ze, "configure with -DRATCHET_ZE=ON and libze-dev installed")
