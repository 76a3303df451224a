/*
 * Unit tests of the reports: formatting helpers and escaping, the SVG
 * builders (point counts, scales, empty charts, decimation), the progress
 * line (tty, plain and quiet, with a fake clock into a memstream), and the
 * views over the fixture campaign (log pages and filters, show's links both
 * ways, regressions grouped by what they mean, the one sign convention, one
 * number per kept gain, the HTML journal's charts and escaping).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "reports/rep_int.h"
#include "rep_fixture.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The <svg id="id"> element of doc (caller frees), or NULL. */
static char *svg_part(const char *doc, const char *id)
{
	char open[64];
	snprintf(open, sizeof(open), "<svg id=\"%s\"", id);
	const char *a = strstr(doc, open);
	if (!a)
		return NULL;
	const char *b = strstr(a, "</svg>");
	return xstrndup(a, (size_t)(b - a));
}

/* Points (class="pt ...") inside the <svg id="id"> element of doc. */
static size_t svg_points(const char *doc, const char *id)
{
	char *part = svg_part(doc, id);
	if (!part)
		return (size_t)-1;
	size_t n = count(part, "class=\"pt");
	free(part);
	return n;
}

/* The array under key of the JSON document text, checked to hold n
 * entries; *doc receives the document (caller json_decref()s it). */
static json_t *json_array_of(const char *text, const char *key, size_t n, json_t **doc)
{
	json_error_t je;
	*doc = json_loads(text, 0, &je);
	assert_non_null(*doc);
	json_t *arr = json_object_get(*doc, key);
	assert_int_equal(json_array_size(arr), n);
	return arr;
}

/* A fixture database in a fresh temp folder. */
struct fx {
	char dir[64];
	char path[96];
	struct db *db;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/rep-unit-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/r.db", f->dir);
	f->db = rep_fixture_open(f->path);
	*state = f;
	return f->db ? 0 : -1;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	char p[128];
	const char *sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", f->path, sfx[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The text of `log` (log set) or of `show --full show_id` (caller frees);
 * show's summary is in the golden files. */
/* noinline: inlined, gcc -O2's -Wdangling-pointer takes the returned
 * memstream buffer for the local that held its address (gcc 12) */
__attribute__((noinline)) static char *capture(struct db *db, const struct rep_log_opts *log,
					       int64_t show_id, bool json, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct rt_sb err = RT_SB_INIT;
	*rc = log ? rep_log(db, m, log, &err) : rep_show(db, m, show_id, &(struct rep_show_opts){ .json = json, .full = true }, &err);
	fclose(m);
	rt_sb_release(&err);
	return buf;
}

static char *capture_log(struct db *db, const struct rep_log_opts *o, int *rc)
{
	return capture(db, o, 0, false, rc);
}

static char *capture_show(struct db *db, int64_t id, bool json, int *rc)
{
	return capture(db, NULL, id, json, rc);
}

/* ---- formatting ---- */

static void test_glyphs(void **state)
{
	(void)state;
	assert_string_equal(rep_glyph(DB_ITER_KEPT, false), "✓");
	assert_string_equal(rep_glyph(DB_ITER_REVERTED, false), "↩");
	assert_string_equal(rep_glyph(DB_ITER_GATED, false), "✗");
	assert_string_equal(rep_glyph(DB_ITER_FAILED, false), "!");
	assert_string_equal(rep_glyph(DB_ITER_INTERRUPTED, false), "⚡");
	assert_string_equal(rep_glyph(DB_ITER_BASELINE, false), "●");
	assert_string_equal(rep_glyph(DB_ITER_KEPT, true), "⊘");
	assert_string_equal(rep_glyph(DB_ITER_MEASURING, false), "…");
}

static void test_fmt(void **state)
{
	(void)state;
	struct rt_sb sb = RT_SB_INIT;
	rep_fmt_change(&sb, 0.061, 0.040, 0.083, 1);
	assert_string_equal(sb.buf, "+6.1% [+4.0, +8.3] (better)");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, -0.015, -0.031, NAN, 1);
	assert_string_equal(sb.buf, "-1.5% (worse)");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, 1.65, 1.2, 2.1, -1);
	assert_string_equal(sb.buf, "+165.0% [+120.0, +210.0] (worse)");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, -0.298, NAN, NAN, -1);
	assert_string_equal(sb.buf, "-29.8% (better)");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, 0.0001, NAN, NAN, -1); /* rounds to 0: no direction */
	assert_string_equal(sb.buf, "+0.0%");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, 0.02, NAN, NAN, 0); /* direction unknown */
	assert_string_equal(sb.buf, "+2.0%");
	rt_sb_reset(&sb);
	rep_fmt_change(&sb, NAN, 0, 0, 1);
	assert_string_equal(sb.buf, "—");
	rt_sb_reset(&sb);
	rep_fmt_num(&sb, 1147.6);
	rt_sb_adds(&sb, " ");
	rep_fmt_num(&sb, 1000.0);
	rt_sb_adds(&sb, " ");
	rep_fmt_num(&sb, 0.87971);
	rt_sb_adds(&sb, " ");
	rep_fmt_num(&sb, -0.0);
	assert_string_equal(sb.buf, "1147.6 1000 0.8797 0");
	rt_sb_release(&sb);
}

