/*
 * bench_simserve: how many streamed requests per second simserve serves with
 * --zero-latency to a libcurl multi client on this machine, so we know it is
 * not the bottleneck when ratchet's load generator is measured against it.
 * Prints "simserve_stream_rps: N req/s (target: >= 5000)". Optional
 * arguments: requests (default 20000) and concurrency (default 32).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/base/proc.h"
#include "ss_client.h"

/* utime + stime of a process, in seconds; -1 if unknown. */
static double cpu_seconds(pid_t pid)
{
	struct rt_proc_stat st;
	return rt_proc_stat(pid, &st) ? -1 : st.cpu_s;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
	size_t conc = argc > 2 ? (size_t)atol(argv[2]) : 32;
	curl_global_init(CURL_GLOBAL_ALL);
	struct ssc_srv s;
	const char *const args[] = { "--zero-latency", NULL };
	if (ssc_start(&s, args, NULL, 10, NULL)) {
		fprintf(stderr, "bench_simserve: simserve did not start (RATCHET_BUILD?)\n");
		return 3;
	}
	const char *body = "{\"prompt\":\"a b c d e f g h\",\"max_tokens\":16,\"ignore_eos\":true,"
			   "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
	const char **bodies = malloc(n * sizeof(*bodies));
	for (size_t i = 0; i < n; i++)
		bodies[i] = body;
	struct ssc_resp *rs = calloc(n, sizeof(*rs));
	double t0 = ssc_now();
	ssc_request_many(s.port, "/v1/completions", bodies, n, conc, 30, rs);
	double dt = ssc_now() - t0;
	size_t ok = 0;
	for (size_t i = 0; i < n; i++) {
		ok += rs[i].status == 200 && strstr(rs[i].body, "\"completion_tokens\":16") &&
		      strstr(rs[i].body, "[DONE]");
		ssc_resp_release(&rs[i]);
	}
	free(rs);
	free(bodies);
	double cpu = cpu_seconds(s.pid);
	int st = ssc_stop(&s, NULL);
	printf("simserve_stream_rps: %.0f req/s (target: >= 5000; %zu of %zu ok, 16 tokens each, concurrency %zu)\n",
	       (double)ok / dt, ok, n, conc);
	if (cpu >= 0)
		printf("simserve_cpu_per_request: %.1f us (server CPU time, user+sys; %.0f req/s per core)\n",
		       cpu / (double)n * 1e6, (double)n / cpu);
	curl_global_cleanup();
	return ok == n && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
