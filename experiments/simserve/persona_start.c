/*
 * The start-up of an engine personality: its log lines (vLLM's and SGLang's
 * prefixes, llama-server's plain lines), the load and graph-capture time, the
 * memory it holds, vLLM's and SGLang's refusal when the KV cache would not
 * fit, the "ready" lines, and its words for a port in use or a first-seen
 * batch size. The knobs are listed in persona.c.
 */
#include "persona.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define P ss_P

static double env_dbl(const char *name, double def)
{
	const char *v = getenv(name);
	return v && *v ? strtod(v, NULL) : def;
}

/* vLLM's and SGLang's log prefix: "(APIServer pid=N) INFO 11-30 20:15:01 [file:line] " */
void ss_plog(const char *who, const char *where, const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	va_list ap;
	va_start(ap, fmt);
	if (P.kind == SS_PERSONA_VLLM) {
		strftime(ts, sizeof(ts), "%m-%d %H:%M:%S", &tm);
		printf("(%s pid=%d) INFO %s [%s] ", who, (int)getpid(), ts, where);
	} else if (P.kind == SS_PERSONA_SGLANG) {
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
		printf("[%s%s] ", ts, who);
	}
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void hold_memory(double mib)
{
	if (mib <= 0)
		return;
	size_t add = (size_t)(mib * 1048576.0);
	P.rss = xrealloc(P.rss, P.rss_len + add);
	memset(P.rss + P.rss_len, 0x5a, add); /* touched: resident */
	P.rss_len += add;
}

/* vLLM/SGLang: does the KV cache fit what is left of the GPU? */
static bool kv_fits(double capture_gib)
{
	double gpu = env_dbl("SIMSERVE_GPU_GIB", 0), weights = env_dbl("SIMSERVE_WEIGHTS_GIB", 0);
	if (gpu <= 0 || weights <= 0)
		return true;
	double frac = P.mem_frac > 0 ? P.mem_frac : P.kind == SS_PERSONA_VLLM ? 0.9 : 0.88;
	double kv = gpu * frac - weights - capture_gib;
	if (kv > 0) {
		if (P.kind == SS_PERSONA_VLLM)
			ss_plog("EngineCore_DP0", "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", kv);
		return true;
	}
	if (P.kind == SS_PERSONA_VLLM)
		fprintf(stderr, "ValueError: No available memory for the cache blocks. Try increasing "
				"`gpu_memory_utilization` when initializing the engine.\n");
	else
		fprintf(stderr, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n");
	return false;
}

bool ss_persona_start(const sigset_t *set, bool (*wait)(const sigset_t *, double))
{
	struct ss_config *cfg = P.cfg;
	double load_s = cfg->slow_start;
	cfg->slow_start = 0;
	double cap_ms = env_dbl("SIMSERVE_CAPTURE_MS", 0), cap_mib = env_dbl("SIMSERVE_CAPTURE_MIB", 0);
	if (P.kind == SS_PERSONA_VLLM) {
		ss_plog("APIServer", "api_server.py:1839", "vLLM API server version %s", SS_VLLM_VERSION);
		ss_plog("APIServer", "utils.py:233", "non-default args: {'model_tag': '%s', 'port': %ld, "
		      "'max_num_seqs': %ld, 'max_num_batched_tokens': %ld}", P.model, cfg->port,
		      cfg->max_batch, cfg->chunked_prefill);
		ss_plog("EngineCore_DP0", "gpu_model_runner.py:2602", "Starting to load model %s...", P.model);
	} else if (P.kind == SS_PERSONA_SGLANG) {
		ss_plog("", "server_args.py", "server_args=ServerArgs(model_path='%s', port=%ld, "
		      "max_running_requests=%ld, chunked_prefill_size=%ld, cuda_graph_max_bs=%ld)",
		      P.model, cfg->port, cfg->max_batch, cfg->chunked_prefill, cfg->max_graph_bs);
		ss_plog(" TP0", "model_runner.py", "Load weight begin. avail mem=78.50 GB");
	} else {
		fprintf(stderr, "build: %s with cc (simserve) for x86_64-linux-gnu\n", SS_LLAMA_BUILD);
		if (access(P.model, R_OK)) {
			fprintf(stderr, "gguf_init_from_file: failed to open GGUF file '%s'\n"
					"llama_model_load: error loading model: llama_model_loader: failed to load model from %s\n"
					"srv    load_model: failed to load model, '%s'\n"
					"main: exiting due to model loading error\n", P.model, P.model, P.model);
			exit(1);
		}
		fprintf(stderr, "llama_model_loader: loaded meta data with 40 key-value pairs from %s\n", P.model);
	}
	hold_memory(env_dbl("SIMSERVE_RSS_MIB", 0));
	if (load_s > 0 && wait(set, load_s))
		return false;
	if (P.kind == SS_PERSONA_VLLM) {
		ss_plog("EngineCore_DP0", "gpu_model_runner.py:2653", "Model loading took %.4f GiB and %.6f seconds",
		      env_dbl("SIMSERVE_WEIGHTS_GIB", 0), load_s);
		if (P.olevel > 0)
			ss_plog("EngineCore_DP0", "monitor.py:34", "torch.compile takes %.2f s in total", 0.0);
	}
	double cap_gib = (double)P.n_capture * cap_mib / 1024.0;
	if (!kv_fits(cap_gib))
		exit(1);
	if (P.n_capture > 0) {
		if (P.kind == SS_PERSONA_SGLANG)
			ss_plog(" TP0", "cuda_graph_runner.py", "Capture cuda graph begin. This can take up to "
			      "several minutes. avail mem=60.00 GB");
		int64_t c0 = rt_now_ns();
		if (cap_ms > 0 && wait(set, (double)P.n_capture * cap_ms / 1000.0))
			return false;
		hold_memory((double)P.n_capture * cap_mib);
		double secs = (double)(rt_now_ns() - c0) / 1e9;
		if (P.kind == SS_PERSONA_VLLM) {
			printf("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%%|##########| %d/%d\n",
			       P.n_capture, P.n_capture);
			ss_plog("EngineCore_DP0", "gpu_model_runner.py:3480",
			      "Graph capturing finished in %.0f secs, took %.2f GiB", secs, cap_gib);
		} else {
			ss_plog(" TP0", "cuda_graph_runner.py", "Capture cuda graph end. Time elapsed: %.2f s. "
			      "mem usage=%.2f GB. avail mem=60.00 GB", secs, cap_gib);
		}
	}
	if (P.kind == SS_PERSONA_VLLM)
		ss_plog("EngineCore_DP0", "core.py:210", "init engine (profile, create kv cache, warmup model) "
		      "took %.2f seconds", (double)(rt_now_ns() - P.t0) / 1e9);
	P.loading = false;
	return true;
}

void ss_persona_ready(int port)
{
	const char *h = P.cfg->host;
	if (P.kind == SS_PERSONA_VLLM) {
		ss_plog("APIServer", "api_server.py:1634", "Starting vLLM API server 0 on http://%s:%d", h, port);
		printf("(APIServer pid=%d) INFO:     Started server process [%d]\n"
		       "(APIServer pid=%d) INFO:     Waiting for application startup.\n"
		       "(APIServer pid=%d) INFO:     Application startup complete.\n",
		       (int)getpid(), (int)getpid(), (int)getpid(), (int)getpid());
	} else if (P.kind == SS_PERSONA_SGLANG) {
		printf("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)\n", h, port);
		ss_plog("", "http_server.py", "The server is fired up and ready to roll!");
	} else if (P.loading) {
		/* llama.cpp 80fb11a's lines (tools/server/server.cpp, server-context.cpp) */
		fprintf(stderr, "srv    load_model: loading model '%s'\n", P.model);
		fprintf(stderr, "srv  llama_server: listening on http://%s:%d\n", h, port);
	} else {
		fprintf(stderr, "srv    load_model: initializing, n_slots = %ld, n_ctx_slot = %ld, kv_unified = '%s'\n"
			"srv  llama_server: model loaded\n",
			P.cfg->max_batch, ss_persona_slot_ctx(), P.np_set ? "false" : "true");
	}
	fflush(NULL);
}

void ss_persona_bind_error(void)
{
	if (P.kind == SS_PERSONA_LLAMA)
		fprintf(stderr, "couldn't bind HTTP server socket, hostname: %s, port: %ld\n", P.cfg->host,
			P.cfg->port);
	else
		fprintf(stderr, "OSError: [Errno 98] Address already in use\n");
}

void ss_persona_log_recompile(long bs)
{
	if (P.kind == SS_PERSONA_VLLM && bs > P.cfg->max_graph_bs)
		ss_plog("EngineCore_DP0", "backends.py:215", "Compiling a graph for dynamic shape takes %.2f s "
		      "(batch size %ld, above the largest captured size %ld)", 0.0, bs, P.cfg->max_graph_bs);
	else if (P.kind == SS_PERSONA_LLAMA)
		fprintf(stderr, "ggml_backend_cuda_graph_compute: disabling CUDA graphs due to batch size %ld\n", bs);
	else if (P.kind == SS_PERSONA_SGLANG && bs > P.cfg->max_graph_bs)
		ss_plog(" TP0", "scheduler.py", "Decode batch. #running-req: %ld, cuda graph: False", bs);
	fflush(NULL);
}

