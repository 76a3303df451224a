/*
 * The keeper: how a measured command's processes are contained
 * (rt_spawn_opts.contain, proc.h) without a cgroup or a /proc scan per
 * start, which cost 30 to 240 ms per start on a loaded machine.
 *
 * rt_spawn's child, instead of exec'ing the command, makes itself a child
 * subreaper (PR_SET_CHILD_SUBREAPER) and forks the command into a process
 * group of its own. Whatever the command starts stays a descendant of the
 * keeper: a process that leaves the group or the session (`setsid daemon
 * &`, a double fork, nohup) is re-parented to the keeper when its parent
 * dies, never to init. When the command exits, the keeper kills its group
 * and every process left under it (SIGKILL, again and again, until it has
 * no child at all), then exits with the command's status, a death by a
 * signal re-raised. A SIGTERM or SIGINT to the keeper (rt_spawn's group:
 * the benchmark's timeout and a cancel) goes on to the command's group,
 * and SIGKILL follows KEEP_GRACE_S later.
 *
 * A runner killed with -9 cannot stop the command: the keeper asks the
 * kernel for a SIGTERM when the runner dies (PR_SET_PDEATHSIG) and treats
 * it as the runner's own stop.
 *
 * Per start this costs one fork without exec; /proc is read only when
 * something was left running. The keeper is a fork of a multithreaded
 * process: it makes system calls only (no malloc, no stdio, no locks), and
 * it closes every descriptor it inherited, so that it holds no pipe of
 * another command and no lock of the runner.
 */
#define _GNU_SOURCE
#include "runner/base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEP_GRACE_NS 1000000000LL /* from a forwarded SIGTERM to SIGKILL */
#define KEEP_SWEEP_NS 5000000000LL /* the longest the keeper waits for its strays */

static int64_t keep_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec keep_ts(int64_t ns)
{
	if (ns < 0)
		ns = 0;
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}

/* A decimal pid, or 0 when s is not one. */
static pid_t keep_pid(const char *s)
{
	long v = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 1 << 26)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

/* The parent of pid from /proc/PID/stat ("pid (comm) S ppid ..."; comm may
 * hold spaces and parentheses, so read after the last ')'), -1 when gone. */
static pid_t keep_parent(const char *pid)
{
	char path[64] = "/proc/", buf[512];
	size_t k = 6;
	for (const char *s = pid; *s && k < sizeof(path) - 8; s++)
		path[k++] = *s;
	for (const char *s = "/stat"; *s; s++)
		path[k++] = *s;
	path[k] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = NULL;
	for (char *s = buf; *s; s++)
		if (*s == ')')
			p = s;
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	long v = 0;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return (pid_t)v;
}

/* SIGKILL every live child of this process (strays re-parented here). */
static void keep_kill_children(void)
{
	pid_t self = getpid();
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	_Alignas(struct dirent64) char buf[8192];
	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			off += d->d_reclen;
			pid_t p = keep_pid(d->d_name);
			if (p > 0 && p != self && keep_parent(d->d_name) == self)
				kill(p, SIGKILL);
		}
	}
	close(fd);
}

/* Wait for the command (pid c, also its group); a SIGTERM or SIGINT to the
 * keeper goes on to the group, SIGKILL after the grace. The signals are
 * blocked and taken with sigtimedwait: no handler, no lost wake-up. */
static int keep_wait(pid_t c, const sigset_t *set)
{
	int64_t kill_at = 0;
	for (;;) {
		int st;
		pid_t r = waitpid(c, &st, WNOHANG);
		if (r == c)
			return st;
		if (r < 0 && errno != EINTR)
			return 127 << 8;
		int64_t wait_ns = 1000000000LL;
		if (kill_at) {
			wait_ns = kill_at - keep_now();
			if (wait_ns <= 0) {
				kill(-c, SIGKILL);
				wait_ns = 50000000LL;
			}
		}
		struct timespec ts = keep_ts(wait_ns);
		int sig = sigtimedwait(set, NULL, &ts);
		if ((sig == SIGTERM || sig == SIGINT) && !kill_at) {
			kill(-c, sig);
			kill_at = keep_now() + KEEP_GRACE_NS;
		}
	}
}

/* Kill the command's group and everything re-parented here, reaping it
 * all, until this process has no child left (or KEEP_SWEEP_NS passed). */
static void keep_sweep(pid_t c, const sigset_t *set)
{
	int64_t until = keep_now() + KEEP_SWEEP_NS;
	for (int64_t step = 100000;; step = step < 20000000 ? 2 * step : step) {
		kill(-c, SIGKILL);
		pid_t r;
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if ((r < 0 && errno == ECHILD) || keep_now() >= until)
			return;
		keep_kill_children();
		struct timespec ts = keep_ts(step);
		sigtimedwait(set, NULL, &ts); /* SIGCHLD, or the step */
	}
}

/* Leave as the command left: its exit status, or its signal re-raised
 * (with no core file: the command's own was written already). */
static _Noreturn void keep_exit(int st)
{
	if (WIFSIGNALED(st)) {
		int s = WTERMSIG(st);
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigaction(s, &dfl, NULL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, s);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		kill(getpid(), s);
		_exit(128 + s);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

void rt_keep_exec(const char *prog, char *const argv[], char *const envp[], int err_fd, pid_t runner)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* The runner's death is a SIGTERM, waited for below with the others: the
	 * command's group is told, then killed KEEP_GRACE_NS later. The runner
	 * forks from its main thread, which lives as long as it does. A runner
	 * that died before the request was made is caught by the parent check. */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	if (getppid() != runner)
		_exit(128 + SIGTERM); /* the runner is gone: the command never starts */
	pid_t c = fork();
	if (c < 0) {
		int e = errno;
		if (write(err_fd, &e, sizeof(e))) {}
		_exit(127);
	}
	if (c == 0) {
		setpgid(0, 0);
		sigdelset(&old, SIGTERM);
		sigdelset(&old, SIGINT);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execve(prog, argv, envp);
		int e = errno;
		if (write(err_fd, &e, sizeof(e))) {}
		_exit(127);
	}
	setpgid(c, c); /* also here, so the group exists before it is signalled */
	if (close_range(0, ~0U, 0))
		for (int fd = 0; fd < 4096; fd++)
			close(fd);
	int st = keep_wait(c, &set);
	keep_sweep(c, &set);
	keep_exit(st);
}
