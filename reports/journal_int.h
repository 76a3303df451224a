/*
 * The journal's data and the pieces its two files share (reports only, not
 * part of the reports API): journal.c loads a campaign and writes the
 * iterations, levers and regressions; journal_head.c writes what leads the
 * report (the objective and constraints, the kept changes, the charts and
 * the folded table of every metric).
 */
#ifndef REP_JOURNAL_INT_H
#define REP_JOURNAL_INT_H

#include "reports/rep_int.h"
#include "reports/writer.h"

/* Everything the journal shows, loaded with a handful of queries. */
struct journal {
	struct db_campaign c;             /* the campaign */
	struct db_iteration *it;          /* all iterations, seq order, with change_text */
	size_t n;                         /* how many */
	struct db_note *notes;            /* every note of the campaign */
	size_t nnotes;                    /* how many */
	struct db_q_regr *regr;           /* every regression */
	size_t nregr;                     /* how many */
	const struct db_iteration *base;  /* seq 0, or NULL */
	const struct db_iteration *fin;   /* the final (best) configuration, or NULL */
	struct db_q_series *bser;         /* baseline measurements */
	size_t nbser;                     /* how many series */
	struct db_q_series *fser;         /* final measurements */
	size_t nfser;                     /* how many series */
	struct db_metric_stat *fms;       /* final iteration's metric_stats (for "better") */
	size_t nfms;                      /* how many */
	double threshold;                 /* gate min accuracy, NAN when unknown */
	double max_drop;                  /* gate max drop vs the baseline run, NAN when unknown */
	struct rep_gate_pt *gates;        /* gate chart points */
	size_t ngates;                    /* how many */
	double *lat[4];                   /* ttft base, ttft final, e2el base, e2el final */
	size_t nlat[4];                   /* how many each */
};

/* Load campaign_id (0: the latest) into j; RT_ENOENT names an unknown
 * campaign. rep_j_release frees j, also after a failed load. */
int rep_j_load(struct db *db, int64_t campaign_id, struct journal *j, struct rt_sb *err);
void rep_j_release(struct journal *j);

/* The series of benchmark b, metric m, arm (any arm when that one is missing), or NULL. */
const struct db_q_series *rep_j_series(const struct db_q_series *v, size_t n, const char *b,
				       const char *m, const char *arm);
/* The median of a series, NAN for NULL. */
double rep_j_median(const struct db_q_series *s);
/* "bench.metric" as inline code. */
void rep_j_metric_code(struct rep_writer *w, const char *bench, const char *metric);
/* "iteration 1:3, `variant`" */
void rep_j_iteration_ref(struct rep_writer *w, const struct db_iteration *it);
/* A list item that opens with a bold label and a space. */
void rep_j_item(struct rep_writer *w, const char *label);
/* Strikethrough on or off, when on is set (invalidated results). */
void rep_j_strike(struct rep_writer *w, bool on, bool open);

/* ---- journal_head.c: what leads the report, in this order ---- */
/* The title, the objective with the answer (baseline -> final), the
 * constraints and the gate. */
void rep_j_objective(struct rep_writer *w, const struct journal *j);
/* The spec as it was run (campaigns.spec_text) as JSON, a new reference, or
 * NULL when it does not parse. */
json_t *rep_j_spec(const struct journal *j);
/* "higher is better" or "lower is better" for the objective metric, from the
 * spec's objective (obj) or else the final metric_stats; NULL when unknown. */
const char *rep_j_direction(const struct journal *j, const json_t *obj, const char *metric);
/* The objective's answer: its median at the baseline (*vb) and in the final
 * configuration (*vf, the baseline's when nothing was kept), its unit (NULL
 * when unknown; points into j). False when no baseline was measured. */
bool rep_j_answer(const struct journal *j, double *vb, double *vf, const char **unit);
/* The kept changes, in order. */
void rep_j_kept(struct rep_writer *w, const struct journal *j);
/* The charts that have data (HTML only). */
void rep_j_charts(struct rep_writer *w, const struct journal *j);
/* Every metric baseline -> final, folded, the client's own metrics apart. */
void rep_j_metrics(struct rep_writer *w, const struct journal *j);

#endif
