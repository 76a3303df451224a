/*
 * Child processes by argv, in their own process groups, what /proc says
 * about a process, and process trees (cgroup v2 where possible, /proc and
 * a child subreaper always); see proc.h.
 */
#define _GNU_SOURCE
#include "runner/base/proc.h"

extern char **environ;

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The inherited environment with the changes applied, built before fork:
 * after fork only async-signal-safe calls are allowed, and the runner has
 * threads (the engine log reader, libcurl's resolver). Caller frees. */
static char **make_env(const struct rt_envmod *env, size_t n_env)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = xcalloc(n + n_env + 1, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool over = false;
		for (size_t j = 0; j < n_env && !over; j++) {
			size_t ln = strlen(env[j].name);
			over = strncmp(environ[i], env[j].name, ln) == 0 && environ[i][ln] == '=';
		}
		if (!over)
			e[k++] = xstrdup(environ[i]);
	}
	for (size_t j = 0; j < n_env; j++) {
		if (!env[j].value)
			continue;
		bool later = false; /* a later change of the same name wins */
		for (size_t m = j + 1; m < n_env; m++)
			later |= strcmp(env[m].name, env[j].name) == 0;
		if (!later)
			e[k++] = xasprintf("%s=%s", env[j].name, env[j].value);
	}
	return e;
}

/* name resolved as execvp would through path (a PATH value; NULL: the
 * default /usr/local/bin:/usr/bin:/bin): a new string, or NULL when not
 * found. A name with a '/' is returned as it is. */
static char *find_on_path(const char *name, const char *path)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *s = path;;) {
		const char *c = strchr(s, ':');
		size_t n = c ? (size_t)(c - s) : strlen(s);
		char *cand = xasprintf("%.*s/%s", (int)n, n ? s : ".", name);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!c)
			return NULL;
		s = c + 1;
	}
}

/* argv[0] resolved through the child's PATH, or NULL. */
static char *find_program(const char *name, char **envp)
{
	const char *path = NULL;
	for (char **p = envp; *p; p++)
		if (strncmp(*p, "PATH=", 5) == 0)
			path = *p + 5;
	return find_on_path(name, path);
}

char *rt_find_program_env(const char *name, const struct rt_envmod *env, size_t n_env, const char *cwd)
{
	char **envp = make_env(env, n_env);
	char *prog = find_program(name, envp);
	rt_argv_free(envp);
	if (prog && prog[0] != '/' && cwd) { /* a relative path runs from cwd */
		char *abs = xasprintf("%s/%s", cwd, prog);
		free(prog);
		prog = abs;
	}
	if (prog && access(prog, X_OK)) {
		free(prog);
		prog = NULL;
	}
	return prog;
}

static char *const *spawn_launcher; /* rt_spawn_set_launcher's prefix, or NULL */

void rt_spawn_set_launcher(char *const *prefix)
{
	spawn_launcher = prefix && prefix[0] ? prefix : NULL;
}

static int spawn_argv(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err);

int rt_spawn(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err)
{
	if (!argv || !argv[0])
		return rt_errf(err, RT_EINVAL, "command: empty argv");
	if (!spawn_launcher || !o || !o->measured)
		return spawn_argv(argv, o, pid, err);
	size_t np = 0, na = 0;
	while (spawn_launcher[np])
		np++;
	while (argv[na])
		na++;
	char **full = xcalloc(np + na + 1, sizeof(char *));
	memcpy(full, spawn_launcher, np * sizeof(char *));
	memcpy(full + np, argv, na * sizeof(char *));
	int rc = spawn_argv(full, o, pid, err);
	free(full); /* the strings are borrowed */
	return rc;
}