static void test_escape(void **state)
{
	(void)state;
	struct rt_sb sb = RT_SB_INIT;
	rep_html_escape(&sb, "<script>a&'\"</script>");
	assert_string_equal(sb.buf, "&lt;script&gt;a&amp;&#39;&quot;&lt;/script&gt;");
	rt_sb_reset(&sb);
	rep_md_escape(&sb, "a|b *c* _d_ [e](f) <g> ~~h~~ `i` &amp;\nj");
	assert_string_equal(sb.buf, "a\\|b \\*c\\* \\_d\\_ \\[e\\](f) \\<g> \\~\\~h\\~\\~ \\`i\\` \\&amp; j");
	rt_sb_reset(&sb);
	rep_md_escape(&sb, "a\033[31mb\x7f\x01"); /* a model's raw ESC never reaches the report (issue 22) */
	assert_string_equal(sb.buf, "a?\\[31mb??");
	rt_sb_reset(&sb);
	rep_md_escape(&sb, "a\xC2\x9B" "2Jb\xC2\xA0"); /* nor its one-byte CSI, U+009B */
	assert_string_equal(sb.buf, "a?2Jb\xC2\xA0");
	rt_sb_reset(&sb);
	rep_term_escape(&sb, "red\033[31mx\x7f");
	assert_string_equal(sb.buf, "red?[31mx?");
	rt_sb_reset(&sb);
	rep_term_escape(&sb, "a\xC2\x9B" "2J\xC3\xA9");
	assert_string_equal(sb.buf, "a?2J\xC3\xA9");
	rt_sb_release(&sb);
}

static void test_summarise(void **state)
{
	(void)state;
	double v[] = { 1, 2, 3, 4, 100 };
	struct rep_summary s;
	rep_summarise(v, 5, &s);
	assert_int_equal(s.n, 5);
	assert_true(s.median == 3 && s.mad == 1 && s.min == 1 && s.max == 100);
	double w[] = { 1, 2, 3, 4 };
	rep_summarise(w, 4, &s);
	assert_true(s.median == 2.5 && s.mad == 1);
	rep_summarise(w, 0, &s);
	assert_true(isnan(s.median));
}

static void test_since(void **state)
{
	(void)state;
	int64_t out;
	const int64_t now = 1764460800000; /* 2025-11-30T00:00:00Z */
	assert_int_equal(rep_parse_since("12h", now, &out, NULL), 0);
	assert_true(out == now - 12 * 3600000LL);
	assert_int_equal(rep_parse_since("3d", now, &out, NULL), 0);
	assert_true(out == now - 3 * 86400000LL);
	assert_int_equal(rep_parse_since("2025-11-30", now, &out, NULL), 0);
	assert_true(out == now);
	assert_int_equal(rep_parse_since("2025-11-30T01:30", now, &out, NULL), 0);
	assert_true(out == now + 90 * 60000LL);
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rep_parse_since("yesterday", now, &out, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "--since: 'yesterday'"));
	rt_sb_release(&err);
	assert_int_equal(rep_parse_since("2025-13-01", now, &out, NULL), RT_EUSAGE);
}

/* ---- scales and SVG ---- */

static void test_scale(void **state)
{
	(void)state;
	double first, step = rep_nice_step(0.93, 0.985, 6, &first);
	assert_true(fabs(step - 0.01) < 1e-12 && fabs(first - 0.93) < 1e-12);
	step = rep_nice_step(987, 1213, 6, &first);
	assert_true(step == 50 && first == 1000);
	step = rep_nice_step(0, 1, 6, &first);
	assert_true(fabs(step - 0.2) < 1e-12 && first == 0);
	struct rep_scale s = { 0, 10, 100, 200 };
	assert_true(rep_scale_map(&s, 5) == 150);
	struct rep_scale y = { 0, 1, 300, 50 }; /* inverted, like an SVG y axis */
	assert_true(rep_scale_map(&y, 1) == 50 && rep_scale_map(&y, 0.5) == 175);
}

static void test_svg_objective(void **state)
{
	(void)state;
	struct rep_obj_pt p[] = {
		{ 0, 1000, NAN, NAN, 'b', 1000 }, { 1, 1061, 1040, 1083, 'k', 1002 },
		{ 2, 1139, 1110, 1160, 'g', 1060 }, { 3, 1065, 1049, 1082, 'r', 1058 },
		{ 4, 1095, 1084, 1107, 'k', 1063 },
	};
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_objective(&sb, p, 5, "serve.tok_s", "tok/s");
	assert_int_equal(svg_points(sb.buf, "chart-objective"), 5);
	assert_int_equal(count(sb.buf, "class=\"ci\""), 4);
	assert_int_equal(count(sb.buf, "class=\"pt kept\""), 2);
	assert_non_null(strstr(sb.buf, "viewBox=\"0 0 720 396\""));
	assert_non_null(strstr(sb.buf, "serve.tok_s (tok/s)"));
	/* running best: M baseline, then one step per kept point */
	const char *best = strstr(sb.buf, "class=\"best\"");
	assert_non_null(best);
	assert_int_equal(count(strstr(best, "d=\""), "V") >= 2, 1);
	rt_sb_release(&sb);
	/* many points: decimated, but every kept one stays */
	size_t n = 10000;
	struct rep_obj_pt *m = xcalloc(n, sizeof(*m));
	for (size_t i = 0; i < n; i++)
		m[i] = (struct rep_obj_pt){ (int)i, 1000 + (double)(i % 7), NAN, NAN,
					    i % 1000 == 1 ? 'k' : 'r', 1000 };
	rep_svg_objective(&sb, m, n, "x.y", NULL);
	/* past the cap, each point is a dot "Mx yh0" in one path per decision */
	size_t pts = count(sb.buf, "h0");
	assert_true(pts <= 1600 && pts >= 1000);
	const char *kept = strstr(sb.buf, "class=\"pts kept\"");
	assert_non_null(kept);
	char *kd = xstrndup(kept, (size_t)(strstr(kept, "/>") - kept));
	assert_int_equal(count(kd, "h0"), 10);
	free(kd);
	assert_non_null(strstr(sb.buf, "of 10000 points"));
	free(m);
	rt_sb_release(&sb);
}

