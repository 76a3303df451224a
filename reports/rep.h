/*
 * Reports: the morning-after views of a campaign. `ratchet log` (one line
 * per iteration), `ratchet show N` (everything about one iteration),
 * `ratchet regressions`, and `ratchet report` (a Markdown or self-contained
 * HTML journal with SVG charts written here), plus the live progress line
 * `ratchet run` prints. Everything reads the store through db/query.h;
 * nothing here writes to the database. Text that came from the database is
 * escaped for the output it goes to (terminal control bytes, Markdown, HTML).
 */
#ifndef REP_REP_H
#define REP_REP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "db/query.h"
#include "runner/base/rt.h"

struct db;

/* ---- formatting helpers (reports/fmt.c) ---- */

/* State glyph: ● baseline, ✓ kept, ↩ reverted, ✗ gated, ! failed, ⊘ invalid
 * (also for any invalidated iteration), ⚡ interrupted, … running. */
const char *rep_glyph(enum db_iter_state state, bool invalidated);
/* A campaign's state for people: "stopped (resumable)" when it is running
 * in the store but no runner holds it (its budget or a signal stopped the
 * run; `ratchet run --resume` goes on), else the stored state. */
const char *rep_campaign_state(const struct db_campaign *c);
/*
 * One sign convention everywhere: a delta is the metric's own relative
 * change (after / before - 1), with its direction in words:
 * "+165.0% [+120.0, +210.0] (worse)", "-29.8% (better)". better: +1 when
 * the metric is better higher, -1 when lower, 0 when unknown (no words).
 * Fractions in, percent out; "—" when change is NAN; the bracket is left
 * out when the interval is unknown, the words when the change rounds to 0.
 */
void rep_fmt_change(struct rt_sb *sb, double change, double lo, double hi, int better);
/* The changes of the kept iterations compounded: prod(1 + change) - 1 over
 * the kept, valid iterations of it[0..n) (0 when there are none); *better
 * takes their direction. The one number the summary and the waterfall give
 * for the kept changes together. */
double rep_kept_compound(const struct db_iteration *it, size_t n, int *better);
/* Which way an iteration's objective is better (+1 higher, -1 lower, 0
 * unknown), read from the row itself: its gain obj_delta is signed so that
 * + is better, and obj_cand / obj_best - 1 is the metric's change of the
 * same comparison, so their signs agree exactly when higher is better. */
int rep_obj_better(const struct db_iteration *it);
/* The objective's change of an iteration (the metric's, from its gain) with
 * its interval and direction; false when it has none (baseline, failed). */
bool rep_obj_change(const struct db_iteration *it, double *change, double *lo, double *hi,
		    int *better);
/* A regression row as the metric's change: after / before - 1, its
 * interval, and the direction (the row's delta is stored signed so that -
 * is worse, and a regression is worse). */
void rep_regr_change(const struct db_q_regr *r, double *change, double *lo, double *hi, int *better);
/* The client's own figures, not the engine's: the load generator's send
 * lag (send_lag*) and a kernel benchmark's stopping figures (rsd, samples).
 * Their regressions are recorded but listed apart. */
bool rep_self_metric(const char *metric);
/* A number with up to 4 significant digits and no trailing zeros ("1147.6", "0.8797"). */
void rep_fmt_num(struct rt_sb *sb, double v);
/* Append s with HTML special characters escaped (& < > " '). NULL appends nothing. */
void rep_html_escape(struct rt_sb *sb, const char *s);
/* Append s for Markdown running text (never at the start of a line): the
 * characters that could open emphasis, code, links, tables, strikethrough,
 * HTML tags or entities (\ ` * _ [ ] < | ~ &) are backslash-escaped, newlines
 * become spaces, other control bytes (ESC included) '?'. */
void rep_md_escape(struct rt_sb *sb, const char *s);
/* Append s for a terminal: control bytes (ESC included) become '?'. */
void rep_term_escape(struct rt_sb *sb, const char *s);

/* Parse --since: "12h", "3d", "90m", "2025-11-30" or "2025-11-30T14:00" (UTC)
 * into Unix ms, relative ones counted back from now_ms. RT_EUSAGE when bad. */
int rep_parse_since(const char *s, int64_t now_ms, int64_t *out, struct rt_sb *err);

/* Summary of sorted samples: n, median, MAD (median absolute deviation, raw), min, max. */
struct rep_summary {
	size_t n;      /* samples */
	double median; /* NAN when n is 0 */
	double mad;    /* median of |x - median| */
	double min;    /* smallest */
	double max;    /* largest */
};
void rep_summarise(const double *sorted, size_t n, struct rep_summary *out);

