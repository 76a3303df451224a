/*
 * The chance that a point is feasible (agents/feas.h): a GP of its own on
 * the outcomes of the latest full observations, or a kernel-weighted share
 * of them under the objective's kernel.
 */
#include "agents/feas.h"

#include <math.h>
#include <stdlib.h>

#include "runner/base/rt.h"

/* Observations (the latest) behind the chance that a point is feasible,
 * and the least chance it gives a point. */
#define FEAS_OBS 128
#define FEAS_MIN 1e-3
/* The largest fitted noise (the outcomes' variance is 1) at which the
 * feasibility GP is believed; measured on the convolution space (30 seeds,
 * auto's median to within 2%): 0.01 gave 145, 0.1 156, 0.3 71. */
#define FEAS_NOISE 0.3

struct agent_feas agent_feas_of(const struct agent_search *q)
{
	struct agent_feas f = { .p0 = 1 };
	uint64_t *x = xcalloc(FEAS_OBS + 1, sizeof(*x));
	double *y = xcalloc(FEAS_OBS + 1, sizeof(*y));
	size_t n = 0, ok = 0;
	for (size_t i = q->n_obs; i-- > 0 && n < FEAS_OBS;) {
		if (q->obs[i].fidelity < 1)
			continue;
		x[n] = q->obs[i].code;
		y[n] = !isnan(q->obs[i].value);
		ok += y[n++] > 0;
	}
	if (n)
		f.p0 = (double)ok / (double)n;
	if (ok && ok < n) {
		f.sd = sqrt(f.p0 * (1 - f.p0));
		for (size_t i = 0; i < n; i++)
			y[i] = (y[i] - f.p0) / f.sd;
		agent_gp_init(&f.g, q->sp, x, n);
		agent_gp_fit_hyper(&f.g, y);
		f.fitted = f.g.noise <= FEAS_NOISE;
		if (!f.fitted) { /* failures the parameters do not explain */
			f.n = n;
			f.xi = xcalloc(n * f.g.d + 1, sizeof(uint32_t));
			f.ok = xcalloc(n + 1, sizeof(bool));
			for (size_t i = 0; i < n; i++) {
				agent_gp_decode(&f.g, x[i], f.xi + i * f.g.d);
				f.ok[i] = y[i] > 0;
			}
			agent_gp_release(&f.g);
		}
	}
	free(x);
	free(y);
	return f;
}

double agent_feas_p(const struct agent_feas *f, const struct agent_gp *og, const uint32_t *idx)
{
	if (f->xi) {
		double num = f->p0, den = 1;
		for (size_t i = 0; i < f->n; i++) {
			double k = agent_gp_kernel(og, idx, f->xi + i * og->d);
			num += k * f->ok[i];
			den += k;
		}
		return num / den;
	}
	if (!f->fitted)
		return f->p0;
	return fmin(1, fmax(FEAS_MIN, f->p0 + f->sd * agent_gp_mean(&f->g, idx)));
}

void agent_feas_release(struct agent_feas *f)
{
	if (f->fitted)
		agent_gp_release(&f->g);
	free(f->xi);
	free(f->ok);
}

