/*
 * `ratchet __step DIR -- ARGV...`: internal, hidden from help. The Slurm
 * executor (runner/campaign/exec_slurm.c) starts every benchmark and engine
 * of a measurement as `srun ... ratchet __step DIR -- ARGV`. On the
 * allocated node it starts ARGV (fork and exec, never a shell), writes the
 * step's launch record DIR/JOB.STEP.rec (node, the child's pid and start
 * time, the step id), forwards SIGTERM and SIGINT to the child, and when
 * the child ends writes DIR/JOB.STEP.end (its wait status, and the signal
 * slurmstepd sent, when it sent one: the job was cancelled or reached its
 * time limit; srun itself ends a step with SIGKILL) and exits as it did. The record proves, across nodes, which process ran where (/proc of
 * another node is not visible to the runner); a .rec without its .end means
 * the step was killed from outside (scancel, time limit, preemption, node
 * failure), as Slurm kills the whole step. DIR must be on a file system the
 * nodes share with the runner (docs/scale.md).
 */
#include "runner/base/proc.h"
#include "runner/cmd/cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a child's death by SIGTERM may precede this process's own. */
#define STEP_SIGNAL_GRACE_MS 2000

static volatile sig_atomic_t child_pid; /* forwarded to by on_signal */
static volatile sig_atomic_t got_signal; /* the signal slurmstepd sent, 0: none */

static void on_signal(int sig)
{
	got_signal = sig;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* "key value" lines, read back by the executor (exec_slurm.c). */
static void step_record(struct rt_sb *r, const char *step, pid_t pid, const char *argv0)
{
	char host[256] = "";
	const char *node = getenv("SLURMD_NODENAME");
	if (!node || !*node) {
		gethostname(host, sizeof(host) - 1);
		node = host;
	}
	struct rt_proc_stat ps = { 0 };
	rt_proc_stat(pid, &ps);
	rt_sb_addf(r, "step %s\nnode %s\npid %d\nstart %llu\nat %lld\nprogram %s\n", step, node,
		   (int)pid, ps.start, (long long)rt_wall_ms(), argv0);
}

/* Write DIR/STEP.SUFFIX atomically; 0 or an exit code after a message. */
static int put(const char *dir, const char *step, const char *suffix, const struct rt_sb *b)
{
	struct rt_sb err = RT_SB_INIT;
	char *path = xasprintf("%s/%s.%s", dir, step, suffix);
	int rc = rt_mkdirs(dir, &err);
	if (!rc)
		rc = rt_write_file_atomic(path, b->buf, b->len, 0644, &err);
	if (rc)
		fprintf(stderr, "ratchet __step: %s: %s\n", path, err.buf);
	free(path);
	rt_sb_release(&err);
	return rc ? RT_EXIT_RUNTIME : 0;
}

int cmd_step(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "ratchet __step: usage: ratchet __step DIR -- ARGV... (internal)\n");
		return RT_EXIT_USAGE;
	}
	const char *job = getenv("SLURM_JOB_ID"), *sid = getenv("SLURM_STEP_ID");
	char *step = xasprintf("%s.%s", job ? job : "none", sid ? sid : "none");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "ratchet __step: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		fprintf(stderr, "ratchet __step: fork: %s\n", strerror(errno));
		free(step);
		return RT_EXIT_RUNTIME;
	}
	child_pid = pid;
	struct rt_sb rec = RT_SB_INIT;
	step_record(&rec, step, pid, argv[3]);
	int rc = put(argv[1], step, "rec", &rec);
	if (rc) /* no launch record, no proof: the program must not run unproven */
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	/* slurmstepd signals every process of the step when the job is
	 * cancelled or runs out of time; the child may die of it before this
	 * process's own SIGTERM is delivered (seen under ASan in CI: the .end
	 * then said "signalled 0" and the runner took a cancelled job for the
	 * benchmark's own failure). A child ended by SIGTERM or SIGINT that this
	 * process did not forward: wait up to STEP_SIGNAL_GRACE_MS for the
	 * signal to reach it too. */
	int term = WIFSIGNALED(st) ? WTERMSIG(st) : WIFEXITED(st) && WEXITSTATUS(st) > 128 ? WEXITSTATUS(st) - 128 : 0;
	for (int ms = 0; !got_signal && (term == SIGTERM || term == SIGINT) && ms < STEP_SIGNAL_GRACE_MS; ms += 20)
		rt_sleep_ns(20 * 1000000L);
	rt_sb_reset(&rec);
	rt_sb_addf(&rec, "status %d\nsignalled %d\n", st, (int)got_signal);
	if (!rc)
		rc = put(argv[1], step, "end", &rec);
	rt_sb_release(&rec);
	free(step);
	if (rc)
		return rc;
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
