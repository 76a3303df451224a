/*
 * `ratchet export`: every table as JSON (one object {table: [rows]}) or CSV
 * (one file per table in a folder). A consistent snapshot even while a
 * campaign writes. The work is in db/export.c.
 */
#include "runner/cmd/cmd.h"
#include "db/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rt_cmd_help help = {
	"ratchet export [--format csv|json] [--table T] [--blobs] [-o DIR|FILE]",
	"export every table as CSV or JSON",
	"json: one object {\"table\": [rows]} to FILE, or to stdout without -o (or -o -).\n"
	"csv: one RFC 4180 file per table, DIR/<table>.csv (default DIR: ratchet-export);\n"
	"with --table, -o FILE.csv or -o - writes that one table to a file or stdout.\n"
	"Blobs are written as sha256 and size, or in base64 with --blobs.\n"
	"`ratchet --json export` is `--format json` to stdout.",
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int usage_error(struct rt_ctx *ctx, const char *msg)
{
	cmd_error(ctx, "export: %s", msg);
	fprintf(stderr, "usage: %s\n", help.usage);
	return RT_EXIT_USAGE;
}

/* Write to path through a temporary file, or to stdout for "-". */
static int to_file(struct rt_ctx *ctx, const char *path, bool json, struct db_export_opts *o,
		   struct db_export_count *cnt, struct rt_sb *err)
{
	bool out_std = !strcmp(path, "-");
	char *tmp = out_std ? NULL : xasprintf("%s.tmp", path);
	FILE *f = out_std ? stdout : fopen(tmp, "wb");
	if (!f) {
		int rc = rt_errf(err, RT_EIO, "%s: cannot write: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	int rc;
	if (json) {
		rc = db_export_json(ctx->db, o, f, cnt, err);
	} else {
		rc = db_export_csv(ctx->db, o->table, o->blobs, f, &cnt->rows, err);
		cnt->tables = 1;
	}
	if (out_std) {
		if (fflush(stdout) && !rc)
			rc = rt_errf(err, RT_EIO, "stdout: write failed: %s", strerror(errno));
		return rc;
	}
	if (fclose(f) && !rc)
		rc = rt_errf(err, RT_EIO, "%s: cannot write: %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path))
		rc = rt_errf(err, RT_EIO, "%s: cannot rename: %s", path, strerror(errno));
	if (rc)
		remove(tmp);
	free(tmp);
	return rc;
}

int cmd_export(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *format = NULL, *table = NULL, *output = NULL;
	bool blobs = false;
	const struct rt_opt opts[] = {
		{ "format", 'f', RT_OPT_STR, &format, "csv|json", "output format" },
		{ "table", 't', RT_OPT_STR, &table, "T", "export this table only" },
		{ "output", 'o', RT_OPT_STR, &output, "DIR|FILE",
		  "csv: folder (or FILE.csv with --table); json: file; - for stdout" },
		{ "blobs", 0, RT_OPT_FLAG, &blobs, NULL, "blob contents in base64 (default: sha256 and size)" },
		{ 0 },
	};
	int npos = 0, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos)
		return usage_error(ctx, "takes no positional arguments");
	if (!format)
		format = ctx->json ? "json" : NULL;
	if (!format)
		return usage_error(ctx, "--format csv or --format json is required");
	bool json = !strcmp(format, "json");
	if (!json && strcmp(format, "csv")) {
		cmd_error(ctx, "export: --format: '%s' is not csv or json", format);
		return RT_EXIT_USAGE;
	}
	if (!json && ctx->json)
		return usage_error(ctx, "--json prints JSON; drop --format csv or --json");
	if (table && !db_export_known(table)) {
		const char *dym = rt_did_you_mean(table, db_export_tables, db_export_ntables);
		if (dym)
			cmd_error(ctx, "export: --table: no table '%s' (did you mean '%s'?)", table, dym);
		else
			cmd_error(ctx, "export: --table: no table '%s'", table);
		return RT_EXIT_USAGE;
	}
	struct db_export_opts o = { .table = table, .blobs = blobs };
	struct db_export_count cnt = { 0 };
	struct rt_sb err = RT_SB_INIT;
	int rc;
	const char *where;
	if (json) {
		where = output ? output : "-";
		rc = to_file(ctx, where, true, &o, &cnt, &err);
	} else if (output && (!strcmp(output, "-") || ends_with(output, ".csv"))) {
		if (!table) {
			rt_sb_release(&err);
			return usage_error(ctx, "-o FILE.csv or -o - needs --table (CSV is one table per file)");
		}
		where = output;
		rc = to_file(ctx, where, false, &o, &cnt, &err);
	} else {
		where = output ? output : "ratchet-export";
		rc = db_export_csv_dir(ctx->db, &o, where, &cnt, &err);
	}
	if (rc) {
		cmd_error(ctx, "export: %s", err.buf);
		rt_sb_release(&err);
		return RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	if (strcmp(where, "-") && !ctx->quiet)
		printf("exported %zu table%s (%zu rows) as %s to %s\n", cnt.tables,
		       cnt.tables == 1 ? "" : "s", cnt.rows, json ? "JSON" : "CSV", where);
	return RT_EXIT_OK;
}
