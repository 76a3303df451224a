/*
 * The engine's identity without a nonce, against real processes: simserve
 * started by the supervisor is proven (its socket is in the tree, its
 * served name listed), while a simserve started by another process tree on
 * the expected port, answering the same name, is refused. Also the
 * versions the real engines report, the container image of a `docker run`
 * argv, the tree's RSS and pids, and per-process device memory through the
 * device backends (host RSS here; NVML unavailable, said so).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/base/proc.h"
#include "runner/base/rt.h"
#include "runner/device/dev.h"
#include "runner/engine/engine.h"

static char simserve[4096];

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("RATCHET_BUILD");
	snprintf(simserve, sizeof(simserve), "%s/simserve", b ? b : ".");
	return access(simserve, X_OK);
}

static struct run_engine_cfg sim_cfg(char **argv, int port)
{
	struct run_engine_cfg cfg = {
		.argv = argv, .host = "127.0.0.1", .port = port, .ready_path = "/health",
		.ready_timeout_s = 10, .identity_path = "/v1/models", .expected_model = "served-x",
		.stop_grace_s = 1,
	};
	return cfg;
}

/* The supervisor's simserve serving model, started and ready; the engine
 * keeps pointers into cfg and argv: both are the caller's, static here. */
static struct run_engine *start_sim(const char *model)
{
	static char ps[16], mod[64];
	static char *argv[] = { NULL, "--port", ps, "--model", mod, NULL };
	static struct run_engine_cfg cfg;
	int port;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_engine_pick_port("127.0.0.1", &port, &err), 0);
	snprintf(ps, sizeof(ps), "%d", port);
	snprintf(mod, sizeof(mod), "%s", model);
	argv[0] = simserve;
	cfg = sim_cfg(argv, port);
	struct run_engine *e;
	assert_int_equal(run_engine_start(&cfg, &e, &err), 0);
	assert_int_equal(run_engine_wait_ready(e, &err), 0);
	rt_sb_release(&err);
	return e;
}

/* The supervisor's own simserve: proven without a nonce. */
static void test_own_engine_proven(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	struct run_engine *e = start_sim("served-x");
	assert_int_equal(run_engine_verify(e, &err), 0);
	assert_string_equal(run_engine_model(e), "served-x");
	assert_true(run_engine_ready_s(e) > 0 && run_engine_ready_s(e) < 10);
	/* simserve reports no version: none is made up */
	assert_null(run_engine_fetch_version(e));
	run_engine_rss_reset(e);
	assert_true(run_engine_rss_peak(e) > 1024 * 1024);
	pid_t *pids;
	size_t n = run_engine_pids(e, &pids);
	assert_true(n >= 1);
	assert_int_equal(pids[0], run_engine_pid(e));
	/* the host backend's per-process memory is their RSS */
	const struct dev_ops *host = dev_backend_find("host", NULL);
	uint64_t bytes = 0;
	assert_non_null(host->proc_mem);
	assert_int_equal(host->proc_mem(pids, n, &bytes, &err), 0);
	assert_true(bytes > 1024 * 1024);
	/* the GPU backends: without libnvidia-ml.so.1 (this machine) it says so */
	struct rt_sb why = RT_SB_INIT;
	if (dev_proc_mem(pids, n, &bytes, &why) == 0) {
		assert_non_null(strstr(why.buf, "cuda: "));
		assert_non_null(strstr(why.buf, "hip: per-process memory not supported"));
	}
	free(pids);
	rt_sb_release(&why);
	run_engine_free(e);
	rt_sb_release(&err);
}

/* A server of another process tree on the expected port, answering the
 * expected served name: its answer to the readiness probe does not make
 * the engine ready, and the identity is refused. */
