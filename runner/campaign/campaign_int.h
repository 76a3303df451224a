/*
 * What the files of runner/campaign/ share (not an API for other modules).
 * The rooms:
 *   journal.c  the journal: intents, originals, atomic moves of touched
 *              files through a replaceable table of writes (fault
 *              injection), recovery on --resume, `ratchet restore`
 *   apply.c    a change planned and fingerprinted, put in place or taken
 *              back (journaled moves, patches, builds)
 *   measure.c  samples: the engine started and proven, every benchmark run
 *              once, stored; the A/B schedule of slots
 *   engine_pool.c the engines kept up between samples (engine.restart,
 *              engine.concurrent)
 *   prov.c     each launch's provenance, stored and compared with the
 *              campaign's first
 *   decide.c   the decision rule, constraints, a greedy trial's role, the
 *              gate, and recording an iteration's end in one transaction
 *   state.c    what every room calls and that calls nothing back: the
 *              stop flag, camp_fatal, warnings, an iteration's allowed moves
 *   iter.c     the baseline, and one iteration as a sequence of named steps
 *   propose.c  the proposer table: one row per source of proposals (the
 *              spec's variants; space.c's points; llm.c's answers), and
 *              the best rebuilt from the store through the rows
 *   loop.c     run_campaign: open or resume, the one scheduling loop (the
 *              runner here, or round.c's pool), the summary
 *   space.c    a space strategy's points: observations from the store,
 *              the generated variant, the proposal's record (its row)
 *   llm.c      strategy llm: what the model sees, the answers asked and
 *              judged, their record (its row)
 *   round.c    the local device pool's runner: rounds of trials, one worker
 *              process per device, measured at once
 *   workers.c  a pool's worker: its device pinned, its one iteration run;
 *              the per-worker working copies of the workdir
 *
 * Errors: a write the journal or the resume depends on (intent, original,
 * touched file, iteration state, decision, engine process group, device)
 * that fails makes the campaign "broken" (camp_fatal): the iteration is left
 * as the journal describes it and the run stops, so `ratchet run --resume`
 * recovers. Writes that only decorate (artifacts, host facts) warn on stderr.
 */
#ifndef RT_CAMPAIGN_INT_H
#define RT_CAMPAIGN_INT_H

#include <signal.h>

#include "runner/campaign/campaign.h"

#include "agents/agent.h"
#include "reports/rep.h"
#include "runner/engine/engine.h"
#include "runner/gate/gate.h"
#include "runner/stats/stats.h"
#include "variants/var.h"

/* Set by SIGINT/SIGTERM: stop at the next safe point (loop.c). */
extern volatile sig_atomic_t camp_stop_requested;

/* Samples of one metric in both arms. */
struct series {
	char *bench;     /* benchmark name ('log' for log events) */
	char *metric;    /* metric name */
	char *unit;      /* unit, may be NULL */
	double *v[2];    /* samples: [0] best, [1] cand */
	size_t n[2];     /* samples in each arm */
	size_t alloc[2]; /* room in each arm */
};

/* One launch of the engine. */
struct camp_launch {
	struct run_engine *eng; /* running engine, or NULL */
	struct spec_vars vars;  /* placeholder values of this launch */
	char nonce[33];         /* per-launch nonce */
	char **argv;            /* expanded engine argv (owned) */
	struct rt_envmod *env;  /* engine env (owned strings) */
	size_t n_env;           /* entries in env */
	const char **ev_names;  /* log-event names (owned array, borrowed strings) */
	const char **ev_regex;  /* their patterns, likewise */
	char *ready_path;       /* engine.ready.http, expanded (owned) */
	char *identity_path;    /* engine.identity.http, expanded, or NULL (owned) */
	char *model;            /* engine.identity.model, expanded, or NULL (owned) */
	long *ev_counted;       /* per log event: the count already given to its samples (owned) */
	double *ev_secs;        /* per log event: the seconds already given to its samples (owned) */
};

/* An engine kept up between samples (engine_pool.c). */
struct camp_held {
	bool up;                /* the slot holds a running engine */
	struct camp_launch l;   /* the launch; l.eng runs (never moved: the engine points into it) */
	char key[65];           /* its configuration: files' iteration, argv and env (sha256) */
	int64_t iter;           /* iteration that last used it: its log is stored there */
	uint64_t used;          /* tick of its last use: the oldest is stopped first */
	const char *log_name;   /* name its log is stored under when stopped, NULL: not stored */
};

