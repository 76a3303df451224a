/*
 * Synthetic sweeps for bench_search and tests/agents/test_search.c (issue
 * 28): spaces whose landscape is known by construction, written in the sweep
 * format of docs/search.md ("Sweep files"), so that they are replayed exactly
 * as a measured sweep is. Everything is a function of the point's code, so
 * every run writes the same bytes.
 *
 *   needle  8,192 points (a tile restriction leaves fewer valid): one point
 *           within 2% of the best (the next is 7% off); the irregular
 *           ordered parameter `unroll` (16 values) is good at values that are
 *           not neighbours in its list, the best of them at the far end; the
 *           tile next to the optimal one is 12 times slower (a cliff); about
 *           15% of the points fail.
 *   large   100,000 points (5 parameters of 10 values, no restriction), about
 *           80% of them infeasible (a failed run: no line in the sweep); a
 *           smooth main basin with a single point within 2% and a second
 *           basin at 90%.
 */
#ifndef RT_SEARCH_SYNTH_H
#define RT_SEARCH_SYNTH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"

/* A deterministic hash of a point, in [0, 1). */
static double synth_u(uint64_t code, uint64_t salt)
{
	uint64_t s = code * 0x9e3779b97f4a7c15ULL ^ salt;
	return rt_unit_double(rt_splitmix64(&s));
}

/* One point line: three samples around v (1% noise), or a failed point. */
static void synth_line(FILE *f, const char *point, double v, uint64_t code)
{
	if (isnan(v)) {
		fprintf(f, "{\"point\":{%s},\"failed\":true}\n", point);
		return;
	}
	struct rt_rand r;
	rt_rand_seed(&r, code * 31 + 7);
	fprintf(f, "{\"point\":{%s},\"samples\":[%.5f,%.5f,%.5f]}\n", point, v * (1 + 0.01 * rt_rand_normal(&r)),
		v * (1 + 0.01 * rt_rand_normal(&r)), v * (1 + 0.01 * rt_rand_normal(&r)));
}

/* The needle's irregular parameter: good at indices 2, 6, 10 and 13 (the
 * best), poor between them. */
static const double synth_unroll[16] = { 0.62, 0.55, 0.92, 0.58, 0.66, 0.52, 0.86, 0.60,
					 0.57, 0.64, 0.84, 0.50, 0.61, 1.00, 0.56, 0.59 };

static double synth_needle_value(int ti, int wi, int ui, int li, int vi)
{
	static const double layout[4] = { 0.85, 1.0, 0.9, 0.7 };
	double g = exp(-((ti - 5) * (ti - 5) * 0.08 + (wi - 2) * (wi - 2) * 0.15 + (vi - 1) * (vi - 1) * 0.1));
	double v = 100 * g * layout[li] * synth_unroll[ui];
	return ti == 6 ? v / 12 : v; /* the cliff beside the optimum */
}

static void synth_needle(FILE *f)
{
	fputs("{\"sweep\":1,\"name\":\"synthetic needle (one point within 2%, irregular unroll, a 12x cliff)\","
	      "\"metric\":\"gflops\",\"goal\":\"max\",\"parameters\":["
	      "{\"name\":\"tile\",\"values\":[1,2,4,8,16,32,64,128]},{\"name\":\"warps\",\"values\":[1,2,4,8]},"
	      "{\"name\":\"unroll\",\"values\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},"
	      "{\"name\":\"layout\",\"values\":[\"a\",\"b\",\"c\",\"d\"],\"kind\":\"choices\"},"
	      "{\"name\":\"vec\",\"values\":[1,2,4,8]}],\"restrictions\":[\"tile * warps <= 512\"]}\n",
	      f);
	static const char *lay = "abcd";
	for (int ti = 0; ti < 8; ti++)
		for (int wi = 0; wi < 4; wi++)
			for (int ui = 0; ui < 16; ui++)
				for (int li = 0; li < 4; li++)
					for (int vi = 0; vi < 4; vi++) {
						if ((1 << ti) * (1 << wi) > 512)
							continue;
						uint64_t code = (uint64_t)((((ti * 4 + wi) * 16 + ui) * 4 + li) * 4 + vi);
						double v = synth_needle_value(ti, wi, ui, li, vi);
						bool opt = ti == 5 && wi == 2 && ui == 13 && li == 1 && vi == 1;
						if (!opt && synth_u(code, 1) < 0.15)
							v = NAN;
						char pt[160];
						snprintf(pt, sizeof(pt),
							 "\"tile\":%d,\"warps\":%d,\"unroll\":%d,\"layout\":\"%c\",\"vec\":%d",
							 1 << ti, 1 << wi, ui + 1, lay[li], 1 << vi);
						synth_line(f, pt, v, code);
					}
}

