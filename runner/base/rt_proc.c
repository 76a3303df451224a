/*
 * Child processes by argv, in their own process groups, and what /proc says
 * about a process (see proc.h).
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
#include <string.h>
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

/* argv[0] resolved through the child's PATH, or NULL. */
static char *find_program(const char *name, char **envp)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char **p = envp; *p; p++)
		if (strncmp(*p, "PATH=", 5) == 0)
			path = *p + 5;
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

int rt_spawn(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err)
{
	if (!argv || !argv[0])
		return rt_errf(err, RT_EINVAL, "command: empty argv");
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
	int ppid, pgrp;
	unsigned long ut, st;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(close_ + 1, " %*c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ppid, &pgrp,
		   &ut, &st) != 4)
		return RT_EPARSE;
	out->ppid = ppid;
	out->pgrp = pgrp;
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
