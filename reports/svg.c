/*
 * SVG charts for the HTML journal, written as text: no library, no script.
 * Every chart is one <svg> with a stable id, a viewBox (so it scales to any
 * width), a <title> and <desc> for screen readers, labelled axes with units,
 * a legend, and one element with class "pt" per data point so tests (and
 * curious readers of the DOM) can count what was drawn. Colours are given as
 * attributes so a chart also reads right on its own.
 */
#include "reports/rep_int.h"

#include <float.h>
#include <string.h>

/* The layout leaves room for the text at a phone's size: report.css draws
 * it at 20 units under 600 px, so that a chart scaled to 390 px keeps its
 * text at 10 px or more; the legend has rows of its own and the y axis's
 * label sits above the plot, so nothing collides at that size. */
#define W 720.0  /* viewBox width */
#define H 368.0  /* viewBox height */
#define ML 92.0  /* left margin: y tick labels */
#define MR 20.0
#define MT 88.0  /* top: title, one legend row, the y axis's label */
#define MB 62.0  /* bottom: x ticks and axis label */
#define X_TICK_GAP 96.0 /* the least room a numeric x tick label gets */

#define C_KEPT "#2e7d32"
#define C_REV "#757575"
#define C_GATED "#c62828"
#define C_BASE "#1565c0"
#define C_OTHER "#ef6c00"
#define C_GRID "#e0e0e0"
#define C_AXIS "#424242"

double rep_nice_step(double lo, double hi, int max_ticks, double *first)
{
	if (!(hi > lo) || max_ticks < 2) {
		*first = lo;
		return 1;
	}
	double raw = (hi - lo) / (max_ticks - 1);
	double p = pow(10, floor(log10(raw)));
	double step = p;
	static const double mult[] = { 1, 2, 5, 10 };
	for (size_t i = 0; i < RT_ARRAY_SIZE(mult); i++) {
		step = mult[i] * p;
		if ((floor(hi / step) - ceil(lo / step)) + 1 <= max_ticks)
			break;
	}
	*first = ceil(lo / step - 1e-9) * step;
	return step;
}

double rep_scale_map(const struct rep_scale *s, double v)
{
	if (s->d1 == s->d0)
		return (s->r0 + s->r1) / 2;
	return s->r0 + (v - s->d0) / (s->d1 - s->d0) * (s->r1 - s->r0);
}

/* One chart frame being written. */
struct chart {
	struct rt_sb *sb;   /* output */
	struct rep_scale x; /* data -> px */
	struct rep_scale y;
	double x0, x1;      /* plot area in px */
	double y0, y1;      /* y0 bottom, y1 top */
};

static void text(struct rt_sb *sb, double x, double y, const char *anchor, const char *cls,
		 const char *s)
{
	rt_sb_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
	rep_html_escape(sb, s);
	rt_sb_adds(sb, "</text>");
}

