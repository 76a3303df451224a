/*
 * The profile model (see profile.h): the op map (PCRE2), the per-kernel
 * sums in an open-addressed hash, and the table of readers.
 */
#include "agents/research/profile.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const research_op_names[] = {
#define XX(code, name) name,
	RESEARCH_OP_MAP(XX)
#undef XX
	NULL
};

int research_op_parse(const char *name, enum research_op *out)
{
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		if (!strcmp(research_op_names[i], name)) {
			*out = (enum research_op)i;
			return 0;
		}
	return RT_EINVAL;
}

/*
 * The default map, from kernel names as the libraries spell them (checked
 * against vLLM 0.8-0.11 csrc/ and its Triton kernels, AITER's asm and CK
 * kernels, llama.cpp's ggml-cuda/ggml-hip kernels, cuBLAS/hipBLASLt/Tensile
 * GEMM names, NCCL/RCCL), and against the real H200 traces in
 * tests/agents/fixtures/h200 (PyTorch 2.11, CUDA 13): cuBLASLt's Hopper
 * GEMMs are nvjet_sm90_* (with their cublasLt::splitKreduce_kernel), cuDNN's
 * attention is cudnn_generated_fort_native_sdpa_*, Inductor's template
 * kernels (mm, bmm, addmm; flex attention is caught by attention first) are
 * triton_tem_*. ggml's quantize_mmq_q8_1 quantizes activations for MMQ: it
 * is kept out of gemm. Caseless; tried in the order of RESEARCH_OP_MAP.
 */
static const char *const default_op[RESEARCH_N_OPS] = {
	[RESEARCH_OP_COMMUNICATION] = "nccl|rccl|ccl_|all_?reduce|all_?gather|reduce_?scatter|"
				      "all_?to_?all|cross_device_reduce|custom_ar",
	[RESEARCH_OP_ATTENTION] = "attn|attention|flash|fmha|mha_|paged|reshape_and_cache|"
				  "_fwd_kernel|soft_?max|rotary|rope|sdpa",
	[RESEARCH_OP_QUANTIZE] = "quant",
	[RESEARCH_OP_NORM] = "norm|rms",
	[RESEARCH_OP_ACTIVATION] = "act_and_mul|silu|gelu|swiglu|geglu|relu|sigmoid",
	[RESEARCH_OP_GEMM] = "^(?!(void )?quantize_).*(?:gemm|gemv|matmul|mul_mat|_mm_|_mm$|cublas|cutlass|"
			     "hipblaslt|^Cijk_|xmma|wgmma|moe|mmq|mmvq|dot_|^nvjet_|^triton_tem_)",
};
/* A step: PyTorch's profiler steps, vLLM's model runner, simserve's steps. */
static const char *const default_step = "^ProfilerStep#[0-9]+$|^execute_model|^simserve_step$";
/* Shapes carried in a name: "...[shape=prefill.T_LE_512,...]" (simserve), or
 * unitrace -v's launch shape "name[SIMD16 {20;1;1} {64;8;1}]". */
static const char *const default_shape = "(?|shape=([^,\\]\\s>]+)|\\[(SIMD[0-9]+ \\{[^\\]]*\\})\\])";
/* A kernel the library fell back to: no tuned config for this shape. */
static const char *const default_fallback = "tile=default|fallback|_generic_|naive";

struct research_opmap {
	pcre2_code *op[RESEARCH_N_OPS]; /* NULL for other */
	pcre2_code *step;               /* step annotations */
	pcre2_code *shape;              /* shape in a name, first group */
	pcre2_code *fallback;           /* default kernels */
	pcre2_match_data *md;           /* one match at a time */
};

const char *research_opmap_default(enum research_op op)
{
	return (unsigned)op < RESEARCH_N_OPS ? default_op[op] : NULL;
}

