/*
 * The schema and migrations, embedded at build time by cmake/embed_sql.cmake.
 * db_schema_sql creates a database at db_schema_version in one go; each
 * migration moves a database from version - 1 to version.
 */
#ifndef DB_SQL_H
#define DB_SQL_H

struct db_migration {
	int version;      /* user_version after this migration ran */
	const char *sql;  /* statements to run, in one transaction */
};

extern const char db_schema_sql[];
extern const int db_schema_version;
extern const struct db_migration db_migrations[]; /* ends with version 0 */

#endif
