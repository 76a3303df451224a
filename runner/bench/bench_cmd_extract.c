/*
 * Metric extraction for command benchmarks (see bench_cmd.h): the RFC 6901
 * JSON pointer resolver over jansson, PCRE2 regexes, and the built-in
 * extractors written from each tool's documented output:
 *   llama-batched-bench: markdown table | PP | TG | B | N_KV | T_PP s |
 *     S_PP t/s | T_TG s | S_TG t/s | T s | S t/s | and --output-format jsonl
 *     lines {"pp","tg","pl","n_kv","t_pp","speed_pp","t_tg","speed_tg","t","speed"};
 *   llama-bench -o json (an array of tests) or -o jsonl (one per line), each
 *     with n_prompt, n_gen, avg_ts, stddev_ts;
 *   vllm bench serve --save-result: the keys of spec.h's SPEC_VLLM_* lists
 *     (throughputs, goodput, counts, {mean,median,std,p90,p95,p99}_{metric}_ms).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "runner/bench/bench_cmd.h"
#include "runner/base/rt_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_bcmd_metrics_release(struct run_bcmd_metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const double *run_bcmd_metric_get(const struct run_bcmd_metrics *m, const char *name)
{
	for (size_t i = m->n; i-- > 0;)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i].value;
	return NULL;
}

static void put(struct run_bcmd_metrics *m, const char *name, double v)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0) {
			m->v[i].value = v;
			return;
		}
	m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n].name = xstrdup(name);
	m->v[m->n].value = v;
	m->n++;
}

int run_bcmd_parse_number(const char *s, size_t n, double *out)
{
	char buf[64];
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return RT_EPARSE;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return RT_EPARSE;
	*out = v;
	return 0;
}

/* first 200 bytes of what was seen, for messages */
static void seen(struct rt_sb *err, const char *text, size_t len)
{
	if (!err)
		return;
	rt_sb_adds(err, " (saw: \"");
	for (size_t i = 0; i < len && i < 200; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n')
			rt_sb_adds(err, "\\n");
		else if (c == '"')
			rt_sb_adds(err, "\\\"");
		else if (c < 32)
			rt_sb_addf(err, "\\x%02x", c);
		else
			rt_sb_addc(err, (char)c);
	}
	rt_sb_adds(err, len > 200 ? "\"...)" : "\")");
}

/* The one ending of every extractor that found nothing: what it looked
 * for, and what the output began with. Returns RT_ENOENT. */
static int none_found(struct rt_sb *err, const char *text, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int none_found(struct rt_sb *err, const char *text, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err)
		rt_sb_vaddf(err, fmt, ap);
	va_end(ap);
	seen(err, text, len);
	return RT_ENOENT;
}

json_t *run_bcmd_json_pointer(json_t *root, const char *ptr, struct rt_sb *err)
{
	struct rt_strv tok;
	if (rt_json_pointer_split(ptr, &tok, err))
		return NULL;
	json_t *cur = root;
	/* the prefix walked so far names where a token was missing */
	size_t at = 0;
	for (size_t i = 0; i < tok.n && cur; i++) {
		json_t *next = rt_json_step(cur, tok.v[i]);
		if (!next)
			rt_errf(err, RT_ENOENT, "json pointer \"%s\": no \"%s\" at \"%.*s\"", ptr, tok.v[i],
				(int)at, ptr);
		at += strcspn(ptr + at + 1, "/") + 1;
		cur = next;
	}
	rt_strv_release(&tok);
	return cur;
}

static int json_number(json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v))
		return run_bcmd_parse_number(json_string_value(v), json_string_length(v), out);
	return RT_EPARSE;
}

