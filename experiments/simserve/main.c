/*
 * simserve: entry point of the SIMULATED OpenAI-compatible serving engine.
 * It reads options from SIMSERVE_<NAME> environment variables and then from
 * argv (argv wins), loads the tile table and the GSM8K data, starts the batch
 * scheduler and the HTTP server, prints "simserve: listening on HOST:PORT",
 * and waits for SIGTERM or SIGINT, on which it shuts down and exits 0.
 *
 * Run as `simserve --personality vllm|llama-server|sglang ...` (or through a
 * program named vllm or llama-server) it takes that program's command line
 * instead, and speaks, logs and fails like it (persona.c).
 *
 * Exit codes: 0 after a signal, 2 bad option or bad input file, 3 runtime
 * error (cannot listen), 70 on purpose (--crash-after).
 */
#include "simserve.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/base/opt.h"

static struct ss_config cfg = {
	.host = "127.0.0.1",
	.model = "sim-model",
	.nonce = "",
	.max_graph_bs = 8,
	.max_batch = 64,
	.chunked_prefill = 2048,
	.prefill_us_per_token = 20,
	.decode_us_per_step = 2000,
	.decode_us_per_seq = 50,
	.gsm8k_accuracy = 1.0,
};

static const struct rt_opt opts[] = {
	{ "host", 0, RT_OPT_STR, &cfg.host, "ADDR", "listen address (default 127.0.0.1)" },
	{ "port", 0, RT_OPT_INT, &cfg.port, "N", "listen port, 0 = ephemeral (default 0)" },
	{ "model", 0, RT_OPT_STR, &cfg.model, "NAME", "model id served (default sim-model)" },
	{ "nonce", 0, RT_OPT_STR, &cfg.nonce, "STR", "launch nonce echoed by /v1/models and X-Launch-Nonce" },
	{ "tiles", 0, RT_OPT_STR, &cfg.tiles, "FILE", "JSON tile table keyed by shape class" },
	{ "best", 0, RT_OPT_STR, &cfg.best, "LIST", "another model's hidden best tiles: \"CLASS=M,N,W ...\" (default: model.c's)" },
	{ "max-graph-bs", 0, RT_OPT_INT, &cfg.max_graph_bs, "N", "largest decode batch with a CUDA graph; above it decode costs 1.5x (default 8)" },
	{ "max-batch", 0, RT_OPT_INT, &cfg.max_batch, "N", "most running sequences (default 64)" },
	{ "chunked-prefill", 0, RT_OPT_INT, &cfg.chunked_prefill, "N", "prompt-token budget per scheduler step (default 2048)" },
	{ "prefill-us-per-token", 0, RT_OPT_DBL, &cfg.prefill_us_per_token, "F", "prefill cost per prompt token in us (default 20)" },
	{ "decode-us-per-step", 0, RT_OPT_DBL, &cfg.decode_us_per_step, "F", "fixed decode step cost in us (default 2000)" },
	{ "decode-us-per-seq", 0, RT_OPT_DBL, &cfg.decode_us_per_seq, "F", "decode cost per running sequence in us (default 50)" },
	{ "zero-latency", 0, RT_OPT_FLAG, &cfg.zero_latency, NULL, "every cost is 0 (for client benchmarks)" },
	{ "gsm8k", 0, RT_OPT_STR, &cfg.gsm8k, "FILE", "GSM8K test.jsonl: answer its questions" },
	{ "gsm8k-accuracy", 0, RT_OPT_DBL, &cfg.gsm8k_accuracy, "F", "fraction answered correctly (default 1.0)" },
	{ "flip", 0, RT_OPT_STR, &cfg.flip, "LIST", "comma-separated question indices whose correctness flips" },
	{ "slow-start", 0, RT_OPT_DBL, &cfg.slow_start, "S", "seconds to wait before listening" },
	{ "crash-after", 0, RT_OPT_INT, &cfg.crash_after, "N", "exit(70) when completion request N+1 arrives" },
	{ "hang-after", 0, RT_OPT_INT, &cfg.hang_after, "N", "stop answering anything after N completion requests" },
	{ "malformed", 0, RT_OPT_STR, &cfg.malformed, "MODE", "badjson, nodone, 500mid, reset or bigchunk" },
	{ "keepalive-drop", 0, RT_OPT_INT, &cfg.keepalive_drop, "N", "close a kept-alive connection, unanswered, when its Nth request arrives (N >= 2)" },
	{ "seed", 0, RT_OPT_INT, &cfg.seed, "N", "server RNG seed for sampled filler text (default 0)" },
	{ "log-recompiles", 0, RT_OPT_FLAG, &cfg.log_recompiles, NULL, "print 'Compiling kernel for batch size N' per new batch size" },
	{ "compile-ms", 0, RT_OPT_DBL, &cfg.compile_ms, "MS", "the compile time the recompile lines say: '... (compiled in MS ms)' (printed, not slept)" },
	{ "check-visible-devices", 0, RT_OPT_FLAG, &cfg.check_visible, NULL, "refuse to start unless the device pool pinned this process to $RATCHET_DEVICE (CUDA_VISIBLE_DEVICES, ...)" },
	{ "profile-dir", 0, RT_OPT_STR, &cfg.profile_dir, "DIR", "write a Chrome trace of the simulated kernels to DIR/simserve-PID.trace.json" },
	{ 0 },
};

