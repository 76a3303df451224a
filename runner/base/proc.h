/*
 * Child processes: started from argv (never a shell), each in its own
 * process group, stopped by group (SIGTERM, then SIGKILL after a grace
 * period). The engine supervisor and the command benchmark (which also runs
 * git and build commands, bench_cmd.h) start everything through rt_spawn.
 * Also what /proc says about a process (parent, group, name, CPU time), for
 * the engine's identity checks and the benchmarks' CPU accounting.
 */
#ifndef RT_PROC_H
#define RT_PROC_H

#include <sys/types.h>

#include "runner/base/rt.h"

/* One environment change: value NULL unsets name. */
struct rt_envmod {
	const char *name;  /* variable name */
	const char *value; /* new value, or NULL to unset */
};

struct rt_spawn_opts {
	const struct rt_envmod *env; /* applied on top of the inherited environment */
	size_t n_env;
	const char *cwd;             /* working folder, or NULL */
	int stdin_fd;                /* -1: /dev/null */
	int stdout_fd;               /* -1: /dev/null */
	int stderr_fd;               /* -1: /dev/null; may equal stdout_fd */
};

/* Start argv[0] (searched on PATH) in a new process group whose id is the
 * child's pid. Returns 0 and *pid, or RT_EPROC with the reason (including
 * "command not found") in err. */
int rt_spawn(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err);

/* Wait up to timeout_s for pid; returns 1 and *status when it exited, 0 when
 * still running after the timeout. timeout_s < 0 waits forever. */
int rt_wait_timeout(pid_t pid, double timeout_s, int *status);

/* SIGTERM the group, wait grace_s, then SIGKILL the group; reaps pid.
 * Returns the wait status of pid (or -1 if it was already reaped). */
int rt_stop_group(pid_t pid, double grace_s);

/* Describe a wait status: "exited with status 2", "killed by signal 9". */
void rt_describe_status(int status, char *out, size_t n);

/* Wait up to timeout_s for one line on fd (a child's stdout, say): the line
 * without its newline goes to line (n bytes with the NUL). Reads a byte at a
 * time so nothing after the line is consumed. Returns its length, or -1 on
 * timeout, end of file, an error or a line longer than n - 1 (line then
 * holds what came). */
ssize_t rt_read_line_timeout(int fd, char *line, size_t n, double timeout_s);

/* What /proc/PID/stat says about a process (Linux). */
struct rt_proc_stat {
	pid_t ppid;    /* parent */
	pid_t pgrp;    /* process group */
	char comm[64]; /* command name (the kernel keeps at most 15 characters) */
	double cpu_s;  /* user + system CPU time so far, in seconds */
};

/* Read /proc/PID/stat; RT_ENOENT when there is no such process, RT_EPARSE
 * when the file is not in the expected form. */
int rt_proc_stat(pid_t pid, struct rt_proc_stat *out);

#endif