static void begin(struct chart *c, struct rt_sb *sb, const char *id, const char *title,
		  const char *desc, double w, double h)
{
	c->sb = sb;
	rt_sb_addf(sb, "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		   "aria-labelledby=\"%s-t %s-d\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "font-family=\"system-ui, sans-serif\" font-size=\"12\">",
		   id, w, h, id, id);
	rt_sb_addf(sb, "<title id=\"%s-t\">", id);
	rep_html_escape(sb, title);
	rt_sb_addf(sb, "</title><desc id=\"%s-d\">", id);
	rep_html_escape(sb, desc);
	rt_sb_adds(sb, "</desc>");
	rt_sb_addf(sb, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>", w, h);
	rt_sb_addf(sb, "<text x=\"%.0f\" y=\"20\" class=\"ctitle\" font-weight=\"600\" font-size=\"14\">", ML);
	rep_html_escape(sb, title);
	rt_sb_adds(sb, "</text>");
}

/* Axes, grid, ticks and labels for the plot area [x0, x1] x [y1, y0]. */
static void axes(struct chart *c, double x0, double x1, double y0, double y1, double dx0,
		 double dx1, double dy0, double dy1, bool x_int, const char *ypct_or_null,
		 const char *xlabel, const char *ylabel)
{
	struct rt_sb *sb = c->sb;
	c->x0 = x0, c->x1 = x1, c->y0 = y0, c->y1 = y1;
	c->x = (struct rep_scale){ dx0, dx1, x0, x1 };
	c->y = (struct rep_scale){ dy0, dy1, y0, y1 };
	double first, step = rep_nice_step(dy0, dy1, 6, &first);
	for (double v = first; v <= dy1 + step * 1e-6; v += step) {
		double py = rep_scale_map(&c->y, v);
		rt_sb_addf(sb, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>",
			   x0, x1, py, py, C_GRID);
		char lab[32];
		if (ypct_or_null)
			snprintf(lab, sizeof(lab), "%.*f%%", step * 100 < 1 ? 1 : 0,
				 fabs(v) < step * 1e-6 ? 0.0 : v * 100);
		else {
			struct rt_sb t = RT_SB_INIT;
			rep_fmt_num(&t, fabs(v) < step * 1e-6 ? 0 : v);
			snprintf(lab, sizeof(lab), "%s", t.buf);
			rt_sb_release(&t);
		}
		text(sb, x0 - 6, py + 4, "end", "tick", lab);
	}
	if (x_int) {
		double xs = rep_nice_step(ceil(dx0), floor(dx1), (int)((x1 - x0) / 56) + 1, &first);
		if (xs < 1)
			xs = 1, first = ceil(dx0);
		for (double v = first; v <= dx1; v += xs) {
			double px = rep_scale_map(&c->x, v);
			char lab[32];
			snprintf(lab, sizeof(lab), "%.0f", v + 0.0 == 0 ? 0.0 : v);
			rt_sb_addf(sb, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>",
				   px, px, y0, y0 + 4, C_AXIS);
			text(sb, px, y0 + 22, "middle", "tick", lab);
		}
	} else if (dx1 > dx0 && xlabel) { /* categorical axes (no label) draw their own */
		int most = (int)((x1 - x0) / X_TICK_GAP) + 1;
		step = rep_nice_step(dx0, dx1, most < 3 ? 3 : most, &first);
		for (double v = first; v <= dx1 + step * 1e-6; v += step) {
			double px = rep_scale_map(&c->x, v);
			struct rt_sb t = RT_SB_INIT;
			rep_fmt_num(&t, fabs(v) < step * 1e-6 ? 0 : v);
			rt_sb_addf(sb, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>",
				   px, px, y1, y0, C_GRID);
			text(sb, px, y0 + 22, "middle", "tick", t.buf);
			rt_sb_release(&t);
		}
	}
	rt_sb_addf(sb, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"%s\"/>", x0, y1, y0,
		   x1, C_AXIS);
	if (xlabel)
		text(sb, (x0 + x1) / 2, y0 + 50, "middle", "axis", xlabel);
	if (ylabel) /* above the plot, level: beside it, it met the tick labels */
		text(sb, x0 - 6, y1 - 12, "start", "axis", ylabel);
}

/* A marker: a circle, or a square when square (invalid points). */
static void marker(struct rt_sb *sb, const char *cls, double x, double y, double r, bool square,
		   const char *fill, const char *color)
{
	if (square)
		rt_sb_addf(sb, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"", cls, x - r, y - r, 2 * r, 2 * r,
			   fill, color);
	else
		rt_sb_addf(sb, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
			   "stroke=\"%s\" stroke-width=\"2\"", cls, x, y, r, fill, color);
}

/* Legend entries sit in rows under the title, LEGEND_COLS to a row, each
 * LEGEND_W wide: room for a label at the phone's larger text (report.css). */
#define LEGEND_COLS 3
#define LEGEND_W 200.0
#define LEGEND_ROW 28.0

/* The y of legend row r. */
static double legend_y(int r)
{
	return 44 + r * LEGEND_ROW;
}

/* Legend entry i of n: its marker (a dashed line when line) and label. */
static void legend_shape(struct rt_sb *sb, int i, const char *color, bool hollow, bool square,
			 bool line, const char *lab)
{
	double x = ML + 6 + (i % LEGEND_COLS) * LEGEND_W, y = legend_y(i / LEGEND_COLS);
	if (line)
		rt_sb_addf(sb, "<path class=\"lg\" d=\"M%.1f %.1fh18\" stroke=\"%s\" stroke-dasharray=\"5 3\" "
			   "stroke-width=\"1.5\"/>", x - 6, y, color);
	else {
		marker(sb, "lg", x, y, 5, square, hollow ? "#fff" : color, color);
		rt_sb_adds(sb, "/>");
	}
	text(sb, x + (line ? 18 : 10), y + 4, "start", "legend", lab);
}

static void legend(struct rt_sb *sb, double w, int i, int n, const char *color, bool hollow,
		   const char *lab)
{
	(void)w, (void)n;
	legend_shape(sb, i, color, hollow, false, false, lab);
}

static void end(struct rt_sb *sb)
{
	rt_sb_adds(sb, "</svg>\n");
}

static void empty_note(struct chart *c, const char *msg)
{
	text(c->sb, (c->x0 + c->x1) / 2, (c->y0 + c->y1) / 2, "middle", "empty", msg);
}

/* ---- objective ---- */

static const char *mark_color(char m)
{
	switch (m) {
	case 'b': return C_BASE;
	case 'k': return C_KEPT;
	case 'g': return C_GATED;
	case 'r': return C_REV;
	case 'i': return C_REV;
	default: return C_OTHER;
	}
}

static const char *mark_name(char m)
{
	switch (m) {
	case 'b': return "baseline";
	case 'k': return "kept";
	case 'g': return "gated";
	case 'r': return "reverted";
	case 'i': return "invalid";
	default: return "other";
	}
}

/* Keep every point up to `cap`; past it, every k-th plus every baseline and kept one. */
static bool keep_point(size_t i, size_t n, char mark, size_t cap)
{
	if (n <= cap || mark == 'k' || mark == 'b')
		return true;
	size_t k = (n + cap - 1) / cap;
	return i % k == 0;
}

/* A large campaign's points: one path per kind of mark, each point a round
 * dot ("M x y h0"), no CI bar and no tooltip, so that 20,000 kept points
 * stay a few hundred kilobytes. */
static void objective_dots(struct rt_sb *sb, const struct chart *c, const struct rep_obj_pt *p,
			   size_t n, size_t cap)
{
	static const char marks[] = { 'r', 'g', 'i', 'o', 'k', 'b' };
	for (size_t m = 0; m < RT_ARRAY_SIZE(marks); m++) {
		bool any = false;
		for (size_t i = 0; i < n; i++) {
			if (p[i].mark != marks[m] || !keep_point(i, n, p[i].mark, cap))
				continue;
			if (!any)
				rt_sb_addf(sb, "<path class=\"pts %s\" stroke=\"%s\" stroke-width=\"5\" "
					   "stroke-linecap=\"%s\" fill=\"none\" d=\"",
					   mark_name(marks[m]), mark_color(marks[m]),
					   marks[m] == 'i' ? "square" : "round");
			any = true;
			rt_sb_addf(sb, "M%.1f %.1fh0", rep_scale_map(&c->x, p[i].seq),
				   rep_scale_map(&c->y, p[i].value));
		}
		if (any)
			rt_sb_adds(sb, "\"/>");
	}
}

/* The best so far: at each point, the best configuration's median measured
 * in that iteration (the baseline's own value), a step half a seq either
 * side. A candidate is compared with the best of its own iteration, so a
 * reverted one that lost sits below the line even when the host was faster
 * then than when the best was kept. */
static void best_line(struct rt_sb *sb, const struct chart *c, const struct rep_obj_pt *p, size_t n,
		      size_t cap)
{
	rt_sb_adds(sb, "<path class=\"best\" fill=\"none\" stroke=\"" C_KEPT "\" "
		   "stroke-width=\"1.5\" stroke-dasharray=\"5 3\" d=\"");
	bool started = false;
	double last = NAN, end = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(p[i].best) || !keep_point(i, n, p[i].mark, cap))
			continue; /* a large campaign's line follows the points drawn */
		double xa = rep_scale_map(&c->x, p[i].seq - 0.5);
		double py = round(rep_scale_map(&c->y, p[i].best) * 10) / 10;
		end = rep_scale_map(&c->x, p[i].seq + 0.5);
		if (started && py == last)
			continue; /* the same level: the next step or the end extends it */
		rt_sb_addf(sb, started ? "H%.1fV%.1f" : "M%.1f %.1f", xa, py);
		started = true;
		last = py;
	}
	if (started)
		rt_sb_addf(sb, "H%.1f", end);
	rt_sb_adds(sb, "\"/>");
}

