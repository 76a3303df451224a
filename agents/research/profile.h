/*
 * Profiles of the research side: a profiler's output (a PyTorch/Kineto
 * Chrome trace, an Nsight Systems SQLite export, a rocprofv3 kernel trace, a
 * unitrace device-timing report) read as a stream of kernel launches, each
 * classified into an op (attention, gemm, ...) by a regex map, and summed per
 * kernel name and shape. Memory grows with the distinct kernels, never with
 * the file: a 1 GB trace is read in constant memory.
 *
 * An Nsight Compute CSV export (one row per kernel and metric) is read too.
 *
 * Each format is one reader (a row of research_formats[]): a name, a sniff of
 * the file's first bytes for auto-detection, and a read that feeds every
 * kernel launch and step annotation to the profile. The readers live in
 * prof_chrome.c, prof_nsys.c and prof_csv.c.
 */
#ifndef RESEARCH_PROFILE_H
#define RESEARCH_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "runner/base/rt.h"

/* The ops a kernel is classified into, in the order a kernel name is tried
 * against them (the first that matches wins; other matches nothing). */
#define RESEARCH_OP_MAP(XX)                                         \
	XX(COMMUNICATION, "communication") /* collectives */     \
	XX(ATTENTION, "attention")         /* attention, KV cache */ \
	XX(GEMM, "gemm")                   /* matmuls, MoE experts, fused epilogues */ \
	XX(QUANTIZE, "quantize")           /* (de)quantization */ \
	XX(NORM, "norm")                   /* RMS and layer norms */ \
	XX(ACTIVATION, "activation")       /* SiLU, GELU, gated mul */ \
	XX(OTHER, "other")                 /* everything else */

enum research_op {
#define XX(code, name) RESEARCH_OP_##code,
	RESEARCH_OP_MAP(XX)
#undef XX
	RESEARCH_N_OPS
};
/* The op names in enum order (NULL-terminated), for the spec and the CLI. */
extern const char *const research_op_names[];
/* The op called name; RT_EINVAL when there is none. */
int research_op_parse(const char *name, enum research_op *out);

/* What a spec's `profile:` section may override; NULL fields keep the
 * default map (profile.c's table, for vLLM, AITER, llama.cpp/ggml, Triton). */
struct research_opmap_def {
	const char *op[RESEARCH_N_OPS]; /* regex per op (other is never tried) */
	const char *step;               /* annotation names that mark one step */
	const char *shape;              /* regex whose first group is a kernel name's shape */
	const char *fallback;           /* kernel names that are a default (untuned) kernel */
};

struct research_opmap; /* compiled (PCRE2), opaque */

/* Compile def over the defaults (def NULL: the defaults alone). Errors name
 * the op and the regex's offset. The caller frees with research_opmap_free. */
int research_opmap_new(const struct research_opmap_def *def, struct research_opmap **out,
		       struct rt_sb *err);
void research_opmap_free(struct research_opmap *m);
/* The op of a kernel name. */
enum research_op research_opmap_classify(struct research_opmap *m, const char *name);
/* A default pattern, for `ratchet profile import --help` and the docs. */
const char *research_opmap_default(enum research_op op);

/* One kernel, summed over its launches. */
struct research_kernel {
	char *name;           /* as the profiler wrote it */
	char *shape;          /* from the launch's args or the name, or NULL */
	enum research_op op;  /* classified */
	bool fallback;        /* the name matches the fallback regex */
	double us;            /* summed duration, microseconds */
	long calls;           /* launches */
};

/* A profile as it is read. */
struct research_profile {
	const char *format;            /* the reader's name */
	struct research_kernel *k;     /* distinct (name, shape) pairs, first seen first */
	size_t n;
	size_t cap;
	size_t *slot;                  /* open-addressed hash of k (index + 1, 0: empty) */
	size_t nslot;                  /* a power of two, at least twice n */
	double total_us;               /* kernel time in all */
	long launches;                 /* kernel launches read */
	long steps;                    /* step annotations seen */
	long ungraphed_steps;          /* steps annotated graphed: false */
	double ungraphed_us;           /* their duration */
	long ungraphed_batch;          /* the largest batch among them */
	long graph_max_batch;          /* the largest batch annotated graphed: true */
	double step_us;                /* the step annotations' wall time, summed */
	double span_us;                /* the kernels' spans (first start to last end), per file summed */
	double file_lo, file_hi;       /* this file's span so far (lo > hi: no kernel timed yet) */
	long timed;                    /* kernels read with a start time */
	long short_kernels;            /* of those, kernels under RESEARCH_SHORT_US */
	long host_launches;            /* the host's one-at-a-time kernel launches */
	long graph_launches;           /* the host's graph launches */
	struct research_opmap *map;    /* borrowed */
};