/* The engines up (at most engine.concurrent, 2). */
struct camp_pool {
	struct camp_held h[2];  /* slots, at most engine.concurrent of them up */
	size_t n;               /* slots up */
	uint64_t tick;          /* uses so far */
	int launches;           /* engines started by this run */
};

/* The device the telemetry sampler reads (telemetry.c), chosen once. */
struct camp_tel_dev {
	bool resolved;          /* chosen (and said, as fact telemetry.device) */
	char backend[8];        /* its backend, "" for host readings only */
	int index;              /* its index */
};

/* The state of one running campaign. */
struct camp {
	struct db *db;                     /* the store */
	const struct spec *s;              /* the spec */
	const struct run_campaign_opts *o; /* options */
	int64_t cid;                       /* campaign id */
	int64_t best_iter;                 /* iteration id of the current best */
	int64_t baseline_gate;             /* gate run of the baseline, 0 if none */
	char *baseline_model;              /* model id the baseline engine reported */
	char *device_id;                   /* device of the baseline's kernel benchmarks */
	bool *kept;                        /* per variant: kept in the current best */
	struct var_config cfg;             /* effective flags and env of the current best */
	struct rep_progress prog;          /* progress output */
	int seq;                           /* next iteration sequence number */
	const char *variant;               /* name of the change being measured, for progress */
	int fatal;                         /* the error that broke the journal or the store, 0 if none */
	struct {
		int n;                     /* changes in a row that failed to apply for one reason */
		char *reason;              /* that reason (owned), NULL after anything else */
	} streak;
	struct {
		struct run_stats_noise noise; /* the objective's noise over the decided comparisons so far */
		bool loaded;               /* noise holds the store's earlier comparisons (read once) */
		int before;                /* a pool worker: only iterations before this seq (its round's
		                              first) give the prior; 0: every one recorded */
	} prior;                           /* the decision rule's prior (decide.c) */
	struct camp_pool pool;             /* engines kept up between samples */
	bool devmem_said;                  /* why device memory is unavailable was recorded */
	struct camp_exec *exec;            /* where measurements run (exec.h); NULL before it is opened */
	struct camp_gen *gen;              /* the current proposal's generated variant, NULL for the spec's own */
	struct camp_tel_dev tel;           /* the telemetry sampler's device */
	struct {
		int round;                 /* the round of its iteration, -1: no pool */
		const char *device;        /* its device ("cuda:1"), NULL: no pool */
		char *device_fact;         /* fact naming the device's identity: NULL "device", else "device@cuda:1" */
	} worker;                          /* a pool worker's seat (workers.c) */
	bool profile_failed;               /* the profile step failed in this run: not tried again */
};

/* A space point's change, generated for one iteration (space.c). */
struct camp_gen {
	struct var_def def; /* the variant, read by the spec's variant parser */
	json_t *variant;    /* as the spec would write it */
	json_t *point;      /* {parameter: value} */
	char fp[65];        /* fingerprint: the target and the point; llm: the change's */
	int target;         /* the space's target; -1: an llm answer */
	int round;          /* llm: the iteration number its answer was asked for */
};

/* ---- loop.c ---- */
/* Note that a write the resume depends on failed: the run must stop. Returns rc. */
int camp_fatal(struct camp *c, int rc);
/* A warning line on stderr (even with --quiet): a best-effort write failed. */
void camp_warn(struct camp *c, const char *what, const struct rt_sb *why);
uint64_t camp_hash_seed(uint64_t seed, const char *s);

/* ---- recipe.c ---- */
/* The spec campaign cp ran, loaded from its stored text with its paths
 * placed under the campaign's workdir (a relative spec path is tried as
 * given, then in the workdir). *out is the caller's (spec_free). */
int camp_stored_spec(const struct db_campaign *cp, struct spec **out, struct rt_sb *err);

/* ---- replay.c ---- */
/* A kept iteration's change as the spec writes a variant (named as the
 * iteration): the spec's own variant from spec_json (spec_to_json(s)), or
 * the generated one a space strategy or llm stored. NULL with err filled. */
json_t *camp_kept_variant(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			  const struct db_iteration *it, struct rt_sb *err);
/* Where a variant's change lands (table.file, patch.dir, file.target) made
 * relative when under the workdir src_wd, so it lands in another workdir;
 * the change's own bytes (patch.file, file.source) made absolute against
 * bytes_dir when relative. */
