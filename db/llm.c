/* The llm_exchanges table (db/llm.h). */
#include "db/llm.h"
#include "db/db_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const verdicts[] = {
#define DB_LLM_WORD(e, word) word,
	DB_LLM_VERDICTS(DB_LLM_WORD)
#undef DB_LLM_WORD
};

const char *db_llm_verdict_name(enum db_llm_verdict v)
{
	return (unsigned)v < RT_ARRAY_SIZE(verdicts) ? verdicts[v] : "unknown";
}

int db_llm_add(struct db *db, int64_t campaign_id, struct db_llm_exchange *x, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO llm_exchanges (campaign_id, seq, attempt, iteration_id, request, response, verdict, "
		"error, variant, fingerprint, rationale, prompt_tokens, completion_tokens, latency_ms, created_at) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_count(st, 2, x->seq);
	db_bind_count(st, 3, x->attempt);
	db_bind_id(st, 4, x->iteration_id);
	db_bind_text(st, 5, x->request);
	db_bind_text(st, 6, x->response);
	db_bind_text(st, 7, db_llm_verdict_name(x->verdict));
	db_bind_text(st, 8, x->error);
	db_bind_text(st, 9, x->variant);
	db_bind_text(st, 10, x->fingerprint);
	db_bind_text(st, 11, x->rationale);
	db_bind_count(st, 12, x->prompt_tokens);
	db_bind_count(st, 13, x->completion_tokens);
	db_bind_real(st, 14, x->latency_ms);
	sqlite3_bind_int64(st, 15, rt_wall_ms());
	return db_step_insert(db, st, &x->id, err, "insert into llm_exchanges");
}

int db_llm_link(struct db *db, int64_t campaign_id, int seq, int64_t iteration_id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE llm_exchanges SET iteration_id = ?3 WHERE campaign_id = ?1 AND seq = ?2 AND "
		"(iteration_id IS NULL OR iteration_id IN (SELECT id FROM iterations WHERE state = 'interrupted'))",
		err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_count(st, 2, seq);
	db_bind_id(st, 3, iteration_id);
	return db_step_done(db, st, err, "update llm_exchanges");
}

static enum db_llm_verdict verdict_of(const char *w)
{
	for (size_t i = 0; w && i < RT_ARRAY_SIZE(verdicts); i++)
		if (!strcmp(verdicts[i], w))
			return (enum db_llm_verdict)i;
	return DB_LLM_FAILED; /* a newer ratchet's word: not an answer to reuse */
}

static void exchange_read(sqlite3_stmt *st, void *row)
{
	struct db_llm_exchange *x = row;
	x->id = sqlite3_column_int64(st, 0);
	x->seq = db_col_count(st, 1);
	x->attempt = db_col_count(st, 2);
	x->iteration_id = sqlite3_column_int64(st, 3);
	x->request = db_col_text(st, 4);
	x->response = db_col_text(st, 5);
	char *w = db_col_text(st, 6);
	x->verdict = verdict_of(w);
	free(w);
	x->error = db_col_text(st, 7);
	x->variant = db_col_text(st, 8);
	x->fingerprint = db_col_text(st, 9);
	x->rationale = db_col_text(st, 10);
	x->prompt_tokens = db_col_count(st, 11);
	x->completion_tokens = db_col_count(st, 12);
	x->latency_ms = db_col_real(st, 13);
	x->created_at = sqlite3_column_int64(st, 14);
}

static void exchange_release(void *row)
{
	struct db_llm_exchange *x = row;
	free(x->request);
	free(x->response);
	free(x->error);
	free(x->variant);
	free(x->fingerprint);
	free(x->rationale);
}

static const struct db_row_type exchange_rows = {
	sizeof(struct db_llm_exchange), exchange_read, exchange_release, "read llm_exchanges",
};

#define EXCHANGE_COLS                                                                               \
	"SELECT id, seq, attempt, iteration_id, request, response, verdict, error, variant, fingerprint, " \
	"rationale, prompt_tokens, completion_tokens, latency_ms, created_at FROM llm_exchanges "

/* The exchanges one statement selects, its parameters bound to ids. */
static int list_by(struct db *db, const char *sql, const int64_t *ids, size_t nids,
		   struct db_llm_exchange **out, size_t *n, struct rt_sb *err)
{
	void *v = NULL;
	int rc = db_rows_by_ids(db, sql, &exchange_rows, ids, nids, &v, n, err);
	*out = v;
	return rc;
}

int db_llm_list(struct db *db, int64_t campaign_id, struct db_llm_exchange **out, size_t *n,
		struct rt_sb *err)
{
	return list_by(db, EXCHANGE_COLS "WHERE campaign_id = ?1 ORDER BY id", &campaign_id, 1, out, n, err);
}

int db_llm_get(struct db *db, int64_t campaign_id, int64_t id, struct db_llm_exchange **out, size_t *n,
	       struct rt_sb *err)
{
	return list_by(db, EXCHANGE_COLS "WHERE campaign_id = ?1 AND id = ?2", (int64_t[]){ campaign_id, id }, 2,
		       out, n, err);
}

int db_llm_of_iteration(struct db *db, int64_t iteration_id, struct db_llm_exchange **out, size_t *n,
			struct rt_sb *err)
{
	return list_by(db, EXCHANGE_COLS "WHERE iteration_id = ?1 ORDER BY id", &iteration_id, 1, out, n, err);
}

void db_llm_free(struct db_llm_exchange *v, size_t n)
{
	db_rows_free(&exchange_rows, v, n);
}