/* A kernel under this many microseconds is short: launch overhead (some
 * microseconds a launch) is a large part of it. */
#define RESEARCH_SHORT_US 10.0

void research_profile_init(struct research_profile *p, struct research_opmap *map);
void research_profile_release(struct research_profile *p);
/* One or more launches (calls) of name with shape (NULL: taken from the
 * name by the map's shape regex) lasting us in all. A profile is untrusted
 * input: RT_EPARSE (the reason in why, without the file's position, which
 * the reader adds) when us is negative or not finite, calls is not a whole
 * number in [0, 2^53], or the sums would overflow; nothing is added then. */
int research_profile_add(struct research_profile *p, const char *name, const char *shape,
			 double us, double calls, struct rt_sb *why);
/* One step annotation; batch < 0 and graphed < 0 when it does not say.
 * RT_EPARSE as research_profile_add for a bad duration. */
int research_profile_step(struct research_profile *p, double us, long batch, int graphed,
			  struct rt_sb *why);
/* A kernel's start (us, the trace's clock) and duration: the file's span
 * and the short kernels. Readers with timestamps call it beside _add. */
void research_profile_timed(struct research_profile *p, double ts, double us);
/* A host-side runtime or driver call (cudaLaunchKernel, cudaGraphLaunch,
 * hipLaunchKernel...): counted as a launch of one kernel or of a graph. */
void research_profile_host_call(struct research_profile *p, const char *name);
/* One file read: its span joins span_us. */
void research_profile_file_done(struct research_profile *p);
/* The wall time (the steps', else the kernels' span; 0 unknown) and where it
 * came from ("steps", "span", NULL). */
double research_profile_wall(const struct research_profile *p, const char **from);
/* Whether an annotation's name marks a step. */
bool research_profile_is_step(const struct research_profile *p, const char *name);

/* Sums per op, for storing and printing. */
struct research_op_sum {
	double us;    /* time */
	double share; /* us / total_us */
	long calls;   /* launches */
};
void research_profile_ops(const struct research_profile *p, struct research_op_sum out[RESEARCH_N_OPS]);
/* Sort the kernels by time, largest first (the hash is dropped). */
void research_profile_sort(struct research_profile *p);

/* One reader. Errors: RT_EIO (cannot read), RT_EPARSE (not this format,
 * with file and line or offset), RT_ETOOBIG (one event over its cap). */
struct research_format {
	const char *name;                                     /* --format */
	const char *what;                                     /* the tool and version it follows */
	bool (*sniff)(const char *head, size_t n, const char *path); /* these are its first bytes */
	int (*read)(const char *path, struct research_profile *p, struct rt_sb *err);
};
extern const struct research_format research_formats[]; /* NULL-name terminated */
/* The reader called name, or, name NULL, the one whose sniff accepts path.
 * RT_EUSAGE naming the formats when none does. */
int research_format_find(const char *name, const char *path, const struct research_format **out,
			 struct rt_sb *err);

/* The readers (prof_*.c). */
int research_read_chrome(const char *path, struct research_profile *p, struct rt_sb *err);
bool research_sniff_chrome(const char *head, size_t n, const char *path);
int research_read_nsys(const char *path, struct research_profile *p, struct rt_sb *err);
bool research_sniff_nsys(const char *head, size_t n, const char *path);
int research_read_rocprof(const char *path, struct research_profile *p, struct rt_sb *err);
bool research_sniff_rocprof(const char *head, size_t n, const char *path);
int research_read_unitrace(const char *path, struct research_profile *p, struct rt_sb *err);
bool research_sniff_unitrace(const char *head, size_t n, const char *path);
int research_read_ncu(const char *path, struct research_profile *p, struct rt_sb *err);
bool research_sniff_ncu(const char *head, size_t n, const char *path);

#endif