/* ---- terminal and JSON views (log.c, show.c, regr.c) ---- */

struct rep_log_opts {
	int64_t campaign_id; /* 0: the latest campaign */
	const char *state;   /* only iterations in this state, or NULL */
	int64_t since_ms;    /* only iterations started at or after, 0 for all */
	size_t limit;        /* newest N (printed oldest first), 0 for all */
	bool json;           /* one JSON document instead of text */
	bool color;          /* ANSI colours */
};
int rep_log(struct db *db, FILE *out, const struct rep_log_opts *o, struct rt_sb *err);
/* Everything about iteration `id` (iterations.id). RT_ENOENT if there is none. */
struct rep_show_opts {
	bool json;  /* one JSON document instead of text (llm exchanges whole) */
	bool color; /* ANSI colours */
	bool full;  /* text: everything (samples, environment, provenance, llm exchanges
	            * whole), not the summary */
};
int rep_show(struct db *db, FILE *out, int64_t id, const struct rep_show_opts *o, struct rt_sb *err);
struct rep_regr_opts {
	int64_t campaign_id; /* 0: the latest campaign */
	bool all;            /* also the regressions of changes that were not kept, marked */
	bool json;           /* one JSON document instead of text */
	bool color;          /* ANSI colours */
};
/* `ratchet regressions`: the regressions of kept changes (what shipped),
 * the client's self-metrics apart, with all those of the other changes too. */
int rep_regressions(struct db *db, FILE *out, const struct rep_regr_opts *o, struct rt_sb *err);

/* ---- the journal (journal.c): Markdown and HTML ---- */

enum rep_format { REP_MD, REP_HTML };
/* Write the journal of campaign_id (0: latest) into out. */
int rep_report(struct db *db, int64_t campaign_id, enum rep_format fmt, struct rt_sb *out,
	       struct rt_sb *err);

/* ---- replays (replay.c) ---- */

struct db_lever;
struct rep_writer;
/* The levers as lines for the terminal: order, name, kind, lineage,
 * verdict, gain then and now with their intervals, why. */
void rep_replay_text(struct rt_sb *out, const struct db_lever *l, size_t n);
/* The Replay section (a heading of level, a paragraph, the levers' table)
 * of campaign cid, or nothing when it is not a replay. */
int rep_replay_section(struct rep_writer *w, struct db *db, int64_t cid, int level, struct rt_sb *err);
/* JUnit XML as `gate --junit` writes it: one test case per lever, failed
 * when it reversed, skipped when not decided yet. */
int rep_replay_junit(const struct db_lever *l, size_t n, const char *name, double wall_s, const char *path,
		     struct rt_sb *err);
/* The Replay section as Markdown into path (appended when append, as for
 * $GITHUB_STEP_SUMMARY). */
int rep_replay_summary(struct db *db, int64_t cid, const char *path, bool append, struct rt_sb *err);

/* ---- campaigns compared (compare.c) ---- */

/* Parse --campaigns "3,4[,...]": at least two distinct positive ids into
 * *ids (the caller frees it). RT_EUSAGE, naming the bad piece, otherwise. */
int rep_parse_campaigns(const char *s, int64_t **ids, size_t *n, struct rt_sb *err);
/* `ratchet report --campaigns`: the campaigns ids[0..n) side by side, which
 * levers carried over from one to the others (matched by variant name or by
 * the change's fingerprint), in Markdown or HTML. RT_ENOENT names an unknown
 * campaign. */
int rep_compare(struct db *db, const int64_t *ids, size_t n, enum rep_format fmt, struct rt_sb *out,
		struct rt_sb *err);

/* ---- SVG charts (svg.c); each writes one <svg> with a stable id, and one
 * element with class "pt" per data point ---- */

/* Ticks: a "nice" step (1, 2 or 5 times a power of ten) giving at most
 * max_ticks ticks over [lo, hi]; *first is the first tick >= lo. */
double rep_nice_step(double lo, double hi, int max_ticks, double *first);

/* Linear scale from a data domain onto a pixel range. */
struct rep_scale {
	double d0, d1; /* domain */
	double r0, r1; /* range (pixels) */
};
double rep_scale_map(const struct rep_scale *s, double v);

struct rep_obj_pt {
	int seq;          /* x: iteration seq */
	double value;     /* candidate median of the objective, absolute */
	double lo, hi;    /* CI in absolute units, NAN when unknown */
	char mark;        /* 'b' baseline, 'k' kept, 'r' reverted, 'g' gated, 'i' invalid, 'o' other */
	double best;      /* the best configuration's median measured in the same iteration
			   * (its A arm; the baseline: value), NAN when unknown */
};
/* Objective per iteration with CI bars, markers by decision (reverted a
 * hollow circle, invalid a hollow square) and the best configuration's
 * median as measured beside each candidate as a step line (a candidate
 * below it lost against the best of its own iteration, whatever the host
 * did between iterations). id "chart-objective". */