int run_bcmd_extract_metric(const struct spec_metric *m, const char *text, size_t len,
			    const char *src, double *out, struct rt_sb *err)
{
	if (m->kind == SPEC_EXTRACT_POINTER) {
		json_error_t je;
		json_t *doc = json_loadb(text, len, JSON_DECODE_ANY, &je);
		if (!doc) {
			rt_errf(err, RT_EPARSE, "metric %s: %s is not JSON (%d:%d: %s)", m->name, src,
				je.line, je.column, je.text);
			seen(err, text, len);
			return RT_EPARSE;
		}
		struct rt_sb why = RT_SB_INIT;
		json_t *v = run_bcmd_json_pointer(doc, m->expr, &why);
		int rc = 0;
		if (!v) {
			rc = rt_errf(err, RT_ENOENT, "metric %s: %s: %s", m->name, src, why.buf);
			seen(err, text, len);
		} else if (json_number(v, out)) {
			char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			rc = rt_errf(err, RT_EPARSE, "metric %s: %s at %s is not a number", m->name, src,
				     m->expr);
			seen(err, s ? s : "", s ? strlen(s) : 0);
			free(s);
		}
		rt_sb_release(&why);
		json_decref(doc);
		return rc;
	}
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)m->expr, PCRE2_ZERO_TERMINATED, PCRE2_MULTILINE,
				       &ec, &eo, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		return rt_errf(err, RT_EINVAL, "metric %s: bad regex at offset %zu: %s", m->name,
			       (size_t)eo, (char *)msg);
	}
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	int n = pcre2_match(re, (PCRE2_SPTR)text, len, 0, 0, md, NULL);
	int rc = 0;
	if (n < 0) {
		rc = none_found(err, text, len, "metric %s: regex /%s/ does not match %s", m->name,
				m->expr, src);
	} else {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		int g = n > 1 ? 1 : 0;
		const char *s = ov[2 * g] == PCRE2_UNSET ? "" : text + ov[2 * g];
		size_t sl = ov[2 * g] == PCRE2_UNSET ? 0 : ov[2 * g + 1] - ov[2 * g];
		if (ov[2 * g] == PCRE2_UNSET || run_bcmd_parse_number(s, sl, out)) {
			rc = rt_errf(err, RT_EPARSE, "metric %s: regex /%s/ captured a non-number in %s",
				     m->name, m->expr, src);
			seen(err, ov[2 * g] == PCRE2_UNSET ? "" : s, sl);
		}
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc;
}

/* ---- llama-batched-bench ---- */
static const char *const lbb_cols[] = { "PP", "TG", "B", "N_KV", "T_PP s", "S_PP t/s",
					"T_TG s", "S_TG t/s", "T s", "S t/s" };
static const char *const lbb_names[] = { NULL, NULL, NULL, NULL, "t_pp", "s_pp",
					 "t_tg", "s_tg", "t", "s" };

/* "PP,TG,B" -> three numbers */
static int parse_row_sel(const char *row, double sel[3], struct rt_sb *err)
{
	char *end;
	const char *p = row;
	for (int i = 0; i < 3; i++) {
		sel[i] = strtod(p, &end);
		if (end == p || (i < 2 && *end != ',') || (i == 2 && *end))
			return rt_errf(err, RT_EINVAL, "format_row \"%s\": expected \"PP,TG,B\"", row);
		p = end + 1;
	}
	return 0;
}

/* Cells of one "| a | b |" line, trimmed; returns count (max 16). */
static size_t md_cells(const char *line, size_t n, char cells[16][64])
{
	size_t c = 0;
	const char *p = line, *end = line + n;
	while (p < end && *p != '|')
		p++;
	if (p >= end)
		return 0;
	p++;
	while (p < end && c < 16) {
		const char *q = memchr(p, '|', (size_t)(end - p));
		if (!q)
			break;
		const char *a = p, *b = q;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		size_t l = (size_t)(b - a) < 63 ? (size_t)(b - a) : 63;
		memcpy(cells[c], a, l);
		cells[c][l] = 0;
		c++;
		p = q + 1;
	}
	return c;
}

/*
 * llama-batched-bench writes through llama.cpp's asynchronous log: a thread
 * prints queued lines, and the logger is never flushed at exit (common/log.cpp,
 * common_log_main, at 80fb11a: "logs may be lost if not flushed before the
 * program exits"), so the end of its output, with the last rows, is lost now
 * and then while the exit status is 0 (about 1 run in 5 on a loaded 2-core
 * host). After its rows it always prints an empty line (and, on stderr,
 * llama_perf_context_print's lines): output that ends at a row, or inside
 * one, lost its end. Taking the last row that arrived would then read another
 * row than the one meant, so such output is refused, saying why, unless the
 * row asked for by format_row arrived whole. last is the last row read
 * ("PP,TG,B"), "" when none.
 */