/* The y of the best line's horizontal segment over x, in a path of M, H and
 * V commands (NAN when none spans x). */
static double line_y_at(const char *d, double x)
{
	double cx = 0, cy = 0;
	while (*d && *d != '"') {
		char op = *d++;
		char *end;
		double a = strtod(d, &end), b = 0;
		d = end;
		if (op == 'M') {
			b = strtod(d, &end);
			d = end;
			cx = a, cy = b;
		} else if (op == 'H') {
			if ((cx <= x && x <= a) || (a <= x && x <= cx))
				return cy;
			cx = a;
		} else if (op == 'V') {
			cy = a;
		}
	}
	return NAN;
}

/* The cx and cy (or a square's centre) of the first point of class cls. */
static void point_at(const char *svg, const char *cls, double *x, double *y)
{
	char key[48];
	snprintf(key, sizeof(key), "class=\"pt %s\"", cls);
	const char *at = strstr(svg, key);
	assert_non_null(at);
	const char *cxs = strstr(at, " cx=\""), *xs = strstr(at, " x=\"");
	if (cxs && (!xs || cxs < xs)) {
		*x = strtod(cxs + 5, NULL);
		*y = strtod(strstr(at, " cy=\"") + 5, NULL);
	} else {
		double w = strtod(strstr(at, " width=\"") + 8, NULL);
		*x = strtod(xs + 4, NULL) + w / 2;
		*y = strtod(strstr(at, " y=\"") + 4, NULL) + w / 2;
	}
}

/* Issue 23: the best-so-far line is the best's median measured beside each
 * candidate, so a reverted candidate that lost sits below it even when the
 * host was faster than when the best was kept (the old line, the kept
 * candidate's own median, ran under it); reverted and invalid points have
 * their own markers and legend entries; the legend's rows do not overlap. */
static void test_svg_objective_best(void **state)
{
	(void)state;
	struct rep_obj_pt p[] = {
		{ 0, 1000, NAN, NAN, 'b', 1000 }, { 1, 1061, 1040, 1083, 'k', 1001 },
		{ 2, 1080, 1070, 1090, 'r', 1095 }, /* the host faster: both arms above 1061 */
		{ 3, 1050, 1040, 1060, 'i', 1060 },
	};
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_objective(&sb, p, 4, "serve.tok_s", "tok/s");
	const char *best = strstr(sb.buf, "class=\"best\"");
	assert_non_null(best);
	best = strstr(best, "d=\"") + 3;
	double x, y;
	point_at(sb.buf, "reverted", &x, &y);
	double ly = line_y_at(best, x);
	assert_false(isnan(ly));
	assert_true(y > ly); /* SVG y grows downwards: the point is below the line */
	point_at(sb.buf, "kept", &x, &y);
	assert_true(y < line_y_at(best, x)); /* the kept one gained on its own best */
	/* distinct markers: reverted a circle, invalid a square, each in the legend */
	assert_non_null(strstr(sb.buf, "<circle class=\"pt reverted\""));
	assert_non_null(strstr(sb.buf, "<rect class=\"pt invalid\""));
	assert_non_null(strstr(sb.buf, "<rect class=\"lg\""));
	assert_non_null(strstr(sb.buf, ">invalid</text>"));
	assert_non_null(strstr(sb.buf, ">reverted</text>"));
	assert_non_null(strstr(sb.buf, ">best so far</text>"));
	/* six legend entries, three to a row, 200 apart and 28 down: no two share
	 * a spot at a phone's text size (tests/lib/chromium.sh measures it) */
	assert_int_equal(count(sb.buf, "class=\"legend\""), 6);
	assert_non_null(strstr(sb.buf, "<text x=\"308.0\" y=\"48.0\""));
	assert_non_null(strstr(sb.buf, "<text x=\"108.0\" y=\"76.0\""));
	rt_sb_release(&sb);
}

static void test_svg_gate(void **state)
{
	(void)state;
	struct rep_gate_pt g[] = { { 0, 0.972, 0.963, 0.98, true }, { 2, 0.941, 0.932, 0.949, false },
				   { 4, 0.971, NAN, NAN, true } };
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_gate(&sb, g, 3, 0.965);
	assert_int_equal(svg_points(sb.buf, "chart-gate"), 3);
	assert_int_equal(count(sb.buf, "class=\"pt fail\""), 1);
	assert_int_equal(count(sb.buf, "class=\"threshold\""), 1);
	assert_non_null(strstr(sb.buf, "min 96.5%"));
	rt_sb_reset(&sb);
	rep_svg_gate(&sb, NULL, 0, NAN);
	assert_int_equal(svg_points(sb.buf, "chart-gate"), 0);
	assert_non_null(strstr(sb.buf, "no gate runs recorded"));
	/* 10,000 gate runs: every k-th drawn, about 1500 */
	size_t n = 10000;
	struct rep_gate_pt *m = xcalloc(n, sizeof(*m));
	for (size_t i = 0; i < n; i++)
		m[i] = (struct rep_gate_pt){ (int)i * 10, 0.97, 0.96, 0.98, i % 3 != 0 };
	rt_sb_reset(&sb);
	rep_svg_gate(&sb, m, n, 0.965);
	size_t pts = svg_points(sb.buf, "chart-gate");
	assert_true(pts >= 1000 && pts <= 1600);
	assert_non_null(strstr(sb.buf, "Showing every 7-th run"));
	free(m);
	rt_sb_release(&sb);
}

