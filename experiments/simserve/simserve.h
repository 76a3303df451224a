/*
 * simserve: a SIMULATED OpenAI-compatible serving engine. It runs no model.
 * It really accepts connections, queues and batches requests in a scheduler
 * thread, and sleeps for the time a performance model says each batch step
 * takes, so concurrency, queueing and batching effects are real while the
 * numbers come from a formula (model.c) and a tile table with holes.
 *
 * Internal API shared by the files of this folder (prefix ss_):
 *   main.c   options (argv and SIMSERVE_* env), startup, signals
 *   model.c  tile table and the step-time formula
 *   sched.c  the batch scheduler thread and request lifetimes
 *   plan.c   what the "model" says: token counting, filler text, stop
 *   gsm8k.c  GSM8K lookup and worked answers (correct or deliberately wrong)
 *   http.c   libmicrohttpd handlers, SSE chunks, fault knobs
 *   persona.c engine personalities: vLLM, llama-server and SGLang command
 *            lines, endpoints, start-up logs and start-up cost
 *   aiter.c  AITER's tuned GEMM CSVs (the ROCm personality's tile table)
 */
#ifndef SS_SIMSERVE_H
#define SS_SIMSERVE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/base/rt.h"

struct MHD_Connection;

/* ---- configuration (main.c fills it from SIMSERVE_* env, then argv) ---- */
struct ss_config {
	const char *host;             /* listen address, default 127.0.0.1 */
	long port;                    /* 0: ephemeral */
	const char *model;            /* model id served */
	const char *nonce;            /* launch nonce echoed by /v1/models, "" if none */
	const char *tiles;            /* tile table JSON file, or NULL (all classes missing) */
	const char *best;             /* another "model": hidden best tiles "CLASS=M,N,W ...", or NULL */
	long max_graph_bs;            /* largest decode batch with a "CUDA graph" */
	long max_batch;               /* most running sequences */
	long chunked_prefill;         /* prompt-token budget per step */
	double prefill_us_per_token;  /* prefill cost per prompt token */
	double decode_us_per_step;    /* fixed cost of one decode step */
	double decode_us_per_seq;     /* decode cost per running sequence */
	bool zero_latency;            /* every cost is 0 */
	const char *gsm8k;            /* GSM8K test.jsonl, or NULL */
	double gsm8k_accuracy;        /* fraction of questions answered correctly */
	const char *flip;             /* comma-separated indices whose correctness flips */
	double slow_start;            /* seconds to wait before listening */
	long crash_after;             /* exit(70) on completion request crash_after+1; 0 off */
	long hang_after;              /* stop answering after this many completion requests; 0 off */
	const char *malformed;        /* fault mode name, or NULL */
	long keepalive_drop;          /* close a connection, unanswered, at its Nth request; 0 off */
	long seed;                    /* server RNG seed */
	bool log_recompiles;          /* print "Compiling kernel for batch size N" */
	double compile_ms;            /* > 0: the compile time those lines say (printed, not slept) */
	const char *profile_dir;      /* write a Chrome trace of the steps there (trace.c), or NULL */
	bool check_visible;           /* refuse to start unless the pool worker's pinning holds (main.c) */
	/* set by a personality (persona.c); zero for plain simserve */
	double decode_speed;          /* decode step cost multiplier (0: 1.0) */
	double prefill_speed;         /* prefill cost multiplier (0: 1.0) */
};

enum ss_malformed {
	SS_MAL_NONE = 0,
	SS_MAL_BADJSON,  /* first chunk / body is not JSON */
	SS_MAL_NODONE,   /* stream ends without data: [DONE] */
	SS_MAL_500MID,   /* 200 stream, then an error event, then the end */
	SS_MAL_RESET,    /* connection closed mid-stream */
	SS_MAL_BIGCHUNK, /* one valid multi-megabyte event */
};

/* ---- model.c: tile table and step cost ---- */
enum ss_class {
	SS_DEC_BS_LE_8,
	SS_DEC_BS_LE_32,
	SS_DEC_BS_GT_32,
	SS_PRE_T_LE_512,
	SS_PRE_T_GT_512,
	SS_NCLASS,
};

struct ss_tiles {
	bool present[SS_NCLASS];  /* entry exists in the table */
	bool broken[SS_NCLASS];   /* entry carries "broken": true */
	double factor[SS_NCLASS]; /* cost multiplier (1.0 = the hidden best) */
	bool any_broken;          /* some entry is broken: GSM8K answers all wrong */
};