/* The large space's value at x (NAN: infeasible). */
static double synth_large_value(const int *x, uint64_t code)
{
	static const int c[5] = { 7, 2, 8, 5, 3 }, c2[5] = { 2, 7, 1, 1, 8 };
	static const double w[5] = { 0.30, 0.25, 0.40, 0.21, 0.35 };
	bool opt = true;
	double d = 0, d2 = 0;
	for (int i = 0; i < 5; i++) {
		opt &= x[i] == c[i];
		d += w[i] * (x[i] - c[i]) * (x[i] - c[i]) / 9;
		d2 += w[i] * (x[i] - c2[i]) * (x[i] - c2[i]) / 9;
	}
	if (!opt && (synth_u(code, 2) < 0.75 || x[3] + x[4] >= 14))
		return NAN;
	return 50 * fmax(exp(-d), 0.9 * exp(-d2));
}

static void synth_large(FILE *f)
{
	fputs("{\"sweep\":1,\"name\":\"synthetic 100k points, 80% infeasible\",\"metric\":\"gflops\",\"goal\":\"max\","
	      "\"parameters\":[",
	      f);
	for (int i = 0; i < 5; i++)
		fprintf(f, "%s{\"name\":\"p%d\",\"values\":[0,1,2,3,4,5,6,7,8,9]}", i ? "," : "", i);
	fputs("],\"restrictions\":[]}\n", f);
	for (uint64_t code = 0; code < 100000; code++) {
		int x[5];
		uint64_t c = code;
		for (int i = 0; i < 5; i++, c /= 10)
			x[i] = (int)(c % 10);
		double v = synth_large_value(x, code);
		if (isnan(v))
			continue; /* a valid point with no line is infeasible */
		char pt[120];
		snprintf(pt, sizeof(pt), "\"p0\":%d,\"p1\":%d,\"p2\":%d,\"p3\":%d,\"p4\":%d", x[0], x[1], x[2], x[3], x[4]);
		synth_line(f, pt, v, code);
	}
}

/* ---- the same spaces for the unit tests (tests/agents), which search
 * them directly rather than through a sweep file; static inline, so a file
 * that uses none of them is not warned. */
#ifdef AGENT_SPACE_H
/* A parameter of n values v0, v0 + step, ... (or powers of two from v0). */
static inline void synth_param(struct agent_param *p, const char *name, enum agent_param_kind k, int n, int v0, bool pow2)
{
	p->name = xstrdup(name);
	p->kind = k;
	p->values = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(p->values, json_integer(pow2 ? v0 << i : v0 + i));
}

/* The needle as a space, its restriction compiled; a point's value (NAN:
 * it fails) is synth_needle_point's. */
static inline void synth_needle_space(struct agent_space *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->n_params = 5;
	sp->params = xcalloc(5, sizeof(*sp->params));
	synth_param(&sp->params[0], "tile", AGENT_PARAM_ORDERED, 8, 1, true);
	synth_param(&sp->params[1], "warps", AGENT_PARAM_ORDERED, 4, 1, true);
	synth_param(&sp->params[2], "unroll", AGENT_PARAM_ORDERED, 16, 1, false);
	sp->params[3] = (struct agent_param){ xstrdup("layout"), AGENT_PARAM_CHOICE, json_pack("[ssss]", "a", "b", "c", "d") };
	synth_param(&sp->params[4], "vec", AGENT_PARAM_ORDERED, 4, 1, true);
	const char *names[] = { "tile", "warps", "unroll", "layout", "vec" };
	sp->n_restr = 1;
	sp->restr = xcalloc(1, sizeof(*sp->restr));
	sp->restr_text = xcalloc(1, sizeof(*sp->restr_text));
	sp->restr_text[0] = xstrdup("tile * warps <= 512");
	sp->restr[0] = agent_expr_compile(sp->restr_text[0], names, 5, NULL);
}

static inline double synth_needle_point(const struct agent_space *sp, uint64_t c, double fidelity)
{
	(void)fidelity;
	int i[5];
	for (size_t k = 0; k < 5; k++)
		i[k] = (int)agent_point_index(sp, c, k);
	uint64_t code = (uint64_t)((((i[0] * 4 + i[1]) * 16 + i[2]) * 4 + i[3]) * 4 + i[4]);
	bool opt = i[0] == 5 && i[1] == 2 && i[2] == 13 && i[3] == 1 && i[4] == 1;
	if (!opt && synth_u(code, 1) < 0.15)
		return NAN;
	return synth_needle_value(i[0], i[1], i[2], i[3], i[4]);
}

/* A grid of n ordered parameters PREFIX0.. of k values each. */
static inline void synth_grid(struct agent_space *sp, size_t n, size_t k, const char *prefix)
{
	memset(sp, 0, sizeof(*sp));
	sp->n_params = n;
	sp->params = xcalloc(n, sizeof(*sp->params));
	for (size_t i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof(name), "%s%zu", prefix, i);
		synth_param(&sp->params[i], name, AGENT_PARAM_RANGE, k, 0, false);
	}
}

static inline void synth_large_space(struct agent_space *sp)
{
	synth_grid(sp, 5, 10, "p");
}

static inline double synth_large_point(const struct agent_space *sp, uint64_t c, double fidelity)
{
	(void)fidelity;
	int x[5];
	for (size_t k = 0; k < 5; k++)
		x[k] = (int)agent_point_index(sp, c, k);
	return synth_large_value(x, c);
}

#endif

#endif
