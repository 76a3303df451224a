/*
 * The notes table: the append-only way to amend history. A note comments on
 * an iteration; a correction says that a later iteration's findings correct
 * an earlier one's narrative (both stay); an invalidation marks a result
 * invalid, once, without hiding or deleting it. Rows in `notes` are never
 * updated or deleted. The one writer (db_note_add_as) and the one reader of
 * the row (struct db_note, db_q_notes).
 */
#include "db/db_int.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

static bool blank(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

/* "already invalid (note 7: reason)" for the second invalidation. */
static int already_invalid(struct db *db, int64_t iteration_id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, text FROM notes WHERE iteration_id = ?1 AND kind = 'invalidation' "
		"ORDER BY id LIMIT 1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	int rc = db_step_row(db, st, err, "read notes");
	if (rc == RT_EDB)
		return rc;
	if (!rc) {
		rt_errf(err, 0, "db: iteration %lld is already invalid (note %lld: %s)",
			(long long)iteration_id, (long long)sqlite3_column_int64(st, 0),
			(const char *)sqlite3_column_text(st, 1));
		sqlite3_reset(st);
	} else {
		rt_errf(err, 0, "db: iteration %lld is already invalid", (long long)iteration_id);
	}
	return RT_ESTATE;
}

/* The checks that need no database: kind, text, and who corrects whom. */
static int note_check(int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		      const char *text, struct rt_sb *err)
{
	if (!kind || (strcmp(kind, "note") && strcmp(kind, "correction") &&
		      strcmp(kind, "invalidation")))
		return rt_errf(err, RT_EINVAL, "db: note kind '%s' is not note, correction or "
			       "invalidation", kind ? kind : "(null)");
	if (blank(text))
		return rt_errf(err, RT_EINVAL, "db: %s for iteration %lld: text is empty", kind,
			       (long long)iteration_id);
	bool correction = !strcmp(kind, "correction");
	if (correction && !by_iteration_id)
		return rt_errf(err, RT_EINVAL, "db: correction of iteration %lld: needs the "
			       "iteration whose findings correct it", (long long)iteration_id);
	if (!correction && by_iteration_id)
		return rt_errf(err, RT_EINVAL, "db: %s for iteration %lld: only a correction "
			       "names a correcting iteration", kind, (long long)iteration_id);
	if (correction && by_iteration_id == iteration_id)
		return rt_errf(err, RT_EINVAL, "db: iteration %lld cannot correct itself",
			       (long long)iteration_id);
	return 0;
}

/* 0 when iteration id exists; RT_ENOENT saying so, or RT_EDB. */
static int need_iteration(struct db *db, int64_t id, struct rt_sb *err)
{
	int rc = db_iteration_exists(db, id, err);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no iteration %lld", (long long)id);
	return rc;
}

int db_note_add_as(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		   const char *text, const char *author, int64_t *id, struct rt_sb *err)
{
	int rc = note_check(iteration_id, kind, by_iteration_id, text, err);
	if (!rc)
		rc = need_iteration(db, iteration_id, err);
	if (!rc && by_iteration_id)
		rc = need_iteration(db, by_iteration_id, err);
	if (rc)
		return rc;

	/* One statement, so two concurrent invalidations cannot both land. */
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO notes (iteration_id, kind, by_iteration_id, text, author, created_at) "
		"SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE ?2 <> 'invalidation' OR NOT EXISTS "
		"(SELECT 1 FROM notes WHERE iteration_id = ?1 AND kind = 'invalidation')", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	db_bind_text(st, 2, kind);
	db_bind_id(st, 3, by_iteration_id);
	db_bind_text(st, 4, text);
	db_bind_text(st, 5, author && *author ? author : NULL);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	int64_t nid = 0;
	if ((rc = db_step_insert(db, st, &nid, err, "insert into notes")))
		return rc;
	if (db_changes(db) == 0)
		return already_invalid(db, iteration_id, err);
	if (id)
		*id = nid;
	return 0;
}

static void note_read(sqlite3_stmt *st, void *row)
{
	struct db_note *o = row;
	o->id = sqlite3_column_int64(st, 0);
	o->iteration_id = sqlite3_column_int64(st, 1);
	o->seq = sqlite3_column_int(st, 2);
	o->by_iteration_id = sqlite3_column_int64(st, 3);
	o->by_seq = db_col_count(st, 4);
	o->kind = db_col_text(st, 5);
	o->text = db_col_text(st, 6);
	o->author = db_col_text(st, 7);
	o->created_at = sqlite3_column_int64(st, 8);
}

static void note_release(void *row)
{
	struct db_note *o = row;
	free(o->kind);
	free(o->text);
	free(o->author);
}

static const struct db_row_type note_rows = {
	sizeof(struct db_note), note_read, note_release, "read notes",
};

void db_notes_free(struct db_note *v, size_t n)
{
	db_rows_free(&note_rows, v, n);
}

/* ?2 <> 0: notes on that iteration plus the corrections it authored (the
 * by_iteration_id side has no index, but notes are few); ?2 = 0: every note
 * of campaign ?1. */
static const char SQL_NOTES[] =
	"SELECT n.id, n.iteration_id, i.seq, n.by_iteration_id, b.seq, n.kind, n.text, n.author,"
	" n.created_at FROM notes n JOIN iterations i ON i.id = n.iteration_id"
	" LEFT JOIN iterations b ON b.id = n.by_iteration_id"
	" WHERE (?2 <> 0 AND (n.iteration_id = ?2 OR n.by_iteration_id = ?2))"
	"    OR (?2 = 0 AND i.campaign_id = ?1)"
	" ORDER BY n.created_at, n.id";

int db_q_notes(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_note **out,
	       size_t *n, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_NOTES, err);
	if (st) {
		sqlite3_bind_int64(st, 1, campaign_id);
		sqlite3_bind_int64(st, 2, iteration_id);
	}
	void *v;
	int rc = db_rows_list(db, st, &note_rows, &v, n, err);
	*out = v;
	return rc;
}