static int lbb_cut_short(struct rt_sb *err, const char *what, const char *last)
{
	return rt_errf(err, RT_EPARSE, "llama-batched-bench%s: the output ends inside the results%s%s%s, "
		       "without the empty line the program prints after them: its end was lost, and "
		       "rows with it (llama.cpp's log is written by a thread that is not flushed at "
		       "exit); run it again", what, *last ? " (after row " : "", last, *last ? ")" : "");
}

int run_bcmd_llama_batched_table(const char *text, size_t len, const char *row,
				 struct run_bcmd_metrics *out, struct rt_sb *err)
{
	double sel[3];
	if (row && parse_row_sel(row, sel, err))
		return RT_EINVAL;
	int col[10];
	bool header = false, got = false, ended = true;
	double vals[10];
	char cells[16][64], last[96] = "";
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t c = md_cells(p, n, cells);
		bool row_line = header && n && *p == '|';
		p += n + (nl ? 1 : 0);
		if (header)
			ended = !row_line; /* a line after the rows: their end arrived */
		if (c == 0)
			continue;
		if (!header) {
			size_t found = 0;
			for (size_t k = 0; k < 10; k++) {
				col[k] = -1;
				for (size_t j = 0; j < c; j++)
					if (strcmp(cells[j], lbb_cols[k]) == 0)
						col[k] = (int)j;
				found += col[k] >= 0;
			}
			header = found == 10;
			continue;
		}
		if (cells[0][0] == '-' || cells[0][0] == ':')
			continue; /* the |---|---| separator */
		double v[10];
		bool ok = true;
		for (size_t k = 0; k < 10 && ok; k++)
			ok = (size_t)col[k] < c &&
			     run_bcmd_parse_number(cells[col[k]], strlen(cells[col[k]]), &v[k]) == 0;
		if (!ok)
			continue;
		snprintf(last, sizeof(last), "%g,%g,%g", v[0], v[1], v[2]);
		if (row && !(v[0] == sel[0] && v[1] == sel[1] && v[2] == sel[2]))
			continue;
		memcpy(vals, v, sizeof(v));
		got = true;
	}
	if (header && !ended && !(row && got))
		return lbb_cut_short(err, "", last);
	if (!header) {
		rt_errf(err, RT_EPARSE, "llama-batched-bench: no table with columns PP, TG, B, N_KV, "
			"T_PP s, S_PP t/s, T_TG s, S_TG t/s, T s, S t/s");
		seen(err, text, len);
		return RT_EPARSE;
	}
	if (!got)
		return rt_errf(err, RT_ENOENT, "llama-batched-bench: no row %s%s", row ? row : "",
			       row ? " (PP,TG,B)" : "of numbers");
	for (size_t k = 4; k < 10; k++)
		put(out, lbb_names[k], vals[k]);
	return 0;
}

int run_bcmd_llama_batched_jsonl(const char *text, size_t len, const char *row,
				 struct run_bcmd_metrics *out, struct rt_sb *err)
{
	static const char *const keys[] = { "pp", "tg", "pl", "n_kv", "t_pp", "speed_pp",
					     "t_tg", "speed_tg", "t", "speed" };
	double sel[3], vals[10];
	if (row && parse_row_sel(row, sel, err))
		return RT_EINVAL;
	bool got = false, ended = true;
	char last[96] = "";
	int lineno = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;
		p += n + (nl ? 1 : 0);
		lineno++;
		while (n && isspace((unsigned char)*line))
			line++, n--;
		ended = !n || *line != '{'; /* a line after the rows: their end arrived */
		if (ended)
			continue; /* log lines around the JSONL */
		json_error_t je;
		json_t *o = json_loadb(line, n, 0, &je);
		if (!o)
			continue;
		double v[10];
		bool ok = true;
		for (size_t k = 0; k < 10 && ok; k++)
			ok = json_number(json_object_get(o, keys[k]), &v[k]) == 0;
		json_decref(o);
		if (!ok)
			continue;
		snprintf(last, sizeof(last), "%g,%g,%g", v[0], v[1], v[2]);
		if (row && !(v[0] == sel[0] && v[1] == sel[1] && v[2] == sel[2]))
			continue;
		memcpy(vals, v, sizeof(v));
		got = true;
	}
	if (!ended && !(row && got))
		return lbb_cut_short(err, " jsonl", last);
	if (!got)
		return none_found(err, text, len, "llama-batched-bench jsonl: no line %s%s", row ? row : "",
				  row ? " (pp,tg,pl)" : "with pp, tg, pl, t_pp, speed_pp, t_tg, speed_tg, t, speed");
	for (size_t k = 4; k < 10; k++)
		put(out, lbb_names[k], vals[k]);
	return 0;
}