void rep_svg_objective(struct rt_sb *sb, const struct rep_obj_pt *p, size_t n, const char *metric,
		       const char *unit)
{
	const size_t cap = 1500;
	double lo = DBL_MAX, hi = -DBL_MAX;
	int maxseq = 0;
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		double a = isnan(p[i].lo) ? p[i].value : p[i].lo;
		double b = isnan(p[i].hi) ? p[i].value : p[i].hi;
		lo = fmin(lo, fmin(a, p[i].value));
		hi = fmax(hi, fmax(b, p[i].value));
		if (!isnan(p[i].best))
			lo = fmin(lo, p[i].best), hi = fmax(hi, p[i].best);
		maxseq = p[i].seq > maxseq ? p[i].seq : maxseq;
		shown += keep_point(i, n, p[i].mark, cap);
	}
	struct rt_sb desc = RT_SB_INIT, yl = RT_SB_INIT, title = RT_SB_INIT;
	rt_sb_addf(&title, "Objective per iteration: %s", metric ? metric : "?");
	rt_sb_addf(&desc, "Candidate median of %s for %zu iterations with 95%% CI bars; "
		   "markers by decision; the step line is the running best.", metric ? metric : "?", n);
	if (shown < n)
		rt_sb_addf(&desc, " Showing %zu of %zu points (every kept one).", shown, n);
	rt_sb_addf(&yl, "%s%s%s%s", metric ? metric : "objective", unit ? " (" : "", unit ? unit : "",
		   unit ? ")" : "");
	struct chart c;
	/* two legend rows: the chart is one row taller */
	const double h = H + LEGEND_ROW, top = MT + LEGEND_ROW;
	begin(&c, sb, "chart-objective", title.buf, desc.buf, W, h);
	if (!n) {
		axes(&c, ML, W - MR, h - MB, top, 0, 1, 0, 1, true, NULL, "iteration (seq)", yl.buf);
		empty_note(&c, "no measured iterations yet");
	} else {
		double pad = (hi - lo) * 0.08 + fabs(hi) * 1e-3;
		axes(&c, ML, W - MR, h - MB, top, -0.5, maxseq + 0.5, lo - pad, hi + pad, true, NULL,
		     "iteration (seq)", yl.buf);
		best_line(sb, &c, p, n, cap);
		if (n > cap) {
			objective_dots(sb, &c, p, n, cap);
		} else {
			for (size_t i = 0; i < n; i++) {
				if (!keep_point(i, n, p[i].mark, cap))
					continue;
				double px = rep_scale_map(&c.x, p[i].seq), py = rep_scale_map(&c.y, p[i].value);
				const char *col = mark_color(p[i].mark);
				if (!isnan(p[i].lo) && !isnan(p[i].hi))
					rt_sb_addf(sb, "<path class=\"ci\" d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" "
						   "stroke=\"%s\" fill=\"none\"/>", px, rep_scale_map(&c.y, p[i].lo),
						   rep_scale_map(&c.y, p[i].hi), px - 4,
						   rep_scale_map(&c.y, p[i].lo), px - 4,
						   rep_scale_map(&c.y, p[i].hi), col);
				bool hollow = p[i].mark == 'r' || p[i].mark == 'i';
				char cls[32];
				snprintf(cls, sizeof(cls), "pt %s", mark_name(p[i].mark));
				marker(sb, cls, px, py, n > 200 ? 2.5 : 5, p[i].mark == 'i', hollow ? "#fff" : col,
				       col);
				rt_sb_addf(sb, "><title>seq %d: ", p[i].seq);
				struct rt_sb t = RT_SB_INIT;
				rep_fmt_num(&t, p[i].value);
				rt_sb_addf(sb, "%s (%s)</title></%s>", t.buf, mark_name(p[i].mark),
					   p[i].mark == 'i' ? "rect" : "circle");
				rt_sb_release(&t);
			}
		}
	}
	static const char marks[] = { 'b', 'k', 'r', 'g', 'i' };
	for (int i = 0; i < 5; i++)
		legend_shape(sb, i, mark_color(marks[i]), marks[i] == 'r' || marks[i] == 'i',
			     marks[i] == 'i', false, mark_name(marks[i]));
	legend_shape(sb, 5, C_KEPT, false, false, true, "best so far");
	end(sb);
	rt_sb_release(&desc);
	rt_sb_release(&yl);
	rt_sb_release(&title);
}