void camp_place_paths(json_t *v, const char *src_wd, const char *bytes_dir);

/* ---- budget.c ---- */
/* Whether another iteration may start after done iterations of this run:
 * --max-iterations, the spec's max_iterations, and the deadline against
 * the next iteration's expected length. When not, *why says which (owned).
 * RT_EDB when the iterations could not be read. */
int camp_budget_allows(struct camp *c, int done, bool *allowed, char **why, struct rt_sb *err);
/* The next iteration's expected wall time in s (NAN: unknown), and in how
 * the rule that gave it ("the 90th percentile of 7 finished iterations"). */
int camp_budget_estimate(struct camp *c, double *next_s, struct rt_sb *how, struct rt_sb *err);

/* ---- journal.c ---- */
/* The journal's writes, replaceable as SQLite's aSyscall: every write the
 * crash path depends on goes through camp_jsys. Each returns 0 or a
 * negative RT_E* with the reason appended to err. */
struct camp_jsys {
	/* db_original_record: RT_EDB */
	int (*original)(struct db *db, int64_t campaign_id, const char *path, bool existed,
			const void *content, size_t len, int mode, struct rt_sb *err);
	/* db_intent_open: RT_EDB */
	int (*intent_open)(struct db *db, int64_t iteration_id, const char *action, const char *path,
			   bool before_exists, const void *before, size_t before_len, int before_mode,
			   bool after_exists, const void *after, size_t after_len, int after_mode,
			   int64_t *id, struct rt_sb *err);
	/* db_intent_close: RT_EDB, RT_ENOENT, RT_ESTATE */
	int (*intent_close)(struct db *db, int64_t id, const char *state, struct rt_sb *err);
	/* db_intent_set_after: RT_EDB */
	int (*intent_after)(struct db *db, int64_t id, bool exists, const void *bytes, size_t len,
			    int mode, struct rt_sb *err);
	/* rt_write_file_atomic, then the mode set when it is not 0: RT_EIO */
	int (*write)(const char *path, const void *data, size_t len, int mode, struct rt_sb *err);
	/* unlink, a missing file is fine: RT_EIO */
	int (*remove)(const char *path, struct rt_sb *err);
};
/* The table in use; tests may replace entries (camp_jsys_reset puts the defaults back). */
extern struct camp_jsys camp_jsys;
void camp_jsys_reset(void);
/* Testing hook (RATCHET_FAULT_JOURNAL): from now on the nth journal write
 * (1-based, counting every entry of camp_jsys) fails with RT_EIO and a
 * message naming it; 0 turns the hook off. */
void camp_jsys_fault_at(long n);

/* Move every file of plan to the candidate's bytes (to_cand) or back to its
 * before bytes, journaled: pre-campaign bytes and an intent committed, the
 * atomic write, the intent closed. Files already there are left alone;
 * files whose after bytes are unknown (patches) are skipped on the way to
 * the candidate. *moved: how many files were written. Any failure is a
 * journal failure (the run must stop). */
int camp_journal_move(struct db *db, int64_t cid, int64_t iter, const struct var_plan *plan,
		      bool to_cand, size_t *moved, struct rt_sb *err);
/* A pool's working copy (folder copy, filled from workdir) about to be
 * refilled: every file of it the journal has touched is first moved to the
 * workdir's bytes, journaled as a revert of iteration iter (the newest), so
 * that each copy's files stay what their last intent says (issue 22, item
 * 25). A failure is a journal failure. */
int camp_journal_refill(struct db *db, int64_t cid, int64_t iter, const char *copy, const char *workdir,
			struct rt_sb *err);
/* A patch: intents with the before bytes are opened (ids[i] per plan file)
 * before git touches anything; camp_journal_patch_close completes them
 * with what it wrote (ok) or writes the before bytes back and closes them
 * undone. */
int camp_journal_patch_open(struct db *db, int64_t cid, int64_t iter, const struct var_plan *plan,
			    int64_t *ids, struct rt_sb *err);
int camp_journal_patch_close(struct db *db, const struct var_plan *plan, const int64_t *ids, bool ok,
			     struct rt_sb *err);

/* ---- apply.c ---- */
/* The context the variant ops get for a configuration. */
void camp_var_ctx(const struct camp *c, struct var_config *cfg, struct var_ctx *x);
/* A configuration as it runs, before placeholders: the argv its flag
 * changes edit (the engine's command, else the first command benchmark's)
 * and its environment (the engine's env, else none, with the overrides).
 * The one place both are built from a var_config (apply, measure, the
 * engine pool, a space's start, recipes). */
