/*
 * The proposals table (migration 5): what a space strategy proposed for
 * each iteration, read back to rebuild the search on every step.
 */
#ifndef DB_PROPOSALS_H
#define DB_PROPOSALS_H

#include "db/db.h"

struct db_proposal {
	int64_t iteration_id; /* iterations.id */
	char *strategy;       /* its name */
	int target;           /* index of the space's target */
	char *point;          /* JSON {parameter: value} */
	char *fingerprint;    /* sha256 of the target and the point */
	double fidelity;      /* 1 full, less: cheap */
	char *reason;         /* why */
	char *variant;        /* the generated variant, JSON */
	char *state;          /* the strategy's state after the step, JSON, or NULL */
};

/* Record the proposal of iteration p->iteration_id: 0 or RT_EDB. */
int db_proposal_add(struct db *db, int64_t campaign_id, const struct db_proposal *p, struct rt_sb *err);
/* Every proposal of a campaign, in iteration order; free with db_proposals_free. */
int db_proposals_list(struct db *db, int64_t campaign_id, struct db_proposal **out, size_t *n,
		      struct rt_sb *err);
/* The proposals of one iteration (one, or none), in the order recorded;
 * free with db_proposals_free. */
int db_proposal_of_iteration(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_proposal **out,
			     size_t *n, struct rt_sb *err);
void db_proposals_free(struct db_proposal *v, size_t n);

#endif
