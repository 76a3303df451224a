/*
 * The GSM8K gate's tables: gate_runs (struct db_gate_run) and gate_answers
 * (struct db_gate_answer), see db/gate.h: their writes, the one reader of
 * each row shape (for `ratchet gate`, the campaign and the reports), and the
 * flips between two runs (query.h). Unset figures (NAN, id 0, count -1) are
 * stored as NULL.
 */
#include "db/gate.h"
#include "db/db_int.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

void db_gate_run_release(struct db_gate_run *r)
{
	if (!r)
		return;
	free(r->label);
	free(r->endpoint);
	free(r->model);
	free(r->api);
	free(r->format);
	free(r->extract);
	free(r->dataset_sha256);
	free(r->verdict);
	free(r->params_json);
	memset(r, 0, sizeof(*r));
}

void db_gate_answer_release(struct db_gate_answer *a)
{
	if (!a)
		return;
	free(a->response);
	free(a->extracted_strict);
	free(a->extracted_flex);
	free(a->target);
	free(a->finish_reason);
	free(a->error);
	memset(a, 0, sizeof(*a));
}

static const char sql_run_create[] =
	"INSERT INTO gate_runs (iteration_id, label, endpoint, model, api, format, extract,"
	" dataset_sha256, n_planned, baseline_run_id, params_json, started_at)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

int db_gate_run_create(struct db *db, const struct db_gate_run *r, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_run_create, err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, r->iteration_id);
	db_bind_text(st, 2, r->label);
	db_bind_text(st, 3, r->endpoint ? r->endpoint : "");
	db_bind_text(st, 4, r->model);
	db_bind_text(st, 5, r->api);
	db_bind_text(st, 6, r->format);
	db_bind_text(st, 7, r->extract);
	db_bind_text(st, 8, r->dataset_sha256);
	sqlite3_bind_int(st, 9, r->n_planned);
	db_bind_id(st, 10, r->baseline_run_id);
	db_bind_text(st, 11, r->params_json);
	sqlite3_bind_int64(st, 12, r->started_at ? r->started_at : rt_wall_ms());
	return db_step_insert(db, st, id, err, "insert into gate_runs");
}

static const char sql_run_finish[] =
	"UPDATE gate_runs SET n_done = ?2, n_correct = ?3, n_correct_strict = ?4,"
	" n_correct_flex = ?5, n_failed = ?6, accuracy = ?7, wilson_lo = ?8, wilson_hi = ?9,"
	" baseline_run_id = ?10, diff = ?11, diff_lo = ?12, diff_hi = ?13, mcnemar_p = ?14,"
	" identical_rate = ?15, flips_to_wrong = ?16, flips_to_right = ?17, early_stop = ?18,"
	" passed = ?19, verdict = ?20, finished_at = ?21, identical_response_rate = ?22 WHERE id = ?1";

int db_gate_run_finish(struct db *db, const struct db_gate_run *r, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_run_finish, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_int(st, 2, r->n_done);
	sqlite3_bind_int(st, 3, r->n_correct);
	db_bind_count(st, 4, r->n_correct_strict);
	db_bind_count(st, 5, r->n_correct_flex);
	sqlite3_bind_int(st, 6, r->n_failed);
	db_bind_real(st, 7, r->accuracy);
	db_bind_real(st, 8, r->wilson_lo);
	db_bind_real(st, 9, r->wilson_hi);
	db_bind_id(st, 10, r->baseline_run_id);
	db_bind_real(st, 11, r->diff);
	db_bind_real(st, 12, r->diff_lo);
	db_bind_real(st, 13, r->diff_hi);
	db_bind_real(st, 14, r->mcnemar_p);
	db_bind_real(st, 15, r->identical_rate);
	db_bind_count(st, 16, r->baseline_run_id > 0 ? r->flips_to_wrong : -1);
	db_bind_count(st, 17, r->baseline_run_id > 0 ? r->flips_to_right : -1);
	sqlite3_bind_int(st, 18, r->early_stop);
	db_bind_count(st, 19, r->passed);
	db_bind_text(st, 20, r->verdict);
	sqlite3_bind_int64(st, 21, r->finished_at ? r->finished_at : rt_wall_ms());
	db_bind_real(st, 22, r->identical_response_rate);
	int rc = db_step_done(db, st, err, "update gate_runs (finish)");
	if (!rc && db_changes(db) != 1)
		rc = rt_errf(err, RT_ENOENT, "db: gate run %lld not found", (long long)r->id);
	return rc;
}

