/*
 * Rows of the GSM8K gate: one gate_runs row per run (created when the run
 * starts, completed when it ends) and one gate_answers row per question.
 * API keys never reach these rows: the caller passes none.
 *
 * One row model per table: struct db_gate_run is what `ratchet gate`, the
 * campaign and the reports read and write; struct db_gate_answer likewise.
 *
 * Ownership: db_gate_run_get() and db_gate_answers_list() fill structs
 * whose strings the caller releases with db_gate_run_release() and
 * db_gate_answers_free().
 */
#ifndef DB_GATE_H
#define DB_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct db_gate_run {
	int64_t id;              /* row id (set by create) */
	int64_t iteration_id;    /* campaign iteration, 0 for `ratchet gate` */
	char *label;             /* endpoint label for latest-pass lookups, or NULL */
	char *endpoint;          /* base URL, without credentials */
	char *model;             /* model name sent, or NULL */
	char *api;               /* completions | chat */
	char *format;            /* gsm8k | gsm8k_cot | chat */
	char *extract;           /* flexible | strict: the one that decides */
	char *dataset_sha256;    /* of the test file */
	int n_planned;           /* questions selected */
	int n_done;              /* questions answered or failed */
	int n_correct;           /* by the deciding extraction */
	int n_correct_strict;    /* by strict-match */
	int n_correct_flex;      /* by flexible-extract */
	int n_failed;            /* requests that failed after retries */
	double accuracy;         /* NAN when unset */
	double wilson_lo;        /* Wilson interval of accuracy */
	double wilson_hi;
	int64_t baseline_run_id; /* 0 when none */
	double diff;             /* paired accuracy difference vs baseline (cand - base), NAN if none */
	double diff_lo;          /* Newcombe interval */
	double diff_hi;
	double mcnemar_p;        /* mid-p */
	double identical_rate;   /* share of paired questions with the same extracted answer */
	double identical_response_rate; /* share with the same response text (sha256), NAN if none (version 16) */
	int flips_to_wrong;      /* right at baseline, wrong now */
	int flips_to_right;      /* wrong at baseline, right now */
	bool early_stop;         /* stopped before all questions were asked */
	int passed;              /* 1 pass, 0 fail, -1 error or running (NULL) */
	char *verdict;           /* one line */
	char *params_json;       /* thresholds and settings used */
	int64_t started_at;      /* wall ms */
	int64_t finished_at;     /* wall ms, 0 while running */
	double min_accuracy;     /* params_json's min_accuracy, NAN when absent (readers fill it) */
};
void db_gate_run_release(struct db_gate_run *r);

struct db_gate_answer {
	int64_t run_id;          /* gate run */
	int idx;                 /* question index in the dataset */
	char prompt_sha256[65];  /* of the prompt text or messages JSON */
	char *response;          /* kept for failures, wrong answers and flips, else NULL */
	char response_sha256[65];/* of the response text, "" when there is none */
	char *extracted_strict;  /* strict-match extraction, NULL when failed */
	char *extracted_flex;    /* flexible-extract extraction, NULL when failed */
	char *target;            /* normalised reference */
	int correct;             /* by the deciding extraction (0/1), -1 when failed */
	int correct_strict;      /* 0/1, -1 when failed */
	int correct_flex;        /* 0/1, -1 when failed */
	char *finish_reason;     /* as the server said, or NULL */
	int prompt_tokens;       /* from usage, -1 when absent */
	int completion_tokens;   /* from usage, -1 when absent */
	bool failed;             /* the request failed after retries */
	char *error;             /* why it failed, or NULL */
	double latency_s;        /* of the last attempt, NAN when none */
};
void db_gate_answer_release(struct db_gate_answer *a);

/* Insert a run (started_at and the settings; counts as given). Sets *id. */
int db_gate_run_create(struct db *db, const struct db_gate_run *r, int64_t *id, struct rt_sb *err);
/* Write the results of run r->id (counts, figures, verdict, finished_at). */
int db_gate_run_finish(struct db *db, const struct db_gate_run *r, struct rt_sb *err);
/* RT_ENOENT when there is no such run. */
int db_gate_run_get(struct db *db, int64_t id, struct db_gate_run *out, struct rt_sb *err);
/* Latest passed run with this label (or endpoint when label is NULL), model
 * and format. RT_ENOENT when there is none. */
int db_gate_run_latest_pass(struct db *db, const char *label, const char *endpoint,
			    const char *model, const char *format, int64_t *id, struct rt_sb *err);
int db_gate_answer_add(struct db *db, const struct db_gate_answer *a, struct rt_sb *err);
/* Answers of a run in idx order; *out is released with db_gate_answers_free. */
int db_gate_answers_list(struct db *db, int64_t run_id, struct db_gate_answer **out, size_t *n,
			 struct rt_sb *err);
void db_gate_answers_free(struct db_gate_answer *v, size_t n);

#endif