/* ---- gate ---- */

/* Gate runs drawn at most (about): every k-th past it. */
#define GATE_CAP 1500
/* Waterfall bars at most: past it, runs of consecutive kept changes share a bar. */
#define WATERFALL_CAP 60

void rep_svg_gate(struct rt_sb *sb, const struct rep_gate_pt *p, size_t n, double threshold)
{
	double lo = isnan(threshold) ? 1 : threshold, hi = isnan(threshold) ? 0 : threshold;
	int maxseq = 0;
	for (size_t i = 0; i < n; i++) {
		lo = fmin(lo, isnan(p[i].lo) ? p[i].accuracy : p[i].lo);
		hi = fmax(hi, isnan(p[i].hi) ? p[i].accuracy : p[i].hi);
		maxseq = p[i].seq > maxseq ? p[i].seq : maxseq;
	}
	if (!(hi > lo))
		lo = fmax(0, lo - 0.01), hi = fmin(1, hi + 0.01);
	double pad = (hi - lo) * 0.1;
	struct rt_sb desc = RT_SB_INIT;
	rt_sb_addf(&desc, "GSM8K accuracy of %zu gate runs with Wilson intervals", n);
	if (!isnan(threshold))
		rt_sb_addf(&desc, "; the dashed line is the minimum accuracy %.1f%%", threshold * 100);
	if (n > GATE_CAP)
		rt_sb_addf(&desc, ". Showing every %zu-th run", (n + GATE_CAP - 1) / GATE_CAP);
	struct chart c;
	begin(&c, sb, "chart-gate", "Gate accuracy per iteration (GSM8K)", desc.buf, W, H);
	axes(&c, ML, W - MR, H - MB, MT, -0.5, maxseq + 0.5, fmax(0, lo - pad), fmin(1, hi + pad),
	     true, "pct", "iteration (seq)", "accuracy (%)");
	if (!isnan(threshold)) {
		double py = rep_scale_map(&c.y, threshold);
		rt_sb_addf(sb, "<line class=\"threshold\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
			   c.x0, c.x1, py, py, C_GATED);
		char lab[48];
		snprintf(lab, sizeof(lab), "min %.1f%%", threshold * 100);
		text(sb, c.x1 - 4, py + 15, "end", "legend", lab);
	}
	if (!n)
		empty_note(&c, "no gate runs recorded");
	for (size_t i = 0; i < n; i++) {
		if (!keep_point(i, n, '-', GATE_CAP))
			continue;
		double px = rep_scale_map(&c.x, p[i].seq), py = rep_scale_map(&c.y, p[i].accuracy);
		const char *col = p[i].passed ? C_KEPT : C_GATED;
		if (!isnan(p[i].lo) && !isnan(p[i].hi))
			rt_sb_addf(sb, "<path class=\"ci\" d=\"M%.1f %.1fV%.1f\" stroke=\"%s\"/>", px,
				   rep_scale_map(&c.y, p[i].lo), rep_scale_map(&c.y, p[i].hi), col);
		rt_sb_addf(sb, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">"
			   "<title>seq %d: %.2f%% (%s)</title></circle>", p[i].passed ? "pass" : "fail",
			   px, py, col, p[i].seq, p[i].accuracy * 100, p[i].passed ? "pass" : "fail");
	}
	legend(sb, W, 0, 2, C_KEPT, false, "passed");
	legend(sb, W, 1, 2, C_GATED, false, "failed");
	end(sb);
	rt_sb_release(&desc);
}

