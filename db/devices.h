/*
 * device_peaks: the measured ceilings of each device (`ratchet devices
 * --peak`): copy bandwidth in GB/s (bytes read + written) and a compute
 * ceiling in GFLOP/s. Rows are appended; readers take the newest.
 */
#ifndef DB_DEVICES_H
#define DB_DEVICES_H

#include "db/db.h"

/* kind is "copy_gbps" or "gflops"; device_id is dev_peak_key()'s key. */
int db_device_peak_add(struct db *db, const char *backend, const char *device_id,
		       const char *device_name, const char *kind, double value, struct rt_sb *err);
/* The newest value of kind for the device; RT_ENOENT (nothing in err) when none. */
int db_device_peak_get(struct db *db, const char *backend, const char *device_id,
		       const char *kind, double *value, struct rt_sb *err);

#endif