static void test_foreign_server_refused(void **state)
{
	(void)state;
	int port;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_engine_pick_port("127.0.0.1", &port, &err), 0);
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	char *fargv[] = { simserve, "--port", ps, "--model", "served-x", NULL };
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	struct rt_spawn_opts o = { NULL, 0, NULL, -1, pp[1], -1, NULL };
	pid_t foreign;
	assert_int_equal(rt_spawn(fargv, &o, &foreign, &err), 0);
	close(pp[1]);
	char line[256];
	assert_true(rt_read_line_timeout(pp[0], line, sizeof(line), 10) > 0);
	assert_non_null(strstr(line, "listening"));
	/* the launched "engine" never listens itself */
	char *argv[] = { "sleep", "30", NULL };
	struct run_engine_cfg cfg = sim_cfg(argv, port);
	struct run_engine *e;
	assert_int_equal(run_engine_start(&cfg, &e, &err), 0);
	char want[96];
	snprintf(want, sizeof(want), "is held by pid %d (simserve), not by the engine", (int)foreign);
	assert_int_equal(run_engine_wait_ready(e, &err), RT_EIDENTITY);
	assert_non_null(strstr(err.buf, want));
	assert_non_null(strstr(err.buf, "(it answered GET /health)"));
	rt_sb_reset(&err);
	assert_int_equal(run_engine_verify(e, &err), RT_EIDENTITY);
	assert_non_null(strstr(err.buf, want));
	run_engine_free(e);
	rt_stop_group(foreign, 1);
	close(pp[0]);
	rt_sb_release(&err);
}

/* Its own simserve answering another name: refused, naming both. */
static void test_wrong_served_name(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	struct run_engine *e = start_sim("other");
	assert_int_equal(run_engine_verify(e, &err), RT_EIDENTITY);
	assert_non_null(strstr(err.buf, "model is 'other', expected 'served-x'"));
	run_engine_free(e);
	rt_sb_release(&err);
}

static void test_version_parse(void **state)
{
	(void)state;
	char *v = run_engine_version_parse("/version", "{\"version\": \"0.8.5\"}", 20);
	assert_string_equal(v, "vllm 0.8.5");
	free(v);
	const char *props = "{\"build_info\": \"b5200-1234abcd\", \"total_slots\": 4}";
	v = run_engine_version_parse("/props", props, strlen(props));
	assert_string_equal(v, "llama-server b5200-1234abcd");
	free(v);
	const char *info = "{\"model_path\": \"m\", \"version\": \"0.4.6\"}";
	v = run_engine_version_parse("/get_server_info", info, strlen(info));
	assert_string_equal(v, "sglang 0.4.6");
	free(v);
	assert_null(run_engine_version_parse("/version", "not json", 8));
	assert_null(run_engine_version_parse("/props", "{\"n_ctx\": 4}", 12));
}

static void test_container_image(void **state)
{
	(void)state;
	const char *tool = NULL;
	char *d[] = { "docker", "run", "--gpus", "all", "-p", "8000:8000", "--rm", "-it", "--ipc=host",
		      "-v", "/m:/m", "vllm/vllm-openai:v0.8.5", "--model", "x", NULL };
	assert_string_equal(run_engine_container_image(d, &tool), "vllm/vllm-openai:v0.8.5");
	assert_string_equal(tool, "docker");
	char *p[] = { "/usr/bin/podman", "run", "-d", "--device", "/dev/kfd", "rocm/vllm@sha256:ab", NULL };
	assert_string_equal(run_engine_container_image(p, &tool), "rocm/vllm@sha256:ab");
	char *v[] = { "vllm", "serve", "m", NULL };
	assert_null(run_engine_container_image(v, &tool));
}

/* A picked port lies below the kernel's ephemeral range, where no client
 * socket's automatic port can take it before the engine binds it. */
static void test_pick_port_below_ephemeral(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	int lo = run_engine_ephemeral_low(), seen = 0, last = -1;
	for (int i = 0; i < 50; i++) {
		int port = 0;
		assert_int_equal(run_engine_pick_port("127.0.0.1", &port, &err), 0);
		assert_true(port > 0 && port < 65536);
		if (lo > RUN_ENGINE_PORT_FLOOR + 1000)
			assert_true(port >= RUN_ENGINE_PORT_FLOOR && port < lo);
		seen += port != last;
		last = port;
	}
	assert_true(seen > 40); /* not one port over and over */
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_port_below_ephemeral),
		cmocka_unit_test(test_own_engine_proven),
		cmocka_unit_test(test_foreign_server_refused),
		cmocka_unit_test(test_wrong_served_name),
		cmocka_unit_test(test_version_parse),
		cmocka_unit_test(test_container_image),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