/* ---- waterfall ---- */

/* More kept changes than WATERFALL_CAP: each bar compounds k consecutive
 * ones, labelled by their seq range. */
static void waterfall(struct rt_sb *sb, const struct rep_gain *g, size_t n, size_t per_bar);

static void waterfall_grouped(struct rt_sb *sb, const struct rep_gain *g, size_t n)
{
	size_t k = (n + WATERFALL_CAP / 2 - 1) / (WATERFALL_CAP / 2), ng = (n + k - 1) / k;
	struct rep_gain *b = xcalloc(ng, sizeof(*b));
	char **lab = xcalloc(ng, sizeof(*lab));
	for (size_t i = 0; i < ng; i++) {
		size_t a = i * k, e = a + k < n ? a + k : n;
		double f = 1;
		for (size_t q = a; q < e; q++)
			f *= 1 + g[q].gain;
		lab[i] = xasprintf("seq %d–%d (%zu)", g[a].seq, g[e - 1].seq, e - a);
		b[i] = (struct rep_gain){ lab[i], g[a].seq, f - 1, g[a].better };
	}
	waterfall(sb, b, ng, k);
	for (size_t i = 0; i < ng; i++)
		free(lab[i]);
	free(lab);
	free(b);
}

void rep_svg_waterfall(struct rt_sb *sb, const struct rep_gain *g, size_t n)
{
	if (n > WATERFALL_CAP)
		waterfall_grouped(sb, g, n);
	else
		waterfall(sb, g, n, 1);
}

