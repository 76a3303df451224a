/* The proposals table (db/proposals.h). */
#include "db/proposals.h"
#include "db/db_int.h"

#include <stdlib.h>

int db_proposal_add(struct db *db, int64_t campaign_id, const struct db_proposal *p, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO proposals (campaign_id, iteration_id, strategy, target, point, fingerprint, "
		"fidelity, reason, variant, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", err);
	if (!st)
		return RT_EDB;
	db_bind_id(st, 1, campaign_id);
	db_bind_id(st, 2, p->iteration_id);
	db_bind_text(st, 3, p->strategy);
	sqlite3_bind_int(st, 4, p->target); /* -1: an llm answer (runner/campaign/llm.c) */
	db_bind_text(st, 5, p->point);
	db_bind_text(st, 6, p->fingerprint);
	db_bind_real(st, 7, p->fidelity);
	db_bind_text(st, 8, p->reason);
	db_bind_text(st, 9, p->variant);
	db_bind_text(st, 10, p->state);
	return db_step_done(db, st, err, "insert into proposals");
}

static void proposal_read(sqlite3_stmt *st, void *row)
{
	struct db_proposal *p = row;
	p->iteration_id = sqlite3_column_int64(st, 0);
	p->strategy = db_col_text(st, 1);
	p->target = sqlite3_column_int(st, 2);
	p->point = db_col_text(st, 3);
	p->fingerprint = db_col_text(st, 4);
	p->fidelity = db_col_real(st, 5);
	p->reason = db_col_text(st, 6);
	p->variant = db_col_text(st, 7);
	p->state = db_col_text(st, 8);
}

static void proposal_release(void *row)
{
	struct db_proposal *p = row;
	free(p->strategy);
	free(p->point);
	free(p->fingerprint);
	free(p->reason);
	free(p->variant);
	free(p->state);
}

static const struct db_row_type proposal_rows = {
	sizeof(struct db_proposal), proposal_read, proposal_release, "read proposals",
};

#define PROPOSAL_COLS \
	"SELECT iteration_id, strategy, target, point, fingerprint, fidelity, reason, variant, state "

/* The proposals one statement selects, its parameters bound to ids. */
static int list_by(struct db *db, const char *sql, const int64_t *ids, size_t nids, struct db_proposal **out,
		   size_t *n, struct rt_sb *err)
{
	void *v = NULL;
	int rc = db_rows_by_ids(db, sql, &proposal_rows, ids, nids, &v, n, err);
	*out = v;
	return rc;
}

int db_proposals_list(struct db *db, int64_t campaign_id, struct db_proposal **out, size_t *n,
		      struct rt_sb *err)
{
	return list_by(db,
		       PROPOSAL_COLS "FROM proposals p WHERE campaign_id = ?1 "
		       /* in the iterations' order: a device pool's workers insert
			* concurrently, so ids need not follow seqs */
		       "ORDER BY (SELECT seq FROM iterations i WHERE i.id = p.iteration_id), iteration_id",
		       &campaign_id, 1, out, n, err);
}

int db_proposal_of_iteration(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_proposal **out,
			     size_t *n, struct rt_sb *err)
{
	return list_by(db, PROPOSAL_COLS "FROM proposals WHERE campaign_id = ?1 AND iteration_id = ?2 ORDER BY rowid",
		       (int64_t[]){ campaign_id, iteration_id }, 2, out, n, err);
}

void db_proposals_free(struct db_proposal *v, size_t n)
{
	db_rows_free(&proposal_rows, v, n);
}
