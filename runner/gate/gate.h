/*
 * The GSM8K accuracy gate: asks an OpenAI-compatible endpoint every selected
 * GSM8K question (runner/oai's client, N in flight, retries with backoff),
 * scores the answers with lm-evaluation-harness's rules, compares them
 * question by question with a baseline run, decides pass or fail, and stores
 * the run and every answer in the database. `ratchet gate` (CI) and the campaign loop
 * both call run_gate_run().
 *
 * The decision: pass iff
 *   - accuracy >= min_accuracy (or its Wilson lower bound, use_wilson_lower);
 *   - with a baseline: the paired drop (baseline - candidate accuracy, on the
 *     questions both answered) <= max_drop, the drop is not significant
 *     (McNemar mid-p >= alpha, or no drop at all), and the identical-answer
 *     rate >= min_identical when that is set;
 * and an ERROR (no decision) when more than max_failed of the requests
 * failed after retries. The run stops early, cancelling what is in flight,
 * once no answers still to come could make it pass; a pass always asks
 * every question, so its accuracy is the full figure and it can serve as a
 * baseline.
 *
 * Ownership: run_gate_result_release() frees what run_gate_run() put in out.
 */
#ifndef RT_GATE_H
#define RT_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/base/rt.h"
#include "runner/oai/oai.h"
#include "runner/spec/spec.h"

struct db;

enum run_gate_status {
	RUN_GATE_PASS,  /* every bound met */
	RUN_GATE_FAIL,  /* a bound not met */
	RUN_GATE_ERROR, /* too many failed requests, or no usable comparison: no decision */
};

struct run_gate_result {
	int64_t run_id;              /* gate_runs row */
	enum run_gate_status status; /* pass, fail or error */
	bool passed;                 /* status == RUN_GATE_PASS */
	int n_planned;               /* questions selected */
	int n_done;                  /* questions answered or failed */
	int n_scored;                /* answered (not failed) */
	int n_correct;               /* by the deciding extraction */
	int n_correct_strict;        /* by strict-match */
	int n_correct_flex;          /* by flexible-extract */
	int n_failed;                /* requests that failed after retries */
	double accuracy;             /* n_correct / n_scored (deciding extraction) */
	double acc_strict;           /* strict-match accuracy */
	double acc_flex;             /* flexible-extract accuracy */
	double wilson_lo;            /* Wilson interval of accuracy at 1 - alpha */
	double wilson_hi;
	int64_t baseline_run_id;     /* 0 when no baseline */
	int n_paired;                /* questions both runs answered */
	double base_accuracy;        /* the baseline's accuracy on the paired questions, NAN if none */
	double diff;                 /* candidate - baseline on the paired questions, NAN if none */
	double diff_lo;              /* Newcombe interval */
	double diff_hi;
	double mcnemar_p;            /* mid-p on the discordant pairs */
	double identical_rate;       /* same normalised extracted answer as the baseline */
	double identical_response_rate; /* same response text (its sha256) as the baseline, NAN if none */
	int *flips_to_wrong;         /* question indexes right at baseline, wrong now */
	size_t n_flips_to_wrong;
	int *flips_to_right;         /* question indexes wrong at baseline, right now */
	size_t n_flips_to_right;
	bool early_stop;             /* stopped before asking every question */
	double wall_s;               /* wall time of the run */
	double cpu_s;                /* client CPU time (process, user + system) */
	char *verdict;               /* one line: PASS/FAIL/ERROR, figures, the reason */
	int64_t started_ms;          /* wall clock at the start, ms since the epoch */
	int num_fewshot;             /* shots each prompt held */
	int n_test;                  /* questions in the test set */
	struct run_gate_sample *samples; /* answered questions in the order asked (keep_samples) */
	size_t n_samples;
};
void run_gate_result_release(struct run_gate_result *r);

/* Progress after each answer. */
struct run_gate_progress {
	int done;        /* answered or failed */
	int planned;     /* selected */
	int correct;     /* by the deciding extraction */
	int failed;      /* failed requests */
	double elapsed_s;
};

/* Settings beyond the spec's gate block. */
struct run_gate_opts {
	const char *label;        /* endpoint label stored with the run (latest-pass lookups), or NULL */
	const char *api_key;      /* sent as Authorization: Bearer, never stored; NULL: none */
	bool no_early_stop;       /* ask every question even when the outcome is settled */
	int max_retries;          /* per request, default 4 */
	double backoff_s;         /* first backoff, doubled per retry, default 0.2 */
	const char *eos_string;   /* appended to the stops unless among them (lm-eval's eos_string), or NULL */
	bool keep_samples;        /* fill the result's samples (for --log-samples, --output-path) */
	void (*progress)(void *arg, const struct run_gate_progress *p); /* or NULL */
	void *progress_arg;
};
/* Defaults: 4 retries, 0.2 s backoff, no API key (the command layer resolves
 * it and sets api_key; nothing here reads the environment). */
void run_gate_opts_init(struct run_gate_opts *o);

/* The endpoint without user:password@ (what is stored and written). Caller frees. */
char *run_gate_strip_credentials(const char *url);

/* Fill a spec_gate with the defaults the spec loader uses. */
void run_gate_defaults(struct spec_gate *cfg);

/*
 * Run the gate against base_url ("http://host:port" or ".../v1") with model
 * (NULL: none sent) and api_key (NULL: none; run_gate_run_opts takes it in
 * opts). baseline_run_id 0: no baseline. Stores the run (with
 * iteration_id, 0 for none) and its answers.
 * Returns the stored run id (> 0) for a pass or a fail (out->status says
 * which); a negative RT_E* with err filled for an error: setup errors (no
 * dataset, bad baseline, database) with out->run_id 0, and a stored ERROR
 * run (too many failed requests) with out->run_id set and RT_EHTTP.
 */
