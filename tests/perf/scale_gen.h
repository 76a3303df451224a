/*
 * Inputs at scale, shared by `make bench`'s bench_scale and the tests that
 * pin the sizes of issue 17 item 9 (tests/spec/test_spec_scale.c,
 * tests/agents/test_holes.c): specs with one very large mapping or list, and
 * a tuned table with a profile of shapes. Everything is seeded, so every run
 * sees the same bytes. Each generator returns memory the caller frees; the
 * two timers run the library call once.
 */
#ifndef RT_SCALE_GEN_H
#define RT_SCALE_GEN_H

#include <stdio.h>
#include <stdlib.h>

#include "agents/research/holes.h"
#include "runner/base/rand.h"
#include "runner/base/rt.h"
#include "runner/spec/spec.h"

/* Time bounds hold in optimised builds; under the sanitizers, which make
 * every allocation an mmap-backed copy, they are not checked. */
#if defined(__SANITIZE_ADDRESS__)
#define SCALE_TIMED 0
#else
#define SCALE_TIMED 1
#endif

/* The smallest valid spec, before the large part. */
#define SCALE_SPEC_HEAD                                                                    \
	"name: scale\n"                                                                    \
	"benchmarks:\n"                                                                    \
	"  - name: b\n"                                                                    \
	"    command: [echo, '{\"x\": 1}']\n"                                              \
	"    metrics: {x: {pointer: /x, better: higher}}\n"                                                           \
	"objective: {metric: b.x, goal: max}\n"

/* What the large part of a spec is. */
enum scale_spec_kind {
	SCALE_ENV,        /* engine.env with n keys */
	SCALE_LOG_EVENTS, /* log_events with n events */
	SCALE_VARIANTS,   /* n variants */
	SCALE_MIXED,      /* n of each of the three */
};

static inline void scale_env(struct rt_sb *sb, size_t n, bool dup)
{
	rt_sb_adds(sb, "engine:\n  command: [sh, -c, 'sleep 1', '{port}']\n  env:\n");
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(sb, "    VARIABLE_%zu: value-%zu\n", i, i);
	if (dup)
		rt_sb_adds(sb, "    VARIABLE_0: again\n");
}

static inline void scale_events(struct rt_sb *sb, size_t n, bool dup)
{
	rt_sb_adds(sb, "log_events:\n");
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(sb, "  event_%zu: 'kernel [0-9]+ compiled in pass %zu'\n", i, i);
	if (dup)
		rt_sb_adds(sb, "  event_0: again\n");
}

static inline void scale_variants(struct rt_sb *sb, size_t n, bool dup)
{
	rt_sb_adds(sb, "variants:\n");
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(sb, "  - {name: variant-%zu, env: {KNOB_%zu: '%zu'}}\n", i, i, i % 7);
	if (dup)
		rt_sb_adds(sb, "  - {name: variant-0, env: {KNOB_0: '9'}}\n");
}

/* A spec whose large part has n entries; with dup, its first entry repeated
 * at the very end (the duplicate check has to find it). */
static inline char *scale_spec(enum scale_spec_kind kind, size_t n, bool dup, size_t *len)
{
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, SCALE_SPEC_HEAD);
	if (kind == SCALE_ENV || kind == SCALE_MIXED)
		scale_env(&sb, n, dup);
	if (kind == SCALE_LOG_EVENTS || kind == SCALE_MIXED)
		scale_events(&sb, n, dup);
	if (kind == SCALE_VARIANTS || kind == SCALE_MIXED)
		scale_variants(&sb, n, dup);
	else
		rt_sb_adds(&sb, "variants:\n  - {name: a, env: {A: '1'}}\n");
	return rt_sb_detach(&sb, len);
}

/* Open dir/a and dir/b for writing (both NULL when either fails). */
static inline void scale_open(const char *dir, const char *a, const char *b, FILE **fa, FILE **fb)
{
	char *pa = xasprintf("%s/%s", dir, a), *pb = xasprintf("%s/%s", dir, b);
	*fa = fopen(pa, "w");
	*fb = fopen(pb, "w");
	if (!*fa || !*fb) {
		if (*fa)
			fclose(*fa);
		if (*fb)
			fclose(*fb);
		*fa = *fb = NULL;
	}
	free(pa);
	free(pb);
}