static int spawn_argv(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err)
{
	char **envp = make_env(o ? o->env : NULL, o ? o->n_env : 0);
	char *prog = find_program(argv[0], envp);
	if (!prog) {
		rt_argv_free(envp);
		return rt_errf(err, RT_ENOENT, "%s: command not found in PATH", argv[0]);
	}
	/* A pipe with CLOEXEC tells the parent whether exec failed, and why. */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC)) {
		free(prog);
		rt_argv_free(envp);
		return rt_errf(err, RT_EPROC, "%s: pipe: %s", argv[0], strerror(errno));
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t runner = getpid();
	pid_t p = fork();
	if (p < 0) {
		close(ep[0]);
		close(ep[1]);
		if (devnull >= 0)
			close(devnull);
		free(prog);
		rt_argv_free(envp);
		return rt_errf(err, RT_EPROC, "%s: fork: %s", argv[0], strerror(errno));
	}
	if (p == 0) {
		/* Only async-signal-safe calls from here to execve. */
		setpgid(0, 0);
		if (o && o->tree && o->tree->procs_fd >= 0 && write(o->tree->procs_fd, "0", 1) != 1) {
			/* not in the cgroup: /proc still finds its descendants */
		}
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int in = o && o->stdin_fd >= 0 ? o->stdin_fd : devnull;
		int out = o && o->stdout_fd >= 0 ? o->stdout_fd : devnull;
		int er = o && o->stderr_fd >= 0 ? o->stderr_fd : devnull;
		dup2(in, 0);
		dup2(out, 1);
		dup2(er, 2);
		if (o && o->cwd && chdir(o->cwd)) {
			int e = errno;
			if (write(ep[1], &e, sizeof(e))) {}
			_exit(127);
		}
		if (o && o->contain)
			rt_keep_exec(prog, argv, envp, ep[1], runner);
		execve(prog, argv, envp);
		int e = errno;
		if (write(ep[1], &e, sizeof(e))) {}
		_exit(127);
	}
	setpgid(p, p); /* also from the parent, so the group exists before we signal it */
	close(ep[1]);
	if (devnull >= 0)
		close(devnull);
	free(prog);
	rt_argv_free(envp);
	int e = 0;
	ssize_t n;
	do {
		n = read(ep[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(p, NULL, 0);
		return rt_errf(err, e == ENOENT ? RT_ENOENT : RT_EPROC, "%s: cannot run: %s", argv[0],
			       strerror(e));
	}
	*pid = p;
	if (o && o->tree) {
		o->tree->leader = p;
		rt_ptree_scan(o->tree);
	}
	return 0;
}

int rt_wait_timeout(pid_t pid, double timeout_s, int *status)
{
	int64_t deadline = rt_now_ns() + (int64_t)(timeout_s * 1e9);
	int64_t step = 100000; /* 100 us, growing to 50 ms: most children exit soon */
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, timeout_s < 0 ? 0 : WNOHANG);
		if (r == pid) {
			if (status)
				*status = st;
			return 1;
		}
		if (r < 0 && errno != EINTR) {
			if (status)
				*status = -1;
			return 1;
		}
		if (timeout_s >= 0 && rt_now_ns() >= deadline)
			return 0;
		rt_sleep_ns(step);
		if (step < 50000000)
			step *= 2;
	}
}

int rt_stop_group(pid_t pid, double grace_s)
{
	int status = -1;
	if (kill(-pid, SIGTERM) && errno == ESRCH) {
		/* group gone; still reap the leader if it is our zombie */
		rt_wait_timeout(pid, 0, &status);
		return status;
	}
	if (rt_wait_timeout(pid, grace_s, &status)) {
		kill(-pid, SIGKILL); /* stragglers of the group */
		return status;
	}
	kill(-pid, SIGKILL);
	rt_wait_timeout(pid, 5, &status);
	return status;
}

void rt_describe_status(int status, char *out, size_t n)
{
	if (status == -1)
		snprintf(out, n, "already reaped");
	else if (WIFEXITED(status))
		snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(out, n, "status %#x", status);
}

