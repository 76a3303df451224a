/*
 * Engine personalities: simserve run as `vllm serve`, `llama-server` or
 * `python -m sglang.launch_server`, so that a spec written for the real
 * program runs unchanged against the simulator. This file owns the three
 * command lines (the flags a campaign touches, real flags it ignores, and
 * the real program's refusal of anything else), how each flag moves the
 * simulated performance, the start-up logs and cost (load, compile, graph
 * capture, memory), and the read-only routes (/health, /v1/models, /version,
 * /props, /get_server_info, /metrics). Completions stay in http.c.
 *
 * Versions followed (flag names, defaults, JSON shapes, log lines):
 *   vLLM 0.11.0: vllm/entrypoints/cli/serve.py, vllm/engine/arg_utils.py
 *     (EngineArgs.add_cli_args, FlexibleArgumentParser: "--a_b" is "--a-b",
 *     argparse's "unrecognized arguments" and exit 2), vllm/config/compilation.py
 *     (cudagraph_capture_sizes, max_cudagraph_capture_size, level/mode),
 *     vllm/entrypoints/openai/api_server.py (/health, /version, /v1/models
 *     with ModelCard and ModelPermission, /metrics), vllm/v1/metrics/loggers.py
 *     (vllm:num_requests_running ... with engine and model_name labels).
 *   llama.cpp b6700 (Oct 2025): common/arg.cpp (flags; "error: invalid
 *     argument: X", exit 1; -fa on|off|auto; -np auto is 4), tools/server/
 *     server.cpp (/health 503 "Loading model" while loading, /props,
 *     /v1/models with "models" and "data", llamacpp: metrics only with --metrics).
 *   SGLang 0.5.3: python/sglang/srt/server_args.py (ServerArgs.add_cli_args,
 *     argparse), python/sglang/srt/entrypoints/http_server.py (/health,
 *     /get_model_info, /get_server_info, /v1/models), sglang: metrics only
 *     with --enable-metrics.
 * Nothing here is copied from those projects; the formats are reproduced.
 *
 * Start-up cost knobs (environment, read by every personality):
 *   SIMSERVE_SLOW_START   model load seconds (the plain simserve knob)
 *   SIMSERVE_CAPTURE_MS   start-up ms per captured CUDA-graph batch size
 *   SIMSERVE_CAPTURE_MIB  resident MiB per captured size (graph memory)
 *   SIMSERVE_RSS_MIB      resident MiB of the loaded "weights"
 *   SIMSERVE_GPU_GIB, SIMSERVE_WEIGHTS_GIB  when both are set, vLLM and SGLang
 *                         refuse to start when the KV cache would not fit
 */
#include "persona.h"

#include <ctype.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What a flag does once its value is known. */
enum act {
	A_IGNORE = 0, A_HOST, A_PORT, A_MODEL, A_SERVED, A_MAXLEN, A_SEQS, A_BATCHED,
	A_COMPILE, A_OLEVEL, A_KERNEL, A_EAGER, A_KVDTYPE, A_GPUUTIL, A_SEED,
	A_CTX, A_NP, A_BATCH, A_UBATCH, A_FA, A_NGL, A_CTK, A_CTV, A_METRICS,
	A_GRAPH_MAX, A_GRAPH_BS, A_GRAPH_OFF, A_MEMFRAC,
};

/* How a flag takes its value. */
enum take {
	T_VAL,    /* exactly one value */
	T_FLAG,   /* none */
	T_BOOL,   /* none; argparse BooleanOptionalAction also takes --no-NAME */
	T_OPT,    /* llama -fa: an optional on|off|auto */
	T_NARGS,  /* one or more values (argparse nargs="+") */
};

/* One flag of a real program. */
struct pflag {
	const char *name;  /* "--max-num-seqs" */
	const char *alt;   /* another spelling, or NULL */
	enum take take;    /* how it takes a value */
	enum act act;      /* what it does */
	char type;         /* 'i' int, 'f' float, 's' string (for argparse's messages) */
};

