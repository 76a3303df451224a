/*
 * The statement layer, private to db/: the raw connection, the cache of
 * prepared statements, binding and column helpers, stepping with errors that
 * name the table and the operation, and one generic reader that steps every
 * row of a statement into a growing array through a row callback. Only the
 * files in db/ (and the tests) include this header; the public API (db.h,
 * query.h, gate.h, ...) never mentions SQLite.
 *
 * Error text: every failed step is reported as "db: <what>: <sqlite message>"
 * with what naming the operation and the table ("insert into measurements",
 * "update iterations", "read notes").
 */
#ifndef DB_DB_INT_H
#define DB_DB_INT_H

#include <sqlite3.h>

#include "db/db.h"

/* ---- the connection (db/open.c) ---- */
/* The raw handle, for db/ and the tests only. */
sqlite3 *db_sqlite(struct db *db);
/* Report the connection's last SQLite error in err as "db: <what>: <message>";
 * returns RT_EDB. */
int db_fail(struct db *db, struct rt_sb *err, const char *what);
/* Prepare sql, cached per connection by the literal's address (so sql must be
 * a string constant); the cached statement comes back reset with its bindings
 * cleared. NULL with err filled on failure. Every statement is finalized by
 * db_close. */
sqlite3_stmt *db_prepare(struct db *db, const char *sql, struct rt_sb *err);
/* Run one or more statements without results ("BEGIN", the schema); errors
 * as db_fail. */
int db_exec(struct db *db, const char *sql, struct rt_sb *err, const char *what);

/* ---- binding (db/stmt.c) ---- */
/* NULL text, a non-finite real, an id <= 0 and a count < 0 are bound as SQL
 * NULL; text and blobs are copied by SQLite. */
void db_bind_text(sqlite3_stmt *st, int i, const char *s);
void db_bind_real(sqlite3_stmt *st, int i, double v);
void db_bind_id(sqlite3_stmt *st, int i, int64_t id);
void db_bind_count(sqlite3_stmt *st, int i, int v);
/* A blob of len bytes, or NULL when !present; present with no bytes is an
 * empty blob, not NULL. */
void db_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len, bool present);

/* ---- columns (db/stmt.c) ---- */
/* A copy of a text column (the caller frees), NULL for SQL NULL. */
char *db_col_text(sqlite3_stmt *st, int i);
/* A real column, NAN for SQL NULL. */
double db_col_real(sqlite3_stmt *st, int i);
/* An integer column, -1 for SQL NULL (counts, tokens). */
int db_col_count(sqlite3_stmt *st, int i);
/* A boolean column: 1, 0, or -1 for SQL NULL. */
int db_col_tri(sqlite3_stmt *st, int i);
/* A copy of a blob column, NUL-terminated for callers that treat it as text;
 * its length (without the NUL) goes to *len. The caller frees. */
void *db_col_blob(sqlite3_stmt *st, int i, size_t *len);
/* A sha256 hex column into out, "" for SQL NULL. */
void db_col_sha(sqlite3_stmt *st, int i, char out[65]);
/* iterations.state words (db/iterations.c); an unknown word (a newer
 * ratchet's) reads as pending rather than failing the whole read. */
enum db_iter_state db_col_state(sqlite3_stmt *st, int i);

/* ---- file bytes, stored once (db/intents.c) ---- */
/* Store bytes in blobs under their sha256 unless they are there already;
 * sha gets the hex ("" and nothing stored when !exists). Errors name what
 * (the row the bytes are for: "insert into intents (apply /x)"). */
int db_blob_put(struct db *db, bool exists, const void *p, size_t len, char sha[65],
		struct rt_sb *err, const char *what);

/* ---- shared look-ups ---- */
/* 0 when iteration id exists, RT_ENOENT (nothing in err) when not, RT_EDB
 * (db/iterations.c). */
int db_iteration_exists(struct db *db, int64_t id, struct rt_sb *err);

/* ---- stepping (db/stmt.c) ---- */
/* Step a write to completion and reset it: 0, or RT_EDB with "db: <what>: ..."
 * in err. */
int db_step_done(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what);
/* db_step_done, then the id of the row the INSERT made into *id (id may be NULL). */
int db_step_insert(struct db *db, sqlite3_stmt *st, int64_t *id, struct rt_sb *err,
		   const char *what);
/* Rows the last write on this connection changed. */
int db_changes(struct db *db);
/* Step a one-row read: 0 with the row ready (the caller reads it, then
 * resets), RT_ENOENT when there is no row (reset, nothing in err), RT_EDB. */
int db_step_row(struct db *db, sqlite3_stmt *st, struct rt_sb *err, const char *what);

/* ---- rows (db/stmt.c) ---- */
/* How to read one row shape: the one place that maps a SELECT's columns to a
 * struct, used by every reader of that shape. */
struct db_row_type {
	size_t size;                               /* bytes of one row struct */
	void (*read)(sqlite3_stmt *st, void *row); /* fill a zeroed row from the current result row */
	void (*release)(void *row);                /* free what read allocated, or NULL */
	const char *what;                          /* for errors: "read notes" */
};
/* Step st (prepared and bound; NULL means the prepare failed and err says
 * why) for one row into *row: 0, RT_ENOENT (row zeroed, nothing in err), or
 * RT_EDB. The statement is reset either way. */
int db_row_get(struct db *db, sqlite3_stmt *st, const struct db_row_type *t, void *row,
	       struct rt_sb *err);
/* Step st (as above) for every row into a growing array: *out (the caller
 * frees it with db_rows_free) and *n. On failure *out is NULL and *n 0. */
int db_rows_list(struct db *db, sqlite3_stmt *st, const struct db_row_type *t, void **out,
		 size_t *n, struct rt_sb *err);
/* Prepare sql, bind ids[0..nids) to ?1..?nids (the statement must have
 * exactly nids parameters: a mismatch is an error, not a silent default),
 * and list its rows as db_rows_list does. */
int db_rows_by_ids(struct db *db, const char *sql, const struct db_row_type *t, const int64_t *ids,
		   size_t nids, void **out, size_t *n, struct rt_sb *err);
/* Release each of the n rows of v, then v. */
void db_rows_free(const struct db_row_type *t, void *v, size_t n);
/* Grow array v (n used, *cap allocated, elements of sz bytes) so that index n
 * fits; returns the (possibly moved) array. */
void *db_grow(void *v, size_t n, size_t *cap, size_t sz);

#endif
