/*
 * CSV and JSON export of every table (see export.h). The table list is fixed
 * here, one literal SELECT per table, so no SQL is assembled from input; a
 * unit test checks that it names every table of the schema. Text cells go
 * through rt_redact_secrets.
 */
#include "db/export.h"
#include "db/db_int.h"

#include <jansson.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* Every table, in export order: X(name, every column, oldest row first).
 * One list: the SELECTs and the names (db_export_tables) both come from it. */
#define DB_EXPORT_TABLES(X) \
	X("campaigns", "SELECT * FROM campaigns ORDER BY id") \
	X("iterations", "SELECT * FROM iterations ORDER BY id") \
	/* The journal's bytes are stored once in blobs (version 4); these two \
	 * show each row with its bytes, as rows written before version 4 hold them. */ \
	X("originals", "SELECT o.id, o.campaign_id, o.path, o.existed, " \
		       "COALESCE(o.content, b.content) AS content, o.sha256, o.mode, o.created_at, " \
		       "o.content_blob FROM originals o LEFT JOIN blobs b ON b.sha256 = o.content_blob " \
		       "ORDER BY o.id") \
	X("intents", "SELECT t.id, t.iteration_id, t.action, t.path, t.before_exists, " \
		     "COALESCE(t.before, b.content) AS before, t.before_sha256, t.after_exists, " \
		     "COALESCE(t.after, a.content) AS after, t.after_sha256, t.state, t.created_at, " \
		     "t.closed_at, t.before_blob, t.after_blob FROM intents t " \
		     "LEFT JOIN blobs b ON b.sha256 = t.before_blob " \
		     "LEFT JOIN blobs a ON a.sha256 = t.after_blob ORDER BY t.id") \
	X("measurements", "SELECT * FROM measurements ORDER BY id") \
	X("metric_stats", "SELECT * FROM metric_stats ORDER BY id") \
	X("regressions", "SELECT * FROM regressions ORDER BY id") \
	X("gate_runs", "SELECT * FROM gate_runs ORDER BY id") \
	X("gate_answers", "SELECT * FROM gate_answers ORDER BY id") \
	X("requests", "SELECT * FROM requests ORDER BY id") \
	X("env_facts", "SELECT * FROM env_facts ORDER BY id") \
	X("artifacts", "SELECT * FROM artifacts ORDER BY id") \
	X("notes", "SELECT * FROM notes ORDER BY id") \
	X("device_peaks", "SELECT * FROM device_peaks ORDER BY id") \
	X("findings", "SELECT * FROM findings ORDER BY id") \
	X("profiles", "SELECT * FROM profiles ORDER BY id") \
	X("profile_ops", "SELECT * FROM profile_ops ORDER BY profile_id, op") \
	X("profile_kernels", "SELECT * FROM profile_kernels ORDER BY id") \
	X("proposals", "SELECT * FROM proposals ORDER BY id") \
	X("blobs", "SELECT * FROM blobs ORDER BY rowid") \
	X("launches", "SELECT * FROM launches ORDER BY id") \
	X("slurm_jobs", "SELECT * FROM slurm_jobs ORDER BY id") \
	X("slurm_steps", "SELECT * FROM slurm_steps ORDER BY id") \
	X("llm_exchanges", "SELECT * FROM llm_exchanges ORDER BY id") \
	X("replays", "SELECT * FROM replays ORDER BY campaign_id") \
	X("replay_levers", "SELECT * FROM replay_levers ORDER BY campaign_id, ord") \
	/* end */

#define DB_EXPORT_ROW(n, q) { n, q },
#define DB_EXPORT_NAME(n, q) n,
static const struct {
	const char *name; /* table */
	const char *sql;
} tables[] = { DB_EXPORT_TABLES(DB_EXPORT_ROW) };

const char *const db_export_tables[] = { DB_EXPORT_TABLES(DB_EXPORT_NAME) };
const size_t db_export_ntables = RT_ARRAY_SIZE(db_export_tables);

static int table_index(const char *name)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(tables); i++)
		if (!strcmp(tables[i].name, name))
			return (int)i;
	return -1;
}

bool db_export_known(const char *name)
{
	return name && table_index(name) >= 0;
}

static int unknown_table(const char *name, struct rt_sb *err)
{
	const char *dym = rt_did_you_mean(name, db_export_tables, db_export_ntables);
	if (dym)
		return rt_errf(err, RT_EINVAL, "db: export: no table '%s' (did you mean '%s'?)",
			       name, dym);
	return rt_errf(err, RT_EINVAL, "db: export: no table '%s'", name);
}

/* "db: export: read <table>: <sqlite message>". */
static int read_fail(struct db *db, int t, struct rt_sb *err)
{
	char what[64];
	snprintf(what, sizeof(what), "export: read %s", tables[t].name);
	return db_fail(db, err, what);
}