static int compile(const char *what, const char *re, pcre2_code **out, struct rt_sb *err)
{
	int code;
	PCRE2_SIZE off;
	*out = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_CASELESS, &code, &off, NULL);
	if (*out)
		return 0;
	PCRE2_UCHAR msg[160];
	pcre2_get_error_message(code, msg, sizeof(msg));
	return rt_errf(err, RT_EINVAL, "profile.%s: regex '%s' at offset %zu: %s", what, re,
		       (size_t)off, (const char *)msg);
}

int research_opmap_new(const struct research_opmap_def *def, struct research_opmap **out,
		       struct rt_sb *err)
{
	struct research_opmap *m = xcalloc(1, sizeof(*m));
	int rc = 0;
	for (int i = 0; i < RESEARCH_N_OPS && !rc; i++) {
		const char *re = def && def->op[i] ? def->op[i] : default_op[i];
		if (re)
			rc = compile(research_op_names[i], re, &m->op[i], err);
	}
	if (!rc)
		rc = compile("step", def && def->step ? def->step : default_step, &m->step, err);
	if (!rc)
		rc = compile("shape", def && def->shape ? def->shape : default_shape, &m->shape, err);
	if (!rc)
		rc = compile("fallback", def && def->fallback ? def->fallback : default_fallback,
			     &m->fallback, err);
	m->md = pcre2_match_data_create(4, NULL);
	if (rc) {
		research_opmap_free(m);
		m = NULL;
	}
	*out = m;
	return rc;
}

void research_opmap_free(struct research_opmap *m)
{
	if (!m)
		return;
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		pcre2_code_free(m->op[i]);
	pcre2_code_free(m->step);
	pcre2_code_free(m->shape);
	pcre2_code_free(m->fallback);
	pcre2_match_data_free(m->md);
	free(m);
}

static bool matches(struct research_opmap *m, pcre2_code *re, const char *s)
{
	return re && pcre2_match(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, m->md, NULL) >= 0;
}

enum research_op research_opmap_classify(struct research_opmap *m, const char *name)
{
	for (int i = 0; i < RESEARCH_OP_OTHER; i++)
		if (matches(m, m->op[i], name))
			return (enum research_op)i;
	return RESEARCH_OP_OTHER;
}

/* The first group of the shape regex in name (owned), or NULL. */
static char *name_shape(struct research_opmap *m, const char *name)
{
	int n = pcre2_match(m->shape, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, m->md, NULL);
	if (n < 2)
		return NULL;
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
	return xstrndup(name + ov[2], ov[3] - ov[2]);
}

/* ---- the sums ---- */

void research_profile_init(struct research_profile *p, struct research_opmap *map)
{
	memset(p, 0, sizeof(*p));
	p->map = map;
	p->graph_max_batch = -1;
	p->ungraphed_batch = -1;
	p->file_lo = 1, p->file_hi = 0;
}

void research_profile_release(struct research_profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->k[i].name);
		free(p->k[i].shape);
	}
	free(p->k);
	free(p->slot);
	memset(p, 0, sizeof(*p));
}

/* FNV-1a over name, a 0 byte, and shape. */
static size_t key_hash(const char *name, const char *shape)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	h *= 1099511628211ULL;
	for (const char *c = shape ? shape : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	return (size_t)h;
}

static bool same(const struct research_kernel *k, const char *name, const char *shape)
{
	return !strcmp(k->name, name) && !strcmp(k->shape ? k->shape : "", shape ? shape : "");
}

static void rehash(struct research_profile *p)
{
	free(p->slot);
	p->nslot = p->nslot ? p->nslot * 2 : 64;
	p->slot = xcalloc(p->nslot, sizeof(size_t));
	for (size_t i = 0; i < p->n; i++) {
		size_t s = key_hash(p->k[i].name, p->k[i].shape) & (p->nslot - 1);
		while (p->slot[s])
			s = (s + 1) & (p->nslot - 1);
		p->slot[s] = i + 1;
	}
}

