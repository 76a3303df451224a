/*
 * The engine supervisor: starts the serving engine of one or more
 * measurements from argv in its own process group, captures its output into
 * a size-capped log while counting log events, waits for readiness, proves
 * that what answers on the port is the engine it started (listening socket
 * owned by the child's process tree, the expected served name listed, the
 * per-launch nonce echoed when there is one), asks its version, measures
 * what it costs (ready time, the tree's peak RSS), records its provenance
 * (engine_prov.c), and stops it by group.
 */
#ifndef RT_ENGINE_H
#define RT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
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
	bool no_port_owner;          /* skip the port-owner proof (containers: see engine_ident.c) */
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

/* Pick a free TCP port on host for an engine: one bound and closed again,
 * chosen at random from RUN_ENGINE_PORT_FLOOR up to the kernel's ephemeral
 * range (net.ipv4.ip_local_port_range), where no client socket's automatic
 * port can take it before the engine binds it; port 0's pick when that
 * range is too narrow or full. */
#define RUN_ENGINE_PORT_FLOOR 10000
int run_engine_pick_port(const char *host, int *port, struct rt_sb *err);
/* The first port of the kernel's ephemeral range (32768 when unreadable). */
int run_engine_ephemeral_low(void);

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

/* Ask the engine its version (vLLM GET /version, llama-server GET /props,
 * SGLang GET /get_server_info; the first that answers), keep it and return
 * it ("vllm 0.8.5"), or NULL when none answered. */
const char *run_engine_fetch_version(struct run_engine *e);
/* The version kept by run_engine_fetch_version, or NULL. */
const char *run_engine_version(const struct run_engine *e);
/* The version in the answer to GET path (one of the three above):
 * "ENGINE VERSION", a new string; NULL when the answer has none. */
char *run_engine_version_parse(const char *path, const char *body, size_t len);

/* Seconds from start to the first 200 on ready_path; NAN before. */
double run_engine_ready_s(const struct run_engine *e);
/* Start a new window for the tree's peak RSS (one sample of a campaign). */
void run_engine_rss_reset(struct run_engine *e);
/* The largest RSS of the whole tree (bytes, VmRSS summed over its live
 * processes, read every 200 ms) since the last reset. */
uint64_t run_engine_rss_peak(struct run_engine *e);
/* The live processes of the tree (a new array the caller frees); the count. */
size_t run_engine_pids(struct run_engine *e, pid_t **out);

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
/* Seconds event i's lines carried so far (a named group seconds, s, ms or
 * us in its regex: "compiled in (?<ms>[0-9.]+) ms"); 0 without one. */
double run_engine_event_seconds(struct run_engine *e, size_t i);
/* How the engine ended ("exited with status 70"), or "" while running. */
const char *run_engine_exit_text(struct run_engine *e);

/* ---- provenance (engine_prov.c) ---- */

/* Run argv in cwd with a timeout: stdout and stderr in out, the exit status
 * in *status; 0, or an RT_E* when it could not run (the command benchmark's
 * runner, run_bcmd_exec_simple, has this shape). */
typedef int (*run_engine_exec_fn)(char *const *argv, const char *cwd, double timeout_s,
				  struct rt_sb *out, int *status, struct rt_sb *err);

/* What provenance is collected from. */
struct run_engine_prov_in {
	char *const *argv;          /* the launch's expanded argv */
	const struct rt_envmod *env; /* the engine's environment changes, as rt_spawn applies them */
	size_t n_env;               /* entries in env */
	const char *cwd;            /* its working folder */
	const char *const *repos;   /* folders the campaign touches (workdir, patch dirs) */
	size_t n_repos;             /* entries in repos */
	char *const *command;       /* engine.provenance argv, or NULL */
	run_engine_exec_fn exec;    /* runs git, docker/podman and the command */
	const pid_t *pids;          /* the engine's live processes, whose mapped libraries are hashed */
	size_t n_pids;              /* entries in pids */
};

/* A launch's provenance; every string owned, NULL when unknown. */
struct run_engine_prov {
	char *exe_path;             /* argv[0] resolved on PATH */
	char exe_sha256[65];        /* of its bytes, "" when unreadable */
	char *image_ref;            /* docker/podman run: the image as written */
	char *image_digest;         /* its RepoDigests[0] or Id from `image inspect` */
	char *repos;                /* JSON [{"path", "head", "dirty"}] of the git repositories */
	char *extra;                /* engine.provenance's output, secrets redacted */
	char *libs;                 /* JSON {path: sha256} of the shared objects the engine maps */
	struct rt_sb note;          /* what could not be recorded, "; "-separated */
};

/* Collect (never fails: what is missing is said in p->note). Release with
 * run_engine_prov_release. */
void run_engine_prov_collect(const struct run_engine_prov_in *in, struct run_engine_prov *p);
void run_engine_prov_release(struct run_engine_prov *p);
/* How p differs from the campaign's first launch, appended to out ("" when
 * it does not). built: the change under test rebuilds the engine, so its
 * version, executable and repository heads are the change, not a drift. */
void run_engine_prov_diff(const struct run_engine_prov *first, const char *first_version,
			  const struct run_engine_prov *p, const char *version, bool built, struct rt_sb *out);
/* The image of `docker run ...` / `podman run ...` (argv[0]'s base name
 * docker or podman, argv[1] run), *tool set to argv[0]; NULL otherwise. */
const char *run_engine_container_image(char *const *argv, const char **tool);

/* Stops it if needed and frees everything. */
void run_engine_free(struct run_engine *e);

#endif