/* A consistent snapshot: a deferred read transaction around the whole export. */
static int snapshot_begin(struct db *db, struct rt_sb *err)
{
	if (!sqlite3_get_autocommit(db_sqlite(db)))
		return 0; /* the caller's transaction already is one */
	int rc = db_exec(db, "BEGIN", err, "export: begin");
	return rc ? rc : 1;
}

/* End the snapshot snapshot_begin began (began == 1); rc is the export's
 * result so far, kept when it is an error. */
static int snapshot_end(struct db *db, int began, int rc, struct rt_sb *err)
{
	if (began != 1)
		return rc;
	if (rc) {
		db_rollback(db);
		return rc;
	}
	return db_exec(db, "COMMIT", err, "export: commit");
}

static char *base64(const void *p, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	return out;
}

/* A blob as the export writes it: its size and sha256, and its base64 when
 * asked (the caller frees b64). */
struct blob_view {
	size_t n;      /* bytes */
	char sha[65];  /* sha256 hex */
	char *b64;     /* base64, or NULL when not asked */
};

static void blob_view(sqlite3_stmt *st, int i, bool blobs, struct blob_view *b)
{
	const void *p = sqlite3_column_blob(st, i);
	b->n = (size_t)sqlite3_column_bytes(st, i);
	rt_sha256_hex(p ? p : "", b->n, b->sha);
	b->b64 = blobs ? base64(p ? p : "", b->n) : NULL;
}

/* A text cell as the export writes it: redacted, since a database from
 * before redaction (or a spec's own text) may hold a key or a token. */
static void text_cell(sqlite3_stmt *st, int i, struct rt_sb *t)
{
	rt_sb_add(t, sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
	rt_redact_secrets(t);
}

/* The shortest %g form that reads back as the same double. */
static void fmt_real(double v, char out[40])
{
	for (int p = 1; p <= 17; p++) {
		snprintf(out, 40, "%.*g", p, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* ---- JSON ---- */

static void json_put(FILE *out, json_t *v)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	fputs(s ? s : "null", out);
	free(s);
	json_decref(v);
}

/* Text as a JSON string; bytes that are not UTF-8 become '?'. */
static void json_put_text(FILE *out, const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	if (!v) {
		char *copy = xmalloc(n + 1);
		for (size_t i = 0; i < n; i++)
			copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
		v = json_stringn(copy, n);
		free(copy);
	}
	json_put(out, v);
}

static void json_put_value(FILE *out, sqlite3_stmt *st, int i, bool blobs)
{
	char num[40];
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT: {
		double v = sqlite3_column_double(st, i);
		if (!isfinite(v)) {
			fputs("null", out);
			break;
		}
		fmt_real(v, num);
		/* Keep it a real for readers that type numbers. */
		if (!strpbrk(num, ".e"))
			strcat(num, ".0");
		fputs(num, out);
		break;
	}
	case SQLITE_TEXT: {
		struct rt_sb t = RT_SB_INIT;
		text_cell(st, i, &t);
		json_put_text(out, t.buf, t.len);
		rt_sb_release(&t);
		break;
	}
	case SQLITE_BLOB: {
		struct blob_view b;
		blob_view(st, i, blobs, &b);
		fprintf(out, "{\"sha256\":\"%s\",\"size\":%zu", b.sha, b.n);
		if (b.b64)
			fprintf(out, ",\"base64\":\"%s\"", b.b64);
		fputc('}', out);
		free(b.b64);
		break;
	}
	default:
		fputs("null", out);
	}
}

static int json_table(struct db *db, int t, bool blobs, FILE *out, size_t *rows,
		      struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, tables[t].sql, err);
	if (!st)
		return RT_EDB;
	int ncol = sqlite3_column_count(st);
	json_put_text(out, tables[t].name, strlen(tables[t].name));
	fputs(": [", out);
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fputs(n ? ",\n  {" : "\n  {", out);
		for (int i = 0; i < ncol; i++) {
			const char *name = sqlite3_column_name(st, i);
			if (i)
				fputs(", ", out);
			json_put_text(out, name, strlen(name));
			fputs(": ", out);
			json_put_value(out, st, i, blobs);
		}
		fputc('}', out);
		n++;
	}
	if (rc != SQLITE_DONE) {
		int ret = read_fail(db, t, err);
		sqlite3_reset(st);
		return ret;
	}
	sqlite3_reset(st);
	fputs(n ? "\n]" : "]", out);
	*rows += n;
	return 0;
}