static void test_svg_waterfall(void **state)
{
	(void)state;
	struct rep_gain g[] = { { "graphs-256", 1, 0.061, 1 }, { "<b>x</b>", 4, 0.032, 1 },
				{ "neg", 5, -0.01, 1 } };
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_waterfall(&sb, g, 3);
	assert_int_equal(svg_points(sb.buf, "chart-waterfall"), 3);
	assert_int_equal(count(sb.buf, "class=\"bar-total\""), 2);
	assert_null(strstr(sb.buf, "<b>"));
	assert_non_null(strstr(sb.buf, "&lt;b&gt;x&lt;/b&gt;"));
	/* compounded: 1.061 * 1.032 * 0.99 = 1.0840 */
	assert_non_null(strstr(sb.buf, "108.4%"));
	/* the axis starts at 0% (issue 23: it started near 88%) */
	assert_non_null(strstr(sb.buf, "class=\"tick\">0%</text>"));
	/* 1000 kept changes of +0.1%: 30 bars of 34 (the last of 14), still compounded */
	struct rep_gain *m = xcalloc(1000, sizeof(*m));
	for (int i = 0; i < 1000; i++)
		m[i] = (struct rep_gain){ "v", i + 1, 0.001, 1 };
	rt_sb_reset(&sb);
	rep_svg_waterfall(&sb, m, 1000);
	assert_int_equal(svg_points(sb.buf, "chart-waterfall"), 30);
	assert_non_null(strstr(sb.buf, "seq 1–34 (34)"));
	assert_non_null(strstr(sb.buf, "each of the 30 groups of kept changes"));
	assert_non_null(strstr(sb.buf, "271.7%")); /* 1.001^1000 */
	free(m);
	rt_sb_release(&sb);
}

static void test_svg_latency(void **state)
{
	(void)state;
	double a[300], b[40];
	for (int i = 0; i < 300; i++)
		a[i] = 0.3 + i * 0.001;
	for (int i = 0; i < 40; i++)
		b[i] = 0.25 + i * 0.01;
	struct rep_dist tt[2] = { { "baseline", a, 300 }, { "final", b, 40 } };
	struct rep_dist ee[2] = { { "baseline", b, 40 }, { "final", NULL, 0 } };
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_latency(&sb, tt, 2, ee, 2);
	/* 300 samples are drawn as 200 quantile points */
	assert_int_equal(svg_points(sb.buf, "chart-latency"), 200 + 40 + 40);
	assert_non_null(strstr(sb.buf, "ttft (s)"));
	assert_non_null(strstr(sb.buf, "e2el (s)"));
	rt_sb_reset(&sb);
	struct rep_dist none[2] = { { "baseline", NULL, 0 }, { "final", NULL, 0 } };
	rep_svg_latency(&sb, none, 2, none, 2);
	assert_int_equal(svg_points(sb.buf, "chart-latency"), 0);
	assert_non_null(strstr(sb.buf, "no per-request records"));
	rt_sb_release(&sb);
}

static void test_svg_samples(void **state)
{
	(void)state;
	/* A campaign without per-request records: the objective's measurements. */
	double b[] = { 2.87, 2.89, 2.92 }, f[] = { 5.10, 5.17, 5.47, 5.50 };
	struct rep_dist d[2] = { { "baseline", b, 3 }, { "final", f, 4 } };
	struct rt_sb sb = RT_SB_INIT;
	rep_svg_samples(&sb, "gemm_512.gflops (GFLOP/s)", d, 2);
	assert_int_equal(svg_points(sb.buf, "chart-latency"), 3 + 4);
	assert_non_null(strstr(sb.buf, "gemm_512.gflops (GFLOP/s)"));
	assert_non_null(strstr(sb.buf, "share of measurements (%)"));
	assert_null(strstr(sb.buf, "ttft (s)"));
	rt_sb_release(&sb);
}

/* ---- progress ---- */

static double fake_t;
static double fake_now(void)
{
	return fake_t;
}

/* A progress printer writing to memory, on the fake clock from t. */
struct pcap {
	char *buf;              /* what it printed, once closed */
	size_t len;
	FILE *m;                /* the memory stream */
	struct rep_progress p;  /* the printer */
};

static void pcap_open(struct pcap *c, bool tty, int total, double t, int64_t campaign_id)
{
	c->buf = NULL;
	c->len = 0;
	c->m = open_memstream(&c->buf, &c->len);
	fake_t = t;
	rep_progress_init(&c->p, c->m, tty, false, total);
	c->p.now = fake_now;
	c->p.t_start = c->p.t_iter = c->p.t_phase = c->p.t_line = t;
	c->p.campaign_id = campaign_id;
	c->p.width = 200;
}

/* Release the printer and return what it printed (the caller frees it). */
static char *pcap_close(struct pcap *c)
{
	rep_progress_release(&c->p);
	fclose(c->m);
	return c->buf;
}

