/*
 * Child processes: started from argv (never a shell), each in its own
 * process group, stopped by group (SIGTERM, then SIGKILL after a grace
 * period). The engine supervisor and the command benchmark (which also runs
 * git and build commands, bench_cmd.h) start everything through rt_spawn.
 * Also what /proc says about a process (parent, group, name, CPU time), for
 * the engine's identity checks and the benchmarks' CPU accounting, and a
 * process tree (struct rt_ptree): a child and every descendant it starts,
 * even those that leave its process group or session, so that all of them
 * can be stopped.
 */
#ifndef RT_PROC_H
#define RT_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "runner/base/rt.h"

/* One environment change: value NULL unsets name. */
struct rt_envmod {
	const char *name;  /* variable name */
	const char *value; /* new value, or NULL to unset */
};

struct rt_ptree;

struct rt_spawn_opts {
	const struct rt_envmod *env; /* applied on top of the inherited environment */
	size_t n_env;
	const char *cwd;             /* working folder, or NULL */
	int stdin_fd;                /* -1: /dev/null */
	int stdout_fd;               /* -1: /dev/null */
	int stderr_fd;               /* -1: /dev/null; may equal stdout_fd */
	struct rt_ptree *tree;       /* NULL, or the tree the child leads (rt_ptree_init'ed, unused) */
	bool measured;               /* an engine or a command benchmark: through the launcher */
	bool contain;                /* run argv under a keeper (rt_keep.c): what it starts, even in a
				      * session of its own, is killed when it exits or is stopped */
};

/* Start argv[0] (searched on PATH) in a new process group whose id is the
 * child's pid. With o->tree, the child joins the tree's cgroup (if it has
 * one) before exec and becomes the tree's leader. With o->contain, *pid
 * is the keeper's (rt_keep_exec): signal its group to stop the command,
 * and its wait status is the command's. Returns 0 and *pid, or RT_EPROC
 * with the reason (including "command not found") in err. */
int rt_spawn(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err);

/* rt_spawn's child with o->contain set, after its setup (group, fds, cwd):
 * becomes the keeper of rt_keep.c, which runs prog as its own child in a
 * group of its own, kills everything that child left behind when it
 * exits, and exits as it did. When runner (the process that forked it)
 * dies, the keeper is told as by a SIGTERM: a runner killed with -9 leaves
 * no command running. A failed fork or exec writes its errno to err_fd.
 * Never returns. System calls only (runs between fork and exec). */
_Noreturn void rt_keep_exec(const char *prog, char *const argv[], char *const envp[], int err_fd, pid_t runner);

/* The program rt_spawn would run for name with env applied and cwd as the
 * working folder: a name without '/' searched on the PATH, a path taken
 * as written (relative to cwd). NULL when it is missing or not
 * executable. Caller frees. */
char *rt_find_program_env(const char *name, const struct rt_envmod *env, size_t n_env, const char *cwd);
/* The launcher prefix: while set, rt_spawn runs prefix + argv instead of
 * argv for a measured process (rt_spawn_opts.measured; prefix[0] searched
 * on PATH), e.g. `srun --jobid=J ... ratchet __step ... --`, so that a
 * measurement's benchmark and engine run as Slurm job steps
 * (runner/campaign/exec_slurm.c). Helpers started during a sample
 * (provenance's git, probes) run here. NULL (the default) spawns argv
 * itself. prefix is borrowed until the next call. */
void rt_spawn_set_launcher(char *const *prefix);

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
	char state;    /* R, S, D, Z (zombie), ... */
	pid_t sid;     /* session */
	unsigned long long start; /* start time in clock ticks after boot: (pid, start) names one process */
};

/* Read /proc/PID/stat; RT_ENOENT when there is no such process, RT_EPARSE
 * when the file is not in the expected form. */
int rt_proc_stat(pid_t pid, struct rt_proc_stat *out);
/* Resident bytes of a process now (VmRSS of /proc/PID/status), 0 when it
 * is gone or a kernel thread. */
uint64_t rt_proc_rss(pid_t pid);
/* The shared objects a process maps executable (/proc/PID/maps: the path of
 * each mapping with 'x' in its permissions whose base name holds ".so"),
 * appended to out unless already there. RT_ENOENT when there is no such
 * process. */
int rt_proc_exec_libs(pid_t pid, struct rt_strv *out);

/*
 * A process tree: a child started by rt_spawn (the leader, in its own
 * process group) and every process it starts, even one that leaves the
 * group or the session (`setsid daemon &`) and would otherwise outlive a
 * stop by group, holding the leader's pipes open. Members are found two
 * ways at once:
 *   - a cgroup v2 made for the tree, where the system lets ratchet make one
 *     (the child joins it before exec: nothing escapes it; cgroup.kill or
 *     its member list ends them all);
 *   - /proc: every process whose parent is a known member, recorded by
 *     (pid, start time) so a reused pid is never signalled. rt_ptree_init
 *     makes this process a child subreaper (PR_SET_CHILD_SUBREAPER), so an
 *     orphaned member is re-parented here, stays in reach, and is reaped.
 * rt_ptree_scan records new members; call it while the tree runs (before
 * its leader dies, a member's ancestry is still visible).
 */
struct rt_ptree_member {
	pid_t pid;                /* process id */
	unsigned long long start; /* its start time (rt_proc_stat), to tell it from a reused pid */
};

struct rt_ptree {
	pid_t leader;                /* the spawned child, also its process group id; 0 before spawn */
	char *cgroup;                /* folder of the tree's cgroup v2, or NULL when none could be made */
	int procs_fd;                /* its cgroup.procs, open for the child to join; -1 without a cgroup */
	struct rt_ptree_member *m;   /* members seen so far, the leader first (grows) */
	size_t n;                    /* entries used in m */
	size_t alloc;                /* entries allocated in m */
};

/* Prepare an empty tree: a cgroup where one can be made (else none, and
 * /proc alone), and this process made a child subreaper. Never fails. */
void rt_ptree_init(struct rt_ptree *t);
/* Record members started since the last scan (cgroup and /proc), and reap
 * members that ended and were re-parented to this process. */
void rt_ptree_scan(struct rt_ptree *t);
/* Members still running (zombies excluded), the leader included; scans first. */
size_t rt_ptree_alive(struct rt_ptree *t);
/* Send sig to the leader's process group and to every member; SIGKILL
 * also goes through cgroup.kill. Scans first. */
void rt_ptree_signal(struct rt_ptree *t, int sig);
/* Stop the whole tree: SIGTERM to everything, up to grace_s for it all to
 * exit, then SIGKILL to what is left; waits (at most 5 s more) until no
 * member runs, and reaps the leader and the members re-parented here.
 * Returns the leader's wait status, or -1 when it had already been reaped
 * (leader_reaped: a caller's waitpid collected it). */
int rt_ptree_stop(struct rt_ptree *t, double grace_s, bool leader_reaped);
/* Kill what still runs (SIGKILL), remove the cgroup, free the list. */
void rt_ptree_release(struct rt_ptree *t);

#endif