int db_export_json(struct db *db, const struct db_export_opts *o, FILE *out,
		   struct db_export_count *cnt, struct rt_sb *err)
{
	struct db_export_count c = { 0 };
	if (o->table && !db_export_known(o->table))
		return unknown_table(o->table, err);
	int began = snapshot_begin(db, err);
	if (began < 0)
		return began;
	int rc = 0;
	fputs("{", out);
	for (size_t t = 0; t < RT_ARRAY_SIZE(tables); t++) {
		if (o->table && strcmp(o->table, tables[t].name))
			continue;
		fputs(c.tables ? ",\n" : "\n", out);
		if ((rc = json_table(db, (int)t, o->blobs, out, &c.rows, err)))
			break;
		c.tables++;
	}
	fputs("\n}\n", out);
	rc = snapshot_end(db, began, rc, err);
	if (!rc && ferror(out))
		rc = rt_errf(err, RT_EIO, "db: export: write failed");
	if (cnt)
		*cnt = c;
	return rc;
}

/* ---- CSV (RFC 4180) ---- */

/* A text cell that a spreadsheet would run as a formula (OWASP's list: =, +,
 * -, @, tab, carriage return first) is written quoted behind a single quote,
 * so it opens as text. */
static bool csv_formula(const char *s, size_t n)
{
	return n && s[0] && strchr("=+-@\t\r", s[0]);
}

static void csv_field(FILE *out, const char *s, size_t n)
{
	bool formula = csv_formula(s, n), quote = formula;
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	if (!quote) {
		fwrite(s, 1, n, out);
		return;
	}
	fputc('"', out);
	if (formula)
		fputc('\'', out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
	fputc('"', out);
}

static void csv_value(FILE *out, sqlite3_stmt *st, int i, bool blobs)
{
	char num[40];
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		fmt_real(sqlite3_column_double(st, i), num);
		fputs(num, out);
		break;
	case SQLITE_TEXT: {
		struct rt_sb t = RT_SB_INIT;
		text_cell(st, i, &t);
		csv_field(out, t.buf, t.len);
		rt_sb_release(&t);
		break;
	}
	case SQLITE_BLOB: {
		struct blob_view b;
		blob_view(st, i, blobs, &b);
		if (b.b64)
			fputs(b.b64, out);
		else
			fprintf(out, "size=%zu sha256=%s", b.n, b.sha);
		free(b.b64);
		break;
	}
	default:
		break; /* NULL: an empty field */
	}
}

int db_export_csv(struct db *db, const char *table, bool blobs, FILE *out, size_t *rows,
		  struct rt_sb *err)
{
	int t = table ? table_index(table) : -1;
	if (t < 0)
		return unknown_table(table ? table : "(null)", err);
	int began = snapshot_begin(db, err);
	if (began < 0)
		return began;
	sqlite3_stmt *st = db_prepare(db, tables[t].sql, err);
	if (!st)
		return snapshot_end(db, began, RT_EDB, err);
	int ncol = sqlite3_column_count(st);
	for (int i = 0; i < ncol; i++) {
		const char *name = sqlite3_column_name(st, i);
		if (i)
			fputc(',', out);
		csv_field(out, name, strlen(name));
	}
	fputs("\r\n", out);
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputc(',', out);
			csv_value(out, st, i, blobs);
		}
		fputs("\r\n", out);
		n++;
	}
	int ret = rc == SQLITE_DONE ? 0 : read_fail(db, t, err);
	sqlite3_reset(st);
	ret = snapshot_end(db, began, ret, err);
	if (!ret && ferror(out))
		ret = rt_errf(err, RT_EIO, "db: export: %s: write failed", tables[t].name);
	if (rows)
		*rows += n;
	return ret;
}

int db_export_csv_dir(struct db *db, const struct db_export_opts *o, const char *dir,
		      struct db_export_count *cnt, struct rt_sb *err)
{
	struct db_export_count c = { 0 };
	if (o->table && !db_export_known(o->table))
		return unknown_table(o->table, err);
	int rc = rt_mkdirs(dir, err);
	if (rc)
		return rc;
	int began = snapshot_begin(db, err);
	if (began < 0)
		return began;
	for (size_t t = 0; t < RT_ARRAY_SIZE(tables) && !rc; t++) {
		if (o->table && strcmp(o->table, tables[t].name))
			continue;
		char *path = xasprintf("%s/%s.csv", dir, tables[t].name);
		char *tmp = xasprintf("%s.tmp", path);
		FILE *f = fopen(tmp, "wb");
		if (!f) {
			rc = rt_errf(err, RT_EIO, "%s: cannot write: %s", tmp, strerror(errno));
		} else {
			rc = db_export_csv(db, tables[t].name, o->blobs, f, &c.rows, err);
			if (fclose(f) && !rc)
				rc = rt_errf(err, RT_EIO, "%s: cannot write: %s", tmp,
					     strerror(errno));
			if (!rc && rename(tmp, path))
				rc = rt_errf(err, RT_EIO, "%s: cannot rename: %s", path,
					     strerror(errno));
			if (rc)
				remove(tmp);
			else
				c.tables++;
		}
		free(tmp);
		free(path);
	}
	rc = snapshot_end(db, began, rc, err);
	if (cnt)
		*cnt = c;
	return rc;
}