/* Shape-class name, e.g. "decode.BS_LE_8". */
const char *ss_class_name(enum ss_class c);
/* Load and validate a tile table (NULL path: every class missing). */
int ss_tiles_load(const char *path, struct ss_tiles *t, struct rt_sb *err);
/* Another "model" (--best): its hidden best tiles, "CLASS=BLOCK_M,BLOCK_N,num_warps"
 * separated by spaces, replace those of the classes named; call it before
 * loading a table. RT_EINVAL naming the bad piece. */
int ss_best_set(const char *spec, struct rt_sb *err);
/* Load a table already parsed (name is used in messages); root is borrowed. */
struct json_t;
int ss_tiles_load_json(struct json_t *root, const char *name, struct ss_tiles *t, struct rt_sb *err);
/* Mark class c as using factor f (broken: fast but wrong answers). */
void ss_tiles_set(struct ss_tiles *t, enum ss_class c, double f, bool broken);
/* Duration of one step in ns: prefill_tokens prompt tokens and batch
 * decoding sequences. */
int64_t ss_step_ns(const struct ss_config *cfg, const struct ss_tiles *t, long prefill_tokens,
		   long batch);

/* ---- plan.c / gsm8k.c: what the "model" answers ---- */
/* One token as sent: leading whitespace plus a word, JSON-escaped once. */
struct ss_tok {
	char *json; /* JSON string literal with quotes, e.g. "\" Janet\"" */
};

/* The complete answer of a request, decided when it arrives. */
struct ss_plan {
	struct ss_tok *tok;        /* planned tokens */
	size_t n_tok;              /* how many */
	const char *finish_reason; /* "stop" or "length" */
	long prompt_tokens;        /* usage.prompt_tokens */
};

/* What a request asks for, already extracted from its JSON. */
struct ss_ask {
	const char *prompt;        /* completions: prompt; chat: all contents joined */
	const char *last_user;     /* chat: last user message content; NULL for completions */
	bool chat;                 /* chat/completions */
	long max_tokens;           /* -1: not given */
	const char *const *stop;   /* stop sequences */
	size_t n_stop;
	bool ignore_eos;           /* keep generating filler up to max_tokens */
	double temperature;        /* 0: greedy */
	bool has_seed;             /* request gave "seed" */
	uint64_t seed;             /* request seed */
};

/* Build the plan (caller releases it with ss_plan_release). */
void ss_plan_build(const struct ss_ask *ask, struct ss_plan *p);
void ss_plan_release(struct ss_plan *p);
/* Server RNG seed (--seed). */
void ss_plan_seed(uint64_t seed);

/* GSM8K: load the dataset and the correctness knobs. */
int ss_gsm8k_load(const char *path, double accuracy, const char *flip, struct rt_sb *err);
void ss_gsm8k_free(void);
bool ss_gsm8k_loaded(void);
/* Mark every answer wrong (a broken tile is in use). */
void ss_gsm8k_set_broken(bool broken);
/* If text holds a GSM8K question (after the rules in README.md), return the
 * answer as a new string (caller frees) and set *known; returns NULL when the
 * text has no question marker and is not itself a question. */
char *ss_gsm8k_answer(const char *text, bool chat, bool *known);
/* Whether question i (0-based) is answered correctly, ignoring broken tiles. */
bool ss_gsm8k_correct(long i);

/* ---- sched.c: requests and the batch scheduler ---- */
struct ss_req {
	/* fixed at creation */
	uint64_t id;               /* sequential id, for "cmpl-N" */
	bool chat;                 /* chat shape */
	bool stream;               /* SSE response */
	bool include_usage;        /* stream_options.include_usage */
	struct ss_plan plan;       /* the whole answer */
	int64_t recv_ns;           /* request fully received (CLOCK_MONOTONIC) */
	struct MHD_Connection *conn; /* owning connection */
	/* scheduler state, under ss_lock */
	long prefill_left;         /* prompt tokens still to prefill */
	size_t produced;           /* tokens generated so far */
	bool emit;                 /* scheduled to emit a token in the current step */
	bool done;                 /* all tokens generated */
	int64_t done_ns;           /* when done became true */
	/* connection state, under ss_lock */
	bool suspended;            /* connection is suspended waiting for us */
	bool cancelled;            /* the connection went away */
	bool hung;                 /* held forever by --hang-after */
	bool is_completion;        /* POST to a completions endpoint */
	int refs;                  /* connection + scheduler */
	size_t sent;               /* tokens already formatted for the client */
	int tail_stage;            /* streaming: 0 tokens, 1 usage, 2 [DONE], 3 end */
	struct rt_sb out;          /* formatted bytes not yet handed to MHD */
	size_t out_off;            /* bytes of out already handed over */
	struct rt_sb body;         /* request body while it uploads */
	bool too_big;              /* body went over its cap */
	struct ss_req *q_next;     /* scheduler queue link */
	struct ss_req *all_prev;   /* list of live requests (for shutdown) */
	struct ss_req *all_next;
};

