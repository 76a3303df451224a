/*
 * bench_load (make bench): the load generator's own ceilings, against
 * `simserve --zero-latency` started as a child process (or, while simserve
 * does not work, the load tests' server `load_testserver`, said so):
 *   - streamed requests/s and tokens/s, closed loop, high concurrency, short outputs;
 *   - send lag p99 (and max) of a 1,000 req/s open loop;
 *   - TTFT error: client's first-chunk time minus the server's own "server_ns"
 *     stamp of that chunk (same CLOCK_MONOTONIC), p50 and p99;
 *   - client CPU (user + system) per streamed request, ratchet's next to
 *     wrk's (Debian's wrk, when installed) for the same request body against
 *     the same server in the same run: a closed loop of BENCH_LOAD_CONNS
 *     (default 32) connections, 16-token prompts, 8-token streamed outputs.
 * Env: BENCH_LOAD_SECONDS (default 3) per phase.
 */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/base/proc.h"
#include "runner/load/load.h"
#include "runner/oai/oai.h"
#include "runner/stats/stats.h"

static pid_t child;

/* Start `path args...` in its own process group; parse its first line,
 * "... listening on HOST:PORT", into url. */
static int start(const char *path, const char *const *args, char *url, size_t n)
{
	if (access(path, X_OK))
		return -1;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	const char *argv[8] = { path };
	int k = 1;
	for (; args && *args && k < 7; args++)
		argv[k++] = *args;
	argv[k] = NULL;
	struct rt_spawn_opts o = { .stdin_fd = -1, .stdout_fd = pfd[1], .stderr_fd = 2 };
	int rc = rt_spawn((char *const *)argv, &o, &child, NULL);
	close(pfd[1]);
	char line[256];
	if (!rc && rt_read_line_timeout(pfd[0], line, sizeof(line), 5) < 0)
		rc = -1;
	close(pfd[0]);
	const char *at = rc ? NULL : strstr(line, "listening on ");
	if (!at) {
		if (!rc)
			rt_stop_group(child, 0);
		return -1;
	}
	char hp[128];
	sscanf(at + 13, "%127s", hp);
	snprintf(url, n, "http://%s", hp);
	return 0;
}

static void stop(void)
{
	rt_stop_group(child, 5);
}

/* Run one phase of secs with 16-token prompts and 8-token outputs; on
 * failure says why, stops the server and returns -1. */
static int run_phase(struct spec_load *c, double secs, const char *url, uint64_t seed,
		     struct run_load_result *r)
{
	c->duration_s = secs;
	c->prompt_tokens = 16;
	c->output_tokens = 8;
	c->request_timeout_s = 30;
	struct run_load_opts o = { .no_calibrate = false };
	struct rt_sb err = RT_SB_INIT;
	int rc = run_load_run(c, url, NULL, seed, &o, r, &err);
	if (rc) {
		fprintf(stderr, "bench_load: %s\n", err.buf);
		stop();
	}
	rt_sb_release(&err);
	return rc ? -1 : 0;
}

/* CPU per request, in microseconds. */
struct cpu_cost {
	double user, sys; /* user and system time per request; user < 0: not measured */
};

