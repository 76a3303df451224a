/*
 * What the files of runner/engine/ share (not an API): the supervisor's
 * state. engine.c owns launch, log capture, readiness and stop;
 * engine_ident.c the identity proof (who holds the port, the served model,
 * the self-reported version); engine_cost.c the engine's cost (ready time,
 * the process tree's peak RSS, its live pids); engine_prov.c a launch's
 * provenance.
 */
#ifndef RT_ENGINE_INT_H
#define RT_ENGINE_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>

#include "runner/engine/engine.h"

struct run_engine {
	struct run_engine_cfg cfg;  /* copy; pointers stay the caller's */
	pid_t pid;                  /* leader = process group id */
	struct rt_ptree tree;       /* the leader and every descendant (under tree_mu) */
	pthread_mutex_t tree_mu;    /* guards tree between the caller and the sampler */
	bool reaped;                /* waitpid collected it */
	int status;                 /* wait status once reaped */
	char exit_text[96];         /* how it ended */
	char *url;                  /* http://host:port */
	char *model;                /* model id seen by verify */
	char *version;              /* self-reported version, NULL until one answered */
	int log_fd;                 /* read end of the output pipe */
	pthread_t reader;           /* drains log_fd */
	bool reader_started;        /* reader runs and must be joined */
	pthread_mutex_t mu;         /* guards log, truncated, counts, drain_until, reader_eof, rss_* */
	int64_t drain_until;        /* stopping: the reader gives up at this rt_now_ns(); 0 while running */
	bool reader_eof;            /* the reader is done: the pipe closed, or the drain ran out (under mu) */
	struct rt_sb log;           /* captured output, capped */
	bool truncated;             /* bytes were dropped at the cap */
	long *counts;               /* per log event */
	double *seconds;            /* per log event: the durations its lines carried */
	pcre2_code **re;            /* compiled log-event patterns */
	int64_t t_start;            /* rt_now_ns() at start */
	double ready_s;             /* start to ready, NAN until ready */
	pthread_t sampler;          /* samples the tree's RSS (engine_cost.c) */
	bool sampler_started;       /* sampler runs and must be joined */
	bool sampler_quit;          /* asks the sampler to end (under mu) */
	uint64_t rss_peak;          /* bytes, the largest tree RSS since the last reset (under mu) */
};

/* engine_cost.c: start and end the RSS sampler (run_engine_start, stop). */
void eng_sampler_start(struct run_engine *e);
void eng_sampler_join(struct run_engine *e);

/* engine_ident.c: does a process of the engine's tree hold a socket
 * listening on port? *owner: the holder seen (0 if none), comm its name. */
pid_t eng_socket_owner(struct run_engine *e, int port, bool *ours, char *comm, size_t commlen);
/* engine_ident.c: the port-owner proof of run_engine_verify, 0 where the
 * configuration turns it off (prove_owner, no_port_owner) or the engine's
 * tree holds the port; else RT_EIDENTITY naming the holder. */
int eng_check_port_owner(struct run_engine *e, struct rt_sb *err);
/* engine.c: the last `lines` lines of the engine's log, appended to err. */
void eng_log_tail(struct run_engine *e, int lines, struct rt_sb *err);

#endif
