/*
 * The live progress of `ratchet run`. On a terminal: one status line redrawn
 * in place ("\r" + clear to end of line), cut to the terminal's width, with
 * the iteration as CAMPAIGN:SEQ and k of n, the variant, the phase, which
 * arm is measured and its sample number, the time in this iteration, the
 * elapsed time and an ETA from the mean duration of the iterations finished
 * so far. Elsewhere (a log file, CI): plain lines, one per iteration start,
 * long phase and finished iteration, each with a timestamp relative to the
 * start, and during long work a line every tick_s (30 s) so a CI log shows
 * the run is alive. Quiet prints nothing (errors go through cmd_error).
 */
#include "reports/rep_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* The thread that prints a plain line when nothing was printed for tick_s. */
struct rep_ticker {
	pthread_t thread;     /* runs tick_main */
	pthread_mutex_t mu;   /* guards the whole struct rep_progress while it runs */
	pthread_cond_t cv;    /* wakes it to stop */
	bool stop;            /* rep_progress_release asked it to end */
};

static void lock(struct rep_progress *p)
{
	if (p->ticker)
		pthread_mutex_lock(&p->ticker->mu);
}

static void unlock(struct rep_progress *p)
{
	if (p->ticker)
		pthread_mutex_unlock(&p->ticker->mu);
}

void rep_progress_init(struct rep_progress *p, FILE *out, bool tty, bool quiet, int total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
	p->quiet = quiet;
	p->total = total;
	p->k = -1; /* no iteration yet: the baseline's seq 0 is a first */
	p->arm = -1;
	p->tick_s = 30;
	p->now = rt_now_s;
	p->t_start = p->now();
	p->t_iter = p->t_phase = p->t_line = p->t_start;
}

static void clear_line(struct rep_progress *p)
{
	if (p->line_open) {
		fputs("\r\033[K", p->out);
		p->line_open = false;
	}
}

/* "[1:3 4/7]": the iteration as `ratchet show` takes it, and k of n while
 * the plan holds (seq 3 is the 4th iteration). */
static void head(const struct rep_progress *p, int k, struct rt_sb *sb)
{
	rt_sb_addc(sb, '[');
	if (p->campaign_id)
		rep_ref(sb, p->campaign_id, k);
	else
		rt_sb_addf(sb, "%d", k);
	if (p->total > 0 && k < p->total)
		rt_sb_addf(sb, " %d/%d", k + 1, p->total);
	rt_sb_addc(sb, ']');
}

