/*
 * Command benchmarks: run a program from argv (never a shell) in its own
 * process group with a timeout, capture its output with a cap, and pull
 * metrics out of stdout or a file: JSON pointers (RFC 6901), PCRE2 regexes,
 * and the built-in extractors for llama-batched-bench (markdown table and
 * JSONL), llama-bench -o json and vllm bench serve --save-result JSON.
 * Placeholders in argv are expanded by the caller.
 */
#ifndef RT_BENCH_CMD_H
#define RT_BENCH_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "runner/spec/spec.h"
#include "runner/base/rt.h"

/* What one run of a command did. */
struct run_bcmd_result {
	int status;          /* exit status, or 128 + signal when killed by one */
	bool timed_out;      /* killed because the timeout passed */
	bool cancelled;      /* stopped because rt_cancelled() (run_bcmd_exec_cancellable) */
	bool truncated;      /* stdout or stderr hit the cap */
	bool out_cut;        /* stdout hit the cap: what came after it was dropped */
	double wall_s;       /* wall time from start to exit */
	struct rt_sb out;    /* stdout (capped) */
	struct rt_sb err;    /* stderr (capped) */
};

void run_bcmd_result_init(struct run_bcmd_result *r, size_t cap);
void run_bcmd_result_release(struct run_bcmd_result *r);

/* Run argv (argv[0] searched in PATH when it has no '/') in cwd (NULL: the
 * current folder) with the inherited environment plus env (value NULL
 * unsets), in a new process group, stdin from /dev/null. After timeout_s
 * the group gets SIGTERM, and SIGKILL 2 s later. Output is appended to
 * r->out / r->err up to their caps (run_bcmd_result_init; 0: 16 MiB).
 * Returns 0 when the child ran (look at r->status and r->timed_out), or
 * RT_EPROC / RT_ENOENT when it could not be started. */
int run_bcmd_exec(char *const *argv, const struct rt_env *env, size_t n_env, const char *cwd,
		  double timeout_s, struct run_bcmd_result *r, struct rt_sb *err);

/* The same, for benchmarks: when rt_cancelled() (runner/base/cancel.h: the
 * second Ctrl-C) the group is stopped as on a timeout and r->cancelled set.
 * Builds and git commands use run_bcmd_exec, which a cancel never cuts
 * short: the files must go back whole. Only this one is a measured process
 * (rt_spawn_opts.measured: a Slurm job step under executor: slurm). */
int run_bcmd_exec_cancellable(char *const *argv, const struct rt_env *env, size_t n_env,
			      const char *cwd, double timeout_s, struct run_bcmd_result *r,
			      struct rt_sb *err);

/* Adapter with the var_exec_fn signature (variants/var.h): stdout and stderr
 * together in out, *status the exit status (124 on timeout). */
int run_bcmd_exec_simple(char *const *argv, const char *cwd, double timeout_s, struct rt_sb *out,
			 int *status, struct rt_sb *err);

/* One extracted metric. */
struct run_bcmd_metric {
	char *name;   /* metric name (owned) */
	double value; /* in base units (seconds, tokens/s, ...) */
};

struct run_bcmd_metrics {
	struct run_bcmd_metric *v; /* owned */
	size_t n;
};

void run_bcmd_metrics_release(struct run_bcmd_metrics *m);
/* Value of a metric, or NULL. */
const double *run_bcmd_metric_get(const struct run_bcmd_metrics *m, const char *name);

/* RFC 6901 JSON pointer: "" is the whole document, "/a/0/b~1c" ... Returns
 * the value (borrowed) or NULL with a message naming the step that failed. */
json_t *run_bcmd_json_pointer(json_t *root, const char *ptr, struct rt_sb *err);

/* Parse a metric value: a JSON number, or a string holding a number (with
 * optional surrounding spaces). */
int run_bcmd_parse_number(const char *s, size_t n, double *out);

/* Extract one explicit metric from text (stdout or the file's bytes).
 * src names the text in messages ("stdout" or the file). */
int run_bcmd_extract_metric(const struct spec_metric *m, const char *text, size_t len,
			    const char *src, double *out, struct rt_sb *err);

/* Built-in formats; each appends its metrics (names as in spec.h). */
int run_bcmd_llama_batched_table(const char *text, size_t len, const char *row,
				 struct run_bcmd_metrics *out, struct rt_sb *err);
int run_bcmd_llama_batched_jsonl(const char *text, size_t len, const char *row,
				 struct run_bcmd_metrics *out, struct rt_sb *err);
int run_bcmd_llama_bench_json(const char *text, size_t len, struct run_bcmd_metrics *out,
			      struct rt_sb *err);
int run_bcmd_vllm_bench_serve(const char *text, size_t len, struct run_bcmd_metrics *out,
			      struct rt_sb *err);

/* ---- the file a format reads (bench_cmd_file.c) ---- */
/* One file as it was. */
struct run_bcmd_out_file {
	char *path;            /* its path (owned) */
	struct timespec mtime; /* last change */
	off_t size;            /* bytes */
	ino_t ino;             /* inode: a file replaced by a rename is new */
};

/* A format file, taken before the run: a folder or a glob is listed so
 * the file the run writes can be told from those already there. */
struct run_bcmd_outputs {
	char *pattern;                 /* absolute path, or glob (a folder becomes DIR/x) (owned) */
	bool pick;                     /* a folder or a glob: pick the file the run wrote */
	struct run_bcmd_out_file *v;   /* what the pattern named before the run (owned) */
	size_t n;                      /* entries in v */
};

/* Take the state of path (placeholders expanded; relative to cwd) before
 * a run. Released with run_bcmd_outputs_release. */
void run_bcmd_outputs_init(struct run_bcmd_outputs *o, const char *path, const char *cwd);
void run_bcmd_outputs_release(struct run_bcmd_outputs *o);
/* After the run: the path itself, or for a folder or a glob the newest
 * file that is new or changed (RT_ENOENT when none is). *path is owned by
 * the caller. */
int run_bcmd_outputs_pick(const struct run_bcmd_outputs *o, char **path, struct rt_sb *err);
/* Where `vllm bench serve ... --save-result` writes its result:
 * --result-dir/--result-filename, or a glob of *.json in --result-dir (or
 * the working folder) when vLLM names the file itself; NULL without
 * --save-result. Caller frees. */
char *run_bcmd_vllm_result_path(char *const *argv);

/* Every metric of a command benchmark from one finished run (r->out is its
 * stdout): the built-in format's, then the explicit ones. Files are relative
 * to cwd. When a metric read from stdout is missing and stdout was cut at its
 * cap (r->out_cut), the message says so. */
int run_bcmd_extract(const struct spec_cmd_bench *b, const char *cwd,
		     const struct run_bcmd_result *r, struct run_bcmd_metrics *out,
		     struct rt_sb *err);

#endif