uint64_t rt_proc_rss(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	unsigned long long kb = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

int rt_proc_exec_libs(pid_t pid, struct rt_strv *out)
{
	char path[64], line[4352];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return RT_ENOENT;
	/* address perms offset dev inode path: the path starts at the first '/' */
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		char *file = strchr(line, '/');
		if (sscanf(line, "%*s %7s", perms) != 1 || !strchr(perms, 'x') || !file)
			continue;
		file[strcspn(file, "\n")] = 0;
		const char *base = strrchr(file, '/') + 1;
		if (!strstr(base, ".so"))
			continue;
		bool seen = false;
		for (size_t i = 0; i < out->n && !seen; i++)
			seen = !strcmp(out->v[i], file);
		if (seen)
			continue;
		out->v = xrealloc(out->v, (out->n + 2) * sizeof(char *));
		out->v[out->n++] = xstrdup(file);
		out->v[out->n] = NULL;
	}
	fclose(f);
	return 0;
}

int rt_proc_stat(pid_t pid, struct rt_proc_stat *out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return RT_ENOENT;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The name sits between the first '(' and the last ')' and may hold
	 * spaces and parentheses itself. */
	char *open = strchr(buf, '('), *close_ = strrchr(buf, ')');
	if (!open || !close_ || close_ < open)
		return RT_EPARSE;
	size_t cl = (size_t)(close_ - open - 1);
	if (cl >= sizeof(out->comm))
		cl = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, cl);
	out->comm[cl] = 0;
	int ppid, pgrp, sid;
	char state;
	unsigned long ut, st;
	unsigned long long start;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
	 * utime stime cutime cstime priority nice num_threads itrealvalue starttime */
	if (sscanf(close_ + 1, " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d %llu",
		   &state, &ppid, &pgrp, &sid, &ut, &st, &start) != 7)
		return RT_EPARSE;
	out->state = state;
	out->ppid = ppid;
	out->pgrp = pgrp;
	out->sid = sid;
	out->start = start;
	out->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

ssize_t rt_read_line_timeout(int fd, char *line, size_t n, double timeout_s)
{
	int64_t until = rt_now_ns() + (int64_t)(timeout_s * 1e9);
	size_t len = 0;
	while (len + 1 < n) {
		int64_t left_ms = (until - rt_now_ns()) / 1000000;
		if (left_ms <= 0)
			break;
		struct pollfd p = { fd, POLLIN, 0 };
		int pr = poll(&p, 1, left_ms > 200 ? 200 : (int)left_ms);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t k = read(fd, line + len, 1);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			break;
		if (line[len] == '\n') {
			line[len] = 0;
			return (ssize_t)len;
		}
		len++;
	}
	line[len < n ? len : n - 1] = 0;
	return -1;
}

/* ---- process trees ---- */

/* Where the cgroup v2 hierarchy is mounted, and this process's cgroup in
 * it: "<mount><path>", or NULL. */
static char *own_cgroup_dir(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], mnt[4096] = "", path[4096] = "";
	/* id parent major:minor root mountpoint options ... - fstype source ... */
	while (f && !mnt[0] && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - cgroup2 ");
		char point[4096];
		if (dash && sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1)
			snprintf(mnt, sizeof(mnt), "%s", point);
	}
	if (f)
		fclose(f);
	f = mnt[0] ? fopen("/proc/self/cgroup", "r") : NULL;
	while (f && !path[0] && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "%s", line + 3);
		}
	if (f)
		fclose(f);
	if (!path[0])
		return NULL;
	return xasprintf("%s%s", mnt, strcmp(path, "/") ? path : "");
}