/* The bars g[0..n), each per_bar kept changes compounded (1: one each). */
static void waterfall(struct rt_sb *sb, const struct rep_gain *g, size_t n, size_t per_bar)
{
	double cum = 1, lo = 1, hi = 1;
	for (size_t i = 0; i < n; i++) {
		cum *= 1 + g[i].gain;
		lo = fmin(lo, cum);
		hi = fmax(hi, cum);
	}
	/* the axis starts at 0: a bar's height is its share of the baseline,
	 * never a zoom that makes +3% look like a doubling */
	(void)lo;
	double dlo = 0, dhi = hi * 1.08;
	struct rt_sb desc = RT_SB_INIT;
	rt_sb_addf(&desc, "Objective relative to the baseline (100%%) after each of the %zu %s, "
		   "compounded; the last bar is the final configuration (%+.1f%%).", n,
		   per_bar > 1 ? "groups of kept changes" : "kept changes", (cum - 1) * 100);
	if (per_bar > 1)
		rt_sb_addf(&desc, " Each bar compounds %zu consecutive kept changes (the last bar "
			   "the rest).", per_bar);
	struct chart c;
	/* room under the bars for their slanted names at a phone's text size */
	const double h = H + 80;
	begin(&c, sb, "chart-waterfall", "Waterfall of the kept changes", desc.buf, W, h);
	size_t bars = n + 2;
	axes(&c, ML, W - MR, h - 130, MT, 0, (double)bars, dlo, dhi, false, "pct", NULL,
	     "objective vs baseline (%)");
	double bw = (c.x1 - c.x0) / bars * 0.6;
	double prev = 1;
	for (size_t b = 0; b < bars; b++) {
		double cx = rep_scale_map(&c.x, b + 0.5);
		double from, to;
		const char *col, *cls, *lab;
		char val[32];
		if (b == 0 || b == bars - 1) {
			from = dlo;
			to = b == 0 ? 1 : cum;
			col = C_BASE;
			cls = "bar-total";
			lab = b == 0 ? "baseline" : "final";
			snprintf(val, sizeof(val), "%.1f%%", to * 100);
		} else {
			const struct rep_gain *x = &g[b - 1];
			from = prev;
			to = prev * (1 + x->gain);
			prev = to;
			col = (x->gain >= 0) == (x->better >= 0) ? C_KEPT : C_GATED;
			cls = "pt gain";
			lab = x->label ? x->label : "?";
			snprintf(val, sizeof(val), "%+.1f%%", x->gain * 100);
		}
		double ya = rep_scale_map(&c.y, fmax(from, to)), yb = rep_scale_map(&c.y, fmin(from, to));
		rt_sb_addf(sb, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\"><title>", cls, cx - bw / 2, ya, bw, fmax(yb - ya, 1), col);
		rep_html_escape(sb, lab);
		rt_sb_addf(sb, ": %s</title></rect>", val);
		if ((c.x1 - c.x0) / bars < 80) /* narrow bars: the value stands upright */
			rt_sb_addf(sb, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" "
				   "text-anchor=\"start\" class=\"val\">%s</text>", cx + 5, ya - 4, val);
		else
			text(sb, cx, ya - 4, "middle", "val", val);
		if (b > 0 && b < bars - 1) /* connector to the next bar */
			rt_sb_addf(sb, "<path d=\"M%.1f %.1fh%.1f\" stroke=\"%s\" stroke-dasharray=\"2 2\"/>",
				   cx - bw / 2 - (c.x1 - c.x0) / bars * 0.4, rep_scale_map(&c.y, from),
				   (c.x1 - c.x0) / bars * 0.4, C_AXIS);
		char cut[40];
		snprintf(cut, sizeof(cut), "%.18s%s", lab, strlen(lab) > 18 ? "…" : "");
		rt_sb_addf(sb, "<text transform=\"translate(%.1f %.1f) rotate(-30)\" text-anchor=\"end\" "
			   "class=\"tick\">", cx + 4, c.y0 + 20);
		rep_html_escape(sb, cut);
		rt_sb_adds(sb, "</text>");
	}
	if (!n)
		empty_note(&c, "no change was kept");
	legend(sb, W, 0, 2, C_KEPT, false, "kept change");
	legend(sb, W, 1, 2, C_BASE, false, "baseline/final");
	end(sb);
	rt_sb_release(&desc);
}

