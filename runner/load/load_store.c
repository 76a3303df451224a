/* Storing a run's per-request records: run_load_req -> the requests table's
 * row model (db/requests.h). */
#include <stdlib.h>

#include "db/requests.h"
#include "runner/load/load.h"

int load_store_requests(struct db *db, int64_t iteration_id, const char *bench, const char *arm,
			int rep, const char *label, const struct run_load_result *r,
			struct rt_sb *err)
{
	struct db_request *rows = xcalloc(r->n_reqs + 1, sizeof(*rows));
	for (size_t i = 0; i < r->n_reqs; i++) {
		const struct run_load_req *q = &r->reqs[i];
		rows[i] = (struct db_request){
			.seq = q->seq, .intended_ns = q->intended_ns, .sent_ns = q->sent_ns,
			.ttft_s = q->ttft_s, .e2el_s = q->e2el_s, .itl_mean_s = q->itl_mean_s,
			.itl_max_s = q->itl_max_s, .n_chunks = q->n_chunks,
			.prompt_tokens = q->prompt_tokens, .output_tokens = q->output_tokens,
			.ok = q->ok, .status = q->status, .error = q->error,
		};
	}
	int rc = db_requests_add(db, iteration_id, bench, arm, rep, label, rows, r->n_reqs, err);
	free(rows);
	return rc;
}
