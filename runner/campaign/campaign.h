/*
 * The campaign loop: `ratchet run`. Each iteration applies exactly one change
 * on top of the current best (baseline + kept changes), measures candidate
 * and best close together in time, gates the candidate on GSM8K, decides keep
 * or revert with a stated confidence, and records everything. Every file
 * write is journaled first, so a crash at any point can be resumed.
 */
#ifndef RT_CAMPAIGN_H
#define RT_CAMPAIGN_H

#include <stdbool.h>
#include <stdio.h>

#include "db/db.h"
#include "db/replay.h"
#include "runner/spec/spec.h"

struct run_campaign_opts {
	bool resume;        /* continue the latest running campaign of this spec */
	bool quiet;         /* no progress output */
	bool tty;           /* progress as one live line */
	int max_iterations; /* stop after this many new iterations (0: no cap) */
	double deadline;    /* Unix time (s) the run must end by, at an iteration boundary; 0: none */
	const char *deadline_text; /* how it was given ("--until 07:00"), for the stop reason */
	FILE *out;          /* progress and summary */
	const char *api_key; /* for the load benchmarks and the gate; NULL: none; never stored */
	long fault_journal; /* testing hook (RATCHET_FAULT_JOURNAL): the nth journal write fails; 0: none */
	const char *worker; /* a device pool's worker (round.c): "CID:SEQ:ROUND:DEVICE:WHAT", NULL: the runner */
	const char *api_key_env; /* the variable api_key came from, passed on to the pool's workers; NULL: none */
	bool replay;        /* a replay (replay.c): variants that cannot be made are verdicts, not pre-flight problems */
	/* Called once the campaign is opened (created or resumed), before
	 * anything is measured; an error stops the run. NULL: none. */
	int (*on_open)(void *arg, struct db *db, int64_t campaign_id, struct rt_sb *err);
	void *on_open_arg;  /* on_open's */
};

struct run_campaign_result {
	int64_t campaign_id;
	int iterations;     /* iterations run by this invocation (baseline included) */
	int kept;           /* kept changes in the whole campaign */
	bool finished;      /* the strategy is done */
	char *stopped;      /* why the budget stopped the run first (owned: free it), or NULL */
	double gain;        /* the objective's change, best vs baseline: the kept changes compounded,
			     * in the metric's own sign (NAN if unknown) */
	int gain_better;    /* 1: that change is better, -1: worse, 0: unknown */
	int preflight;      /* problems pre-flight found (err lists them, one per line); 0: none */
};

/* Run (or resume) a campaign. RT_EINTR when a signal stopped it (resumable);
 * the error of a write the journal depends on (RT_EDB, RT_EIO) stops it
 * with the files as the journal describes them (resumable too). */
int run_campaign(struct db *db, const struct spec *s, const struct run_campaign_opts *o,
		 struct run_campaign_result *res, struct rt_sb *err);

/* What `ratchet recipe` wrote. */
struct run_recipe_result {
	int64_t campaign_id;   /* the campaign */
	int best_seq;          /* seq of its best iteration (0: the baseline) */
	int kept;              /* kept changes in it */
	int files;             /* files written under files/ */
	int patches;           /* patches written under patches/ */
	bool dockerfile;       /* a Dockerfile was written (the engine ran from a container image) */
	char config_sha256[65]; /* the best configuration's fingerprint, "" when not recorded */
};

/* Write what campaign id (0: the latest) kept into dir, so that it can be
 * reproduced without ratchet: files/ (the best configuration's bytes of
 * every file a kept change touched, by path under the workdir), patches/
 * (the kept patches, in order), apply.sh (copies files/ into a workdir,
 * removes what the best removed, runs the kept builds), run.sh (the
 * environment and the command line with the kept flags) and README.txt.
 * The spec is read from the store, as the campaign ran it. */
int run_campaign_recipe(struct db *db, int64_t id, const char *dir, struct run_recipe_result *res,
			struct rt_sb *err);

/* The order of a replay's levers. */
enum run_replay_order {
	RUN_REPLAY_ORIGINAL,   /* the order they were kept in */
	RUN_REPLAY_BEST_FIRST, /* the largest gain then first */
};

struct run_replay_opts {
	struct run_campaign_opts run; /* as `ratchet run`'s (resume: continue the replay) */
	int64_t from;                 /* the campaign whose kept changes are replayed */
	const char *from_file;        /* or a variants.yaml (`ratchet recipe` writes one); NULL: from */
	enum run_replay_order order;  /* the levers' order (--resume: the first run's) */
	const char *onto;             /* --onto REV: patch levers' repositories checked out at REV first; NULL: none */
};

struct run_replay_result {
	struct run_campaign_result run; /* the replay's campaign */
	struct db_lever *levers;        /* every lever with its lineage and verdict, in order (owned) */
	size_t n;                       /* how many */
	int reversed;                   /* levers reversed */
	int preflight;                  /* pre-flight problems, as run_campaign_result's */
};

/* Replay campaign o->from's kept changes (up to its best) on the spec
 * base: a campaign named run_replay_name(base->name, from) whose variants
 * are the kept changes in order, each with its lineage, measured and gated
 * one per iteration on top of the new best with base's rule. Every lever's
 * verdict (held, lost, reversed, not applicable, superseded) is stored in
 * replay_levers and returned in res (release it with
 * run_replay_result_release) even when the run stopped early (undecided
 * levers are DB_VERDICT_NONE). Returns as run_campaign. */
int run_replay(struct db *db, const struct spec *base, const struct run_replay_opts *o,
	       struct run_replay_result *res, struct rt_sb *err);
void run_replay_result_release(struct run_replay_result *res);
/* The name of the replay of campaign from on a spec named base (owned). */
char *run_replay_name(const char *base, int64_t from);

/* --until HH:MM[:SS]: the next time the local clock shows it after now
 * (Unix s): later today, or tomorrow when that time has passed. RT_EINVAL
 * for anything else. */
int run_budget_until(const char *hhmm, double now, double *out);

/* What pre-flight checks (preflight.c). */
struct run_preflight_opts {
	bool resume; /* --resume: the engine port and the patches' plans are left to the run */
	bool no_plans; /* replay: a change that cannot be made is a lever's verdict, not a problem */
};

/* Check that the spec can run on this machine before anything is measured:
 * programs on PATH, files, patches that apply, the GSM8K data, a free
 * engine port, visible devices. Appends one line per problem to out,
 * "file:line:col: key.path: problem; fix: ...", and returns how many there
 * were (0: none). Starts nothing, records nothing. */
int run_preflight(const struct spec *s, const struct run_preflight_opts *o, struct rt_sb *out);

/* Restore every file campaign `id` (0: the latest) touched to its
 * pre-campaign bytes. *n receives the number of files written. */
int run_campaign_restore(struct db *db, int64_t id, int *n, struct rt_sb *err);

/* Finish or undo half-applied changes of a campaign and put every touched
 * file back to the best configuration's bytes; marks unfinished iterations
 * interrupted. Called by --resume before anything else. */
int run_campaign_recover(struct db *db, int64_t campaign_id, int *undone, int *interrupted,
			 struct rt_sb *err);

#endif