static const struct rt_cmd_help help = {
	"simserve [options]",
	"A SIMULATED OpenAI-compatible serving engine (no model runs; costs come from a formula).",
	"Every option can also be set as SIMSERVE_<NAME> in the environment, e.g.\n"
	"SIMSERVE_CHUNKED_PREFILL=512 or SIMSERVE_ZERO_LATENCY=1; the command line wins.\n"
	"Exit codes: 0 after SIGTERM/SIGINT, 2 bad option or input file, 3 runtime error,\n"
	"70 on purpose (--crash-after). See docs/simserve.md.\n"
	"simserve --personality vllm|llama-server|sglang ARGS takes that program's command\n"
	"line instead (docs/engines.md).",
};

/* Turn SIMSERVE_* variables into an argv parsed before the real one. */
static char **env_argv(int *argc)
{
	char **v = xcalloc(2 * RT_ARRAY_SIZE(opts) + 2, sizeof(*v));
	int n = 0;
	v[n++] = xstrdup("simserve");
	for (const struct rt_opt *o = opts; o->type != RT_OPT_END; o++) {
		char name[64] = "SIMSERVE_";
		size_t k = strlen(name);
		for (const char *p = o->name; *p && k + 1 < sizeof(name); p++)
			name[k++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
		name[k] = '\0';
		const char *val = getenv(name);
		if (!val)
			continue;
		if (o->type == RT_OPT_FLAG) {
			if (*val && strcmp(val, "0") && strcasecmp(val, "false") && strcasecmp(val, "no"))
				v[n++] = xasprintf("--%s", o->name);
			continue;
		}
		v[n++] = xasprintf("--%s=%s", o->name, val);
	}
	*argc = n;
	return v;
}

/*
 * --check-visible-devices: a device pool's worker (ratchet's
 * runner/campaign/workers.c) sets RATCHET_DEVICE=KIND:N and pins the
 * vendor's variables; a simulated engine has no device to open, so it
 * checks that what a real one would read is what the worker pinned:
 * cuda CUDA_VISIBLE_DEVICES=N, hip ROCR_VISIBLE_DEVICES=N with
 * HIP_VISIBLE_DEVICES=0, ze ZE_AFFINITY_MASK=N. It says what it saw.
 */
static int check_visible(struct rt_sb *err)
{
	const char *dev = getenv("RATCHET_DEVICE");
	const char *colon = dev ? strchr(dev, ':') : NULL;
	if (!colon)
		return rt_errf(err, RT_EUSAGE, "--check-visible-devices: RATCHET_DEVICE is %s%s%s, expected KIND:N "
			       "(set by a ratchet device pool's worker)", dev ? "'" : "not set", dev ? dev : "",
			       dev ? "'" : "");
	static const struct {
		const char *kind, *var, *want; /* want NULL: the device's index */
	} pins[] = {
		{ "cuda", "CUDA_VISIBLE_DEVICES", NULL }, { "hip", "ROCR_VISIBLE_DEVICES", NULL },
		{ "hip", "HIP_VISIBLE_DEVICES", "0" },    { "ze", "ZE_AFFINITY_MASK", NULL },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(pins); i++) {
		if (strlen(pins[i].kind) != (size_t)(colon - dev) || strncmp(dev, pins[i].kind, (size_t)(colon - dev)))
			continue;
		const char *want = pins[i].want ? pins[i].want : colon + 1, *got = getenv(pins[i].var);
		if (!got || strcmp(got, want))
			return rt_errf(err, RT_EUSAGE, "--check-visible-devices: device %s wants %s=%s, got %s%s%s", dev,
				       pins[i].var, want, got ? "'" : "unset", got ? got : "", got ? "'" : "");
		fprintf(stderr, "simserve: device %s: %s=%s\n", dev, pins[i].var, got);
	}
	return 0;
}

static int check(struct rt_sb *err)
{
	if (cfg.port < 0 || cfg.port > 65535)
		return rt_errf(err, RT_EUSAGE, "--port: %ld is not in 0..65535", cfg.port);
	if (cfg.max_batch < 1 || cfg.max_batch > 65536)
		return rt_errf(err, RT_EUSAGE, "--max-batch: %ld is not in 1..65536", cfg.max_batch);
	if (cfg.max_graph_bs < 0)
		return rt_errf(err, RT_EUSAGE, "--max-graph-bs: must be >= 0");
	if (cfg.chunked_prefill < 1)
		return rt_errf(err, RT_EUSAGE, "--chunked-prefill: must be >= 1");
	if (cfg.prefill_us_per_token < 0 || cfg.decode_us_per_step < 0 || cfg.decode_us_per_seq < 0)
		return rt_errf(err, RT_EUSAGE, "costs must be >= 0");
	if (cfg.slow_start < 0 || cfg.crash_after < 0 || cfg.hang_after < 0)
		return rt_errf(err, RT_EUSAGE, "--slow-start, --crash-after and --hang-after must be >= 0");
	if (cfg.keepalive_drop < 0 || cfg.keepalive_drop == 1)
		return rt_errf(err, RT_EUSAGE, "--keepalive-drop: %ld is not 0 (off) or >= 2 (a kept-alive "
			       "connection's request)", cfg.keepalive_drop);
	if (!*cfg.model)
		return rt_errf(err, RT_EUSAGE, "--model: must not be empty");
	return cfg.check_visible ? check_visible(err) : 0;
}

/* Wait for SIGTERM/SIGINT for at most timeout_s (< 0: forever); true if one came. */
static bool wait_signal(const sigset_t *set, double timeout_s)
{
	if (timeout_s < 0) {
		int sig;
		while (sigwait(set, &sig))
			;
		return true;
	}
	int64_t end = rt_now_ns() + (int64_t)(timeout_s * 1e9);
	for (;;) {
		int64_t left = end - rt_now_ns();
		if (left <= 0)
			return false;
		struct timespec ts = { (time_t)(left / 1000000000), (long)(left % 1000000000) };
		if (sigtimedwait(set, NULL, &ts) >= 0)
			return true;
		if (errno != EINTR && errno != EAGAIN)
			return false;
	}
}

int main(int argc, char **argv)
{
	struct rt_sb err = RT_SB_INIT;
	int eargc, npos = 0;
	char **eargv = env_argv(&eargc);
	int rc = rt_opt_parse(opts, &help, eargc, eargv, &npos, &err);
	/* vllm serve, llama-server, sglang: the real program's command line */
	enum ss_persona persona = ss_persona_detect(&argc, argv);
	if (!rc && persona) {
		int prc = ss_persona_parse(persona, argc, argv, &cfg);
		if (prc) {
			ss_persona_free();
			for (int i = 0; i < eargc; i++)
				free(eargv[i]);
			free(eargv);
			return prc;
		}
	} else if (!rc && npos == 0) {
		rc = rt_opt_parse(opts, &help, argc, argv, &npos, &err);
	}
	if (rc == 1)
		return 0; /* --help */
	if (!rc && npos > 0)
		rc = rt_errf(&err, RT_EUSAGE, "unexpected argument '%s'", argv[1]);
	if (!rc)
		rc = check(&err);
	struct ss_tiles tiles;
	if (!rc && cfg.best)
		rc = ss_best_set(cfg.best, &err);
	if (!rc)
		rc = ss_tiles_load(cfg.tiles, &tiles, &err);
	int bad_exit = 2;
	if (!rc && persona && ss_persona_tiles(&tiles)) {
		rc = RT_EINVAL; /* the program's own start-up error, already printed */
		bad_exit = 1;
	}
	if (!rc)
		rc = ss_gsm8k_load(cfg.gsm8k, cfg.gsm8k_accuracy, cfg.flip, &err);
	if (rc) {
		if (err.len)
			fprintf(stderr, "simserve: %s\n", err.buf);
		ss_persona_free();
		ss_gsm8k_free();
		for (int i = 0; i < eargc; i++)
			free(eargv[i]);
		free(eargv);
		rt_sb_release(&err);
		return bad_exit;
	}
	ss_gsm8k_set_broken(tiles.any_broken);
	ss_plan_seed((uint64_t)cfg.seed);

	/* every thread inherits the blocked set; main takes them with sigwait */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	int exit_code = 0;
	bool early = persona && ss_persona_listens_early();
	if (persona && !early && !ss_persona_start(&set, wait_signal))
		goto out;
	if (!persona && cfg.slow_start > 0 && wait_signal(&set, cfg.slow_start))
		goto out;
	int port = 0;
	rc = ss_trace_open(&cfg, &err);
	if (!rc)
		rc = ss_sched_start(&cfg, &tiles, &err);
	if (!rc)
		rc = ss_http_start(&cfg, &port, &err);
	if (rc && persona) {
		ss_persona_bind_error();
		exit_code = 1;
		goto stop;
	}
	if (rc) {
		fprintf(stderr, "simserve: %s\n", err.buf);
		exit_code = rc == RT_EUSAGE ? 2 : 3;
		goto stop;
	}
	if (!persona) {
		printf("simserve: listening on %s:%d\n", cfg.host, port);
		fflush(stdout);
	} else if (early) {
		ss_persona_ready(port); /* llama-server: listening, /health 503 */
		if (!ss_persona_start(&set, wait_signal))
			goto stop;
	}
	if (persona)
		ss_persona_ready(port);
	wait_signal(&set, -1);
stop:
	ss_sched_stop();
	ss_trace_close();
	ss_close_all();
	ss_http_stop();
out:
	ss_persona_free();
	ss_gsm8k_free();
	for (int i = 0; i < eargc; i++)
		free(eargv[i]);
	free(eargv);
	rt_sb_release(&err);
	return exit_code;
}
