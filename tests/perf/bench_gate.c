/*
 * bench_gate: wall time and client CPU time of a full 1319-question gate
 * (format gsm8k, 5-shot, concurrency 32) against `simserve --zero-latency
 * --gsm8k test.jsonl` started as a child process. The figure is the
 * client's cost: prompts, JSON, HTTP, extraction, sha256 and the SQLite rows.
 * Falls back to the tests' gate_fakeserver when simserve is not built.
 * Usage: bench_gate [SERVER]
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/gate/gate.h"
#include "db/db.h"

static pid_t start_server(const char *bin, const char *data, char *url, size_t n)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		setpgid(0, 0);
		execl(bin, bin, "--port", "0", "--gsm8k", data, "--gsm8k-accuracy", "1",
		      "--zero-latency", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	char line[512];
	url[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "listening on ");
		if (p) {
			p += 13;
			p[strcspn(p, " \r\n")] = 0;
			snprintf(url, n, "http://%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	return url[0] ? pid : -1;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], bin[PATH_MAX + 64], data[PATH_MAX + 64], url[256];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[k > 0 ? k : 0] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	const char *gd = getenv("RATCHET_GSM8K_DIR");
	if (gd)
		snprintf(data, sizeof(data), "%s/test.jsonl", gd);
	else
		snprintf(data, sizeof(data), "%s/../../shared/data/gsm8k/test.jsonl", self);
	if (argc > 1)
		snprintf(bin, sizeof(bin), "%s", argv[1]);
	else {
		snprintf(bin, sizeof(bin), "%s/simserve", self);
		if (access(bin, X_OK))
			snprintf(bin, sizeof(bin), "%s/gate_fakeserver", self);
	}
	pid_t pid = start_server(bin, data, url, sizeof(url));
	if (pid < 0) {
		fprintf(stderr, "bench_gate: cannot start %s\n", bin);
		return 3;
	}
	char dir[] = "/tmp/rt-bench-gate-XXXXXX";
	char dbp[64];
	if (!mkdtemp(dir))
		return 3;
	snprintf(dbp, sizeof(dbp), "%s/r.db", dir);
	struct db *db;
	struct rt_sb err = RT_SB_INIT;
	if (db_open(dbp, &db, &err)) {
		fprintf(stderr, "bench_gate: %s\n", err.buf);
		return 3;
	}
	struct spec_gate g;
	spec_gate_defaults(&g);
	g.dataset = data;
	struct run_gate_opts o;
	run_gate_opts_init(&o);
	o.api_key = NULL;
	struct run_gate_result r;
	int rc = run_gate_run_opts(db, &g, &o, url, "bench", 0, 0, &r, &err);
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	db_close(db);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
	if (rc < 0) {
		fprintf(stderr, "bench_gate: %s\n", err.buf);
		return 3;
	}
	const char *name = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
	printf("gate_server: %s\n", name);
	printf("gate_questions: %d\n", r.fig.n_done);
	printf("gate_wall_total: %.3f s (target: < 2 s)\n", r.wall_s);
	printf("gate_wall_per_question: %.3f ms\n", r.wall_s * 1000 / (r.fig.n_done ? r.fig.n_done : 1));
	printf("gate_cpu_per_question: %.3f ms (client, user+system)\n",
	       r.cpu_s * 1000 / (r.fig.n_done ? r.fig.n_done : 1));
	printf("gate_accuracy: %.4f (server set to 1.0)\n", r.fig.accuracy);
	run_gate_result_release(&r);
	rt_sb_release(&err);
	return 0;
}