/* ---- llama-bench -o json / -o jsonl ---- */

/* The tests of llama-bench's output, following tools/llama-bench/llama-bench.cpp
 * of llama.cpp at commit 0104b151c56d: json_printer writes one array of
 * test objects, jsonl_printer one object per line (the same fields:
 * n_prompt, n_gen, n_depth, avg_ts, stddev_ts, ...). Lines that are not an
 * object (logs around the output) are skipped. A new array reference. */
static json_t *llama_bench_tests(const char *text, size_t len)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	if (json_is_array(doc))
		return doc;
	json_decref(doc);
	json_t *tests = json_array();
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;
		p += n + (nl ? 1 : 0);
		while (n && isspace((unsigned char)*line))
			line++, n--;
		json_t *o = n && *line == '{' ? json_loadb(line, n, 0, NULL) : NULL;
		if (json_is_object(o))
			json_array_append(tests, o);
		json_decref(o);
	}
	return tests;
}

int run_bcmd_llama_bench_json(const char *text, size_t len, struct run_bcmd_metrics *out,
			      struct rt_sb *err)
{
	json_t *doc = llama_bench_tests(text, len);
	size_t i;
	json_t *t;
	int found = 0;
	json_array_foreach(doc, i, t)
	{
		double np = 0, ng = 0, avg, sd = 0;
		if (json_number(json_object_get(t, "n_prompt"), &np) ||
		    json_number(json_object_get(t, "n_gen"), &ng) ||
		    json_number(json_object_get(t, "avg_ts"), &avg))
			continue;
		json_number(json_object_get(t, "stddev_ts"), &sd);
		/* pp: prompt-only tests; tg: generation-only tests (the last of each wins) */
		if (np > 0 && ng == 0) {
			put(out, "pp_tps", avg);
			put(out, "pp_tps_stddev", sd);
			found++;
		} else if (np == 0 && ng > 0) {
			put(out, "tg_tps", avg);
			put(out, "tg_tps_stddev", sd);
			found++;
		}
	}
	json_decref(doc);
	if (!found)
		return none_found(err, text, len, "llama-bench: no prompt-only or generation-only test "
				  "(a JSON array, or JSONL lines, of objects with n_prompt, n_gen, avg_ts)");
	return 0;
}

/* ---- vllm bench serve --save-result ---- */

/* spec.h's lists of vLLM's result keys (the writer, load_vllm.c, uses them too). */
#define RUN(key, name, better) { key, name },
static const struct {
	const char *key;  /* in the file */
	const char *name; /* ratchet's metric */
} vllm_run_keys[] = { SPEC_VLLM_RUN_KEYS(RUN) };
#undef RUN
#define NAME(m) m,
static const char *const vllm_metrics[] = { SPEC_VLLM_METRICS(NAME) SPEC_VLLM_EXTRAS(NAME) };
#undef NAME
#define STAT(a, word) word,
static const char *const vllm_stats[] = { SPEC_VLLM_STATS(STAT, _) };
#undef STAT

