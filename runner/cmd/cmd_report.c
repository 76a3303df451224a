/* `ratchet report`: the campaign journal as Markdown or self-contained HTML
 * (reports/journal.c), or with --campaigns several campaigns compared
 * (reports/compare.c). */
#include "runner/cmd/cmd.h"
#include "reports/rep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0;
	const char *format = NULL, *outp = NULL, *several = NULL;
	bool html = false;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "campaign id (default: the latest)" },
		{ "campaigns", 0, RT_OPT_STR, &several, "ID,ID...",
		  "compare campaigns: which levers carried over between them" },
		{ "format", 'f', RT_OPT_STR, &format, "md|html", "output format (default: from -o's extension .md or .html; another is refused)" },
		{ "html", 0, RT_OPT_FLAG, &html, NULL, "same as --format html" },
		{ "output", 'o', RT_OPT_STR, &outp, "FILE", "write here (atomically); default stdout" },
		{ 0 },
	};
	const struct rt_cmd_help help = {
		"ratchet report [--campaign ID | --campaigns ID,ID...] --format md|html [-o FILE]",
		"write the campaign journal: summary, numbered iterations with corrections beside\n"
		"them, dead ends by kind, regressions; HTML adds SVG charts and needs no network.\n"
		"--campaigns compares campaigns (models, machines): each lever's decision, effect\n"
		"and confidence in each, the levers tried in one campaign only apart",
		NULL,
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "report: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	enum rep_format fmt = REP_MD;
	if (html)
		fmt = REP_HTML;
	if (format) {
		if (!strcmp(format, "md") || !strcmp(format, "markdown"))
			fmt = REP_MD;
		else if (!strcmp(format, "html"))
			fmt = REP_HTML;
		else {
			cmd_error(ctx, "report: --format: unknown format '%s' (md or html)", format);
			return RT_EXIT_USAGE;
		}
	} else if (!html && outp) {
		/* From -o's extension: .html or .htm, .md or .markdown (or none:
		 * Markdown); anything else (x.pdf) is refused, not written as Markdown. */
		const char *base = strrchr(outp, '/') ? strrchr(outp, '/') + 1 : outp;
		const char *ext = strrchr(base, '.');
		if (ext && (!strcmp(ext, ".html") || !strcmp(ext, ".htm"))) {
			fmt = REP_HTML;
		} else if (ext && ext != base && strcmp(ext, ".md") && strcmp(ext, ".markdown")) {
			cmd_error(ctx, "report: -o %s: ratchet writes Markdown (.md) or HTML (.html), not '%s'; "
				  "end the file name with .md or .html, or give --format md|html", outp, ext);
			return RT_EXIT_USAGE;
		}
	}
	struct rt_sb err = RT_SB_INIT, doc = RT_SB_INIT;
	int64_t *ids = NULL;
	size_t nids = 0;
	if (several && campaign) {
		cmd_error(ctx, "report: --campaign and --campaigns: give one of them");
		return RT_EXIT_USAGE;
	}
	if (several && rep_parse_campaigns(several, &ids, &nids, &err)) {
		cmd_error(ctx, "report: %s", err.buf);
		rt_sb_release(&err);
		return RT_EXIT_USAGE;
	}
	int rc = several ? rep_compare(ctx->db, ids, nids, fmt, &doc, &err)
			 : rep_report(ctx->db, campaign, fmt, &doc, &err);
	free(ids);
	if (!rc && outp && strcmp(outp, "-"))
		rc = rt_write_file_atomic(outp, doc.buf, doc.len, 0644, &err);
	else if (!rc && fwrite(doc.buf, 1, doc.len, stdout) != doc.len)
		rc = rt_errf(&err, RT_EIO, "stdout: write error");
	if (rc)
		cmd_error(ctx, "report: %s", err.buf);
	else if (outp && strcmp(outp, "-") && !ctx->quiet)
		fprintf(stderr, "wrote %s (%zu bytes)\n", outp, doc.len);
	rt_sb_release(&doc);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : RT_EXIT_OK;
}
