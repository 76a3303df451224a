/*
 * SLO capacity search: the highest offered request rate at which every SLO
 * holds for every seed. It brackets the answer from `rates: [lo, hi]`
 * (widening by 2x, at most twice each way, when the bracket is wrong), then
 * bisects on a continuous rate until the bracket is within 5% (at most 8
 * steps). A rate at which the server cannot keep up (achieved throughput
 * below 90% of what the schedule offered) is "saturated" and fails,
 * whatever its latencies say. The bound's confidence is the fraction of seeds
 * that passed at the bound and at the next (failing) rate.
 *
 * Two arms compare their latencies and throughputs at one offered load
 * (run_load_capacity_at): the best's capacity rate, which the candidate
 * runs too, so a change that raises capacity is not blamed for the
 * latencies of the higher load it can now carry.
 */
#include "runner/load/load.h"
#include "runner/base/cancel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CAP_TOL 0.05
#define CAP_MAX_STEPS 8
#define CAP_WIDEN 2
#define CAP_SAT_FRACTION 0.9

void run_load_capacity_release(struct run_load_capacity *c)
{
	for (size_t i = 0; i < c->n_points; i++) {
		for (int k = 0; k < c->points[i].n_seeds; k++)
			run_load_result_release(&c->points[i].runs[k]);
		free(c->points[i].runs);
	}
	free(c->points);
	memset(c, 0, sizeof(*c));
}

/* Did the server keep up with the schedule? */
static bool saturated(const struct run_load_result *r, double *achieved)
{
	*achieved = r->duration_s > 0 ? r->completed / r->duration_s : 0;
	size_t n = 0;
	int64_t last_intended = 0;
	for (size_t i = 0; i < r->n_reqs; i++) {
		if (r->reqs[i].warmup)
			continue;
		n++;
		if (r->reqs[i].intended_ns > last_intended)
			last_intended = r->reqs[i].intended_ns;
	}
	struct run_load_dist e2el;
	run_load_dist(r, "e2el", &e2el);
	double tail = isnan(e2el.median) ? 0 : e2el.median;
	double span = (double)last_intended / 1e9 + tail;
	if (n < 2 || !(span > 0))
		return r->failed > 0 && r->completed == 0;
	double offered = (double)n / span;
	return *achieved < CAP_SAT_FRACTION * offered;
}

struct search {
	const struct spec_load *cfg;
	const char *base_url, *model;
	const struct run_load_opts *opts;
	void (*progress)(void *, double, uint64_t, const struct run_load_result *, bool);
	void *arg;
	struct run_load_capacity *out;
	size_t alloc;
};

/* The load of one run at `rate`: open loop, the spec's pattern if it is
 * one, else poisson. */
static struct spec_load at_rate(const struct spec_load *cfg, double rate)
{
	struct spec_load c = *cfg;
	c.rate = rate;
	if (c.pattern != SPEC_LOAD_POISSON && c.pattern != SPEC_LOAD_GAMMA &&
	    c.pattern != SPEC_LOAD_CONSTANT)
		c.pattern = SPEC_LOAD_POISSON;
	return c;
}

/* Run every seed at `rate`; returns the point's index or <0. */
static int eval(struct search *s, double rate, struct rt_sb *err)
{
	struct spec_load c = at_rate(s->cfg, rate);
	static const uint64_t one = 1;
	const uint64_t *seeds = c.n_seeds ? c.seeds : &one;
	size_t ns = c.n_seeds ? c.n_seeds : 1;
	struct run_load_capacity *o = s->out;
	if (o->n_points == s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 16;
		o->points = xrealloc(o->points, s->alloc * sizeof(*o->points));
	}
	struct run_load_cap_point *p = &o->points[o->n_points];
	memset(p, 0, sizeof(*p));
	p->rate = rate;
	p->runs = xcalloc(ns, sizeof(*p->runs));
	double ach_sum = 0;
	for (size_t k = 0; k < ns; k++) {
		int rc = run_load_run(&c, s->base_url, s->model, seeds[k], s->opts, &p->runs[k], err);
		if (!rc && rt_cancelled()) { /* the run was cut short: the search stops */
			run_load_result_release(&p->runs[k]);
			rc = rt_errf(err, RT_EINTR, "load: stopped by a signal");
		}
		if (rc) {
			for (size_t j = 0; j < k; j++)
				run_load_result_release(&p->runs[j]);
			free(p->runs);
			return rc;
		}
		p->n_seeds++;
		double ach;
		bool sat = saturated(&p->runs[k], &ach);
		ach_sum += ach;
		if (sat)
			p->saturated = true;
		bool pass = !sat && run_load_slo_ok(&p->runs[k], c.slo, c.n_slo);
		if (pass)
			p->n_pass++;
		if (s->progress)
			s->progress(s->arg, rate, seeds[k], &p->runs[k], pass);
	}
	p->achieved = ach_sum / (double)ns;
	if (p->saturated && (o->saturation_rate == 0 || rate < o->saturation_rate))
		o->saturation_rate = rate;
	return (int)o->n_points++;
}