static void test_progress(void **state)
{
	(void)state;
	struct pcap c;
	pcap_open(&c, true, 4, 100, 3);
	rep_progress_phase(&c.p, 1, "graphs-256", "bench");
	fake_t = 160;
	rep_progress_done(&c.p, 1, DB_ITER_KEPT, "+6.1% [+4.0, +8.3]");
	rep_progress_phase(&c.p, 2, "asm-gemm", "gate");
	fake_t = 190;
	rep_progress_phase(&c.p, 2, "asm-gemm", "decide");
	rep_progress_finish(&c.p);
	char *buf = pcap_close(&c);
	/* the live line is redrawn in place, the finished iteration is a plain
	 * line; both name the iteration as CAMPAIGN:SEQ, seq 1 being the 2nd of 4 */
	assert_non_null(strstr(buf, "[3:1 2/4] graphs-256: bench"));
	assert_non_null(strstr(buf, "\r\033[K[3:1 2/4] ✓ graphs-256 kept: +6.1% [+4.0, +8.3] (1m00s)\n"));
	/* ETA: mean 60 s per iteration, seq 2 and 3 left, 30 s into seq 2 -> 1m30s */
	assert_non_null(strstr(buf, "[3:2 3/4] asm-gemm: decide  30.00s  (total 1m30s  eta 1m30s)"));
	assert_true(c.len > 2 && strcmp(buf + c.len - 4, "\r\033[K") == 0);
	free(buf);

	pcap_open(&c, false, 0, 0, 0);
	rep_progress_phase(&c.p, 1, "a\033b", "build");
	fake_t = 5;
	rep_progress_done(&c.p, 1, DB_ITER_FAILED, "build failed");
	rep_progress_finish(&c.p);
	buf = pcap_close(&c);
	assert_string_equal(buf, "[1] a?b: build (at 0us)\n[1] ! a?b failed: build failed (5.00s)\n");
	assert_null(strchr(buf, '\r'));
	free(buf);

	pcap_open(&c, true, 3, 0, 1);
	c.p.quiet = true;
	rep_progress_phase(&c.p, 1, "x", "apply");
	rep_progress_done(&c.p, 1, DB_ITER_KEPT, "");
	rep_progress_msg(&c.p, "warning");
	rep_progress_finish(&c.p);
	buf = pcap_close(&c);
	assert_int_equal(c.len, 0);
	free(buf);
}

/* The live line fits the terminal, and says which arm runs and its sample. */
static void test_progress_width_arm(void **state)
{
	(void)state;
	struct pcap c;
	pcap_open(&c, true, 7, 0, 1);
	rep_progress_phase(&c.p, 3, "prefill-le512-best", "bench");
	rep_progress_sample(&c.p, 1, 2);
	char *buf = pcap_close(&c);
	assert_non_null(strstr(buf, "[1:3 4/7] prefill-le512-best: bench, candidate sample 2  0us"));
	free(buf);

	pcap_open(&c, true, 7, 0, 1);
	c.p.width = 40;
	rep_progress_phase(&c.p, 3, "a-very-long-variant-name-that-goes-on-and-on", "bench");
	rep_progress_sample(&c.p, 0, 3);
	buf = pcap_close(&c);
	/* every drawn line: at most 39 columns, the cut one ending in … */
	char *last = strrchr(buf, '\r');
	assert_non_null(last);
	last += 4; /* "\r\033[K" */
	assert_int_equal(rep_width(last), 39);
	assert_non_null(strstr(last, "…"));
	for (char *l = strstr(buf, "\033[K"); l; l = strstr(l + 1, "\033[K")) {
		char *end = strchr(l + 3, '\r');
		char *line = end ? xstrndup(l + 3, (size_t)(end - l - 3)) : xstrdup(l + 3);
		assert_true(rep_width(line) <= 39);
		free(line);
	}
	free(buf);
}

/* The baseline's line says "baseline" once, not "baseline baseline: baseline:". */
static void test_progress_baseline(void **state)
{
	(void)state;
	struct pcap c;
	pcap_open(&c, false, 7, 0, 1);
	rep_progress_phase(&c.p, 0, "baseline", "bench");
	fake_t = 9.28;
	rep_progress_done(&c.p, 0, DB_ITER_BASELINE,
			  "baseline: decode.output_throughput median 993.661 over 3 runs");
	rep_progress_phase(&c.p, 1, "baseline", "bench");
	rep_progress_done(&c.p, 1, DB_ITER_FAILED, "baseline failed: engine exited with status 1 "
			  "before it was ready; its log:\n    fatal: no GPU found");
	char *buf = pcap_close(&c);
	assert_non_null(strstr(buf, "[1:0 1/7] ● baseline: decode.output_throughput median 993.661 "
				    "over 3 runs (9.28s)\n"));
	assert_null(strstr(buf, "baseline baseline"));
	assert_non_null(strstr(buf, "[1:1 2/7] ! baseline failed (0us): engine exited with status 1 "
				    "before it was ready; its log:\n    fatal: no GPU found\n"));
	free(buf);
}

/* Without a tty, long work still prints a plain line every tick_s. */
static void test_progress_tick(void **state)
{
	(void)state;
	struct pcap c;
	pcap_open(&c, false, 3, 0, 2);
	c.p.now = rt_now_s; /* the ticker waits in real time */
	c.p.t_start = c.p.t_iter = c.p.t_phase = c.p.t_line = rt_now_s();
	c.p.tick_s = 0.05;
	rep_progress_phase(&c.p, 1, "graphs-16", "bench");
	rep_progress_sample(&c.p, 1, 4);
	rt_sleep_ns(300000000);
	char *buf = pcap_close(&c);
	assert_non_null(strstr(buf, "[2:1 2/3] graphs-16: bench (at "));
	char *still = strstr(buf, "[2:1 2/3] graphs-16: bench, candidate sample 4 (at ");
	assert_non_null(still);
	assert_non_null(strstr(still, "in this phase)\n"));
	free(buf);

	/* a tty gets the live line instead, no ticker */
	pcap_open(&c, true, 3, 0, 2);
	c.p.tick_s = 0.01;
	rep_progress_phase(&c.p, 1, "graphs-16", "bench");
	assert_null(c.p.ticker);
	free(pcap_close(&c));
}

/* ---- views over the fixture ---- */

