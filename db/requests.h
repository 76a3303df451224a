/*
 * Per-request records of load benchmarks (the `requests` table): every
 * request of a run, warm-up ones included (seq < 0), stored in one
 * transaction. Times are stored relative to the run's start.
 */
#ifndef DB_REQUESTS_H
#define DB_REQUESTS_H

#include "db/db.h"
#include "runner/load.h"

/*
 * Store every record of r. iteration_id 0 stores NULL (ratchet bench load);
 * arm and label may be NULL. Runs in its own transaction, or inside the
 * caller's when one is open. Returns the number of rows stored, or <0.
 */
int db_requests_add(struct db *db, int64_t iteration_id, const char *bench, const char *arm,
		    int rep, const char *label, const struct run_load_result *r, struct rt_sb *err);

/* Number of stored rows for (iteration_id, bench, label); 0 / NULL match anything. */
int db_requests_count(struct db *db, int64_t iteration_id, const char *bench, const char *label,
		      int64_t *n, struct rt_sb *err);

#endif
