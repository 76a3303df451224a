/*
 * Export every table of the store as JSON (one object {table: [rows]}) or
 * CSV (one RFC 4180 file per table). Blobs are written as their sha256 and
 * size, or in base64 when asked; text cells are redacted (rt_redact_secrets). Reads happen in one transaction, so an
 * export is a consistent snapshot even while a campaign is writing.
 */
#ifndef DB_EXPORT_H
#define DB_EXPORT_H

#include <stdio.h>

#include "db/db.h"

/* The exported tables, in export order (every table of the schema). */
extern const char *const db_export_tables[];
extern const size_t db_export_ntables;
/* true when name is one of db_export_tables. */
bool db_export_known(const char *name);

struct db_export_opts {
	const char *table; /* one table, or NULL for every table */
	bool blobs;        /* blob contents in base64 (else sha256 and size only) */
};

/* What an export wrote. */
struct db_export_count {
	size_t tables; /* tables written */
	size_t rows;   /* rows written, all tables together */
};

/* JSON to out: {"campaigns": [{"id": 1, ...}, ...], "iterations": [...], ...}.
 * A blob is {"sha256": HEX, "size": N} (plus "base64": ... with o->blobs). */
int db_export_json(struct db *db, const struct db_export_opts *o, FILE *out,
		   struct db_export_count *cnt, struct rt_sb *err);
/* CSV of one table to out: a header row of column names, then one record per
 * row; CRLF line ends; NULL is an empty field; a blob is "size=N sha256=HEX"
 * (or its base64 with blobs). A text cell that starts with =, +, -, @, tab or
 * carriage return is quoted behind a ' so spreadsheets do not run it. */
int db_export_csv(struct db *db, const char *table, bool blobs, FILE *out, size_t *rows,
		  struct rt_sb *err);
/* CSV of every table (or o->table) into folder dir (made if missing), as
 * dir/<table>.csv; each file is written to a temporary name and renamed. */
int db_export_csv_dir(struct db *db, const struct db_export_opts *o, const char *dir,
		      struct db_export_count *cnt, struct rt_sb *err);

#endif
