/*
 * The journal queries the campaign loop needs beyond db.h: what bytes each
 * touched file should hold in the current best configuration, recording the
 * bytes a change produced once it ran (patches), and closing out
 * iterations a crash interrupted.
 */
#ifndef DB_JOURNAL_H
#define DB_JOURNAL_H

#include "db/db.h"

/* Record the bytes and mode (0: unknown) a path holds after an intent ran
 * (when they were not known in advance, as for a patch). */
int db_intent_set_after(struct db *db, int64_t intent_id, bool exists, const void *bytes,
			size_t len, int mode, struct rt_sb *err);

/* What path should hold in the best configuration. */
struct db_best {
	bool exists;      /* the file exists */
	void *bytes;      /* its bytes, NUL-terminated (owned; NULL when !exists) */
	size_t len;       /* bytes of bytes */
	char sha256[65];  /* the sha256 stored with them ("" when none) */
	int mode;         /* its permission bits, 0 when unknown */
};
/* The latest kept iteration's apply wrote it, else the pre-campaign
 * original. RT_ENOENT when the campaign never touched path. Release with
 * db_best_release. */
int db_best_bytes(struct db *db, int64_t campaign_id, const char *path, struct db_best *out,
		  struct rt_sb *err);
void db_best_release(struct db_best *b);

/* Mark every iteration of the campaign still pending/applying/applied/
 * measuring as interrupted, with reason. Returns how many (>= 0). */
int db_iterations_interrupt(struct db *db, int64_t campaign_id, const char *reason,
			    struct rt_sb *err);

/* Every value recorded for key in a campaign's facts, oldest first; *out is
 * an array of owned strings (free each, then the array). */
int db_fact_values(struct db *db, int64_t campaign_id, const char *key, char ***out, size_t *n,
		   struct rt_sb *err);

#endif