/* A duration read from a profile: finite, not negative, and its sum with
 * total stays finite (issue 22, item 16: negative durations gave shares of
 * 200% and -100%; sums to infinity failed a NOT NULL constraint). */
static int duration_ok(const char *what, const char *name, double us, double total, struct rt_sb *why)
{
	if (!isfinite(us) || us < 0)
		return rt_errf(why, RT_EPARSE, "%s%s%s%s: a duration of %g us (a duration is a finite "
			       "number, not negative)", what, *name ? " '" : "", name, *name ? "'" : "", us);
	if (!isfinite(total + us))
		return rt_errf(why, RT_EPARSE, "%s%s%s%s: a duration of %g us makes the total overflow", what,
			       *name ? " '" : "", name, *name ? "'" : "", us);
	return 0;
}

/* The largest count of calls taken: doubles hold every whole number up to it. */
#define MAX_CALLS 9007199254740992.0

int research_profile_add(struct research_profile *p, const char *name, const char *shape,
			 double us, double calls, struct rt_sb *why)
{
	int rc = duration_ok("kernel", name, us, p->total_us, why);
	if (rc)
		return rc;
	if (!(calls >= 0 && calls <= MAX_CALLS && calls == floor(calls)))
		return rt_errf(why, RT_EPARSE, "kernel '%s': %g calls (a count is a whole number from 0 to "
			       "2^53)", name, calls);
	if ((double)p->launches + calls > MAX_CALLS)
		return rt_errf(why, RT_EPARSE, "kernel '%s': %g calls make the count of launches overflow",
			       name, calls);
	char *own = shape ? NULL : name_shape(p->map, name);
	if (own)
		shape = own;
	if (2 * (p->n + 1) > p->nslot)
		rehash(p);
	size_t s = key_hash(name, shape) & (p->nslot - 1);
	while (p->slot[s] && !same(&p->k[p->slot[s] - 1], name, shape))
		s = (s + 1) & (p->nslot - 1);
	if (!p->slot[s]) {
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			p->k = xrealloc(p->k, p->cap * sizeof(*p->k));
		}
		struct research_kernel *k = &p->k[p->n];
		memset(k, 0, sizeof(*k));
		k->name = xstrdup(name);
		k->shape = shape && *shape ? xstrdup(shape) : NULL;
		k->op = research_opmap_classify(p->map, name);
		k->fallback = matches(p->map, p->map->fallback, name);
		p->slot[s] = ++p->n;
	}
	struct research_kernel *k = &p->k[p->slot[s] - 1];
	k->us += us;
	k->calls += (long)calls;
	p->total_us += us;
	p->launches += (long)calls;
	free(own);
	return 0;
}

void research_profile_timed(struct research_profile *p, double ts, double us)
{
	if (p->file_lo > p->file_hi)
		p->file_lo = ts, p->file_hi = ts + us;
	if (ts < p->file_lo)
		p->file_lo = ts;
	if (ts + us > p->file_hi)
		p->file_hi = ts + us;
	p->timed++;
	p->short_kernels += us < RESEARCH_SHORT_US;
}

/* Launch calls: CUDA runtime and driver, HIP; a graph's launch apart. */
static const char *const launch_calls[] = { "cudaLaunchKernel", "cuLaunchKernel", "hipLaunchKernel",
					    "hipModuleLaunchKernel", "hipExtLaunchKernel",
					    "cudaLaunchCooperativeKernel", NULL };
static const char *const graph_calls[] = { "cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch", NULL };

static bool starts_any(const char *name, const char *const *v)
{
	for (; *v; v++)
		if (!strncmp(name, *v, strlen(*v)))
			return true;
	return false;
}

void research_profile_host_call(struct research_profile *p, const char *name)
{
	if (starts_any(name, graph_calls))
		p->graph_launches++;
	else if (starts_any(name, launch_calls))
		p->host_launches++;
}