/* cgroup.kill (Linux 5.14 on): every process in the cgroup dir, atomically. */
static bool cgroup_kill_dir(const char *dir)
{
	char *path = xasprintf("%s/cgroup.kill", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	free(path);
	bool ok = fd >= 0 && write(fd, "1", 1) == 1;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Trees of ratchets that died without stopping them (kill -9): their
 * cgroups, ratchet-PID-N beside ours with PID gone, are killed and removed. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int pid;
		unsigned n;
		if (sscanf(de->d_name, "ratchet-%d-%u", &pid, &n) != 2 || pid == (int)getpid() || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char *dir = xasprintf("%s/%s", base, de->d_name);
		cgroup_kill_dir(dir);
		for (int i = 0; i < 50 && rmdir(dir) && errno == EBUSY; i++)
			rt_sleep_ns(10000000);
		free(dir);
	}
	if (d)
		closedir(d);
}

/* A new cgroup for one tree, its cgroup.procs open for writing; leaves
 * t->cgroup NULL where the system does not let us (no cgroup v2, no
 * permission, a read-only mount). */
static void make_cgroup(struct rt_ptree *t)
{
	static unsigned counter;
	char *base = own_cgroup_dir();
	if (base && !counter)
		sweep_stale(base);
	for (int i = 0; base && i < 100 && !t->cgroup; i++) {
		char *dir = xasprintf("%s/ratchet-%d-%u", base, (int)getpid(), ++counter);
		if (mkdir(dir, 0755) == 0) {
			t->cgroup = dir;
			break;
		}
		free(dir);
		if (errno != EEXIST)
			break;
	}
	free(base);
	if (!t->cgroup)
		return;
	char *procs = xasprintf("%s/cgroup.procs", t->cgroup);
	t->procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	free(procs);
	if (t->procs_fd < 0) {
		rmdir(t->cgroup);
		free(t->cgroup);
		t->cgroup = NULL;
	}
}

void rt_ptree_init(struct rt_ptree *t)
{
	memset(t, 0, sizeof(*t));
	t->procs_fd = -1;
	/* Orphaned members come to us, not to init: still ours to find and reap. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	make_cgroup(t);
}

static bool is_member(const struct rt_ptree *t, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].pid == pid && t->m[i].start == start)
			return true;
	return false;
}

static void add_member(struct rt_ptree *t, pid_t pid, unsigned long long start)
{
	if (is_member(t, pid, start))
		return;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 8;
		t->m = xrealloc(t->m, t->alloc * sizeof(*t->m));
	}
	t->m[t->n++] = (struct rt_ptree_member){ pid, start };
}

/* Is member i still that process (not gone, not a reused pid)? *zombie: it
 * has exited and waits to be reaped. */
static bool member_there(const struct rt_ptree *t, size_t i, bool *zombie)
{
	struct rt_proc_stat ps;
	*zombie = false;
	if (rt_proc_stat(t->m[i].pid, &ps) || ps.start != t->m[i].start)
		return false;
	*zombie = ps.state == 'Z';
	return true;
}

/* The members the cgroup lists. */
static void scan_cgroup(struct rt_ptree *t)
{
	if (!t->cgroup)
		return;
	char *path = xasprintf("%s/cgroup.procs", t->cgroup);
	FILE *f = fopen(path, "r");
	free(path);
	int pid;
	while (f && fscanf(f, "%d", &pid) == 1) {
		struct rt_proc_stat ps;
		if (pid > 0 && !rt_proc_stat(pid, &ps))
			add_member(t, pid, ps.start);
	}
	if (f)
		fclose(f);
}

struct proc_row {
	pid_t pid;                /* a process */
	pid_t ppid;               /* its parent */
	unsigned long long start; /* its start time */
};

static int row_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct proc_row *)a)->pid, y = ((const struct proc_row *)b)->pid;
	return (x > y) - (x < y);
}

/* Every process whose parent is a member, to a fixed point. A parent is
 * matched by pid and start time, so the children of an unrelated process
 * that reused a dead member's pid are not taken. */