struct camp_cmdline {
	char **argv;        /* NULL-terminated (owned) */
	struct rt_envv env; /* sorted by name (owned) */
};
void camp_cmdline(const struct camp *c, const struct var_config *cfg, struct camp_cmdline *out);
void camp_cmdline_release(struct camp_cmdline *l);
/* false for flag and env changes: they live in the candidate's config. */
bool camp_touches_files(const struct var_def *v);
/* Plan, describe and fingerprint a change on top of the best, touching
 * nothing but cand (flag and env changes are applied to it here).
 * *unchanged: the candidate's configuration fingerprint is the best's (a
 * flag set to the value the command already gives it, a table entry set
 * to what it holds): there is nothing to measure. */
int camp_plan(struct camp *c, const struct var_def *v, struct var_config *cand, struct var_plan *plan,
	      struct rt_sb *desc, char change_sha[65], char config_sha[65], bool *unchanged,
	      struct rt_sb *log, struct rt_sb *err);
/* Put the candidate's change in place (files journaled, build run), or the
 * best configuration back (its build re-run when files moved: a failed
 * apply is taken back the same way). A journal failure is also camp_fatal;
 * any other error (a patch that does not apply, a build that fails) fails
 * only the iteration. */
int camp_to_cand(struct camp *c, int64_t iter, const struct var_def *v, struct var_plan *plan,
		 struct var_config *cand, struct rt_sb *log, struct rt_sb *err);
int camp_to_best(struct camp *c, int64_t iter, const struct var_def *v, struct var_plan *plan,
		 struct rt_sb *log, struct rt_sb *err);

/* ---- measure.c ---- */
struct series *camp_series_get(struct series **v, size_t *n, const char *bench, const char *metric,
			       const char *unit);
/* Counts[i] of log event ev[i] for i < nev (a prefix of the spec's events)
 * added to arm's series: linear in nev, however many events there are. */
void camp_series_add_events(struct series **v, size_t *n, const struct spec_log_event *ev,
			    const double *counts, size_t nev, int arm);
/* The series of bench.metric, or NULL. */
struct series *camp_series_find(struct series *v, size_t n, const char *bench, const char *metric);
void camp_series_free(struct series *v, size_t n);

/* Start the engine for a configuration of arm, record its process group (a
 * failure to is camp_fatal), wait until it is ready, ask its version and
 * record its provenance (camp_prov_record). On failure the
 * engine is stopped (its log stored) and l->eng is NULL. */
int camp_launch_engine(struct camp *c, int64_t iter, int arm, const struct var_config *cfg,
		       struct camp_launch *l, struct rt_sb *err);
void camp_launch_release(struct camp_launch *l);
/* Logs and outputs, stored with secrets redacted; a failure warns. */
void camp_store_artifact(struct camp *c, int64_t iter, const char *kind, const char *name,
			 const char *data, size_t len, bool truncated);
void camp_store_engine_log(struct camp *c, int64_t iter, struct run_engine *e, const char *name);
/* ---- profile_step.c ---- */
/* The spec's profile: command on the best configuration when it is due,
 * imported as an observed iteration (c->seq taken). A failed step warns and
 * is not tried again in this run; only a broken store is an error. */
int camp_profile_step(struct camp *c, struct rt_sb *err);

/* ---- engine_pool.c ---- */
/* The engine for a sample of arm (0 best, 1 candidate; a gate uses the arm
 * whose configuration it runs) of iteration iter on cfg: the one kept up
 * with the same configuration, else a new launch (stopping what
 * engine.restart and engine.concurrent say must go). *out belongs to the
 * pool until camp_engine_put. Its identity is not proven here. */
int camp_engine_get(struct camp *c, int64_t iter, int arm, const struct var_config *cfg,
		    struct camp_launch **out, struct rt_sb *err);
/* After the sample: kept for the next one, or stopped (a failure, restart:
 * sample); log_name (NULL: none) names its log when it is stopped. */
void camp_engine_put(struct camp *c, struct camp_launch *l, bool failed, const char *log_name);
/* Stop every engine kept up (the end of a run), storing their logs. */
void camp_engines_stop(struct camp *c);