int run_gate_run(struct db *db, const struct spec_gate *cfg, const char *base_url, const char *model,
		 const char *api_key, int64_t iteration_id, int64_t baseline_run_id,
		 struct run_gate_result *out, struct rt_sb *err);
int run_gate_run_opts(struct db *db, const struct spec_gate *cfg, const struct run_gate_opts *opts,
		      const char *base_url, const char *model, int64_t iteration_id,
		      int64_t baseline_run_id, struct run_gate_result *out, struct rt_sb *err);

/* ---- reports (gate_report.c) ---- */
/* JUnit XML: one testsuite, one testcase "gsm8k" with <failure> (fail) or
 * <error> (error), and the figures as properties. */
int run_gate_write_junit(const struct run_gate_result *r, const struct spec_gate *cfg,
			 const char *path, struct rt_sb *err);
/* Markdown summary (for $GITHUB_STEP_SUMMARY); appended when append is set. */
int run_gate_write_summary(const struct run_gate_result *r, const struct spec_gate *cfg,
			   const char *path, bool append, struct rt_sb *err);
/* The result as one JSON object (compact), appended to out. */
void run_gate_json(const struct run_gate_result *r, struct rt_sb *out);

/* ---- lm-evaluation-harness's output files (gate_lmeval.c) ---- */
/* One answered question, as lm-eval logs it; owned by the result. */
struct run_gate_sample {
	int doc_id;                    /* test index */
	char *question, *answer;       /* the test problem as in test.jsonl */
	char *prompt;                  /* as sent: the text, or the messages JSON (chat) */
	char *response;                /* the model's text */
	char *strict, *flex;           /* extracted answers ("[invalid]" when none) */
	bool c_strict, c_flex;         /* exact_match by each filter */
};

/* What lm-eval's files say about the run beyond the result. */
struct run_gate_lmeval {
	const struct spec_gate *cfg;   /* the run's settings */
	const struct run_gate_opts *opts; /* its options (eos string, retries) */
	const char *model;             /* model name sent, or NULL */
	const char *endpoint;          /* base URL, credentials already stripped */
	char date_id[40];              /* lm-eval's file stamp: local ISO time, ':' as '-' */
};
/* Fill l (date_id from the result's start). */
void run_gate_lmeval_init(struct run_gate_lmeval *l, const struct spec_gate *cfg,
			  const struct run_gate_opts *opts, const char *model, const char *endpoint,
			  const struct run_gate_result *r);
/*
 * DIR/samples_<task>_<date_id>.jsonl as lm-eval v0.4.12 writes it: one line
 * per question and filter (every strict-match line, then every
 * flexible-extract line), keys doc_id, doc, target, arguments, resps,
 * filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash,
 * exact_match. The folder is made when missing. *task_hash (caller frees,
 * may be NULL) gets lm-eval's task hash of the lines.
 */
int run_gate_write_samples(const struct run_gate_lmeval *l, const struct run_gate_result *r,
			   const char *dir, char **task_hash, struct rt_sb *err);
/*
 * The results JSON of lm-eval v0.4.12 ("results": {"gsm8k": {"exact_match,strict-match",
 * "exact_match_stderr,strict-match", "exact_match,flexible-extract", ...}}, configs,
 * versions, n-shot, n-samples, config, ...) plus "ratchet" (the run id and
 * verdict). path ending in .json: that file; otherwise a folder, written as
 * lm-eval does: path/<model, sanitised>/results_<date_id>.json. task_hash
 * from run_gate_write_samples, or NULL. *written (caller frees, may be NULL)
 * gets the file's path.
 */
int run_gate_write_results(const struct run_gate_lmeval *l, const struct run_gate_result *r,
			   const char *path, const char *task_hash, char **written, struct rt_sb *err);

/* The first model id GET base/v1/models lists, newly allocated (vLLM's and
 * lm-eval's clients default to it), asked with api_key (NULL: none) as vLLM
 * under --api-key requires. RT_EHTTP / RT_EPARSE with err saying why. */
int run_gate_first_model(const char *base_url, const char *api_key, double timeout_s, char **model,
			 struct rt_sb *err);

/* ---- the request loop (gate_client.c) on runner/oai's client ---- */
/* One request and, once done, its outcome. */
struct run_gate_req {
	char *body;              /* JSON request body (owned) */
	struct oai_completion ans; /* the answer's text, finish reason and usage */
	bool done;               /* finished (answered or failed) */
	bool failed;             /* failed after retries */
	char *error;             /* why it failed, or NULL */
	int attempts;            /* tries made */
	double latency_s;        /* of the last attempt */
};
void run_gate_req_release(struct run_gate_req *r);

struct run_gate_client {
	const char *url;         /* full URL of the completions or chat endpoint (oai_url) */
	bool chat;               /* parse choices[0].message.content rather than .text */
	const char *api_key;     /* or NULL */
	int concurrency;         /* requests in flight */
	double timeout_s;        /* per attempt */
	int max_retries;         /* on connection errors, 429 and 5xx */
	double backoff_s;        /* first backoff, doubled per retry */
	/* Called after each request finishes; return false to stop (cancels the rest). */
	bool (*on_done)(void *arg, size_t i, struct run_gate_req *r);
	void *arg;               /* for on_done */
};
/* Run reqs[0..n) in order, `concurrency` at a time. Returns 0, or RT_EHTTP
 * when libcurl itself fails; *stopped tells whether on_done stopped it. */
int run_gate_client_run(const struct run_gate_client *c, struct run_gate_req *reqs, size_t n,
			bool *stopped, struct rt_sb *err);

#endif
