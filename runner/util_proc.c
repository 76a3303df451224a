/* Child processes by argv, in their own process groups (see proc.h). */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rt_spawn(char *const argv[], const struct rt_spawn_opts *o, pid_t *pid, struct rt_sb *err)
{
	/* A pipe with CLOEXEC tells the parent whether exec failed, and why. */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC))
		return rt_errf(err, RT_EPROC, "%s: pipe: %s", argv[0], strerror(errno));
	pid_t p = fork();
	if (p < 0) {
		close(ep[0]);
		close(ep[1]);
		return rt_errf(err, RT_EPROC, "%s: fork: %s", argv[0], strerror(errno));
	}
	if (p == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int devnull = open("/dev/null", O_RDWR);
		int in = o && o->stdin_fd >= 0 ? o->stdin_fd : devnull;
		int out = o && o->stdout_fd >= 0 ? o->stdout_fd : devnull;
		int er = o && o->stderr_fd >= 0 ? o->stderr_fd : devnull;
		dup2(in, 0);
		dup2(out, 1);
		dup2(er, 2);
		for (size_t i = 0; o && i < o->n_env; i++) {
			if (o->env[i].value)
				setenv(o->env[i].name, o->env[i].value, 1);
			else
				unsetenv(o->env[i].name);
		}
		if (o && o->cwd && chdir(o->cwd)) {
			int e = errno;
			if (write(ep[1], &e, sizeof(e))) {}
			_exit(127);
		}
		execvp(argv[0], argv);
		int e = errno;
		if (write(ep[1], &e, sizeof(e))) {}
		_exit(127);
	}
	setpgid(p, p); /* also from the parent, so the group exists before we signal it */
	close(ep[1]);
	int e = 0;
	ssize_t n;
	do {
		n = read(ep[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(p, NULL, 0);
		if (e == ENOENT)
			return rt_errf(err, RT_EPROC, "%s: command not found", argv[0]);
		return rt_errf(err, RT_EPROC, "%s: cannot start: %s", argv[0], strerror(e));
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

static int run_collect(char *const argv[], const struct rt_spawn_opts *o, double timeout_s,
		       size_t cap, struct rt_sb *out, int *wstatus, struct rt_sb *err)
{
	int pp[2];
	if (pipe2(pp, O_CLOEXEC))
		return rt_errf(err, RT_EPROC, "%s: pipe: %s", argv[0], strerror(errno));
	struct rt_spawn_opts so = { 0 };
	if (o)
		so = *o;
	so.stdin_fd = -1;
	so.stdout_fd = pp[1];
	so.stderr_fd = pp[1];
	pid_t pid;
	int rc = rt_spawn(argv, &so, &pid, err);
	close(pp[1]);
	if (rc) {
		close(pp[0]);
		return rc;
	}
	int64_t deadline = rt_now_ns() + (int64_t)(timeout_s * 1e9);
	bool timed_out = false;
	char buf[65536];
	for (;;) {
		int64_t left = deadline - rt_now_ns();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd pfd = { pp[0], POLLIN, 0 };
		int pr = poll(&pfd, 1, (int)(left / 1000000 + 1));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0)
			continue;
		ssize_t n = read(pp[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out && (!cap || out->len < cap)) {
			size_t take = (size_t)n;
			if (cap && out->len + take > cap)
				take = cap - out->len;
			rt_sb_add(out, buf, take);
		}
	}
	close(pp[0]);
	int status;
	if (timed_out) {
		rt_stop_group(pid, 2);
		return rt_errf(err, RT_ETIMEDOUT, "%s: timed out after %.0fs", argv[0], timeout_s);
	}
	if (!rt_wait_timeout(pid, timeout_s > 0 ? (double)(deadline - rt_now_ns()) / 1e9 + 1 : 5, &status)) {
		rt_stop_group(pid, 2);
		return rt_errf(err, RT_ETIMEDOUT, "%s: timed out after %.0fs", argv[0], timeout_s);
	}
	kill(-pid, SIGKILL); /* anything it left behind in its group */
	*wstatus = status;
	return 0;
}

int rt_run_capture(char *const argv[], const struct rt_spawn_opts *o, double timeout_s,
		   size_t cap, struct rt_sb *out, struct rt_sb *err)
{
	int status;
	int rc = run_collect(argv, o, timeout_s, cap, out, &status, err);
	if (rc)
		return rc;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	char d[96];
	rt_describe_status(status, d, sizeof(d));
	return rt_errf(err, RT_EPROC, "%s: %s", argv[0], d);
}

int rt_run_status(char *const argv[], const struct rt_spawn_opts *o, double timeout_s, size_t cap,
		  struct rt_sb *out, int *status, struct rt_sb *err)
{
	int ws;
	int rc = run_collect(argv, o, timeout_s, cap, out, &ws, err);
	if (rc)
		return rc;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 255;
	return 0;
}