/* The terminal's columns. */
static int columns(const struct rep_progress *p)
{
	if (p->width > 0)
		return p->width;
	struct winsize ws;
	if (ioctl(fileno(p->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *c = getenv("COLUMNS");
	int n = c ? atoi(c) : 0;
	return n > 0 ? n : 80;
}

/* Cut sb to at most w columns (UTF-8 aware), ending in "…" when cut. */
static void cut(struct rt_sb *sb, size_t w)
{
	if (rep_width(sb->buf) <= w || w < 2)
		return;
	size_t cols = 0, i = 0;
	while (sb->buf[i] && cols < w - 1) {
		i++;
		while (((unsigned char)sb->buf[i] & 0xc0) == 0x80)
			i++;
		cols++;
	}
	sb->len = i;
	sb->buf[i] = 0;
	rt_sb_adds(sb, "…");
}

/* "[1:3 4/7] variant: bench, candidate sample 2": where the run is. */
static void status(const struct rep_progress *p, struct rt_sb *sb)
{
	head(p, p->k, sb);
	rt_sb_addf(sb, " %s: %s", p->variant, p->phase);
	if (p->sample > 0 && p->arm >= 0)
		rt_sb_addf(sb, ", %s sample %d", p->arm ? "candidate" : "best", p->sample);
}

static void draw(struct rep_progress *p)
{
	char el[32], it[32];
	double now = p->now();
	struct rt_sb sb = RT_SB_INIT;
	status(p, &sb);
	rt_fmt_duration(now - p->t_start, el, sizeof(el));
	rt_fmt_duration(now - p->t_iter, it, sizeof(it));
	rt_sb_addf(&sb, "  %s  (total %s", it, el);
	if (p->n_done > 0 && p->total > 0) {
		double mean = p->sum_iter_s / p->n_done;
		double left = mean * (p->total - p->k) - (now - p->t_iter);
		char d[32];
		rt_fmt_duration(left > 0 ? left : 0, d, sizeof(d));
		rt_sb_addf(&sb, "  eta %s", d);
	}
	rt_sb_addc(&sb, ')');
	/* One column spare: a line exactly as wide as the terminal wraps on some. */
	cut(&sb, (size_t)columns(p) - 1);
	clear_line(p);
	fputs(sb.buf, p->out);
	fflush(p->out);
	rt_sb_release(&sb);
	p->line_open = true;
}

/* A plain line (no tty): "[1:3 4/7] variant: phase (at 1m02s)", and how long
 * the phase has run when the ticker prints it. */
static void plain(struct rep_progress *p, bool still)
{
	char el[32], ph[32];
	double now = p->now();
	struct rt_sb sb = RT_SB_INIT;
	status(p, &sb);
	rt_fmt_duration(now - p->t_start, el, sizeof(el));
	rt_fmt_duration(now - p->t_phase, ph, sizeof(ph));
	if (still)
		rt_sb_addf(&sb, " (at %s; %s in this phase)", el, ph);
	else
		rt_sb_addf(&sb, " (at %s)", el);
	fprintf(p->out, "%s\n", sb.buf);
	fflush(p->out);
	rt_sb_release(&sb);
	p->t_line = now;
}

static void *tick_main(void *arg)
{
	struct rep_progress *p = arg;
	struct rep_ticker *t = p->ticker;
	double step = p->tick_s < 4 ? p->tick_s / 4 : 1;
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long long ns = ts.tv_nsec + (long long)(step * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000);
		ts.tv_nsec = (long)(ns % 1000000000);
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
		if (!t->stop && p->now() - p->t_line >= p->tick_s)
			plain(p, true);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* Without a tty, the thread behind tick_s (once). */
static void ticker_start(struct rep_progress *p)
{
	if (p->ticker || p->tty || p->quiet || !(p->tick_s > 0))
		return;
	struct rep_ticker *t = xcalloc(1, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	p->ticker = t;
	/* Signals stay with the main thread: its blocking calls must see EINTR
	 * (SIGINT, SIGTERM stop a campaign), so the ticker starts with all blocked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&t->thread, NULL, tick_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		/* No heartbeat then; the progress itself still works. */
		p->ticker = NULL;
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
	}
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
	ticker_start(p);
	lock(p);
	bool first = k != p->k;
	if (first) {
		p->k = k;
		p->t_iter = p->now();
	}
	if (first || strcmp(p->phase, phase)) {
		p->t_phase = p->now();
		p->arm = -1;
		p->sample = 0;
	}
	copy(p->variant, sizeof(p->variant), variant);
	copy(p->phase, sizeof(p->phase), phase);
	/* Plain logs: the start of each iteration and the long phases only; the
	 * A/B alternation of apply, bench and revert would drown the results. */
	if (p->quiet)
		;
	else if (p->tty)
		draw(p);
	else if (first || !strcmp(phase, "build") || !strcmp(phase, "gate"))
		plain(p, false);
	unlock(p);
}

void rep_progress_sample(struct rep_progress *p, int arm, int sample)
{
	lock(p);
	p->arm = arm;
	p->sample = sample;
	if (!p->quiet && p->tty)
		draw(p);
	unlock(p);
}

/* summary without what the head already says: "baseline: " after "baseline",
 * "baseline failed: " after "baseline failed". */
static const char *unrepeated(const char *s, const char *variant, const char *state)
{
	char pre[3][96];
	snprintf(pre[0], sizeof(pre[0]), "%s %s: ", variant, state);
	snprintf(pre[1], sizeof(pre[1]), "%s: ", variant);
	snprintf(pre[2], sizeof(pre[2]), "%s: ", state);
	for (size_t i = 0; i < RT_ARRAY_SIZE(pre); i++) {
		size_t n = strlen(pre[i]);
		if (!strncmp(s, pre[i], n))
			return s + n;
	}
	return s;
}

void rep_progress_done(struct rep_progress *p, int k, enum db_iter_state state, const char *summary)
{
	lock(p);
	double now = p->now();
	double took = now - (k == p->k ? p->t_iter : now);
	p->sum_iter_s += took;
	p->n_done++;
	p->arm = -1;
	p->sample = 0;
	if (p->quiet) {
		unlock(p);
		return;
	}
	const char *st = db_iter_state_name(state);
	char d[32];
	rt_fmt_duration(took, d, sizeof(d));
	struct rt_sb line = RT_SB_INIT, s = RT_SB_INIT;
	head(p, k, &line);
	rt_sb_addf(&line, " %s %s", rep_glyph(state, false), p->variant);
	if (strcmp(p->variant, st))
		rt_sb_addf(&line, " %s", st);
	rep_term_escape(&s, unrepeated(summary ? summary : "", p->variant, st));
	/* The duration ends the line; before a summary of several lines (an
	 * engine's log), it ends the head. */
	if (strchr(s.buf, '\n'))
		rt_sb_addf(&line, " (%s): %s\n", d, s.buf);
	else
		rt_sb_addf(&line, "%s%s (%s)\n", s.len ? ": " : "", s.buf, d);
	clear_line(p);
	fputs(line.buf, p->out);
	fflush(p->out);
	p->t_line = now;
	rt_sb_release(&line);
	rt_sb_release(&s);
	unlock(p);
}

void rep_progress_msg(struct rep_progress *p, const char *msg)
{
	lock(p);
	if (!p->quiet) {
		bool redraw = p->line_open;
		clear_line(p);
		struct rt_sb s = RT_SB_INIT;
		rep_term_escape(&s, msg);
		fprintf(p->out, "%s\n", s.buf);
		rt_sb_release(&s);
		p->t_line = p->now();
		if (redraw)
			draw(p);
		else
			fflush(p->out);
	}
	unlock(p);
}

void rep_progress_finish(struct rep_progress *p)
{
	lock(p);
	if (!p->quiet) {
		clear_line(p);
		fflush(p->out);
	}
	unlock(p);
}

void rep_progress_release(struct rep_progress *p)
{
	struct rep_ticker *t = p->ticker;
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	p->ticker = NULL;
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