void rep_svg_objective(struct rt_sb *sb, const struct rep_obj_pt *p, size_t n,
		       const char *metric, const char *unit);

struct rep_gate_pt {
	int seq;          /* x: iteration seq */
	double accuracy;  /* 0..1 */
	double lo, hi;    /* Wilson interval, NAN when unknown */
	bool passed;      /* gate verdict */
};
/* Gate accuracy per iteration, with the threshold line. id "chart-gate". */
void rep_svg_gate(struct rt_sb *sb, const struct rep_gate_pt *p, size_t n, double threshold);

struct rep_gain {
	const char *label; /* variant name */
	int seq;           /* iteration seq */
	double gain;       /* the objective's change (after / before - 1), fraction */
	int better;        /* +1: the objective is better higher, -1: lower (colours) */
};
/* Waterfall: the kept changes compounded from the baseline (100%); the last
 * bar is rep_compound() of them. id "chart-waterfall". */
void rep_svg_waterfall(struct rt_sb *sb, const struct rep_gain *g, size_t n);

struct rep_dist {
	const char *label;  /* legend: "baseline (seq 0)" */
	const double *v;    /* ascending samples (seconds) */
	size_t n;
};
/* ECDF of two latency distributions (ttft and e2el panels, baseline vs
 * final). Each series draws at most 200 points (quantiles when larger).
 * With no samples at all the chart says so. id "chart-latency". */
void rep_svg_latency(struct rt_sb *sb, const struct rep_dist *ttft, size_t nttft,
		     const struct rep_dist *e2el, size_t ne2el);
/* The same ECDF for a campaign without per-request records (kernel or
 * command benchmarks): every measurement of the objective, baseline vs final,
 * in one panel whose x axis is labelled axis ("gemm_512.gflops (GFLOP/s)").
 * Same chart id, so a report has one distribution chart either way. */
void rep_svg_samples(struct rt_sb *sb, const char *axis, const struct rep_dist *d, size_t nd);

/* ---- live progress of `ratchet run` (progress.c) ---- */

struct rep_progress {
	FILE *out;          /* where it prints (stderr for ratchet run) */
	bool tty;           /* one live line, redrawn with \r */
	bool quiet;         /* print nothing */
	int total;          /* iterations planned, 0 when unknown */
	int64_t campaign_id;/* for CAMPAIGN:SEQ; 0 prints the seq alone */
	int k;              /* current iteration's seq */
	char variant[64];   /* current variant */
	char phase[16];     /* current phase */
	int arm;            /* arm being measured: 0 best so far, 1 candidate, -1 none */
	int sample;         /* that arm's sample number (1-based), 0 when none */
	double t_start;     /* now() when the campaign started */
	double t_iter;      /* now() when iteration k started */
	double t_phase;     /* now() when the current phase started */
	double t_line;      /* now() when the last plain line was printed */
	double sum_iter_s;  /* total duration of finished iterations */
	int n_done;         /* finished iterations */
	bool line_open;     /* a live line is on screen (tty) */
	int width;          /* tty columns; 0: ask the terminal ($COLUMNS, else 80) */
	double tick_s;      /* no tty: a plain line after this long without one (30 s; 0: never) */
	double (*now)(void);/* clock, rt_now_s by default (tests set a fake) */
	struct rep_ticker *ticker; /* the thread behind tick_s, started with the first phase */
};
void rep_progress_init(struct rep_progress *p, FILE *out, bool tty, bool quiet, int total);
/* Iteration seq k of variant entered phase (apply build start bench gate decide). */
void rep_progress_phase(struct rep_progress *p, int k, const char *variant, const char *phase);
/* The measurement starting now: arm 0 (the best so far) or 1 (the
 * candidate), its sample-th sample (1-based). */
void rep_progress_sample(struct rep_progress *p, int arm, int sample);
/* Iteration k finished in state with a one-line summary (e.g. "+6.1% [+4.0,
 * +8.3]"); lines after the first (an engine's log) are printed indented. */
void rep_progress_done(struct rep_progress *p, int k, enum db_iter_state state, const char *summary);
/* Print a message line without breaking the live line (warnings). */
void rep_progress_msg(struct rep_progress *p, const char *msg);
/* End the live line (newline) at the end of the campaign. */
void rep_progress_finish(struct rep_progress *p);
/* Stop the tick_s thread; p prints nothing more. Safe to call twice. */
void rep_progress_release(struct rep_progress *p);

#endif