void research_profile_file_done(struct research_profile *p)
{
	if (p->file_hi > p->file_lo)
		p->span_us += p->file_hi - p->file_lo;
	p->file_lo = 1, p->file_hi = 0;
}

double research_profile_wall(const struct research_profile *p, const char **from)
{
	*from = p->step_us > 0 ? "steps" : p->span_us > 0 ? "span" : NULL;
	return p->step_us > 0 ? p->step_us : p->span_us;
}

int research_profile_step(struct research_profile *p, double us, long batch, int graphed,
			  struct rt_sb *why)
{
	int rc = duration_ok("step", "", us, p->step_us, why);
	if (rc)
		return rc;
	p->steps++;
	p->step_us += us;
	if (graphed == 1 && batch > p->graph_max_batch)
		p->graph_max_batch = batch;
	if (graphed == 0) {
		p->ungraphed_steps++;
		p->ungraphed_us += us;
		if (batch > p->ungraphed_batch)
			p->ungraphed_batch = batch;
	}
	return 0;
}

bool research_profile_is_step(const struct research_profile *p, const char *name)
{
	return matches(p->map, p->map->step, name);
}

void research_profile_ops(const struct research_profile *p, struct research_op_sum out[RESEARCH_N_OPS])
{
	memset(out, 0, RESEARCH_N_OPS * sizeof(*out));
	for (size_t i = 0; i < p->n; i++) {
		out[p->k[i].op].us += p->k[i].us;
		out[p->k[i].op].calls += p->k[i].calls;
	}
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		out[i].share = p->total_us > 0 ? out[i].us / p->total_us : 0;
}

static int by_time(const void *x, const void *y)
{
	const struct research_kernel *a = x, *b = y;
	if (a->us != b->us)
		return a->us < b->us ? 1 : -1;
	return strcmp(a->name, b->name);
}

void research_profile_sort(struct research_profile *p)
{
	free(p->slot);
	p->slot = NULL;
	p->nslot = 0;
	if (p->n)
		qsort(p->k, p->n, sizeof(*p->k), by_time);
}

/* ---- the readers ---- */

const struct research_format research_formats[] = {
	{ "chrome", "PyTorch profiler (Kineto) Chrome trace JSON, as vLLM's torch profiler writes",
	  research_sniff_chrome, research_read_chrome },
	{ "nsys", "Nsight Systems SQLite export (nsys export --type sqlite)",
	  research_sniff_nsys, research_read_nsys },
	{ "rocprof", "rocprofv3 --kernel-trace CSV (*_kernel_trace.csv)",
	  research_sniff_rocprof, research_read_rocprof },
	{ "unitrace", "unitrace / ze_tracer --device-timing report (Level Zero)",
	  research_sniff_unitrace, research_read_unitrace },
	{ "ncu", "Nsight Compute CSV (ncu --csv, or ncu --import R --csv --page details|raw)",
	  research_sniff_ncu, research_read_ncu },
	{ 0 },
};

int research_format_find(const char *name, const char *path, const struct research_format **out,
			 struct rt_sb *err)
{
	char head[4096];
	size_t n = 0;
	if (!name) {
		FILE *f = fopen(path, "rb");
		if (!f)
			return rt_errf(err, RT_EIO, "%s: %s", path, strerror(errno));
		n = fread(head, 1, sizeof(head) - 1, f);
		fclose(f);
		head[n] = 0;
	}
	for (const struct research_format *r = research_formats; r->name; r++)
		if (name ? !strcmp(r->name, name) : r->sniff(head, n, path)) {
			*out = r;
			return 0;
		}
	rt_errf(err, RT_EUSAGE, name ? "unknown profile format '%s' (formats:" :
			    "%s: not a profile this ratchet reads (formats:", name ? name : path);
	for (const struct research_format *r = research_formats; r->name; r++)
		rt_errf(err, 0, " %s", r->name);
	return rt_errf(err, RT_EUSAGE, "; give --format)");
}
