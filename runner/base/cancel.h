/*
 * Cancellation of long waits. A signal handler (the second Ctrl-C of
 * `ratchet run`) calls rt_cancel(); every wait that may last longer than a
 * second polls rt_cancelled() and gives up, reporting RT_EINTR: a command
 * benchmark (its process group is stopped), the load generator (transfers
 * in flight are aborted), an engine's start. The flag is process-wide and
 * async-signal-safe; rt_cancel_reset() clears it for the next run.
 */
#ifndef RT_CANCEL_H
#define RT_CANCEL_H

#include <stdbool.h>

/* Ask every wait to give up (async-signal-safe). */
void rt_cancel(void);
/* Has rt_cancel() been called since the last reset? */
bool rt_cancelled(void);
/* Clear the request (the start of a run). */
void rt_cancel_reset(void);

#endif