extern pthread_mutex_t ss_lock;

/* Allocate a request with one reference (the connection's); adds it to the
 * live list. */
struct ss_req *ss_req_new(struct MHD_Connection *conn);
/* Drop one reference; frees at zero. Call with ss_lock held. */
void ss_req_unref_locked(struct ss_req *r);
/* Hand a request to the scheduler (takes a reference). Call with ss_lock held. */
void ss_sched_submit_locked(struct ss_req *r);
int ss_sched_start(const struct ss_config *cfg, const struct ss_tiles *t, struct rt_sb *err);
void ss_sched_stop(void);
/* Shutdown: set closing and resume every suspended connection. */
void ss_close_all(void);
/* True once shutdown began (read under ss_lock). */
extern bool ss_closing;

/* ---- trace.c: --profile-dir, a Chrome trace of the simulated kernels ---- */
int ss_trace_open(const struct ss_config *cfg, struct rt_sb *err);
void ss_trace_step(const struct ss_config *cfg, const struct ss_tiles *t, int64_t start_ns,
		   long prefill_tokens, long batch);
void ss_trace_close(void);

/* Counters for /metrics (read with ss_sched_stats). */
struct ss_stats {
	long running;             /* sequences in the running set */
	long waiting;             /* requests queued, not admitted */
	long long prompt_tokens;  /* prompt tokens prefilled so far */
	long long gen_tokens;     /* tokens generated so far */
	long long done_stop;      /* requests finished with "stop" */
	long long done_length;    /* requests finished with "length" */
};
void ss_sched_stats(struct ss_stats *out);

/* ---- aiter.c: AITER tuned GEMM CSVs ---- */
/* Read the files AITER_CONFIG_GEMM_BF16 names (':'-separated, merged as
 * AITER merges them) and set one factor per shape class in t from the row
 * AITER would pick; a class without a row falls back to torch (slow). */
int ss_aiter_load(const char *paths, struct ss_tiles *t, struct rt_sb *log, struct rt_sb *err);

/* ---- persona.c ---- */
enum ss_persona {
	SS_PERSONA_NONE = 0,  /* plain simserve flags */
	SS_PERSONA_VLLM,      /* vllm serve MODEL ... */
	SS_PERSONA_LLAMA,     /* llama-server -m FILE ... */
	SS_PERSONA_SGLANG,    /* python -m sglang.launch_server --model-path ... */
};
/* Which personality argv asks for: argv[1] == "--personality NAME" (removed
 * from argv) or the program's name (vllm, llama-server); NONE otherwise. */
enum ss_persona ss_persona_detect(int *argc, char **argv);
/* Parse the real program's flags into cfg. On a bad command line it prints
 * the real program's message and returns its exit status (> 0); 0 on success. */
int ss_persona_parse(enum ss_persona p, int argc, char **argv, struct ss_config *cfg);
/* Tile table of the personality (--kernel-config, AITER CSVs); 0 or exit status. */
int ss_persona_tiles(struct ss_tiles *t);
/* Before listening: start-up logs, load time, graph capture, memory. False
 * when a signal came meanwhile. */
bool ss_persona_start(const sigset_t *set, bool (*wait)(const sigset_t *, double));
/* After listening: the "ready" log lines. */
void ss_persona_ready(int port);
/* llama-server listens while it loads (its /health answers 503 meanwhile). */
bool ss_persona_listens_early(void);
/* Serve a personality route (/health, /v1/models, /version, /props,
 * /get_server_info, /metrics, ...); false when url is not one of them. */
bool ss_persona_route(struct MHD_Connection *c, const char *url, const char *method,
		      int *result);
/* The program's message when its port is taken. */
void ss_persona_bind_error(void);
/* A first-seen decode batch size (--log-recompiles) in the personality's words. */
void ss_persona_log_recompile(long bs);
enum ss_persona ss_persona_kind(void);
/* llama-server's context of one slot (n_ctx_slot): -c / -np when -np is
 * given, all of -c when it is not (auto: 4 slots, one unified KV cache),
 * the model's training context (131072 here) without -c; 0 for the other
 * personalities, which refuse nothing by length. */
long ss_persona_slot_ctx(void);

/* Stop-time cleanup. */
void ss_persona_free(void);

/* ---- http.c ---- */
/* Queue a complete response (adds X-Launch-Nonce when set). */
int ss_http_reply(struct MHD_Connection *c, unsigned status, const char *body, const char *ctype);
int ss_http_start(const struct ss_config *cfg, int *port, struct rt_sb *err);
void ss_http_stop(void);

#endif