static bool passes(const struct run_load_cap_point *p)
{
	return p->n_seeds > 0 && p->n_pass == p->n_seeds;
}

int run_load_capacity(const struct spec_load *cfg, const char *base_url, const char *model,
		      const struct run_load_opts *opts,
		      void (*progress)(void *arg, double rate, uint64_t seed,
				       const struct run_load_result *r, bool pass),
		      void *progress_arg, struct run_load_capacity *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	if (cfg->n_rates < 1 || !(cfg->rates[0] > 0))
		return rt_errf(err, RT_EINVAL, "load: capacity search needs rates: [lo, hi] > 0");
	if (cfg->n_slo < 1)
		return rt_errf(err, RT_EINVAL, "load: capacity search needs at least one slo");
	double lo = cfg->rates[0];
	double hi = cfg->n_rates > 1 ? cfg->rates[cfg->n_rates - 1] : lo * 2;
	if (hi < lo) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	if (hi == lo)
		hi = lo * 2;
	struct search s = { cfg, base_url, model, opts, progress, progress_arg, out, 0 };
	out->tolerance = CAP_TOL;
	int ilo = -1, ihi = -1, i;

	/* the low end must pass */
	for (int w = 0; w <= CAP_WIDEN; w++) {
		if ((i = eval(&s, lo, err)) < 0)
			goto fail;
		if (passes(&out->points[i])) {
			ilo = i;
			break;
		}
		ihi = i;
		hi = lo;
		lo /= 2;
	}
	if (ilo < 0) {
		out->max_rate = 0;
		out->next_rate = out->points[ihi].rate;
		out->conf_next = (double)out->points[ihi].n_pass / out->points[ihi].n_seeds;
		out->bracketed = true;
		return 0;
	}
	/* the high end must fail */
	if (ihi < 0) {
		for (int w = 0; w <= CAP_WIDEN; w++) {
			if ((i = eval(&s, hi, err)) < 0)
				goto fail;
			if (!passes(&out->points[i])) {
				ihi = i;
				break;
			}
			ilo = i;
			lo = hi;
			hi *= 2;
		}
	}
	if (ihi >= 0) {
		for (int step = 0; step < CAP_MAX_STEPS; step++) {
			double a = out->points[ilo].rate, b = out->points[ihi].rate;
			if ((b - a) / a <= CAP_TOL)
				break;
			if ((i = eval(&s, (a + b) / 2, err)) < 0)
				goto fail;
			if (passes(&out->points[i]))
				ilo = i;
			else
				ihi = i;
		}
	}
	const struct run_load_cap_point *pl = &out->points[ilo];
	out->max_rate = pl->rate;
	out->bound_point = (size_t)ilo;
	out->conf_bound = (double)pl->n_pass / pl->n_seeds;
	out->bracketed = ihi >= 0;
	if (ihi >= 0) {
		out->next_rate = out->points[ihi].rate;
		out->conf_next = (double)out->points[ihi].n_pass / out->points[ihi].n_seeds;
	}
	return 0;
fail:
	run_load_capacity_release(out);
	return i;
}

int run_load_capacity_at(const struct spec_load *cfg, const char *base_url, const char *model,
			 const struct run_load_opts *opts, const struct run_load_capacity *cap,
			 double rate, const struct run_load_result **at, struct run_load_result *own,
			 struct rt_sb *err)
{
	*at = NULL;
	memset(own, 0, sizeof(*own));
	for (size_t i = 0; i < cap->n_points; i++)
		if (cap->points[i].n_seeds && fabs(cap->points[i].rate - rate) <= 1e-9 * rate) {
			*at = &cap->points[i].runs[0]; /* the search tried it already */
			return 0;
		}
	struct spec_load c = at_rate(cfg, rate);
	uint64_t seed = cfg->n_seeds ? cfg->seeds[0] : 1;
	int rc = run_load_run(&c, base_url, model, seed, opts, own, err);
	if (!rc && rt_cancelled()) {
		run_load_result_release(own);
		rc = rt_errf(err, RT_EINTR, "load: stopped by a signal");
	}
	if (!rc)
		*at = own;
	return rc;
}