/* vLLM 0.11 `vllm serve`: the flags below are modelled or accepted. */
static const struct pflag vllm_flags[] = {
	{ "--host", NULL, T_VAL, A_HOST, 's' },
	{ "--port", NULL, T_VAL, A_PORT, 'i' },
	{ "--model", NULL, T_VAL, A_MODEL, 's' },
	{ "--served-model-name", NULL, T_NARGS, A_SERVED, 's' },
	{ "--max-model-len", NULL, T_VAL, A_MAXLEN, 'i' },
	{ "--max-num-seqs", NULL, T_VAL, A_SEQS, 'i' },
	{ "--max-num-batched-tokens", NULL, T_VAL, A_BATCHED, 'i' },
	{ "--compilation-config", "-O", T_VAL, A_COMPILE, 's' },
	{ "--kernel-config", NULL, T_VAL, A_KERNEL, 's' },
	{ "--enforce-eager", NULL, T_BOOL, A_EAGER, 's' },
	{ "--kv-cache-dtype", NULL, T_VAL, A_KVDTYPE, 's' },
	{ "--gpu-memory-utilization", NULL, T_VAL, A_GPUUTIL, 'f' },
	{ "--seed", NULL, T_VAL, A_SEED, 'i' },
	{ "--tensor-parallel-size", "-tp", T_VAL, A_IGNORE, 'i' },
	{ "--pipeline-parallel-size", "-pp", T_VAL, A_IGNORE, 'i' },
	{ "--data-parallel-size", "-dp", T_VAL, A_IGNORE, 'i' },
	{ "--dtype", NULL, T_VAL, A_IGNORE, 's' },
	{ "--quantization", "-q", T_VAL, A_IGNORE, 's' },
	{ "--tokenizer", NULL, T_VAL, A_IGNORE, 's' },
	{ "--revision", NULL, T_VAL, A_IGNORE, 's' },
	{ "--block-size", NULL, T_VAL, A_IGNORE, 'i' },
	{ "--swap-space", NULL, T_VAL, A_IGNORE, 'f' },
	{ "--api-key", NULL, T_NARGS, A_IGNORE, 's' },
	{ "--chat-template", NULL, T_VAL, A_IGNORE, 's' },
	{ "--uvicorn-log-level", NULL, T_VAL, A_IGNORE, 's' },
	{ "--attention-backend", NULL, T_VAL, A_IGNORE, 's' },
	{ "--trust-remote-code", NULL, T_BOOL, A_IGNORE, 's' },
	{ "--enable-prefix-caching", NULL, T_BOOL, A_IGNORE, 's' },
	{ "--enable-chunked-prefill", NULL, T_BOOL, A_IGNORE, 's' },
	{ "--disable-log-requests", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--disable-log-stats", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--enable-log-requests", NULL, T_BOOL, A_IGNORE, 's' },
	{ "--disable-uvicorn-access-log", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--async-scheduling", NULL, T_BOOL, A_IGNORE, 's' },
	{ NULL, NULL, 0, 0, 0 },
};

/* llama.cpp's llama-server (common/arg.cpp). */
static const struct pflag llama_flags[] = {
	{ "-m", "--model", T_VAL, A_MODEL, 's' },
	{ "--host", NULL, T_VAL, A_HOST, 's' },
	{ "--port", NULL, T_VAL, A_PORT, 'i' },
	{ "-c", "--ctx-size", T_VAL, A_CTX, 'i' },
	{ "-np", "--parallel", T_VAL, A_NP, 'i' },
	{ "-b", "--batch-size", T_VAL, A_BATCH, 'i' },
	{ "-ub", "--ubatch-size", T_VAL, A_UBATCH, 'i' },
	{ "-fa", "--flash-attn", T_OPT, A_FA, 's' },
	{ "-ngl", "--n-gpu-layers", T_VAL, A_NGL, 'i' },
	{ "-a", "--alias", T_VAL, A_SERVED, 's' },
	{ "-ctk", "--cache-type-k", T_VAL, A_CTK, 's' },
	{ "-ctv", "--cache-type-v", T_VAL, A_CTV, 's' },
	{ "--metrics", NULL, T_FLAG, A_METRICS, 's' },
	{ "-s", "--seed", T_VAL, A_SEED, 'i' },
	{ "-t", "--threads", T_VAL, A_IGNORE, 'i' },
	{ "--gpu-layers", NULL, T_VAL, A_NGL, 'i' },
	{ "-cb", "--cont-batching", T_FLAG, A_IGNORE, 's' },
	{ "-nocb", "--no-cont-batching", T_FLAG, A_IGNORE, 's' },
	{ "--jinja", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--no-warmup", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--no-mmap", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--mlock", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--slots", NULL, T_FLAG, A_IGNORE, 's' },
	{ "-dev", "--device", T_VAL, A_IGNORE, 's' },
	{ "-ts", "--tensor-split", T_VAL, A_IGNORE, 's' },
	{ "-sm", "--split-mode", T_VAL, A_IGNORE, 's' },
	{ "-mg", "--main-gpu", T_VAL, A_IGNORE, 'i' },
	{ "--api-key", NULL, T_VAL, A_IGNORE, 's' },
	{ "-to", "--timeout", T_VAL, A_IGNORE, 'i' },
	{ NULL, NULL, 0, 0, 0 },
};

/* SGLang's launch_server (ServerArgs.add_cli_args). */
static const struct pflag sglang_flags[] = {
	{ "--model-path", "--model", T_VAL, A_MODEL, 's' },
	{ "--host", NULL, T_VAL, A_HOST, 's' },
	{ "--port", NULL, T_VAL, A_PORT, 'i' },
	{ "--served-model-name", NULL, T_VAL, A_SERVED, 's' },
	{ "--context-length", NULL, T_VAL, A_MAXLEN, 'i' },
	{ "--max-running-requests", NULL, T_VAL, A_SEQS, 'i' },
	{ "--chunked-prefill-size", NULL, T_VAL, A_BATCHED, 'i' },
	{ "--cuda-graph-max-bs", NULL, T_VAL, A_GRAPH_MAX, 'i' },
	{ "--cuda-graph-bs", NULL, T_NARGS, A_GRAPH_BS, 'i' },
	{ "--disable-cuda-graph", NULL, T_FLAG, A_GRAPH_OFF, 's' },
	{ "--kv-cache-dtype", NULL, T_VAL, A_KVDTYPE, 's' },
	{ "--mem-fraction-static", NULL, T_VAL, A_MEMFRAC, 'f' },
	{ "--enable-metrics", NULL, T_FLAG, A_METRICS, 's' },
	{ "--random-seed", NULL, T_VAL, A_SEED, 'i' },
	{ "--tokenizer-path", NULL, T_VAL, A_IGNORE, 's' },
	{ "--tp-size", "--tp", T_VAL, A_IGNORE, 'i' },
	{ "--dp-size", "--dp", T_VAL, A_IGNORE, 'i' },
	{ "--dtype", NULL, T_VAL, A_IGNORE, 's' },
	{ "--quantization", NULL, T_VAL, A_IGNORE, 's' },
	{ "--attention-backend", NULL, T_VAL, A_IGNORE, 's' },
	{ "--max-prefill-tokens", NULL, T_VAL, A_IGNORE, 'i' },
	{ "--schedule-policy", NULL, T_VAL, A_IGNORE, 's' },
	{ "--log-level", NULL, T_VAL, A_IGNORE, 's' },
	{ "--trust-remote-code", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--disable-radix-cache", NULL, T_FLAG, A_IGNORE, 's' },
	{ "--enable-torch-compile", NULL, T_FLAG, A_IGNORE, 's' },
	{ NULL, NULL, 0, 0, 0 },
};

struct ss_persona_state ss_P = { .max_model_len = -1, .ngl = -1, .olevel = 3, .capture_max = -1, .mem_frac = -1 };
#define P ss_P

static const char *const prog_names[] = { "", "vllm", "llama-server", "sglang" };

enum ss_persona ss_persona_kind(void)
{
	return P.kind;
}

bool ss_persona_listens_early(void)
{
	return P.kind == SS_PERSONA_LLAMA;
}

enum ss_persona ss_persona_detect(int *argc, char **argv)
{
	P.t0 = rt_now_ns();
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	int k = 0;
	const char *name = NULL;
	if (*argc >= 3 && !strcmp(argv[1], "--personality"))
		name = argv[2], k = 2;
	else if (*argc >= 2 && !strncmp(argv[1], "--personality=", 14))
		name = argv[1] + 14, k = 1;
	else
		name = base;
	for (int p = 1; p < (int)RT_ARRAY_SIZE(prog_names); p++) {
		if (strcmp(name, prog_names[p]))
			continue;
		if (k) {
			memmove(argv + 1, argv + 1 + k, (size_t)(*argc - 1 - k + 1) * sizeof(*argv));
			*argc -= k;
		}
		return (enum ss_persona)p;
	}
	if (k) {
		fprintf(stderr, "simserve: --personality: unknown '%s' (one of vllm, llama-server, sglang)\n",
			name);
		exit(2);
	}
	return SS_PERSONA_NONE;
}

/* ---- command line ---- */

/* The real program's refusal, and its exit status. */
static int refuse(const char *msg)
{
	switch (P.kind) {
	case SS_PERSONA_VLLM:
		fprintf(stderr, "usage: vllm serve [model_tag] [options]\nvllm serve: error: %s\n", msg);
		return 2;
	case SS_PERSONA_SGLANG:
		fprintf(stderr, "usage: launch_server.py [-h] --model-path MODEL_PATH [options]\n"
				"launch_server.py: error: %s\n", msg);
		return 2;
	default:
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
}

static const struct pflag *flag_table(void)
{
	return P.kind == SS_PERSONA_VLLM ? vllm_flags
	       : P.kind == SS_PERSONA_LLAMA ? llama_flags : sglang_flags;
}

/* Find a flag; *neg is set for argparse's --no-NAME of a T_BOOL flag. */
static const struct pflag *find_flag(const char *name, bool *neg)
{
	*neg = false;
	for (const struct pflag *f = flag_table(); f->name; f++) {
		if (!strcmp(name, f->name) || (f->alt && !strcmp(name, f->alt)))
			return f;
		if (f->take == T_BOOL && !strncmp(name, "--no-", 5) && !strcmp(name + 5, f->name + 2)) {
			*neg = true;
			return f;
		}
	}
	return NULL;
}

/* A value of the flag's type, or the program's message. */
static int typed(const struct pflag *f, const char *v, long *l, double *d, struct rt_sb *msg)
{
	char *end = NULL;
	if (f->type == 'i') {
		*l = strtol(v, &end, 10);
	} else if (f->type == 'f') {
		*d = strtod(v, &end);
	} else {
		return 0;
	}
	if (end != v && !*end)
		return 0;
	if (P.kind == SS_PERSONA_LLAMA)
		rt_sb_addf(msg, "error while handling argument \"%s\": %s", f->name,
			   f->type == 'i' ? "stoi" : "stof");
	else
		rt_sb_addf(msg, "argument %s: invalid %s value: '%s'", f->name,
			   f->type == 'i' ? "int" : "float", v);
	return -1;
}

/* vLLM's default capture list (0.11: [1, 2, 4] + 8..248 step 8 + 256..max step 16). */
static void default_captures(long max)
{
	P.n_capture = 0;
	for (long s = 1; s <= max && P.n_capture < MAX_CAPTURE;) {
		P.capture[P.n_capture++] = s;
		s = s < 4 ? s * 2 : s < 8 ? 8 : s < 256 ? s + 8 : s + 16;
	}
}

/* SGLang's default list: 1, 2, 4, 8, 12, then steps of 8. */
static void sglang_captures(long max)
{
	P.n_capture = 0;
	for (long s = 1; s <= max && P.n_capture < MAX_CAPTURE;) {
		P.capture[P.n_capture++] = s;
		s = s < 8 ? s * 2 : s < 16 ? s + 4 : s + 8;
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* --compilation-config JSON (or -O LEVEL). Real keys only: CompilationConfig
 * refuses unknown ones. */
static int compilation(const char *v, struct rt_sb *msg)
{
	static const char *const keys[] = {
		"level", "mode", "debug_dump_path", "cache_dir", "backend", "custom_ops",
		"splitting_ops", "use_inductor", "compile_sizes", "inductor_compile_config",
		"inductor_passes", "cudagraph_mode", "use_cudagraph", "cudagraph_num_of_warmups",
		"cudagraph_capture_sizes", "cudagraph_copy_inputs", "full_cuda_graph", "pass_config",
		"max_capture_size", "max_cudagraph_capture_size", "local_cache_dir",
		"use_inductor_graph_partition",
	};
	if (isdigit((unsigned char)v[0]) && !v[1]) {
		P.olevel = v[0] - '0';
		return 0;
	}
	json_error_t je;
	json_t *o = json_loads(v, 0, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		rt_sb_addf(msg, "argument --compilation-config/-O: invalid loads value: '%s'", v);
		return -1;
	}
	const char *k;
	json_t *x;
	json_object_foreach(o, k, x) {
		size_t i;
		for (i = 0; i < RT_ARRAY_SIZE(keys) && strcmp(k, keys[i]); i++)
			;
		if (i == RT_ARRAY_SIZE(keys)) {
			rt_sb_addf(msg, "1 validation error for CompilationConfig\n%s\n  Unexpected keyword argument", k);
			json_decref(o);
			return -2;
		}
		if ((!strcmp(k, "level") || !strcmp(k, "mode")) && json_is_integer(x))
			P.olevel = (long)json_integer_value(x);
		else if (!strcmp(k, "cudagraph_mode") && json_is_string(x) &&
			 !strcmp(json_string_value(x), "NONE"))
			P.eager = true;
		else if ((!strcmp(k, "max_cudagraph_capture_size") || !strcmp(k, "max_capture_size")) &&
			 json_is_integer(x))
			P.capture_max = (long)json_integer_value(x);
	}
	json_t *sizes = json_object_get(o, "cudagraph_capture_sizes");
	if (json_is_array(sizes)) {
		size_t i;
		json_t *s;
		P.n_capture = 0;
		json_array_foreach(sizes, i, s) {
			if (!json_is_integer(s) || json_integer_value(s) < 1) {
				rt_sb_addf(msg, "1 validation error for CompilationConfig\ncudagraph_capture_sizes.%zu\n"
						"  Input should be a valid integer", i);
				json_decref(o);
				return -2;
			}
			if (P.n_capture < MAX_CAPTURE)
				P.capture[P.n_capture++] = (long)json_integer_value(s);
		}
		qsort(P.capture, (size_t)P.n_capture, sizeof(long), cmp_long);
		P.capture_max = P.n_capture ? P.capture[P.n_capture - 1] : 0;
		P.capture_max = -P.capture_max - 2; /* marks "list given" */
	}
	json_decref(o);
	return 0;
}

/* Apply one flag's value. Returns 0, -1 (argparse-style message) or -2 (a
 * start-up error, exit 1). */
static int apply(const struct pflag *f, bool neg, const char *v, struct rt_sb *msg)
{
	struct ss_config *cfg = P.cfg;
	long l = 0;
	double d = 0;
	if (v && typed(f, v, &l, &d, msg))
		return -1;
	switch (f->act) {
	case A_HOST: cfg->host = v; break;
	case A_PORT: cfg->port = l; break;
	case A_MODEL: P.model = v; break;
	case A_SERVED:
		if (P.n_served < MAX_SERVED)
			P.served[P.n_served++] = v;
		break;
	case A_MAXLEN: P.max_model_len = l; break;
	case A_SEQS: cfg->max_batch = l; break;
	case A_BATCHED: case A_BATCH: cfg->chunked_prefill = l; break;
	case A_COMPILE: return compilation(v, msg);
	case A_KERNEL: {
		json_error_t je;
		json_decref(P.kernel);
		P.kernel = json_loads(v, 0, &je);
		if (!P.kernel) {
			rt_sb_addf(msg, "argument --kernel-config: invalid loads value: '%s'", v);
			return -1;
		}
		break;
	}
	case A_EAGER: P.eager = !neg; break;
	case A_GRAPH_OFF: P.eager = true; break;
	case A_KVDTYPE: P.kv_dtype = v; break;
	case A_GPUUTIL: case A_MEMFRAC: P.mem_frac = d; break;
	case A_SEED: cfg->seed = l; break;
	case A_CTX: P.n_ctx = l; break;
	case A_NP: cfg->max_batch = l, P.np_set = true; break;
	case A_UBATCH: P.ubatch = l; break;
	case A_FA: P.fa = v ? v : "on"; break;
	case A_NGL: P.ngl = l; break;
	case A_CTK: P.ctk = v; break;
	case A_CTV: P.ctv = v; break;
	case A_METRICS: P.metrics = true; break;
	case A_GRAPH_MAX: P.capture_max = l; break;
	case A_GRAPH_BS:
		if (P.n_capture < MAX_CAPTURE)
			P.capture[P.n_capture++] = l;
		P.capture_max = -2; /* list given */
		break;
	case A_OLEVEL: case A_IGNORE: break;
	}
	return 0;
}

/* Walk argv[first..] as the program would. */
static int parse_flags(int argc, char **argv, int first, struct rt_sb *msg, struct rt_sb *unknown)
{
	for (int i = first; i < argc; i++) {
		char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (P.kind == SS_PERSONA_VLLM && !P.model)
				P.model = a; /* model_tag */
			else if (P.kind == SS_PERSONA_LLAMA)
				return rt_sb_addf(msg, "error: invalid argument: %s", a), -1;
			else
				rt_sb_addf(unknown, "%s%s", unknown->len ? " " : "", a);
			continue;
		}
		/* argparse: --name=value, and vLLM reads "_" in a name as "-" */
		char name[128];
		const char *eq = P.kind != SS_PERSONA_LLAMA && a[1] == '-' ? strchr(a, '=') : NULL;
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, a, n);
		name[n] = '\0';
		if (P.kind == SS_PERSONA_VLLM)
			for (char *p = name + 2; *p; p++)
				if (*p == '_')
					*p = '-';
		const char *attached = eq ? eq + 1 : NULL;
		if (P.kind == SS_PERSONA_VLLM && !strncmp(a, "-O", 2) && a[2] && a[2] != '=')
			attached = a + 2, strcpy(name, "-O"); /* -O3 */
		bool neg;
		const struct pflag *f = find_flag(name, &neg);
		if (!f) {
			if (P.kind == SS_PERSONA_LLAMA)
				return rt_sb_addf(msg, "error: invalid argument: %s", a), -1;
			rt_sb_addf(unknown, "%s%s", unknown->len ? " " : "", a);
			continue;
		}
		int rc = 0;
		if (f->take == T_FLAG || f->take == T_BOOL) {
			rc = apply(f, neg, NULL, msg);
		} else if (f->take == T_OPT) {
			const char *v = attached;
			if (!v && i + 1 < argc && (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off") ||
						   !strcmp(argv[i + 1], "auto")))
				v = argv[++i];
			rc = apply(f, false, v, msg);
		} else {
			const char *v = attached;
			if (!v) {
				if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] &&
						      !isdigit((unsigned char)argv[i + 1][1]))) {
					if (P.kind == SS_PERSONA_LLAMA)
						rt_sb_addf(msg, "error while handling argument \"%s\": expected value for argument", a);
					else
						rt_sb_addf(msg, "argument %s%s%s: expected %s argument", f->name,
							   f->alt ? "/" : "", f->alt ? f->alt : "",
							   f->take == T_NARGS ? "at least one" : "one");
					return -1;
				}
				v = argv[++i];
			}
			rc = apply(f, false, v, msg);
			while (!rc && f->take == T_NARGS && !attached && i + 1 < argc && argv[i + 1][0] != '-')
				rc = apply(f, false, argv[++i], msg);
		}
		if (rc)
			return rc;
	}
	return 0;
}