/* ---- latency ECDF ---- */

static void ecdf_series(struct chart *c, const struct rep_dist *d, const char *col, const char *cls)
{
	struct rt_sb *sb = c->sb;
	size_t m = d->n > 200 ? 200 : d->n;
	rt_sb_addf(sb, "<path class=\"ecdf\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", col);
	for (size_t j = 0; j < m; j++) {
		size_t i = d->n > 200 ? (j * (d->n - 1)) / (m - 1) : j;
		double px = rep_scale_map(&c->x, d->v[i]);
		double yprev = rep_scale_map(&c->y, (double)i / d->n);
		double y = rep_scale_map(&c->y, (double)(i + 1) / d->n);
		rt_sb_addf(sb, j ? "H%.1fV%.1f" : "M%.1f %.1f", px, j ? y : yprev);
		if (!j)
			rt_sb_addf(sb, "V%.1f", y);
	}
	rt_sb_adds(sb, "\"/>");
	for (size_t j = 0; j < m; j++) {
		size_t i = d->n > 200 ? (j * (d->n - 1)) / (m - 1) : j;
		rt_sb_addf(sb, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"/>",
			   cls, rep_scale_map(&c->x, d->v[i]),
			   rep_scale_map(&c->y, (double)(i + 1) / d->n), col);
	}
}

