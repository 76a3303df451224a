/*
 * Findings of the research side (agents/): table-coverage holes, hot spots
 * and ranked candidates, in the `findings` table.
 */
#ifndef DB_FINDINGS_H
#define DB_FINDINGS_H

#include "db/db.h"

/* campaign_id 0 stores NULL (found outside a campaign). potential is the
 * most the finding could gain, as a fraction. */
int db_finding_add(struct db *db, int64_t campaign_id, const char *kind, const char *subject,
		   const char *detail, double potential, struct rt_sb *err);

#endif
