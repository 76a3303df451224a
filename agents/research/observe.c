/*
 * An observation (see findings.h): a profile imported with its findings, and
 * the iteration of its own that records it, in the final state 'observed'.
 * `ratchet observe` and the runner's profile step (runner/campaign/
 * profile_step.c) both record one through research_observe; neither
 * transaction is taken here.
 */
#include "agents/research/findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int research_import_find(struct db *db, const struct research_import *in, struct research_opmap *map,
			 const struct research_table *tables, size_t n_tables, int64_t *profile_id,
			 const struct research_format **format, size_t *nfind, struct rt_sb *err)
{
	size_t nlog = 0;
	*nfind = 0;
	int rc = research_import(db, in, map, profile_id, format, err);
	if (!rc)
		rc = research_find(db, *profile_id, tables, n_tables, in->campaign_id, in->iteration_id,
				   nfind, err);
	if (!rc && in->campaign_id)
		rc = research_find_log(db, in->campaign_id, in->iteration_id, &nlog, err);
	*nfind += nlog;
	return rc;
}

int research_observe(struct db *db, struct research_import *in, const struct research_observation *o,
		     struct research_opmap *map, const struct research_table *tables, size_t n_tables,
		     int64_t *iter_id, int64_t *profile_id, size_t *nfind, struct rt_sb *err)
{
	const struct research_format *f;
	int rc = db_iteration_create(db, in->campaign_id, o->seq, o->parent, o->variant, "observe", "",
				     NULL, NULL, o->note, DB_ROLE_CHANGE, iter_id, err);
	if (rc)
		return rc;
	in->iteration_id = *iter_id;
	if ((rc = research_import_find(db, in, map, tables, n_tables, profile_id, &f, nfind, err)))
		return rc;
	struct db_iteration it = { .id = *iter_id, .state = DB_ITER_OBSERVED, .phase = "observe",
				   .passed = -1, .obj_best = NAN, .obj_cand = NAN, .obj_delta = NAN,
				   .obj_ci_lo = NAN, .obj_ci_hi = NAN, .confidence = NAN,
				   .p_value = NAN };
	it.reason = xasprintf("profile %lld of %s%s: %zu finding%s", (long long)*profile_id, in->paths[0],
			      in->n_paths > 1 ? " ..." : "", *nfind, *nfind == 1 ? "" : "s");
	rc = db_iteration_finish(db, &it, err);
	free(it.reason);
	return rc;
}