static void test_log(void **state)
{
	struct fx *f = *state;
	int rc;
	struct rep_log_opts o = { .limit = 50 };
	char *out = capture_log(f->db, &o, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(count(out, "\n"), 2 + 11);
	assert_non_null(strstr(out, "      1:1      2 ✓  graphs-256"));
	assert_non_null(strstr(out, "iteration     id"));
	assert_non_null(strstr(out, "+6.1% [+4.0, +8.3]"));
	assert_non_null(strstr(out, "gsm8k 97.3%"));
	assert_non_null(strstr(out, "⊘  max-num-seqs-512"));
	assert_non_null(strstr(out, "invalid, was kept"));
	assert_non_null(strstr(out, "corrected by 1:8"));
	assert_null(strstr(out, "\033["));
	free(out);
	/* the newest page, oldest first */
	o.limit = 3;
	out = capture_log(f->db, &o, &rc);
	assert_non_null(strstr(out, "showing 3"));
	char *a = strstr(out, "kv-cache-fp8"), *b = strstr(out, "sched-delay-2ms");
	assert_true(a && b && a < b && strstr(out, "attn-d512-tile-key") < a);
	assert_null(strstr(out, "graphs-256"));
	free(out);
	/* --state invalid matches the invalidation note */
	o = (struct rep_log_opts){ .state = "invalid" };
	out = capture_log(f->db, &o, &rc);
	assert_non_null(strstr(out, "max-num-seqs-512"));
	assert_null(strstr(out, "rerun"));
	free(out);
	o = (struct rep_log_opts){ .state = "reverted", .since_ms = 1764460800000 + 3600000 * 2 };
	out = capture_log(f->db, &o, &rc);
	assert_non_null(strstr(out, "max-num-seqs-512-rerun"));
	assert_non_null(strstr(out, "sched-delay-2ms"));
	assert_null(strstr(out, "attn-d512-tile "));
	free(out);
	/* colours only when asked */
	o = (struct rep_log_opts){ .color = true };
	out = capture_log(f->db, &o, &rc);
	assert_non_null(strstr(out, "\033[32m✓"));
	assert_non_null(strstr(out, "\033[9m"));
	free(out);
	o = (struct rep_log_opts){ .json = true, .limit = 50 };
	out = capture_log(f->db, &o, &rc);
	json_t *doc, *its = json_array_of(out, "iterations", 11, &doc);
	json_t *six = json_array_get(its, 6);
	assert_true(json_is_true(json_object_get(six, "invalidated")));
	assert_string_equal(json_string_value(json_object_get(six, "state")), "kept");
	assert_string_equal(json_string_value(json_object_get(six, "ref")), "1:6");
	json_decref(doc);
	free(out);
	o = (struct rep_log_opts){ .campaign_id = 42 };
	out = capture_log(f->db, &o, &rc);
	assert_int_equal(rc, RT_ENOENT);
	free(out);
}

static void test_show(void **state)
{
	struct fx *f = *state;
	int rc;
	char *out = capture_show(f->db, 4, false, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "iteration 1:3 (id 4, campaign "));
	assert_non_null(strstr(out, "corrected by 1:8 (id 9)"));
	assert_non_null(strstr(out, "applied on 1:"));
	assert_non_null(strstr(out, "serve.tok_s              cand   5"));
	assert_non_null(strstr(out, "recompiles"));
	free(out);
	out = capture_show(f->db, 9, false, &rc);
	assert_non_null(strstr(out, "corrects 1:3 (id 4)"));
	assert_non_null(strstr(out, "engine-8.log"));
	free(out);
	out = capture_show(f->db, 3, false, &rc);
	assert_non_null(strstr(out, "FAIL (min 96.50%)"));
	assert_non_null(strstr(out, "q1     right -> wrong"));
	assert_non_null(strstr(out, "q11    wrong -> right"));
	free(out);
	out = capture_show(f->db, 7, false, &rc);
	assert_non_null(strstr(out, "(INVALIDATED)"));
	assert_non_null(strstr(out, "(+1 invalid)"));
	assert_non_null(strstr(out, "engine.pid"));
	free(out);
	out = capture_show(f->db, 3, true, &rc);
	json_error_t je;
	json_t *doc = json_loads(out, 0, &je);
	assert_non_null(doc);
	json_t *flips = json_object_get(json_object_get(doc, "gate"), "flips");
	assert_int_equal(json_array_size(flips), 4);
	assert_int_equal(json_array_size(json_object_get(doc, "measurements")), 6);
	assert_int_equal(json_array_size(json_object_get(doc, "log_events")), 4);
	assert_true(json_object_get(json_object_get(doc, "env"), "host") != NULL);
	json_decref(doc);
	free(out);
	out = capture_show(f->db, 999, false, &rc);
	assert_int_equal(rc, RT_ENOENT);
	free(out);
}

/* `ratchet regressions` of the fixture into a string (caller frees). */
__attribute__((noinline)) static char *capture_regr(struct db *db, bool all, bool json) /* as capture */
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct rep_regr_opts o = { .all = all, .json = json };
	assert_int_equal(rep_regressions(db, m, &o, NULL), 0);
	fclose(m);
	return buf;
}

/* Regressions that mean something: by default those of kept changes (what
 * shipped), the client's self-metrics apart, --all adds the others marked
 * with their state; every change in the metric's own sign with its
 * direction in words. */
