/*
 * Running a benchmark command (see bench_cmd.h): started with rt_spawn
 * (argv, its own process group, no shell), a poll loop that drains stdout and
 * stderr into capped buffers, and the timeout: SIGTERM to the group, SIGKILL
 * 2 s later; a cancel (runner/base/cancel.h) stops a benchmark's group the
 * same way. A build (or any other command run through run_bcmd_exec and
 * run_bcmd_exec_simple) leads a process tree (runner/base/proc.h: a
 * cgroup, or /proc with this process as subreaper): what it started in a
 * session of its own (`setsid daemon &`), which a stop by group misses, is
 * stopped when it ends (issue 22, item 21). A measured benchmark runs under
 * a keeper instead (rt_spawn_opts.contain, runner/base/rt_keep.c): the tree
 * (a cgroup and /proc scans) cost 30 to 240 ms per start on a loaded 2-core
 * machine, four times the whole run of a fast benchmark; the keeper costs
 * one fork (`make bench`: bench_spawn), and kills what the benchmark left,
 * setsid'd or not, when it exits, times out or is cancelled.
 */
#include "runner/bench/bench_cmd.h"
#include "runner/base/cancel.h"
#include "runner/base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_GRACE_S 2.0

void run_bcmd_result_init(struct run_bcmd_result *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	rt_sb_init(&r->out, cap ? cap : 16u << 20);
	rt_sb_init(&r->err, cap ? cap : 16u << 20);
}

void run_bcmd_result_release(struct run_bcmd_result *r)
{
	rt_sb_release(&r->out);
	rt_sb_release(&r->err);
}

static int cloexec_pipe(int p[2])
{
	if (pipe(p))
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* read what is there; returns false at EOF or error; *cut is set when bytes
 * past the cap were dropped */
static bool drain(int fd, struct rt_sb *sb, bool *cut)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (rt_sb_add(sb, buf, (size_t)n)) {
		/* keep what fits, drop the rest but keep draining */
		size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
		rt_sb_add(sb, buf, room < (size_t)n ? room : (size_t)n);
		*cut = true;
	}
	return true;
}

