/*
 * State shared by persona.c (command lines, start-up) and persona_http.c
 * (the personality's routes): the values of the real program's flags.
 */
#ifndef SS_PERSONA_H
#define SS_PERSONA_H

#include <jansson.h>
#include <stdatomic.h>

#include "simserve.h"

#define MAX_SERVED 8     /* served names kept */
#define MAX_CAPTURE 1024 /* captured graph sizes kept */

#define SS_VLLM_VERSION "0.11.0"
#define SS_LLAMA_BUILD "6700 (simserve)"
#define SS_SGLANG_VERSION "0.5.3"

/* The personality's state: its flags' values and what it serves. */
struct ss_persona_state {
	enum ss_persona kind;       /* which program */
	struct ss_config *cfg;      /* simserve's options, updated by the flags */
	const char *model;          /* model tag or path as given */
	const char *served[MAX_SERVED]; /* served names (vLLM takes several) */
	int n_served;
	long max_model_len;         /* context length reported */
	long n_ctx;                 /* llama: -c (all slots together) */
	bool np_set;                /* llama: -np given (else auto: 4 slots sharing one unified context) */
	long ubatch;                /* llama: -ub */
	long ngl;                   /* llama: -ngl (-1 all) */
	const char *fa;             /* llama: on|off|auto */
	const char *ctk, *ctv;      /* llama: cache types */
	const char *kv_dtype;       /* vLLM/SGLang --kv-cache-dtype */
	double mem_frac;            /* --gpu-memory-utilization / --mem-fraction-static */
	bool metrics;               /* llama --metrics / SGLang --enable-metrics */
	bool eager;                 /* vLLM --enforce-eager / SGLang --disable-cuda-graph */
	long olevel;                /* vLLM compilation level (3 default) */
	long capture_max;           /* largest captured size asked for (-1: default) */
	long capture[MAX_CAPTURE];  /* captured batch sizes, ascending */
	int n_capture;
	json_t *kernel;             /* vLLM --kernel-config (a simserve tile table) */
	double accuracy_drop;       /* GSM8K accuracy lost to a lossy KV cache */
	char *rss;                  /* memory held for the footprint */
	size_t rss_len;
	_Atomic bool loading;       /* llama: listening, still loading */
	char *models_body;          /* GET /v1/models */
	char *info_body;            /* /version, /props or /get_server_info */
	int64_t t0;                 /* process start */
};


extern struct ss_persona_state ss_P;

/* A log line with the program's prefix: vLLM "(WHO pid=N) INFO date [WHERE] ",
 * SGLang "[date WHO] ". */
void ss_plog(const char *who, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Build the constant bodies (/v1/models, /version ...) once the flags are read. */
void ss_persona_bodies(void);

#endif