long ss_persona_slot_ctx(void)
{
	if (P.kind != SS_PERSONA_LLAMA)
		return 0;
	long ctx = P.n_ctx > 0 ? P.n_ctx : 131072;
	return P.np_set && P.cfg->max_batch > 0 ? ctx / P.cfg->max_batch : ctx;
}

/* Flags to simulated performance (after every flag is read). */
static void settle(void)
{
	struct ss_config *cfg = P.cfg;
	double dec = 1.0, pre = 1.0;
	const char *lossy = P.kv_dtype;
	if (P.kind == SS_PERSONA_LLAMA) {
		/* flash attention: auto turns it on where supported (always, here) */
		if (!P.fa || strcmp(P.fa, "off"))
			dec *= 0.85, pre *= 0.9;
		/* a physical micro-batch under the logical batch costs per launch */
		long ub = P.ubatch > 0 ? P.ubatch : 512;
		if (ub > cfg->chunked_prefill)
			ub = cfg->chunked_prefill;
		for (long s = ub; s < 2048; s *= 2)
			pre *= 1.08;
		/* layers left on the CPU (the simulated model has 62) */
		if (P.ngl >= 0 && P.ngl < 62)
			dec *= 1.0 + 4.0 * (double)(62 - P.ngl) / 62.0, pre *= 1.0 + 2.0 * (double)(62 - P.ngl) / 62.0;
		cfg->max_graph_bs = 1; /* llama.cpp's CUDA graphs serve batch size 1 only */
		lossy = P.ctk && strcmp(P.ctk, "f16") ? P.ctk : P.ctv && strcmp(P.ctv, "f16") ? P.ctv : NULL;
	} else {
		if (P.capture_max >= -1) {
			long max = P.capture_max >= 0 ? P.capture_max
				   : P.kind == SS_PERSONA_VLLM ? (cfg->max_batch * 2 < 512 ? cfg->max_batch * 2 : 512)
							       : 256;
			if (P.kind == SS_PERSONA_VLLM)
				default_captures(max);
			else
				sglang_captures(max);
		} else {
			qsort(P.capture, (size_t)P.n_capture, sizeof(long), cmp_long);
		}
		if (P.eager || (P.kind == SS_PERSONA_VLLM && P.olevel == 0))
			P.n_capture = 0;
		cfg->max_graph_bs = P.n_capture ? P.capture[P.n_capture - 1] : 0;
		if (P.kind == SS_PERSONA_VLLM && P.olevel == 0)
			dec *= 1.15; /* no torch.compile fusion */
	}
	if (lossy && strcmp(lossy, "auto")) {
		/* a smaller KV cache reads faster and loses a little accuracy */
		bool q4 = strstr(lossy, "q4") || strstr(lossy, "e5m2");
		dec *= q4 ? 0.8 : 0.88;
		P.accuracy_drop = q4 ? 0.08 : 0.03;
		cfg->gsm8k_accuracy -= P.accuracy_drop;
		if (cfg->gsm8k_accuracy < 0)
			cfg->gsm8k_accuracy = 0;
	}
	cfg->decode_speed = dec;
	cfg->prefill_speed = pre;
	if (P.n_served)
		cfg->model = P.served[0];
	else if (P.model)
		cfg->model = P.model;
	if (P.max_model_len < 0)
		P.max_model_len = P.kind == SS_PERSONA_LLAMA && P.n_ctx > 0 ? P.n_ctx : 131072;
}