/* Baseline and final series of a distribution chart: colour, class, and the
 * legend label when the caller gives none. */
static const char *const dist_color[2] = { C_BASE, C_OTHER };
static const char *const dist_class[2] = { "base", "final" };
static const char *const dist_label[2] = { "baseline", "final" };

static size_t dist_total(const struct rep_dist *d, size_t nd)
{
	size_t total = 0;
	for (size_t k = 0; k < nd; k++)
		total += d[k].n;
	return total;
}

/* The baseline / final legend (labels from d), then the end of the chart. */
static void dist_legend_end(struct rt_sb *sb, const struct rep_dist *d, size_t nd)
{
	for (size_t k = 0; k < 2; k++)
		legend(sb, W, (int)k, 2, dist_color[k], false,
		       nd > k && d[k].label ? d[k].label : dist_label[k]);
	end(sb);
}

static void panel(struct chart *c, struct rt_sb *sb, double x0, double x1, const char *xlabel,
		  const char *ylabel, const struct rep_dist *d, size_t nd)
{
	double lo = DBL_MAX, hi = 0;
	size_t total = 0;
	for (size_t k = 0; k < nd; k++)
		for (size_t i = 0; i < d[k].n; i++)
			lo = fmin(lo, d[k].v[i]), hi = fmax(hi, d[k].v[i]), total++;
	if (!total)
		lo = 0, hi = 1;
	double pad = (hi - lo) * 0.05 + 1e-6;
	c->sb = sb;
	axes(c, x0, x1, H - MB, MT, fmax(0, lo - pad), hi + pad, 0, 1, false, "pct", xlabel,
	     x0 < ML + 1 ? ylabel : NULL);
	for (size_t k = 0; k < nd && k < 2; k++)
		if (d[k].n)
			ecdf_series(c, &d[k], dist_color[k], dist_class[k]);
	if (!total)
		empty_note(c, "no per-request records");
}

void rep_svg_latency(struct rt_sb *sb, const struct rep_dist *ttft, size_t nttft,
		     const struct rep_dist *e2el, size_t ne2el)
{
	size_t total = dist_total(ttft, nttft) + dist_total(e2el, ne2el);
	struct rt_sb desc = RT_SB_INIT;
	if (total)
		rt_sb_addf(&desc, "Empirical CDF of time to first token and end-to-end latency per "
			   "request, baseline vs final configuration (%zu requests).", total);
	else
		rt_sb_adds(&desc, "No per-request records (requests table) for the baseline or the "
			   "final configuration, so no latency distribution can be drawn.");
	struct chart c;
	begin(&c, sb, "chart-latency", "Latency distribution: baseline vs final", desc.buf, W, H);
	double mid = (W - MR + ML) / 2;
	panel(&c, sb, ML, mid - 24, "ttft (s)", "share of requests (%)", ttft, nttft);
	panel(&c, sb, mid + 40, W - MR, "e2el (s)", "share of requests (%)", e2el, ne2el);
	/* Each empty panel says so itself; a second note under the axes overlapped
	 * their labels (seen in the screenshot of a kernel campaign's report). */
	dist_legend_end(sb, ttft, nttft);
	rt_sb_release(&desc);
}

void rep_svg_samples(struct rt_sb *sb, const char *axis, const struct rep_dist *d, size_t nd)
{
	struct rt_sb desc = RT_SB_INIT;
	rt_sb_addf(&desc, "Empirical CDF of every valid measurement of %s, baseline vs final "
		   "configuration (%zu measurements).", axis, dist_total(d, nd));
	struct chart c;
	begin(&c, sb, "chart-latency", "Distribution of the objective: baseline vs final", desc.buf, W, H);
	panel(&c, sb, ML, W - MR, axis, "share of measurements (%)", d, nd);
	dist_legend_end(sb, d, nd);
	rt_sb_release(&desc);
}
