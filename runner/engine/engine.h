/*
 * The engine supervisor: starts the serving engine of one measurement from
 * argv in its own process group, captures its output into a size-capped log
 * while counting log events, waits for readiness, proves that what answers on
 * the port is the engine it started (listening socket owned by the child's
 * process tree, the per-launch nonce echoed, the expected model id), and
 * stops it by group.
 */
#ifndef RT_ENGINE_H
#define RT_ENGINE_H

#include <stdbool.h>
#include <sys/types.h>

#include "runner/base/proc.h"
#include "runner/base/rt.h"

struct run_engine_cfg {
	char *const *argv;           /* expanded argv; argv[0] is searched on PATH */
	const struct rt_envmod *env; /* environment changes */
	size_t n_env;
	const char *cwd;             /* working folder, or NULL */
	const char *host;            /* address it listens on, e.g. 127.0.0.1 */
	int port;                    /* port it was told to use */
	const char *ready_path;      /* readiness probe path, e.g. /health */
	double ready_timeout_s;      /* give up on readiness after this */
	const char *identity_path;   /* e.g. /v1/models; NULL: no model check */
	const char *expected_model;  /* NULL: accept the first model seen */
	const char *nonce;           /* NULL: no nonce check */
	double stop_grace_s;         /* SIGTERM -> SIGKILL */
	size_t log_cap;              /* bytes of log kept (events are counted on all of it) */
	const char *const *event_names;  /* log-event counters */
	const char *const *event_regex;  /* PCRE2 patterns, one per name */
	size_t n_events;
	/* NULL: the process listening on the port must be the engine or one
	 * of its children (/proc). Else called instead, to prove the engine's
	 * process where /proc cannot see it (a Slurm step on another node: its
	 * launch record); 0 or RT_EIDENTITY with the reason. */
	int (*prove_owner)(void *arg, struct rt_sb *err);
	void *prove_arg;             /* prove_owner's argument */
};

struct run_engine;

/* Pick a free TCP port on host (bind to port 0, read it back, close). */
int run_engine_pick_port(const char *host, int *port, struct rt_sb *err);

/* 0 when nothing listens on host:port; RT_EBUSY with a message naming what
 * answered (owning pid and command, and what GET ready_path returned). */
int run_engine_port_check(const char *host, int port, const char *probe_path, struct rt_sb *err);

/* Start the engine; does not wait for readiness. */
int run_engine_start(const struct run_engine_cfg *cfg, struct run_engine **out, struct rt_sb *err);

/* Poll ready_path until 200 or the timeout; fails early when the child exits. */
int run_engine_wait_ready(struct run_engine *e, struct rt_sb *err);

/* Prove the identity of what answers: RT_EIDENTITY with the reason on a
 * mismatch, RT_EPROC when the engine died. The model id seen is kept and
 * returned by run_engine_model(). */
int run_engine_verify(struct run_engine *e, struct rt_sb *err);

/* Is it still answering? GET ready_path within timeout_s; RT_EPROC with
 * "engine stopped answering" (hung) or how it ended (crashed). */
int run_engine_probe(struct run_engine *e, double timeout_s, struct rt_sb *err);

/* True while the engine's leader process runs. */
bool run_engine_alive(struct run_engine *e);

/* Stop by group; the engine stays allocated so its log can be read. */
void run_engine_stop(struct run_engine *e);

pid_t run_engine_pid(const struct run_engine *e);
const char *run_engine_url(const struct run_engine *e);   /* http://host:port */
const char *run_engine_model(const struct run_engine *e); /* NULL until verified */
/* The captured log; *truncated tells whether bytes were dropped at the cap. */
const char *run_engine_log(struct run_engine *e, size_t *len, bool *truncated);
/* Count of event i so far. */
long run_engine_event_count(struct run_engine *e, size_t i);
/* How the engine ended ("exited with status 70"), or "" while running. */
const char *run_engine_exit_text(struct run_engine *e);

/* Stops it if needed and frees everything. */
void run_engine_free(struct run_engine *e);

#endif
