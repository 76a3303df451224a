/*
 * Per-request records of load benchmarks (the `requests` table): every
 * request of a run, warm-up ones included (seq < 0), stored in one
 * transaction. Times are stored relative to the run's start.
 */
#ifndef DB_REQUESTS_H
#define DB_REQUESTS_H

#include "db/db.h"

/* One row of the `requests` table: one request of a load run. */
struct db_request {
	int seq;             /* 0.. measured, negative for warm-up */
	int64_t intended_ns; /* scheduled send, relative to the run's start */
	int64_t sent_ns;     /* actual send, relative; negative: never sent (stored NULL) */
	double ttft_s;       /* NAN when no content arrived (stored NULL) */
	double e2el_s;       /* NAN: stored NULL */
	double itl_mean_s;   /* NAN: stored NULL */
	double itl_max_s;    /* NAN: stored NULL */
	int n_chunks;        /* content chunks received */
	int prompt_tokens;   /* -1: unknown (stored NULL) */
	int output_tokens;   /* from usage, else counted chunks */
	bool ok;             /* completed well */
	long status;         /* HTTP status, 0: none (stored NULL) */
	const char *error;   /* why it failed, or NULL (not owned) */
};

/*
 * Store n rows. iteration_id 0 stores NULL (ratchet bench load);
 * arm and label may be NULL. Runs in its own transaction, or inside the
 * caller's when one is open. Returns the number of rows stored, or <0.
 */
int db_requests_add(struct db *db, int64_t iteration_id, const char *bench, const char *arm,
		    int rep, const char *label, const struct db_request *rows, size_t n,
		    struct rt_sb *err);

/* Number of stored rows for (iteration_id, bench, label); 0 / NULL match anything. */
int db_requests_count(struct db *db, int64_t iteration_id, const char *bench, const char *label,
		      int64_t *n, struct rt_sb *err);

#endif