static double tv_s(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* (b - a) / n in microseconds; a NULL means from zero. */
static struct cpu_cost per_req(const struct rusage *a, const struct rusage *b, double n)
{
	struct cpu_cost c = { tv_s(b->ru_utime), tv_s(b->ru_stime) };
	if (a) {
		c.user -= tv_s(a->ru_utime);
		c.sys -= tv_s(a->ru_stime);
	}
	c.user = c.user / n * 1e6;
	c.sys = c.sys / n * 1e6;
	return c;
}

/* ratchet's client CPU per streamed request (us): a closed loop of conns
 * connections for secs, user + system time of this process around the run
 * (the server is another process). -1 on failure. */
static struct cpu_cost ratchet_cpu_per_req(const char *url, int conns, double secs)
{
	struct spec_load c = { .pattern = SPEC_LOAD_CLOSED, .concurrency = conns };
	struct run_load_result r;
	struct rusage a, b;
	struct cpu_cost us = { -1, -1 };
	getrusage(RUSAGE_SELF, &a);
	if (run_phase(&c, secs, url, 3, &r))
		return us;
	getrusage(RUSAGE_SELF, &b);
	if (r.n_reqs)
		us = per_req(&a, &b, (double)r.n_reqs);
	if (r.failed)
		fprintf(stderr, "bench_load: client cost run: %d failed\n", r.failed);
	run_load_result_release(&r);
	return us;
}

/* The body ratchet sends in run_phase: 16 random words, max_tokens 8. */
static char *phase_body(void)
{
	struct run_load_dataset ds;
	run_load_dataset_random(1, 16, 8, 3, &ds);
	json_t *o = oai_body_new(OAI_COMPLETIONS, "default", json_string(ds.v[0].text), 8, true);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	run_load_dataset_release(&ds);
	return s;
}

/* wrk's CPU per request (us) for the same body, conns connections, one
 * thread, secs: its user and system time from wait4 over the requests it
 * counted. user -2 when wrk is not installed, -1 on failure. */
static struct cpu_cost wrk_cpu_per_req(const char *url, int conns, double secs)
{
	struct cpu_cost us = { -2, -2 };
	if (system("command -v wrk >/dev/null 2>&1"))
		return us;
	us.user = us.sys = -1;
	char script[] = "/tmp/bench_load_wrk_XXXXXX";
	int fd = mkstemp(script);
	if (fd < 0)
		return us;
	char *body = phase_body();
	FILE *f = fdopen(fd, "w");
	fprintf(f, "wrk.method = \"POST\"\nwrk.body = [==[%s]==]\n"
		   "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
		   "wrk.headers[\"Accept\"] = \"text/event-stream\"\n", body);
	fclose(f);
	free(body);
	char c_arg[32], d_arg[32], target[256], outpath[] = "/tmp/bench_load_wrkout_XXXXXX";
	snprintf(c_arg, sizeof(c_arg), "-c%d", conns);
	snprintf(d_arg, sizeof(d_arg), "-d%.0fs", secs < 1 ? 1 : secs);
	snprintf(target, sizeof(target), "%s/v1/completions", url);
	int ofd = mkstemp(outpath);
	char *argv[] = { "wrk", "-t1", c_arg, d_arg, "-s", script, target, NULL };
	struct rt_spawn_opts o = { .stdin_fd = -1, .stdout_fd = ofd, .stderr_fd = ofd };
	pid_t pid;
	struct rusage ru;
	int st;
	if (ofd >= 0 && !rt_spawn(argv, &o, &pid, NULL) && wait4(pid, &st, 0, &ru) == pid &&
	    WIFEXITED(st) && !WEXITSTATUS(st)) {
		char out[4096] = "";
		ssize_t n = pread(ofd, out, sizeof(out) - 1, 0);
		out[n > 0 ? n : 0] = 0;
		const char *at = strstr(out, " requests in ");
		while (at && at > out && at[-1] >= '0' && at[-1] <= '9')
			at--;
		long reqs = at ? atol(at) : 0;
		if (reqs > 0 && !strstr(out, "Non-2xx"))
			us = per_req(NULL, &ru, (double)reqs);
		else
			fprintf(stderr, "bench_load: wrk: %s\n", out);
	}
	if (ofd >= 0)
		close(ofd);
	unlink(outpath);
	unlink(script);
	return us;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const char *b = getenv("RATCHET_BUILD");
	double secs = getenv("BENCH_LOAD_SECONDS") ? atof(getenv("BENCH_LOAD_SECONDS")) : 3;
	char path[512], url[192];
	static const char *const sim_args[] = { "--port", "0", "--zero-latency", NULL };
	static const char *const lts_args[] = { "ok", "0", NULL };
	const char *server = "simserve --zero-latency";
	snprintf(path, sizeof(path), "%s/simserve", b ? b : ".");
	if (start(path, sim_args, url, sizeof(url))) {
		snprintf(path, sizeof(path), "%s/load_testserver", b ? b : ".");
		server = "load_testserver (simserve not working yet)";
		if (start(path, lts_args, url, sizeof(url))) {
			fprintf(stderr, "bench_load: no server to drive (simserve, load_testserver)\n");
			return 3;
		}
	}
	printf("server: %s at %s\n", server, url);

	/* 1. ceiling: closed loop, many in flight, short outputs */
	struct spec_load c = { .pattern = SPEC_LOAD_CLOSED, .concurrency = 64, .warmup = 64 };
	struct run_load_result r;
	if (run_phase(&c, secs, url, 1, &r))
		return 3;
	printf("streamed_requests_per_s: %.0f req/s (target: >= 5000; closed loop c=64, 8 tokens, %d failed)\n",
	       r.completed / r.duration_s, r.failed);
	printf("streamed_tokens_per_s: %.0f tok/s (output tokens, same run)\n",
	       (double)r.output_tokens_total / r.duration_s);
	run_load_result_release(&r);

	/* 2. open loop at 1,000 req/s: send lag; 3. TTFT error vs server stamps */
	c = (struct spec_load){ .pattern = SPEC_LOAD_POISSON, .rate = 1000 };
	if (run_phase(&c, secs, url, 2, &r))
		return 3;
	struct run_load_dist lag;
	run_load_dist(&r, "send_lag", &lag);
	printf("send_lag_p99_at_1000rps: %.3f ms (target: < 1 ms; p50 %.3f ms, max %.3f ms, %d sent, %d failed)\n",
	       lag.p99 * 1e3, lag.median * 1e3, lag.max * 1e3, r.completed + r.failed, r.failed);
	double *e = malloc((r.n_reqs + 1) * sizeof(double));
	size_t n = 0;
	for (size_t i = 0; i < r.n_reqs; i++) {
		const struct run_load_req *q = &r.reqs[i];
		if (q->ok && q->server_first_ns && q->first_ns)
			e[n++] = (double)(r.t0_abs_ns + q->first_ns - q->server_first_ns) / 1e9;
	}
	if (n) {
		double p50 = run_stats_quantile(e, n, 0.5), p99 = run_stats_quantile(e, n, 0.99);
		printf("ttft_error_p50: %.3f ms (client first chunk - server_ns stamp, %zu requests at 1000 req/s)\n",
		       p50 * 1e3, n);
		printf("ttft_error_p99: %.3f ms (target: < 0.5 ms)\n", p99 * 1e3);
	} else {
		printf("ttft_error_p50: n/a (the server sent no server_ns stamps)\n");
	}
	free(e);
	run_load_result_release(&r);

	/* 4. client CPU per streamed request, ratchet's and wrk's */
	int conns = getenv("BENCH_LOAD_CONNS") ? atoi(getenv("BENCH_LOAD_CONNS")) : 32;
	struct cpu_cost ours = ratchet_cpu_per_req(url, conns, secs);
	struct cpu_cost wrk = wrk_cpu_per_req(url, conns, secs);
	if (ours.user < 0)
		return 3;
	double o = ours.user + ours.sys, w = wrk.user + wrk.sys;
	if (wrk.user == -2)
		printf("client_cpu_per_request: %.1f us (user %.1f + system %.1f; target: <= wrk's, goal <= 50 us; "
		       "wrk is not installed: apt-get install wrk to compare)\n", o, ours.user, ours.sys);
	else if (wrk.user < 0)
		printf("client_cpu_per_request: %.1f us (user %.1f + system %.1f; target: <= wrk's, goal <= 50 us; "
		       "wrk failed)\n", o, ours.user, ours.sys);
	else
		printf("client_cpu_per_request: %.1f us (user %.1f + system %.1f; target: <= wrk's %.1f us "
		       "= %.1f + %.1f, goal <= 50 us; closed loop c=%d, 8 streamed tokens)\n",
		       o, ours.user, ours.sys, w, wrk.user, wrk.sys, conns);
	stop();
	return 0;
}
