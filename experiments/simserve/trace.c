/*
 * simserve's profile (--profile-dir DIR): a Chrome trace of its simulated
 * kernels, in the shape the PyTorch profiler (Kineto) writes and
 * `ratchet profile import` reads, so that the research loop runs in tests
 * without a GPU. One file per process, DIR/simserve-<pid>.trace.json,
 * written as the steps run and closed at shutdown.
 *
 * Each scheduler step is a "simserve_step" annotation (cat
 * "user_annotation", args batch, prefill_tokens, graphed) over the kernels
 * that make up its duration (cat "kernel"):
 *   sim::prefill_attention[shape=<class>,tile=<BMxBNxW|default>]
 *   sim::decode_gemm                     (the fixed per-step cost)
 *   sim::decode_attention[shape=<class>,tile=<...>]
 * The names carry the shape class and the tile in use, "default" when the
 * tile table has no entry for the class (the slow fallback of model.c); the
 * durations are model.c's costs, so the shares are exact.
 */
#include "simserve.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
	FILE *f;                      /* the trace, NULL when off */
	int64_t t0;                   /* CLOCK_MONOTONIC ns of ts 0 */
	bool first;                   /* no event written yet */
	char tile[SS_NCLASS][48];     /* each class's tile, "default" when missing */
} T;

/* The tile of each class as "BMxBNxW", read again from the table (model.c
 * keeps only its cost factor). */
static void tile_names(const struct ss_config *cfg)
{
	json_t *root = cfg->tiles ? json_load_file(cfg->tiles, 0, NULL) : NULL;
	for (int c = 0; c < SS_NCLASS; c++) {
		json_t *e = json_object_get(root, ss_class_name((enum ss_class)c));
		if (!json_is_object(e)) {
			snprintf(T.tile[c], sizeof(T.tile[c]), "default");
			continue;
		}
		snprintf(T.tile[c], sizeof(T.tile[c]), "%lldx%lldx%lld%s",
			 (long long)json_integer_value(json_object_get(e, "BLOCK_M")),
			 (long long)json_integer_value(json_object_get(e, "BLOCK_N")),
			 (long long)json_integer_value(json_object_get(e, "num_warps")),
			 json_is_true(json_object_get(e, "broken")) ? "-broken" : "");
	}
	json_decref(root);
}

int ss_trace_open(const struct ss_config *cfg, struct rt_sb *err)
{
	if (!cfg->profile_dir)
		return 0;
	int rc = rt_mkdirs(cfg->profile_dir, err);
	if (rc)
		return rc;
	char *path = xasprintf("%s/simserve-%ld.trace.json", cfg->profile_dir, (long)getpid());
	T.f = fopen(path, "w");
	if (!T.f)
		rc = rt_errf(err, RT_EIO, "--profile-dir: %s: %s", path, strerror(errno));
	free(path);
	if (rc)
		return rc;
	tile_names(cfg);
	T.t0 = rt_now_ns();
	T.first = true;
	fputs("{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\",\n \"traceEvents\": [\n", T.f);
	return 0;
}

/* One complete event; name is written as JSON, args is a JSON object text. */
static void event(const char *cat, const char *name, double ts, double dur, const char *args)
{
	json_t *n = json_string(name);
	char *q = json_dumps(n, JSON_ENCODE_ANY);
	fprintf(T.f, "%s  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": %s, \"pid\": %ld, \"tid\": %d, "
		"\"ts\": %.3f, \"dur\": %.3f, \"args\": %s}",
		T.first ? "" : ",\n", cat, q, (long)getpid(), strcmp(cat, "kernel") ? 1 : 7, ts, dur, args);
	T.first = false;
	free(q);
	json_decref(n);
}

static void kernel(const char *what, int cls, double *ts, double dur)
{
	char name[160];
	if (cls < 0)
		snprintf(name, sizeof(name), "sim::%s", what);
	else
		snprintf(name, sizeof(name), "sim::%s[shape=%s,tile=%s]", what,
			 ss_class_name((enum ss_class)cls), T.tile[cls]);
	if (dur > 0)
		event("kernel", name, *ts, dur, "{}");
	*ts += dur;
}

void ss_trace_step(const struct ss_config *cfg, const struct ss_tiles *t, int64_t start_ns,
		   long prefill_tokens, long batch)
{
	if (!T.f || (prefill_tokens <= 0 && batch <= 0) || cfg->zero_latency)
		return;
	double ts = (double)(start_ns - T.t0) / 1e3, at = ts;
	double total = (double)ss_step_ns(cfg, t, prefill_tokens, batch) / 1e3;
	bool graphed = batch <= cfg->max_graph_bs;
	if (prefill_tokens > 0) {
		int pc = prefill_tokens <= 512 ? SS_PRE_T_LE_512 : SS_PRE_T_GT_512;
		kernel("prefill_attention", pc, &at,
		       (double)ss_step_ns(cfg, t, prefill_tokens, 0) / 1e3);
	}
	if (batch > 0) {
		int dc = batch <= 8 ? SS_DEC_BS_LE_8 : batch <= 32 ? SS_DEC_BS_LE_32 : SS_DEC_BS_GT_32;
		double dec = total - (at - ts), fixed = cfg->decode_us_per_step * (graphed ? 1 : 1.5);
		kernel("decode_gemm", -1, &at, fixed < dec ? fixed : dec);
		kernel("decode_attention", dc, &at, dec - (fixed < dec ? fixed : dec));
	}
	char args[128];
	snprintf(args, sizeof(args), "{\"batch\": %ld, \"prefill_tokens\": %ld, \"graphed\": %s}", batch,
		 prefill_tokens, batch > 0 ? (graphed ? "true" : "false") : "true");
	event("user_annotation", "simserve_step", ts, total, args);
}

void ss_trace_close(void)
{
	if (!T.f)
		return;
	fputs("\n]}\n", T.f);
	fclose(T.f);
	T.f = NULL;
}