static void scan_proc(struct rt_ptree *t)
{
	struct proc_row *rows = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		struct rt_proc_stat ps;
		if (pid <= 0 || rt_proc_stat(pid, &ps))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			rows = xrealloc(rows, cap * sizeof(*rows));
		}
		rows[n++] = (struct proc_row){ pid, ps.ppid, ps.start };
	}
	if (d)
		closedir(d);
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			struct proc_row key = { .pid = rows[i].ppid };
			const struct proc_row *parent = bsearch(&key, rows, n, sizeof(*rows), row_cmp);
			if (parent && is_member(t, parent->pid, parent->start) &&
			    !is_member(t, rows[i].pid, rows[i].start)) {
				add_member(t, rows[i].pid, rows[i].start);
				grew = true;
			}
		}
	}
	free(rows);
}

/* Members re-parented to us that ended: reaped (the leader is reaped by
 * its owner, through rt_ptree_stop or waitpid). */
static void reap_members(struct rt_ptree *t)
{
	for (size_t i = 1; i < t->n; i++) {
		bool zombie;
		if (member_there(t, i, &zombie) && zombie)
			waitpid(t->m[i].pid, NULL, WNOHANG);
	}
}

void rt_ptree_scan(struct rt_ptree *t)
{
	if (!t->leader)
		return;
	if (!t->n) {
		struct rt_proc_stat ps;
		if (rt_proc_stat(t->leader, &ps))
			return;
		add_member(t, t->leader, ps.start);
	}
	scan_cgroup(t);
	scan_proc(t);
	reap_members(t);
}

size_t rt_ptree_alive(struct rt_ptree *t)
{
	rt_ptree_scan(t);
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		bool zombie;
		if (member_there(t, i, &zombie) && !zombie)
			n++;
	}
	return n;
}

void rt_ptree_signal(struct rt_ptree *t, int sig)
{
	if (!t->leader)
		return;
	rt_ptree_scan(t);
	if (sig == SIGKILL && t->cgroup)
		cgroup_kill_dir(t->cgroup);
	kill(-t->leader, sig);
	for (size_t i = 0; i < t->n; i++) {
		bool zombie;
		if (member_there(t, i, &zombie) && !zombie)
			kill(t->m[i].pid, sig);
	}
}

/* Wait until no member runs, up to timeout_s; reaps the leader on the way
 * (*status) unless it was reaped before. True when none runs. */
static bool wait_tree(struct rt_ptree *t, double timeout_s, bool *leader_reaped, int *status)
{
	int64_t deadline = rt_now_ns() + (int64_t)(timeout_s * 1e9);
	int64_t step = 1000000;
	for (;;) {
		if (!*leader_reaped && rt_wait_timeout(t->leader, 0, status))
			*leader_reaped = true;
		if (*leader_reaped && rt_ptree_alive(t) == 0)
			return true;
		if (rt_now_ns() >= deadline)
			return false;
		rt_sleep_ns(step);
		if (step < 50000000)
			step *= 2;
	}
}

int rt_ptree_stop(struct rt_ptree *t, double grace_s, bool leader_reaped)
{
	int status = -1;
	if (!t->leader)
		return status;
	rt_ptree_signal(t, SIGTERM);
	if (!wait_tree(t, grace_s, &leader_reaped, &status)) {
		rt_ptree_signal(t, SIGKILL);
		wait_tree(t, 5, &leader_reaped, &status);
	}
	return status;
}

void rt_ptree_release(struct rt_ptree *t)
{
	if (t->leader && rt_ptree_alive(t)) {
		rt_ptree_signal(t, SIGKILL);
		bool reaped = true; /* the leader is its owner's to reap */
		int st;
		wait_tree(t, 5, &reaped, &st);
	}
	if (t->procs_fd >= 0)
		close(t->procs_fd);
	/* A cgroup is removable once its last process has exited. */
	for (int i = 0; t->cgroup && i < 50 && rmdir(t->cgroup) && errno == EBUSY; i++)
		rt_sleep_ns(10000000);
	free(t->cgroup);
	free(t->m);
	memset(t, 0, sizeof(*t));
	t->procs_fd = -1;
}