static void run_read(sqlite3_stmt *st, void *row)
{
	struct db_gate_run *o = row;
	o->id = sqlite3_column_int64(st, 0);
	o->iteration_id = sqlite3_column_int64(st, 1);
	o->label = db_col_text(st, 2);
	o->endpoint = db_col_text(st, 3);
	o->model = db_col_text(st, 4);
	o->api = db_col_text(st, 5);
	o->format = db_col_text(st, 6);
	o->extract = db_col_text(st, 7);
	o->dataset_sha256 = db_col_text(st, 8);
	o->n_planned = sqlite3_column_int(st, 9);
	o->n_done = sqlite3_column_int(st, 10);
	o->n_correct = sqlite3_column_int(st, 11);
	o->n_correct_strict = db_col_count(st, 12);
	o->n_correct_flex = db_col_count(st, 13);
	o->n_failed = sqlite3_column_int(st, 14);
	o->accuracy = db_col_real(st, 15);
	o->wilson_lo = db_col_real(st, 16);
	o->wilson_hi = db_col_real(st, 17);
	o->baseline_run_id = sqlite3_column_int64(st, 18);
	o->diff = db_col_real(st, 19);
	o->diff_lo = db_col_real(st, 20);
	o->diff_hi = db_col_real(st, 21);
	o->mcnemar_p = db_col_real(st, 22);
	o->identical_rate = db_col_real(st, 23);
	o->flips_to_wrong = db_col_count(st, 24);
	o->flips_to_right = db_col_count(st, 25);
	o->early_stop = sqlite3_column_int(st, 26) != 0;
	o->passed = db_col_count(st, 27);
	o->verdict = db_col_text(st, 28);
	o->params_json = db_col_text(st, 29);
	o->started_at = sqlite3_column_int64(st, 30);
	o->finished_at = sqlite3_column_int64(st, 31);
	o->min_accuracy = db_col_real(st, 32);
	o->identical_response_rate = db_col_real(st, 33);
}

static void run_release(void *row)
{
	db_gate_run_release(row);
}

static const struct db_row_type run_rows = {
	sizeof(struct db_gate_run), run_read, run_release, "read gate_runs",
};

static const char sql_run_get[] =
	"SELECT id, iteration_id, label, endpoint, model, api, format, extract, dataset_sha256,"
	" n_planned, n_done, n_correct, n_correct_strict, n_correct_flex, n_failed, accuracy,"
	" wilson_lo, wilson_hi, baseline_run_id, diff, diff_lo, diff_hi, mcnemar_p, identical_rate,"
	" flips_to_wrong, flips_to_right, early_stop, passed, verdict, params_json, started_at,"
	" finished_at,"
	" CASE WHEN json_valid(params_json) THEN json_extract(params_json, '$.min_accuracy') END,"
	" identical_response_rate FROM gate_runs WHERE id = ?1";

int db_gate_run_get(struct db *db, int64_t id, struct db_gate_run *o, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_run_get, err);
	if (st)
		sqlite3_bind_int64(st, 1, id);
	int rc = db_row_get(db, st, &run_rows, o, err);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "gate run %lld not found", (long long)id);
	return rc;
}

static const char sql_latest_pass[] =
	"SELECT id FROM gate_runs WHERE passed = 1 AND format = ?4"
	" AND ((?1 IS NOT NULL AND label = ?1) OR (?1 IS NULL AND label IS NULL AND endpoint = ?2))"
	" AND model IS ?3 ORDER BY id DESC LIMIT 1";

int db_gate_run_latest_pass(struct db *db, const char *label, const char *endpoint,
			    const char *model, const char *format, int64_t *id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_latest_pass, err);
	if (!st)
		return RT_EDB;
	db_bind_text(st, 1, label);
	db_bind_text(st, 2, endpoint);
	db_bind_text(st, 3, model);
	db_bind_text(st, 4, format);
	int rc = db_step_row(db, st, err, "read gate_runs (latest pass)");
	if (!rc) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	if (rc != RT_ENOENT)
		return rc;
	return rt_errf(err, RT_ENOENT, "no passed gate run for %s '%s', model '%s', format %s",
		       label ? "label" : "endpoint", label ? label : endpoint ? endpoint : "",
		       model ? model : "", format);
}

static const char sql_answer_add[] =
	"INSERT INTO gate_answers (run_id, idx, prompt_sha256, response, response_sha256,"
	" extracted_strict, extracted_flex, target, correct, correct_strict, correct_flex,"
	" finish_reason, prompt_tokens, completion_tokens, failed, error, latency_s)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

