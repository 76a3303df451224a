/*
 * The live progress of `ratchet run`. On a terminal: one status line redrawn
 * in place ("\r" + clear to end of line) with the iteration k of n, the
 * variant, the phase, the elapsed time and an ETA from the mean duration of
 * the iterations finished so far. Elsewhere (a log file, CI): plain lines, one
 * per phase change and one per finished iteration, each with a timestamp
 * relative to the start. Quiet prints nothing (errors go through cmd_error).
 */
#include "reports/rep.h"

#include <string.h>

void rep_progress_init(struct rep_progress *p, FILE *out, bool tty, bool quiet, int total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
	p->quiet = quiet;
	p->total = total;
	p->now = rt_now_s;
	p->t_start = p->now();
	p->t_iter = p->t_start;
}

static void clear_line(struct rep_progress *p)
{
	if (p->line_open) {
		fputs("\r\033[K", p->out);
		p->line_open = false;
	}
}

/* "3/10" or "3" when the total is unknown. */
static void fmt_k(const struct rep_progress *p, int k, char *buf, size_t n)
{
	if (p->total > 0)
		snprintf(buf, n, "%d/%d", k, p->total);
	else
		snprintf(buf, n, "%d", k);
}

static void draw(struct rep_progress *p)
{
	char kb[32], el[32], it[32], eta[48] = "";
	double now = p->now();
	fmt_k(p, p->k, kb, sizeof(kb));
	rt_fmt_duration(now - p->t_start, el, sizeof(el));
	rt_fmt_duration(now - p->t_iter, it, sizeof(it));
	if (p->n_done > 0 && p->total > 0) {
		double mean = p->sum_iter_s / p->n_done;
		double left = mean * (p->total - p->k + 1) - (now - p->t_iter);
		char d[32];
		rt_fmt_duration(left > 0 ? left : 0, d, sizeof(d));
		snprintf(eta, sizeof(eta), "  eta %s", d);
	}
	clear_line(p);
	fprintf(p->out, "[%s] %s: %s  %s  (total %s%s)", kb, p->variant, p->phase, it, el, eta);
	fflush(p->out);
	p->line_open = true;
}

static void copy(char *dst, size_t n, const char *src)
{
	struct rt_sb sb = RT_SB_INIT;
	rep_term_escape(&sb, src ? src : "");
	snprintf(dst, n, "%s", sb.buf);
	rt_sb_release(&sb);
}

void rep_progress_phase(struct rep_progress *p, int k, const char *variant, const char *phase)
{
	bool first = k != p->k;
	if (first) {
		p->k = k;
		p->t_iter = p->now();
	}
	copy(p->variant, sizeof(p->variant), variant);
	copy(p->phase, sizeof(p->phase), phase);
	if (p->quiet)
		return;
	if (p->tty) {
		draw(p);
		return;
	}
	/* Plain logs: the start of each iteration and the long phases only; the
	 * A/B alternation of apply, bench and revert would drown the results. */
	if (!first && strcmp(phase, "build") && strcmp(phase, "gate"))
		return;
	char kb[32], el[32];
	fmt_k(p, k, kb, sizeof(kb));
	rt_fmt_duration(p->now() - p->t_start, el, sizeof(el));
	fprintf(p->out, "[%s] %s: %s (at %s)\n", kb, p->variant, p->phase, el);
	fflush(p->out);
}

void rep_progress_done(struct rep_progress *p, int k, enum db_iter_state state, const char *summary)
{
	double now = p->now();
	double took = now - (k == p->k ? p->t_iter : now);
	p->sum_iter_s += took;
	p->n_done++;
	if (p->quiet)
		return;
	char kb[32], d[32];
	fmt_k(p, k, kb, sizeof(kb));
	rt_fmt_duration(took, d, sizeof(d));
	struct rt_sb s = RT_SB_INIT;
	rep_term_escape(&s, summary ? summary : "");
	clear_line(p);
	fprintf(p->out, "[%s] %s %s %s%s%s (%s)\n", kb, rep_glyph(state, false), p->variant,
		db_iter_state_name(state), s.len ? ": " : "", s.buf, d);
	fflush(p->out);
	rt_sb_release(&s);
}

void rep_progress_msg(struct rep_progress *p, const char *msg)
{
	if (p->quiet)
		return;
	bool redraw = p->line_open;
	clear_line(p);
	struct rt_sb s = RT_SB_INIT;
	rep_term_escape(&s, msg);
	fprintf(p->out, "%s\n", s.buf);
	rt_sb_release(&s);
	if (redraw)
		draw(p);
	else
		fflush(p->out);
}

void rep_progress_finish(struct rep_progress *p)
{
	if (p->quiet)
		return;
	clear_line(p);
	fflush(p->out);
}