/* ---- prov.c ---- */
/* Record a ready launch of arm in `launches`: its provenance, version and
 * ready time, and how it differs from the campaign's first launch (said on
 * the run's output too). A failure to store warns. */
void camp_prov_record(struct camp *c, int64_t iter, int arm, struct camp_launch *l);

/* ---- telemetry.c ---- */
struct dev_sampler;
struct run_bench_out;
/* Start the sampler of a sample's benchmarks (telemetry: in the spec) on
 * the campaign's device, with the engine's processes (l->eng, may be NULL)
 * for RSS; *out is NULL when telemetry is off or the sampler could not
 * start (a warning). */
void camp_tel_start(struct camp *c, int64_t iter, struct camp_launch *l, struct dev_sampler **out);
/* Stop and free s (NULL: nothing), put its medians into tel as the metrics
 * of benchmark "telemetry", add each kernel benchmark's percent of peak at
 * the SM clock held (pct_peak_flops_held) to outs, and record a throttled
 * sample as fact telemetry.throttled. */
void camp_tel_finish(struct camp *c, int64_t iter, int arm, int rep, struct dev_sampler *s,
		     struct run_bench_out *tel, struct run_bench_out *outs, size_t nouts);

/* One measurement of one arm (0 best, 1 candidate): every benchmark once,
 * stored and added to the series. RT_EIDENTITY when the endpoint or the
 * device could not be proven (the samples are stored invalid, not used);
 * RT_EPROC and others when the engine or a benchmark failed; a store
 * failure is camp_fatal. */
int camp_measure(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		 struct series **ser, size_t *nser, struct rt_sb *err);
/* camp_measure without the executor's begin, end and retry (measure.c);
 * camp_measure (exec.c) wraps it. */
int camp_measure_once(struct camp *c, int64_t iter, int arm, int rep, const struct var_config *cfg,
		      struct series **ser, size_t *nser, struct rt_sb *err);
/* Slot j of the A/B schedule: interleaved pairs (best r, candidate r); or
 * the best's first min runs, then the candidate's, then pairs. decide_now:
 * the rule looks after this slot. */
void camp_slot(int j, int min, bool interleave, int *arm, int *rep, bool *decide_now);

/* ---- decide.c ---- */
/* Replace it->reason. */
void camp_reason(struct db_iteration *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The rule (runner/stats) on the objective after a pair, with the
 * campaign's noise so far as its prior (read from the store on the first
 * call of a process, so a resumed campaign decides as an uninterrupted
 * one). RT_EINVAL, with the reason in why, when the objective was not
 * measured or cannot be compared, or the store could not be read. */
int camp_decide_objective(struct camp *c, const char *variant, struct series *ser, size_t nser,
			  struct run_stats_decision *d, struct rt_sb *why);
/* The verdict of a decided comparison: the rule, then every constraint on
 * the candidate's medians; a greedy trial that passes is reverted with
 * passed = 1. Fills it's statistics and reason, adds the comparison's noise
 * to c->prior.noise (the next decisions' prior); returns KEPT or REVERTED. */
enum db_iter_state camp_verdict(struct camp *c, enum db_iter_role role,
				const struct run_stats_decision *d, struct series *ser, size_t nser,
				bool paired, struct db_iteration *it);
/* Run the GSM8K gate on a configuration (starting its engine if needed). */
int camp_gate(struct camp *c, int64_t iter, const struct var_config *cfg,
	      struct run_gate_result *gr, struct rt_sb *err);
/* Record an iteration's end in one transaction: statistics and regressions
 * of every metric (with stats), the row's final state (passed follows from
 * it unless set), and the campaign's best when kept. A failure is
 * camp_fatal. */
int camp_record(struct camp *c, struct db_iteration *it, enum db_iter_state state,
		struct series *ser, size_t nser, bool stats, struct rt_sb *err);

/* ---- propose.c: the proposer table ---- */
/* One read of a campaign's proposals and iterations, taken once per
 * proposal and shared by the row's history and next. */
struct camp_rows {
	struct db_proposal *ps;   /* in seq order */
	size_t np;
	struct db_iteration *its; /* in seq order */
	size_t ni;
	struct camp_row_id {
		int64_t id;
		size_t at;        /* its index in its */
	} *by_id;                 /* every iteration, by ascending id */
};
int camp_rows_load(struct camp *c, struct camp_rows *r, struct rt_sb *err);
void camp_rows_free(struct camp_rows *r);
/* The index in r->its of the iteration of id (a device pool's workers
 * insert concurrently, so ids need not follow seqs); false when none. */