static void test_regressions(void **state)
{
	struct fx *f = *state;
	/* A kept change also slowed the client's own send lag: a self-metric. */
	assert_int_equal(sqlite3_exec(db_sqlite(f->db),
				      "INSERT INTO regressions (iteration_id, benchmark, metric, unit, "
				      "before, after, delta, ci_lo, ci_hi, kept, created_at) VALUES "
				      "(5, 'serve', 'send_lag_p99', 's', 0.001, 0.002, -1.0, -1.2, -0.8, 1, 0)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	char *buf = capture_regr(f->db, false, false);
	assert_non_null(strstr(buf, "1 regression of kept changes (1 more of changes not kept: --all)"));
	/* ttft_p95 went up 9%: printed as the metric's change, worse */
	assert_non_null(strstr(buf, "0.8071 -> 0.8797 s  +9.0% [+6.8, +11.2] (worse)  by 1:4 (id 5, prefill-chunk-8k)\n"));
	assert_null(strstr(buf, "e2el_p50")); /* reverted: only with --all */
	char *self = strstr(buf, "1 of the client's self-metrics");
	assert_non_null(self);
	assert_non_null(strstr(self, "serve.send_lag_p99"));
	assert_null(strstr(buf, "-9.0%"));
	free(buf);
	buf = capture_regr(f->db, true, false);
	assert_non_null(strstr(buf, "1 regression of kept changes\n"));
	assert_non_null(strstr(buf, "1 of changes not kept"));
	assert_non_null(strstr(buf, "2.24 -> 2.375 s  +6.0% [+3.9, +8.1] (worse)  by 1:10 (id 11, sched-delay-2ms)  reverted"));
	/* kept ones first, self-metrics next, then the rest */
	assert_true(strstr(buf, "ttft_p95") < strstr(buf, "send_lag_p99"));
	assert_true(strstr(buf, "send_lag_p99") < strstr(buf, "e2el_p50"));
	free(buf);
	buf = capture_regr(f->db, false, true);
	json_t *doc, *arr = json_array_of(buf, "regressions", 2, &doc);
	json_t *r0 = json_array_get(arr, 0);
	NEAR(json_real_value(json_object_get(r0, "change")), 0.8797 / 0.8071 - 1, 1e-12);
	assert_string_equal(json_string_value(json_object_get(r0, "better")), "lower");
	assert_true(json_is_false(json_object_get(r0, "self_metric")));
	assert_true(json_is_true(json_object_get(json_array_get(arr, 1), "self_metric")));
	json_decref(doc);
	free(buf);
	buf = capture_regr(f->db, true, true);
	json_array_of(buf, "regressions", 3, &doc);
	json_decref(doc);
	free(buf);
}

/* One sign convention: an objective's stored gain (+ is better) prints as
 * the metric's change with its direction, for either goal. */
static void test_sign(void **state)
{
	(void)state;
	struct db_iteration tput = { .obj_best = 1000, .obj_cand = 1061, .obj_delta = 0.061,
				     .obj_ci_lo = 0.04, .obj_ci_hi = 0.083 };
	struct db_iteration lat = { .obj_best = 2.0, .obj_cand = 1.404, .obj_delta = 0.298,
				    .obj_ci_lo = 0.25, .obj_ci_hi = 0.34 };
	double c, lo, hi;
	int better;
	assert_true(rep_obj_change(&tput, &c, &lo, &hi, &better));
	assert_int_equal(better, 1);
	NEAR(c, 0.061, 1e-15);
	assert_true(rep_obj_change(&lat, &c, &lo, &hi, &better));
	assert_int_equal(better, -1);
	NEAR(c, -0.298, 1e-15);
	NEAR(lo, -0.34, 1e-15);
	NEAR(hi, -0.25, 1e-15);
	struct rt_sb sb = RT_SB_INIT;
	rep_fmt_change(&sb, c, lo, hi, better);
	assert_string_equal(sb.buf, "-29.8% [-34.0, -25.0] (better)");
	rt_sb_release(&sb);
	struct db_iteration none = { .obj_best = NAN, .obj_cand = 1000, .obj_delta = NAN };
	assert_false(rep_obj_change(&none, &c, &lo, &hi, &better));
	assert_true(isnan(c) && better == 0);
	/* a regression of a higher-is-better metric: stored and printed alike */
	struct db_q_regr r = { .before = 100, .after = 90, .delta = -0.1, .ci_lo = -0.12, .ci_hi = -0.08 };
	rep_regr_change(&r, &c, &lo, &hi, &better);
	assert_int_equal(better, 1);
	NEAR(c, -0.1, 1e-12);
	NEAR(lo, -0.12, 1e-15);
	/* ... of a lower-is-better one: the stored sign is flipped back */
	r = (struct db_q_regr){ .before = 1, .after = 2.65, .delta = -1.65, .ci_lo = -2.1, .ci_hi = -1.2 };
	rep_regr_change(&r, &c, &lo, &hi, &better);
	assert_int_equal(better, -1);
	NEAR(c, 1.65, 1e-12);
	NEAR(lo, 1.2, 1e-15);
	NEAR(hi, 2.1, 1e-15);
	assert_true(rep_self_metric("send_lag") && rep_self_metric("send_lag_p99") &&
		    rep_self_metric("rsd") && rep_self_metric("samples"));
	assert_false(rep_self_metric("ttft_p95") || rep_self_metric("gflops") ||
		     rep_self_metric("rsd_total") || rep_self_metric(NULL));
}

/* One number per gain: the summary table's objective change, the kept
 * changes compounded, is the waterfall's final bar, and each kept change
 * shows its own gain and no other. */
static void test_single_number(void **state)
{
	struct fx *f = *state;
	struct rt_sb out = RT_SB_INIT;
	assert_int_equal(rep_report(f->db, 0, REP_MD, &out, NULL), 0);
	/* kept and valid: +6.1%, +3.2%, +4.8% -> 1.061 * 1.032 * 1.048 = +14.8% */
	assert_non_null(strstr(out.buf, "| `serve.tok_s` (tok/s) | 995.8 | 1154.5 | +14.8% (better), the kept "
					"changes compounded |"));
	assert_null(strstr(out.buf, "+15.9%")); /* final / baseline medians: not a gain */
	assert_int_equal(count(out.buf, "+6.1% \\[+4.0, +8.3\\] (better)"), 3); /* kept list, entry, lever */
	rt_sb_reset(&out);
	assert_int_equal(rep_report(f->db, 0, REP_HTML, &out, NULL), 0);
	char *wf = svg_part(out.buf, "chart-waterfall");
	assert_non_null(wf);
	assert_non_null(strstr(wf, "the final configuration (+14.8%)"));
	assert_non_null(strstr(wf, "114.8%"));
	free(wf);
	int better;
	struct db_iteration *its = NULL;
	size_t n = 0;
	struct db_q_iter_filter flt = { .campaign_id = 1 };
	assert_int_equal(db_q_iters(f->db, &flt, &its, &n, NULL), 0);
	NEAR(rep_kept_compound(its, n, &better), 1.061 * 1.032 * 1.048 - 1, 1e-9);
	assert_int_equal(better, 1);
	db_iterations_free(its, n);
	rt_sb_release(&out);
}

static void test_html(void **state)
{
	struct fx *f = *state;
	struct rt_sb out = RT_SB_INIT;
	assert_int_equal(rep_report(f->db, 0, REP_HTML, &out, NULL), 0);
	/* 9 iterations have an objective (not the failed and interrupted ones) */
	assert_int_equal(svg_points(out.buf, "chart-objective"), 9);
	assert_int_equal(svg_points(out.buf, "chart-gate"), 6);
	/* kept and valid: seq 1, 4, 8 */
	assert_int_equal(svg_points(out.buf, "chart-waterfall"), 3);
	assert_int_equal(svg_points(out.buf, "chart-latency"), 4 * 40);
	assert_null(strstr(out.buf, "<script"));
	assert_null(strstr(out.buf, "src=\"http"));
	assert_null(strstr(out.buf, "href=\"http"));
	assert_non_null(strstr(out.buf, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(out.buf, "<del>"));
	assert_non_null(strstr(out.buf, "@media print"));
	/* the regressions of changes not kept are folded, those of kept ones not */
	const char *fold = strstr(out.buf, "<details id=\"regressions-not-kept\"");
	assert_non_null(fold);
	assert_non_null(strstr(fold, "1 regression of changes not kept (not in the final configuration)"));
	const char *open = strstr(out.buf, "Of kept changes (these shipped");
	assert_true(open && open < fold);
	assert_null(strstr(open, "<details id=\"regressions-kept"));
	rt_sb_release(&out);
}

/* Database text is escaped for the terminal everywhere in `show`, the words
 * the campaign writes (kind, phase, decision, gate extraction, artifact kind
 * and hash) included: a shared or hand-edited database must not drive the
 * terminal. */
static void test_show_escapes(void **state)
{
	struct fx *f = *state;
	assert_int_equal(sqlite3_exec(db_sqlite(f->db),
		"UPDATE iterations SET kind = 'table' || char(27) || '[2J', "
		"  phase = 'bench' || char(27) || ']0;x' || char(7), "
		"  decision = 'keep' || char(27) || '[31m' WHERE id = 2;"
		"UPDATE gate_runs SET extract = 'strict' || char(27) || '[8m' "
		"  WHERE id = (SELECT gate_run_id FROM iterations WHERE id = 2);"
		"UPDATE artifacts SET kind = 'engine-log' || char(27) || '[5m', "
		"  sha256 = 'ffd8' || char(27) || '[0m' WHERE iteration_id = 2;",
		NULL, NULL, NULL), SQLITE_OK);
	int rc;
	char *out = capture_show(f->db, 2, false, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "graphs-256 (table?[2J)"));
	assert_non_null(strstr(out, "decision   keep?[31m"));
	assert_null(strchr(out, '\033'));
	assert_null(strchr(out, '\007'));
	free(out);
}

/* The objective chart's unit belongs to the metric the objective names: a
 * benchmark whose name is only a prefix of the objective does not lend its
 * unit, and an objective without a dot reads nothing past its end. */
static void test_html_objective_unit(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *objective; /* of the baseline */
		const char *label;     /* the chart's y axis */
	} cases[] = {
		{ "serve.tok_s", ">serve.tok_s (tok/s)<" },
		{ "serveXtok_s", ">serveXtok_s<" },
		{ "serve", ">serve<" },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		char *sql = xasprintf("UPDATE iterations SET objective = '%s' WHERE seq = 0",
				      cases[i].objective);
		assert_int_equal(sqlite3_exec(db_sqlite(f->db), sql, NULL, NULL, NULL), SQLITE_OK);
		free(sql);
		struct rt_sb out = RT_SB_INIT;
		assert_int_equal(rep_report(f->db, 0, REP_HTML, &out, NULL), 0);
		char *chart = svg_part(out.buf, "chart-objective");
		assert_non_null(chart);
		if (!strstr(chart, cases[i].label))
			fail_msg("objective %s: no axis label %s", cases[i].objective, cases[i].label);
		free(chart);
		rt_sb_release(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glyphs),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_summarise),
		cmocka_unit_test(test_since),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_svg_objective),
		cmocka_unit_test(test_svg_objective_best),
		cmocka_unit_test(test_svg_gate),
		cmocka_unit_test(test_svg_waterfall),
		cmocka_unit_test(test_svg_latency),
		cmocka_unit_test(test_svg_samples),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_progress_width_arm),
		cmocka_unit_test(test_progress_baseline),
		cmocka_unit_test(test_progress_tick),
		cmocka_unit_test_setup_teardown(test_log, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_show, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_regressions, fx_setup, fx_teardown),
		cmocka_unit_test(test_sign),
		cmocka_unit_test_setup_teardown(test_single_number, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_html, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_show_escapes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_html_objective_unit, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