int db_gate_answer_add(struct db *db, const struct db_gate_answer *a, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_answer_add, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, a->run_id);
	sqlite3_bind_int(st, 2, a->idx);
	db_bind_text(st, 3, a->prompt_sha256);
	db_bind_text(st, 4, a->response);
	db_bind_text(st, 5, a->response_sha256[0] ? a->response_sha256 : NULL);
	db_bind_text(st, 6, a->extracted_strict);
	db_bind_text(st, 7, a->extracted_flex);
	db_bind_text(st, 8, a->target);
	db_bind_count(st, 9, a->correct);
	db_bind_count(st, 10, a->correct_strict);
	db_bind_count(st, 11, a->correct_flex);
	db_bind_text(st, 12, a->finish_reason);
	db_bind_count(st, 13, a->prompt_tokens);
	db_bind_count(st, 14, a->completion_tokens);
	sqlite3_bind_int(st, 15, a->failed);
	db_bind_text(st, 16, a->error);
	db_bind_real(st, 17, a->latency_s);
	return db_step_done(db, st, err, "insert into gate_answers");
}

static const char sql_answers_list[] =
	"SELECT run_id, idx, prompt_sha256, response, response_sha256, extracted_strict,"
	" extracted_flex, target, correct, correct_strict, correct_flex, finish_reason,"
	" prompt_tokens, completion_tokens, failed, error, latency_s"
	" FROM gate_answers WHERE run_id = ?1 ORDER BY idx";

static void answer_read(sqlite3_stmt *st, void *row)
{
	struct db_gate_answer *a = row;
	a->run_id = sqlite3_column_int64(st, 0);
	a->idx = sqlite3_column_int(st, 1);
	db_col_sha(st, 2, a->prompt_sha256);
	a->response = db_col_text(st, 3);
	db_col_sha(st, 4, a->response_sha256);
	a->extracted_strict = db_col_text(st, 5);
	a->extracted_flex = db_col_text(st, 6);
	a->target = db_col_text(st, 7);
	a->correct = db_col_count(st, 8);
	a->correct_strict = db_col_count(st, 9);
	a->correct_flex = db_col_count(st, 10);
	a->finish_reason = db_col_text(st, 11);
	a->prompt_tokens = db_col_count(st, 12);
	a->completion_tokens = db_col_count(st, 13);
	a->failed = sqlite3_column_int(st, 14) != 0;
	a->error = db_col_text(st, 15);
	a->latency_s = db_col_real(st, 16);
}

static void answer_release(void *row)
{
	db_gate_answer_release(row);
}

static const struct db_row_type answer_rows = {
	sizeof(struct db_gate_answer), answer_read, answer_release, "read gate_answers",
};

int db_gate_answers_list(struct db *db, int64_t run_id, struct db_gate_answer **out, size_t *n,
			 struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, sql_answers_list, err);
	if (st)
		sqlite3_bind_int64(st, 1, run_id);
	void *v;
	int rc = db_rows_list(db, st, &answer_rows, &v, n, err);
	*out = v;
	return rc;
}

void db_gate_answers_free(struct db_gate_answer *v, size_t n)
{
	db_rows_free(&answer_rows, v, n);
}

/* ---- flips between two runs (query.h) ---- */

static void flip_read(sqlite3_stmt *st, void *row)
{
	struct db_q_flip *f = row;
	f->idx = sqlite3_column_int(st, 0);
	f->now_correct = sqlite3_column_int(st, 1) != 0;
	f->target = db_col_text(st, 2);
	f->before = db_col_text(st, 3);
	f->after = db_col_text(st, 4);
}

static void flip_release(void *row)
{
	struct db_q_flip *f = row;
	free(f->target);
	free(f->before);
	free(f->after);
}

static const struct db_row_type flip_rows = {
	sizeof(struct db_q_flip), flip_read, flip_release, "read gate_answers (flips)",
};

void db_q_flips_free(struct db_q_flip *v, size_t n)
{
	db_rows_free(&flip_rows, v, n);
}

/* Both runs' answers, matched on the UNIQUE (run_id, idx) index. */
static const char SQL_FLIPS[] =
	"SELECT a.idx, a.correct, a.target,"
	" CASE WHEN r.extract = 'strict' THEN b.extracted_strict ELSE b.extracted_flex END,"
	" CASE WHEN r.extract = 'strict' THEN a.extracted_strict ELSE a.extracted_flex END"
	" FROM gate_answers a JOIN gate_runs r ON r.id = a.run_id"
	" JOIN gate_answers b ON b.run_id = ?2 AND b.idx = a.idx"
	" WHERE a.run_id = ?1 AND a.correct IS NOT NULL AND b.correct IS NOT NULL"
	" AND a.correct <> b.correct ORDER BY a.idx";

int db_q_flips(struct db *db, int64_t run_id, int64_t baseline_run_id, struct db_q_flip **out,
	       size_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_FLIPS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int64(st, 2, baseline_run_id);
	}
	void *v;
	int rc = db_rows_list(db, st, &flip_rows, &v, n, err);
	*out = v;
	return rc;
}