bool camp_rows_find(const struct camp_rows *r, int64_t id, size_t *k);

/* How a strategy's proposals reach the campaign: one row per source
 * (agents' enum agent_source: the spec's variants, the space, a chat
 * model). Nothing outside the rows asks which strategy runs. */
struct camp_proposer {
	const char *what; /* "the spec's variants", for messages */
	/* The strategy's view of the history (r: the store, read once): every
	 * attempt, with its round (and a generated change's point: target and
	 * code). */
	int (*history)(struct camp *c, const struct camp_rows *r, struct agent_attempt **out, size_t *n,
		       struct rt_sb *err);
	/* Up to max distinct proposals into out[0..*n) (r: as history read it;
	 * x: the strategy's context, its history and x->rounds). Returns as
	 * agent_next_batch, and 2 when proposing recorded an iteration of its
	 * own (c->seq taken) and there is nothing to run. */
	int (*next)(struct camp *c, const struct camp_rows *r, struct agent_ctx *x, size_t max,
		    struct agent_proposal *out, size_t *n, struct rt_sb *err);
	/* The change a proposal makes: *gen, its generated variant, or NULL
	 * for the spec's own variant p->variant. */
	int (*make)(struct camp *c, const struct agent_proposal *p, struct camp_gen **gen, struct rt_sb *err);
	/* Record a generated change beside its iteration (NULL: nothing to
	 * record); a failure is the journal's (camp_fatal). */
	int (*record)(struct camp *c, int64_t iter, const struct agent_proposal *p, const struct camp_gen *g,
		      struct rt_sb *err);
	/* A kept iteration put back on --resume: its flags and environment
	 * into c->cfg (files are the journal's business). */
	int (*rebuild)(struct camp *c, const struct db_iteration *it, struct rt_sb *err);
	/* The variant a kept iteration applied, as the spec would write it,
	 * named as the iteration (replay, recipes); NULL with err. */
	json_t *(*stored)(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			  const struct db_iteration *it, struct rt_sb *err);
	/* A generated change's plan, the files it will really touch, checked
	 * against what the source may touch before anything is applied (NULL:
	 * the source is trusted as the spec is). 0, or RT_EINVAL with why. */
	int (*contain)(struct camp *c, const struct var_plan *plan, struct rt_sb *err);
};
/* The row serving the spec's strategy. */
const struct camp_proposer *camp_proposer_of(const struct spec *s);
/* Does the strategy generate its variants (not the spec's own)? */
bool camp_generates(const struct spec *s);
/* The next proposals, up to max: the history read, the row asked (rounds:
 * a device pool's round of trials); *last is the latest round recorded.
 * Returns as the row's next. */
int camp_propose(struct camp *c, size_t max, bool rounds, struct agent_proposal *out, size_t *n, int *last,
		 struct rt_sb *err);

/* The rows that live with their source (propose.c holds the variants row). */
extern const struct camp_proposer camp_proposer_space; /* space.c */
extern const struct camp_proposer camp_proposer_chat;  /* llm.c */

/* ---- space.c: generated changes and their proposals rows ---- */
/* The proposals row of a generated change (a point, an llm answer: g->target -1). */
int camp_space_record(struct camp *c, int64_t iter, const struct agent_proposal *p, const struct camp_gen *g,
		      struct rt_sb *err);
void camp_gen_free(struct camp_gen *g);
/* Replay a generated variant (JSON, as stored) of iteration iter onto
 * c->cfg: its flags and environment (files are the journal's business). */
int camp_gen_replay(struct camp *c, int64_t iter, const char *variant, struct rt_sb *err);
/* The variant JSON of iteration iter's proposals row (owned), NULL when none
 * (err set only when the store could not be read). */
char *camp_proposal_variant(struct db *db, int64_t cid, int64_t iter, struct rt_sb *err);
/* Where a generated change's stored variant is read (owned; NULL when none,
 * err set only when the store could not be read). */
typedef char *(*camp_text_fn)(struct db *db, int64_t cid, int64_t iter, struct rt_sb *err);
/* A kept generated change put back: its stored variant replayed (camp_gen_replay). */
int camp_gen_rebuild(struct camp *c, const struct db_iteration *it, camp_text_fn text_of, struct rt_sb *err);
/* text (owned, freed) as JSON, named as it; NULL with err when missing. */
json_t *camp_stored_named(char *text, int64_t cid, const struct db_iteration *it, struct rt_sb *err);