/* Close both; -1 when a write failed. */
static inline int scale_close(FILE *a, FILE *b)
{
	int bad = ferror(a) || ferror(b);
	bad |= fclose(a) | fclose(b);
	return bad ? -1 : 0;
}

/* A tuned CSV table (M,N,K,tile) of `entries` distinct shapes and a profile
 * (M,N,K,time_us) of `rows` rows, most of them shapes the table lacks, in
 * folder dir as table.csv and profile.csv. */
static inline int scale_holes_csv(const char *dir, size_t entries, size_t rows)
{
	static const int nk[] = { 1024, 2048, 4096, 8192, 14336 };
	struct rt_rand r;
	rt_rand_seed(&r, 9);
	FILE *t, *p;
	scale_open(dir, "table.csv", "profile.csv", &t, &p);
	if (!t)
		return -1;
	fputs("M,N,K,tile\n", t);
	/* distinct: M runs through 1..entries */
	for (size_t i = 0; i < entries; i++)
		fprintf(t, "%zu,%d,%d,%d\n", 1 + i * 3, nk[rt_rand_below(&r, 5)],
			nk[rt_rand_below(&r, 5)], (int)rt_rand_below(&r, 8));
	fputs("M,N,K,time_us\n", p);
	for (size_t i = 0; i < rows; i++)
		fprintf(p, "%d,%d,%d,%d\n", 1 + (int)rt_rand_below(&r, 100000),
			nk[rt_rand_below(&r, 5)], 1 + (int)rt_rand_below(&r, 50000),
			1 + (int)rt_rand_below(&r, 1000));
	return scale_close(t, p);
}

/* A tuned JSON table keyed by strings (dtype_tile_tile_variant) and a
 * profile naming such keys in column "key", in dir as table.json and
 * keys.csv. */
static inline int scale_holes_json(const char *dir, size_t entries, size_t rows)
{
	static const char *const dt[] = { "bf16", "fp8", "fp16", "i8", "fp4" };
	static const char *const tail[] = { "a", "bb", "ccc", "", "dd" };
	struct rt_rand r;
	rt_rand_seed(&r, 10);
	FILE *t, *p;
	scale_open(dir, "table.json", "keys.csv", &t, &p);
	if (!t)
		return -1;
	fputc('{', t);
	for (size_t i = 0; i < entries; i++) /* distinct: the index is in the key */
		fprintf(t, "%s\"%s_%zu_%d_%s\": {\"tile\": %zu}", i ? ", " : "",
			dt[rt_rand_below(&r, 5)], i, 1 << rt_rand_below(&r, 12),
			tail[rt_rand_below(&r, 5)], i % 9);
	fputs("}\n", t);
	fputs("key\n", p);
	for (size_t i = 0; i < rows; i++)
		fprintf(p, "%s_%d_%d_%s\n", dt[rt_rand_below(&r, 5)],
			(int)rt_rand_below(&r, (uint64_t)entries * 2), 1 << rt_rand_below(&r, 13),
			tail[rt_rand_below(&r, 5)]);
	return scale_close(t, p);
}

/* Load scale_spec(kind, n, with its duplicate); returns the seconds it
 * took, *len the spec's size, what the loader said in err, its result in *rc. */
static inline double scale_load_spec(enum scale_spec_kind kind, size_t n, size_t *len, int *rc,
				     struct rt_sb *err)
{
	char *text = scale_spec(kind, n, true, len);
	struct spec *s = NULL;
	int64_t t0 = rt_now_ns();
	*rc = spec_load_text("scale.yaml", text, *len, &s, err);
	double el = (double)(rt_now_ns() - t0) / 1e9;
	spec_free(s);
	free(text);
	return el;
}

/* research_holes_find on dir/table and dir/profile into h; returns the seconds
 * it took, its result in *rc. */
static inline double scale_find_holes(const char *dir, const char *table, const char *profile,
				      const char *const *kc, size_t nkc, const char *weight,
				      struct research_holes *h, int *rc, struct rt_sb *err)
{
	char *tp = xasprintf("%s/%s", dir, table), *pp = xasprintf("%s/%s", dir, profile);
	int64_t t0 = rt_now_ns();
	*rc = research_holes_find(tp, pp, kc, nkc, weight, h, err);
	double el = (double)(rt_now_ns() - t0) / 1e9;
	free(tp);
	free(pp);
	return el;
}

#endif