int run_bcmd_vllm_bench_serve(const char *text, size_t len, struct run_bcmd_metrics *out,
			      struct rt_sb *err)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, 0, &je);
	if (!json_is_object(doc)) {
		rt_errf(err, RT_EPARSE, "vllm bench serve json: %s", doc ? "not an object" : je.text);
		seen(err, text, len);
		json_decref(doc);
		return RT_EPARSE;
	}
	int found = 0;
	double v;
	for (size_t i = 0; i < RT_ARRAY_SIZE(vllm_run_keys); i++)
		if (!json_number(json_object_get(doc, vllm_run_keys[i].key), &v)) {
			put(out, vllm_run_keys[i].name, v);
			found++;
		}
	for (size_t i = 0; i < RT_ARRAY_SIZE(vllm_metrics); i++)
		for (size_t j = 0; j < RT_ARRAY_SIZE(vllm_stats); j++) {
			char in[96], name[96];
			snprintf(in, sizeof(in), "%s_%s_ms", vllm_stats[j], vllm_metrics[i]);
			snprintf(name, sizeof(name), "%s_%s", vllm_metrics[i], vllm_stats[j]);
			if (!json_number(json_object_get(doc, in), &v)) {
				put(out, name, v / 1000.0);
				found++;
			}
		}
	json_decref(doc);
	if (!found)
		return none_found(err, text, len, "vllm bench serve json: no request_throughput or *_ms metrics");
	return 0;
}

/* ---- everything for one benchmark ---- */
static int read_rel(const char *cwd, const char *file, char **data, size_t *len, struct rt_sb *err)
{
	char *path = file[0] == '/' || !cwd ? xstrdup(file) : xasprintf("%s/%s", cwd, file);
	int rc = rt_read_file(path, data, len, err);
	free(path);
	return rc;
}

/* A metric missing from a stdout that was cut at its cap may be in the part
 * dropped: say so after the extractor's own message. */
static int cut_note(int rc, const struct run_bcmd_result *r, struct rt_sb *err)
{
	if (!rc || !r->out_cut || !err)
		return rc;
	size_t cap = r->out.cap;
	if (cap >= (1u << 20) && !(cap & ((1u << 20) - 1)))
		rt_sb_addf(err, "; stdout was cut at its %zu MiB cap", cap >> 20);
	else
		rt_sb_addf(err, "; stdout was cut at its %zu-byte cap", cap);
	rt_sb_adds(err, " and the rest dropped, so the metric may be in what was cut "
			"(write it to a file and read it with file:)");
	return rc;
}

int run_bcmd_extract(const struct spec_cmd_bench *b, const char *cwd,
		     const struct run_bcmd_result *r, struct run_bcmd_metrics *out,
		     struct rt_sb *err)
{
	const struct rt_sb *so = &r->out;
	int rc = 0;
	if (b->format != SPEC_FMT_NONE && b->format != SPEC_FMT_JSON) {
		char *fdata = NULL;
		size_t flen = 0;
		const char *text = so->buf;
		size_t len = so->len;
		if (b->format_file) {
			if ((rc = read_rel(cwd, b->format_file, &fdata, &flen, err)))
				return rc;
			text = fdata;
			len = flen;
		}
		switch (b->format) {
		case SPEC_FMT_LLAMA_BATCHED_BENCH:
			rc = run_bcmd_llama_batched_table(text, len, b->format_row, out, err);
			break;
		case SPEC_FMT_LLAMA_BATCHED_JSONL:
			rc = run_bcmd_llama_batched_jsonl(text, len, b->format_row, out, err);
			break;
		case SPEC_FMT_LLAMA_BENCH_JSON:
			rc = run_bcmd_llama_bench_json(text, len, out, err);
			break;
		case SPEC_FMT_VLLM_BENCH_SERVE:
			rc = run_bcmd_vllm_bench_serve(text, len, out, err);
			break;
		default:
			break;
		}
		free(fdata);
		if (rc)
			return b->format_file ? rc : cut_note(rc, r, err);
	}
	for (size_t i = 0; i < b->n_metrics; i++) {
		const struct spec_metric *m = &b->metrics[i];
		char *fdata = NULL;
		size_t flen = 0;
		const char *text = so->buf, *src = "stdout";
		size_t len = so->len;
		if (m->file) {
			if ((rc = read_rel(cwd, m->file, &fdata, &flen, err)))
				return rc;
			text = fdata;
			len = flen;
			src = m->file;
		}
		double v;
		rc = run_bcmd_extract_metric(m, text, len, src, &v, err);
		free(fdata);
		if (rc)
			return m->file ? rc : cut_note(rc, r, err);
		put(out, m->name, v);
	}
	return 0;
}