static int exec_cmd(char *const *argv, const struct rt_env *env, size_t n_env, const char *cwd,
		    double timeout_s, bool cancellable, struct run_bcmd_result *r, struct rt_sb *err)
{
	if (!argv || !argv[0])
		return rt_errf(err, RT_EINVAL, "command: empty argv");
	int po[2], pe[2];
	if (cloexec_pipe(po) || cloexec_pipe(pe))
		return rt_errf(err, RT_EIO, "%s: pipe: %s", argv[0], strerror(errno));
	struct rt_envmod *mods = xcalloc(n_env + 1, sizeof(*mods));
	for (size_t i = 0; i < n_env; i++) {
		mods[i].name = env[i].name;
		mods[i].value = env[i].value;
	}
	struct rt_ptree tree = { .procs_fd = -1 };
	bool tracked = !cancellable; /* not a measured benchmark: see the header */
	if (tracked)
		rt_ptree_init(&tree);
	struct rt_spawn_opts so = { mods, n_env, cwd, -1, po[1], pe[1], .tree = tracked ? &tree : NULL,
				    .measured = cancellable, .contain = cancellable };
	int64_t t0 = rt_now_ns();
	pid_t pid;
	int src = rt_spawn(argv, &so, &pid, err);
	free(mods);
	close(po[1]);
	close(pe[1]);
	if (src) {
		close(po[0]);
		close(pe[0]);
		rt_ptree_release(&tree);
		return src;
	}
	if (tracked)
		rt_ptree_scan(&tree); /* the leader is a member before it can be reaped */

	int64_t deadline = timeout_s > 0 ? t0 + (int64_t)(timeout_s * 1e9) : INT64_MAX;
	int64_t kill_at = INT64_MAX, reaped_at = 0;
	bool open_o = true, open_e = true, reaped = false;
	int wst = 0;
	int64_t idle_ns = 100000;
	while (open_o || open_e || !reaped) {
		int64_t now = rt_now_ns();
		if (!reaped && waitpid(pid, &wst, WNOHANG) == pid) {
			reaped = true;
			reaped_at = now;
		}
		bool cancel = cancellable && !r->cancelled && rt_cancelled();
		if (!r->timed_out && !r->cancelled && (now >= deadline || cancel) && !reaped) {
			r->timed_out = !cancel;
			r->cancelled = cancel;
			kill(-pid, SIGTERM);
			kill_at = now + (int64_t)(KILL_GRACE_S * 1e9);
		}
		if (now >= kill_at && !reaped)
			kill(-pid, SIGKILL);
		/* the leader is gone but something in its group holds the pipes:
		 * give it a moment, then stop the group */
		if (reaped && (open_o || open_e) && now - reaped_at > 200000000LL) {
			kill(-pid, SIGKILL);
			break;
		}
		struct pollfd fds[2];
		int nf = 0;
		if (open_o)
			fds[nf++] = (struct pollfd){ .fd = po[0], .events = POLLIN };
		if (open_e)
			fds[nf++] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
		int wait_ms = 50;
		if (nf == 0) {
			/* Output closed, exit not seen yet: it is usually microseconds
			 * away, so back off from 100 us rather than sleeping 10 ms
			 * (which was most of the runner's overhead per benchmark). */
			rt_sleep_ns(idle_ns);
			if (idle_ns < 10000000LL)
				idle_ns *= 2;
			continue;
		}
		int ready = poll(fds, (nfds_t)nf, wait_ms);
		if (ready == 0 && tracked)
			rt_ptree_scan(&tree); /* quiet: note what it started since */
		if (ready > 0) {
			for (int i = 0; i < nf; i++) {
				if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				bool is_o = fds[i].fd == po[0];
				bool cut = false;
				bool more = drain(fds[i].fd, is_o ? &r->out : &r->err, &cut);
				r->truncated |= cut;
				r->out_cut |= cut && is_o;
				if (!more) {
					if (is_o)
						open_o = false;
					else
						open_e = false;
				}
			}
		}
	}
	close(po[0]);
	close(pe[0]);
	if (!reaped)
		waitpid(pid, &wst, 0);
	r->wall_s = (double)(rt_now_ns() - t0) / 1e9;
	/* What the command left running (a setsid'd daemon) ends with it. */
	if (tracked && rt_ptree_alive(&tree))
		rt_ptree_stop(&tree, KILL_GRACE_S, true);
	if (tracked)
		rt_ptree_release(&tree);
	if (WIFEXITED(wst))
		r->status = WEXITSTATUS(wst);
	else if (WIFSIGNALED(wst))
		r->status = 128 + WTERMSIG(wst);
	return 0;
}

int run_bcmd_exec(char *const *argv, const struct rt_env *env, size_t n_env, const char *cwd,
		  double timeout_s, struct run_bcmd_result *r, struct rt_sb *err)
{
	return exec_cmd(argv, env, n_env, cwd, timeout_s, false, r, err);
}

int run_bcmd_exec_cancellable(char *const *argv, const struct rt_env *env, size_t n_env,
			      const char *cwd, double timeout_s, struct run_bcmd_result *r,
			      struct rt_sb *err)
{
	return exec_cmd(argv, env, n_env, cwd, timeout_s, true, r, err);
}

int run_bcmd_exec_simple(char *const *argv, const char *cwd, double timeout_s, struct rt_sb *out,
			 int *status, struct rt_sb *err)
{
	struct run_bcmd_result r;
	run_bcmd_result_init(&r, out->cap ? out->cap : 0);
	int rc = run_bcmd_exec(argv, NULL, 0, cwd, timeout_s, &r, err);
	if (!rc) {
		rt_sb_add(out, r.out.buf, r.out.len);
		rt_sb_add(out, r.err.buf, r.err.len);
		*status = r.timed_out ? 124 : r.status;
	}
	run_bcmd_result_release(&r);
	return rc;
}