/* ---- llm_chat.c: strategy llm's one request, through runner/oai ---- */
/* What one chat request brought back. */
struct camp_llm_reply {
	long status;           /* HTTP status, 0 when none arrived */
	char *body;            /* the response body (owned), NULL when none */
	char *content;         /* choices[0].message.content (owned), NULL when none */
	int prompt_tokens;     /* usage.prompt_tokens, -1 when absent */
	int completion_tokens; /* usage.completion_tokens, -1 when absent */
	double latency_ms;     /* sending to the whole response */
};
/* POST messages to cfg's endpoint with key (NULL: none) as a Bearer
 * token, and format (NULL: none) as the request's response_format. 0 with r filled, including an answer that is not usable; RT_EHTTP
 * or RT_ETIMEDOUT (err says why, r->body what came back) when no 200
 * response with a message arrived. Release r with camp_llm_reply_release. */
int camp_llm_chat(const struct agent_llm_cfg *cfg, const char *key, const json_t *messages,
		  const json_t *format, struct camp_llm_reply *r, struct rt_sb *err);
void camp_llm_reply_release(struct camp_llm_reply *r);

/* ---- the scheduler (loop.c) and where a proposal runs ---- */
/* Rebuild the best configuration from the store; *have_baseline: a
 * finished baseline. */
int camp_rebuild_best(struct camp *c, bool *have_baseline, struct rt_sb *err);
/* Where the one scheduling loop (loop.c) runs what the proposer table
 * proposes: in the runner itself, one change at a time (loop.c), or as a
 * device pool's rounds of trials, one worker process per device (round.c).
 * A serial run is the same loop with rooms of one. */
struct camp_runner {
	const char *name;  /* "here", "pool", for messages */
	bool rounds;       /* proposals come as rounds of trials, the winner confirmed (agent_ctx.rounds) */
	bool profiles;     /* the spec's profile: step runs between iterations */
	/* What it cannot run, said before anything is measured (NULL: nothing). */
	int (*check)(struct camp *c, struct rt_sb *err);
	/* The baseline, measured (its iteration is c->seq). */
	int (*baseline)(struct camp *c, struct rt_sb *err);
	/* How many proposals the next round may hold, done iterations run so far (>= 1). */
	size_t (*room)(const struct camp *c, int done);
	/* Run p[0..n) as iterations c->seq .. c->seq+n-1 of round. */
	int (*run)(struct camp *c, int round, const struct agent_proposal *p, size_t n, struct rt_sb *err);
};
extern const struct camp_runner camp_runner_pool; /* round.c */
/* A pool worker's whole run (workers.c): pinned to its device, its one
 * iteration (or the baseline) run and recorded; run_campaign's body when
 * run_campaign_opts.worker is set. */
int camp_worker_run(struct camp *c, struct run_campaign_result *res, struct rt_sb *err);
/* The worker's own working copy of the workdir for a round (workers.c):
 * dir emptied and refilled from the workdir, leaving out the database's
 * files. RT_EIO with the path in err. */
int camp_copy_sync(const struct camp *c, const char *dir, struct rt_sb *err);

/* ---- iter.c ---- */
/* Whether the campaign may move an iteration from one state to another. */
bool camp_state_allowed(enum db_iter_state from, enum db_iter_state to);
/* Move an iteration (it->state, it->phase: as stored) to a running state
 * and phase, writing it; an illegal move is RT_ESTATE and writes nothing; a
 * failed write is camp_fatal. The state and phase it is in: nothing to write.
 * Final states are written by camp_record. */
int camp_iter_enter(struct camp *c, struct db_iteration *it, enum db_iter_state to, const char *phase,
		    struct rt_sb *err);
/* The baseline: the unchanged configuration measured and gated. */
int camp_run_baseline(struct camp *c, struct rt_sb *err);
/* One change proposed by the strategy, from plan to record. */
int camp_run_one(struct camp *c, const struct agent_proposal *p, struct rt_sb *err);
/* Changes in a row that fail to apply for the same reason before the run stops. */
#define CAMP_APPLY_STREAK_MAX 3
/* RT_EINVAL naming the reason once CAMP_APPLY_STREAK_MAX changes in a row
 * failed to apply for it (the run stops, the campaign stays resumable);
 * else 0. */
int camp_apply_streak(const struct camp *c, struct rt_sb *err);

#endif