int ss_persona_parse(enum ss_persona p, int argc, char **argv, struct ss_config *cfg)
{
	P.kind = p;
	P.cfg = cfg;
	P.loading = p == SS_PERSONA_LLAMA;
	cfg->port = p == SS_PERSONA_VLLM ? 8000 : p == SS_PERSONA_LLAMA ? 8080 : 30000;
	cfg->max_batch = p == SS_PERSONA_VLLM ? 1024 : p == SS_PERSONA_LLAMA ? 4 : 256;
	cfg->chunked_prefill = p == SS_PERSONA_VLLM ? 8192 : p == SS_PERSONA_LLAMA ? 2048 : 8192;
	int first = 1;
	if (p == SS_PERSONA_VLLM) {
		if (argc >= 2 && (!strcmp(argv[1], "chat") || !strcmp(argv[1], "complete") ||
			  !strcmp(argv[1], "bench") || !strcmp(argv[1], "collect-env") ||
			  !strcmp(argv[1], "run-batch"))) {
		fprintf(stderr, "simserve: only `vllm serve` is simulated, not `vllm %s`\n", argv[1]);
		return 2;
	}
	if (argc < 2 || strcmp(argv[1], "serve")) {
			fprintf(stderr, "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n"
					"vllm: error: argument subparser: invalid choice: '%s' (choose from 'chat', "
					"'complete', 'serve', 'bench', 'collect-env', 'run-batch')\n",
				argc < 2 ? "" : argv[1]);
			return 2;
		}
		first = 2;
	} else if (p == SS_PERSONA_SGLANG && argc >= 3 && !strcmp(argv[1], "-m") &&
		   !strcmp(argv[2], "sglang.launch_server")) {
		first = 3; /* `python -m sglang.launch_server ...` through a wrapper */
	}
	struct rt_sb msg = RT_SB_INIT, unknown = RT_SB_INIT;
	int rc = parse_flags(argc, argv, first, &msg, &unknown);
	if (!rc && unknown.len) {
		rt_sb_addf(&msg, "unrecognized arguments: %s", unknown.buf);
		rc = -1;
	}
	if (!rc && p == SS_PERSONA_SGLANG && !P.model) {
		rt_sb_adds(&msg, "the following arguments are required: --model-path");
		rc = -1;
	}
	if (!rc && p == SS_PERSONA_LLAMA && !P.model) {
		rt_sb_adds(&msg, "error: --model is required (or -hf)");
		rc = -1;
	}
	if (!rc && cfg->max_batch < 1) {
		rt_sb_addf(&msg, "ValueError: max_num_seqs (%ld) must be at least 1", cfg->max_batch);
		rc = -2;
	}
	int exit_code = 0;
	if (rc == -1) {
		exit_code = refuse(msg.buf);
	} else if (rc == -2) {
		fprintf(stderr, "%s\n", msg.buf);
		exit_code = 1;
	}
	rt_sb_release(&msg);
	rt_sb_release(&unknown);
	if (exit_code)
		return exit_code;
	if (p == SS_PERSONA_VLLM && !P.model)
		P.model = "Qwen/Qwen3-0.6B"; /* vLLM 0.11's default model */
	settle();
	ss_persona_bodies();
	return 0;
}

int ss_persona_tiles(struct ss_tiles *t)
{
	struct rt_sb err = RT_SB_INIT, log = RT_SB_INIT;
	int rc = 0;
	const char *aiter = getenv("VLLM_ROCM_USE_AITER");
	const char *csv = getenv("AITER_CONFIG_GEMM_BF16");
	if (P.kernel) {
		rc = ss_tiles_load_json(P.kernel, "--kernel-config", t, &err);
	} else if (aiter && !strcmp(aiter, "1") && P.kind != SS_PERSONA_LLAMA) {
		rc = ss_aiter_load(csv, t, &log, &err);
		if (log.len)
			fputs(log.buf, stdout);
	}
	if (rc)
		fprintf(stderr, "%s: %s\n", P.kind == SS_PERSONA_VLLM ? "ValueError" : "error", err.buf);
	rt_sb_release(&err);
	rt_sb_release(&log);
	return rc ? 1 : 0;
}

void ss_persona_free(void)
{
	json_decref(P.kernel);
	free(P.rss);
	free(P.models_body);
	free(P.info_body);
	P.kernel = NULL;
	P.rss = P.models_body = P.info_body = NULL;
}

