/* The `requests` table: per-request records of load benchmarks (see requests.h). */
#include "db/requests.h"

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
	if (own && (rc = db_begin(db, err)))
		return rc;
	int n = 0;
	for (size_t i = 0; i < n_rows; i++) {
		const struct db_request *q = &rows[i];
		sqlite3_stmt *st = db_prepare(db, sql_insert, err);
		if (!st) {
			rc = RT_EDB;
			goto fail;
		}
		if (iteration_id > 0)
			sqlite3_bind_int64(st, 1, iteration_id);
		else
			sqlite3_bind_null(st, 1);
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
		if (q->prompt_tokens >= 0)
			sqlite3_bind_int(st, 14, q->prompt_tokens);
		else
			sqlite3_bind_null(st, 14);
		sqlite3_bind_int(st, 15, q->output_tokens);
		sqlite3_bind_int(st, 16, q->ok ? 1 : 0);
		if (q->status)
			sqlite3_bind_int64(st, 17, q->status);
		else
			sqlite3_bind_null(st, 17);
		db_bind_text(st, 18, q->error);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = db_fail(db, err, "insert request record");
			sqlite3_reset(st);
			goto fail;
		}
		sqlite3_reset(st);
		n++;
	}
	if (own && (rc = db_commit(db, err)))
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
	if (sqlite3_step(st) != SQLITE_ROW) {
		int rc = db_fail(db, err, "count request records");
		sqlite3_reset(st);
		return rc;
	}
	*n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return 0;
}
