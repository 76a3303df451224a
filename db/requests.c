/*
 * The requests table: per-request records of load benchmarks (see
 * requests.h), stored in one transaction per run, and the latency reads the
 * reports make of them (query.h).
 */
#include "db/requests.h"
#include "db/db_int.h"
#include "db/query.h"

#include <math.h>

static const char sql_insert[] =
	"INSERT INTO requests (iteration_id, benchmark, arm, rep, run_label, seq, intended_ns, "
	"sent_ns, ttft_s, e2el_s, itl_mean_s, itl_max_s, n_chunks, prompt_tokens, output_tokens, "
	"ok, status, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_count[] =
	"SELECT count(*) FROM requests WHERE (?1 = 0 OR iteration_id = ?1) "
	"AND (?2 IS NULL OR benchmark = ?2) AND (?3 IS NULL OR run_label = ?3)";

int db_requests_add(struct db *db, int64_t iteration_id, const char *bench, const char *arm,
		    int rep, const char *label, const struct db_request *rows, size_t n_rows,
		    struct rt_sb *err)
{
	bool own = sqlite3_get_autocommit(db_sqlite(db));
	int rc;
	if (own && (rc = db_exec(db, "BEGIN IMMEDIATE", err, "insert into requests (begin)")))
		return rc;
	int n = 0;
	for (size_t i = 0; i < n_rows; i++) {
		const struct db_request *q = &rows[i];
		sqlite3_stmt *st = db_prepare(db, sql_insert, err);
		if (!st) {
			rc = RT_EDB;
			goto fail;
		}
		db_bind_id(st, 1, iteration_id);
		db_bind_text(st, 2, bench ? bench : "load");
		db_bind_text(st, 3, arm);
		sqlite3_bind_int(st, 4, rep);
		db_bind_text(st, 5, label);
		sqlite3_bind_int(st, 6, q->seq);
		sqlite3_bind_int64(st, 7, q->intended_ns);
		if (q->sent_ns >= 0)
			sqlite3_bind_int64(st, 8, q->sent_ns);
		else
			sqlite3_bind_null(st, 8);
		db_bind_real(st, 9, q->ttft_s);
		db_bind_real(st, 10, q->sent_ns >= 0 ? q->e2el_s : NAN);
		db_bind_real(st, 11, q->itl_mean_s);
		db_bind_real(st, 12, q->itl_max_s);
		sqlite3_bind_int(st, 13, q->n_chunks);
		db_bind_count(st, 14, q->prompt_tokens);
		sqlite3_bind_int(st, 15, q->output_tokens);
		sqlite3_bind_int(st, 16, q->ok ? 1 : 0);
		if (q->status)
			sqlite3_bind_int64(st, 17, q->status);
		else
			sqlite3_bind_null(st, 17);
		db_bind_text(st, 18, q->error);
		if ((rc = db_step_done(db, st, err, "insert into requests")))
			goto fail;
		n++;
	}
	if (own && (rc = db_exec(db, "COMMIT", err, "insert into requests (commit)")))
		goto fail;
	return n;
fail:
	if (own)
		db_rollback(db);
	return rc;
}

int db_requests_count(struct db *db, int64_t iteration_id, const char *bench, const char *label,
		      int64_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_count, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, bench);
	db_bind_text(st, 3, label);
	/* count(*) always has its one row. */
	int rc = db_step_row(db, st, err, "read requests (count)");
	*n = rc ? 0 : sqlite3_column_int64(st, 0);
	if (!rc)
		sqlite3_reset(st);
	return rc == RT_ENOENT ? 0 : rc;
}

/* ---- latencies for the reports ---- */

static void latency_read(sqlite3_stmt *st, void *row)
{
	*(double *)row = sqlite3_column_double(st, 0);
}

static const struct db_row_type latency_rows = {
	sizeof(double), latency_read, NULL, "read requests (latencies)",
};

static const char SQL_TTFT[] =
	"SELECT ttft_s FROM requests WHERE iteration_id = ?1 AND (?2 IS NULL OR arm = ?2)"
	" AND ok = 1 AND ttft_s IS NOT NULL ORDER BY ttft_s";
static const char SQL_E2EL[] =
	"SELECT e2el_s FROM requests WHERE iteration_id = ?1 AND (?2 IS NULL OR arm = ?2)"
	" AND ok = 1 AND e2el_s IS NOT NULL ORDER BY e2el_s";

int db_q_latencies(struct db *db, int64_t iteration_id, const char *arm, int which, double **out,
		   size_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, which ? SQL_E2EL : SQL_TTFT, err);
	if (st) {
		sqlite3_bind_int64(st, 1, iteration_id);
		db_bind_text(st, 2, arm);
	}
	void *v;
	int rc = db_rows_list(db, st, &latency_rows, &v, n, err);
	*out = v;
	return rc;
}
