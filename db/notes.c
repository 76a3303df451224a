/*
 * Notes, corrections and invalidations: the append-only way to amend history.
 * A note comments on an iteration; a correction says that a later
 * iteration's findings correct an earlier one's narrative (both stay); an
 * invalidation marks a result invalid, once, without hiding or deleting it.
 * Rows in `notes` are never updated or deleted. Also the parser for the
 * iteration references users type ("42" or "3:5").
 */
#include "db/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool iteration_exists(struct db *db, int64_t id, int *rc, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT 1 FROM iterations WHERE id = ?1", err);
	if (!st) {
		*rc = RT_EDB;
		return false;
	}
	sqlite3_bind_int64(st, 1, id);
	int s = sqlite3_step(st);
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		*rc = db_fail(db, err, "read iteration");
	sqlite3_reset(st);
	return s == SQLITE_ROW;
}

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
	if (sqlite3_step(st) == SQLITE_ROW)
		rt_errf(err, 0, "db: iteration %lld is already invalid (note %lld: %s)",
			(long long)iteration_id, (long long)sqlite3_column_int64(st, 0),
			(const char *)sqlite3_column_text(st, 1));
	else
		rt_errf(err, 0, "db: iteration %lld is already invalid", (long long)iteration_id);
	sqlite3_reset(st);
	return RT_ESTATE;
}

int db_note_add_as(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		   const char *text, const char *author, int64_t *id, struct rt_sb *err)
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
	int rc = 0;
	if (!iteration_exists(db, iteration_id, &rc, err))
		return rc ? rc : rt_errf(err, RT_ENOENT, "db: no iteration %lld",
					 (long long)iteration_id);
	if (correction && !iteration_exists(db, by_iteration_id, &rc, err))
		return rc ? rc : rt_errf(err, RT_ENOENT, "db: no iteration %lld",
					 (long long)by_iteration_id);

	/* One statement, so two concurrent invalidations cannot both land. */
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO notes (iteration_id, kind, by_iteration_id, text, author, created_at) "
		"SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE ?2 <> 'invalidation' OR NOT EXISTS "
		"(SELECT 1 FROM notes WHERE iteration_id = ?1 AND kind = 'invalidation')", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	if (by_iteration_id)
		sqlite3_bind_int64(st, 3, by_iteration_id);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, text, -1, SQLITE_TRANSIENT);
	if (author && *author)
		sqlite3_bind_text(st, 5, author, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_int64(st, 6, rt_wall_ms());
	int s = sqlite3_step(st);
	if (s != SQLITE_DONE) {
		rc = db_fail(db, err, "add note");
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	if (sqlite3_changes(db_sqlite(db)) == 0)
		return already_invalid(db, iteration_id, err);
	if (id)
		*id = sqlite3_last_insert_rowid(db_sqlite(db));
	return 0;
}

int db_note_add(struct db *db, int64_t iteration_id, const char *kind, int64_t by_iteration_id,
		const char *text, struct rt_sb *err)
{
	return db_note_add_as(db, iteration_id, kind, by_iteration_id, text, NULL, NULL, err);
}

bool db_iteration_is_invalid(struct db *db, int64_t iteration_id)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT 1 FROM notes WHERE iteration_id = ?1 AND kind = 'invalidation' LIMIT 1", NULL);
	if (!st)
		return false;
	sqlite3_bind_int64(st, 1, iteration_id);
	bool invalid = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_reset(st);
	return invalid;
}

void db_notes_free(struct db_note *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].text);
		free(v[i].author);
	}
	free(v);
}

static char *dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

int db_notes_list(struct db *db, int64_t iteration_id, struct db_note **out, size_t *n,
		  struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, iteration_id, kind, by_iteration_id, text, author, created_at FROM notes "
		"WHERE iteration_id = ?1 OR by_iteration_id = ?1 ORDER BY id", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	struct db_note *v = NULL;
	size_t cnt = 0, alloc = 0;
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, cnt, &alloc, sizeof(*v));
		struct db_note *no = &v[cnt++];
		no->id = sqlite3_column_int64(st, 0);
		no->iteration_id = sqlite3_column_int64(st, 1);
		no->kind = dup_col(st, 2);
		no->by_iteration_id = sqlite3_column_int64(st, 3);
		no->text = dup_col(st, 4);
		no->author = dup_col(st, 5);
		no->created_at = sqlite3_column_int64(st, 6);
	}
	if (s != SQLITE_DONE) {
		int rc = db_fail(db, err, "list notes");
		sqlite3_reset(st);
		db_notes_free(v, cnt);
		return rc;
	}
	sqlite3_reset(st);
	*out = v;
	*n = cnt;
	return 0;
}

/* A non-negative decimal integer filling [s, end); false otherwise. */
static bool parse_num(const char *s, const char *end, long long *out)
{
	if (s == end || *s < '0' || *s > '9')
		return false;
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (errno || e != end)
		return false;
	*out = v;
	return true;
}

int db_iteration_ref(struct db *db, const char *ref, int64_t *id, struct rt_sb *err)
{
	const char *s = ref ? ref : "";
	const char *colon = strchr(s, ':');
	long long a, b;
	if (colon) {
		if (!parse_num(s, colon, &a) || !parse_num(colon + 1, colon + strlen(colon), &b) ||
		    b > 2147483647LL)
			goto bad;
		struct db_iteration it;
		struct rt_sb tmp = RT_SB_INIT;
		int rc = db_iteration_get_seq(db, a, (int)b, &it, &tmp);
		if (rc) {
			rt_errf(err, 0, "%s", tmp.buf);
			rt_sb_release(&tmp);
			return rc;
		}
		rt_sb_release(&tmp);
		*id = it.id;
		db_iteration_release(&it);
		return 0;
	}
	if (!parse_num(s, s + strlen(s), &a) || a == 0)
		goto bad;
	int rc = 0;
	if (!iteration_exists(db, a, &rc, err))
		return rc ? rc : rt_errf(err, RT_ENOENT, "db: no iteration %lld", a);
	*id = a;
	return 0;
bad:
	return rt_errf(err, RT_EUSAGE, "'%s' is not an iteration (use ID as `ratchet log` shows "
		       "it, or CAMPAIGN:SEQ)", s);
}
