/* The cancellation flag of cancel.h: one sig_atomic_t, set from a handler. */
#include "runner/base/cancel.h"

#include <signal.h>

static volatile sig_atomic_t cancel_requested; /* set by rt_cancel */

void rt_cancel(void)
{
	cancel_requested = 1;
}

bool rt_cancelled(void)
{
	return cancel_requested != 0;
}

void rt_cancel_reset(void)
{
	cancel_requested = 0;
}
