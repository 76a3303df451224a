/*
 * The Gaussian process behind `model` (agents/gp.h): the kernel, the
 * Cholesky fit, the posterior, and the hyperparameters by marginal
 * likelihood: a common length scale and the noise on a small grid, then
 * every weight its own by gradient ascent (automatic relevance).
 */
#include "agents/gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The gradient ascent (refine). A plain GP whose weights are each fitted
 * by L-BFGS (scikit-learn 1.2.1, every point in the fit, expected
 * improvement) found MI50's needle on 10 of 10 seeds where this model's
 * grid and one pass of relevance (x4 or x1/4 per weight) found it on 22
 * of 30 (docs/figures.md, "fifteenth pass"): the needle needs the block
 * width's and the tiles' power-of-two weights set apart from their walks,
 * which a pass of coarse tries does not reach. Adam in the logs of the
 * weights, from the grid's length scale, does: 60 steps of 0.1 (30 of 30 in
 * bench_search); 30 steps, 28 of 30. */
#define GP_STEPS 60
#define GP_RATE 0.1
#define GP_W_MIN 1e-4
#define GP_W_MAX 1e4
#define GP_NOISE_MIN 1e-6

/* The Matern 5/2 kernel at squared distance d2; with slope, also its
 * derivative in d2 (the gradient's, refine), from the same exp. */
static double matern52(double d2, double *slope)
{
	double r = sqrt(5.0 * d2), e = exp(-r);
	if (slope)
		*slope = -5.0 / 6.0 * (1 + r) * e;
	return (1 + r + r * r / 3) * e;
}

static double dist2(const struct agent_gp *g, const uint32_t *a, const uint32_t *b)
{
	double d2 = 0;
	for (size_t i = 0; i < g->d; i++) {
		if (a[i] == b[i])
			continue;
		double t = (double)a[i] - (double)b[i];
		d2 += g->w[i] * t * t * g->scale[i] + g->c[i];
		if (g->pow2[i] && g->pow2[i][a[i]] != g->pow2[i][b[i]])
			d2 += g->p2w[i];
	}
	return d2;
}

/* The dot product of a and b (n each), in four running sums so the
 * multiplies overlap. */
static double dot(const double *a, const double *b, size_t n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t k = 0;
	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; k++)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

/* In-place Cholesky of the n x n matrix a (lower); false if not positive. */
static bool cholesky(double *a, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		const double *rj = a + j * n;
		double s = a[j * n + j] - dot(rj, rj, j);
		if (s <= 0)
			return false;
		a[j * n + j] = sqrt(s);
		for (size_t i = j + 1; i < n; i++)
			a[i * n + j] = (a[i * n + j] - dot(a + i * n, rj, j)) / a[j * n + j];
	}
	return true;
}

/* Solve L x = b in place (forward); row by row, so l is read in order. */
static void fsolve(const double *l, size_t n, double *b)
{
	for (size_t i = 0; i < n; i++) {
		const double *row = l + i * n;
		b[i] = (b[i] - dot(row, b, i)) / row[i];
	}
}

/* Solve L^T x = b in place (backward); each solved value is taken out of
 * the ones before it along its row of l, so l is read in order. */
static void bsolve(const double *l, size_t n, double *b)
{
	for (size_t i = n; i-- > 0;) {
		const double *row = l + i * n;
		double v = b[i] / row[i];
		b[i] = v;
		for (size_t k = 0; k < i; k++)
			b[k] -= row[k] * v;
	}
}

void agent_gp_decode(const struct agent_gp *g, uint64_t code, uint32_t *idx)
{
	for (size_t i = 0; i < g->d; i++) {
		size_t r = json_array_size(g->sp->params[i].values);
		idx[i] = (uint32_t)(code % r);
		code /= r;
	}
}

/* The power-of-two term of parameter i: only for a list of positive
 * integers that holds both powers of two and other values (a block size
 * of 16, 32, 48, ... 256, where 48 or 80 cost a partial wavefront). */
static void pow2_class(struct agent_gp *g, size_t i)
{
	json_t *vals = g->sp->params[i].values;
	size_t r = json_array_size(vals), pw = 0;
	if (r < 3 || g->sp->params[i].kind == AGENT_PARAM_CHOICE)
		return;
	uint8_t *bits = xcalloc(r, 1);
	for (size_t v = 0; v < r; v++) {
		json_t *x = json_array_get(vals, v);
		if (!json_is_integer(x) || json_integer_value(x) <= 0) {
			free(bits);
			return;
		}
		json_int_t n = json_integer_value(x);
		bits[v] = (n & (n - 1)) == 0;
		pw += bits[v];
	}
	if (pw == 0 || pw == r) {
		free(bits);
		return;
	}
	g->pow2[i] = bits;
}

void agent_gp_init(struct agent_gp *g, const struct agent_space *sp, const uint64_t *x, size_t n)
{
	memset(g, 0, sizeof(*g));
	g->sp = sp;
	g->d = sp->n_params;
	g->n = n;
	g->xi = xcalloc(n * g->d + 1, sizeof(*g->xi));
	g->l = xcalloc(n * n + 1, sizeof(double));
	g->alpha = xcalloc(n + 1, sizeof(double));
	g->w = xcalloc(g->d + 1, sizeof(double));
	g->c = xcalloc(g->d + 1, sizeof(double));
	g->scale = xcalloc(g->d + 1, sizeof(double));
	g->p2w = xcalloc(g->d + 1, sizeof(double));
	g->pow2 = xcalloc(g->d + 1, sizeof(*g->pow2));
	for (size_t i = 0; i < g->d; i++) {
		size_t r = json_array_size(sp->params[i].values);
		g->scale[i] = sp->params[i].kind == AGENT_PARAM_CHOICE || r < 2 ? 0 : 1.0 / ((double)(r - 1) * (r - 1));
		pow2_class(g, i);
	}
	for (size_t k = 0; k < n; k++)
		agent_gp_decode(g, x[k], g->xi + k * g->d);
}

void agent_gp_release(struct agent_gp *g)
{
	free(g->xi);
	free(g->l);
	free(g->alpha);
	free(g->w);
	free(g->c);
	free(g->scale);
	free(g->p2w);
	for (size_t i = 0; g->pow2 && i < g->d; i++)
		free(g->pow2[i]);
	free(g->pow2);
	memset(g, 0, sizeof(*g));
}

/* Factor K for the current weights and noise; the log marginal likelihood,
 * or -INFINITY. */
static double gp_fit(struct agent_gp *g, const double *y)
{
	size_t n = g->n, d = g->d;
	/* The lower triangle gets K + noise I; the upper, which the factor
	 * leaves alone, the kernel's slope in d2 for the gradient (refine). */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++)
			g->l[i * n + j] = matern52(dist2(g, g->xi + i * d, g->xi + j * d), &g->l[j * n + i]);
		g->l[i * n + i] = 1 + g->noise;
	}
	if (!cholesky(g->l, n))
		return -INFINITY;
	memcpy(g->alpha, y, n * sizeof(*y));
	fsolve(g->l, n, g->alpha);
	double fit = 0, logdet = 0;
	for (size_t i = 0; i < n; i++) {
		fit += g->alpha[i] * g->alpha[i];
		logdet += log(g->l[i * n + i]);
	}
	bsolve(g->l, n, g->alpha);
	return -0.5 * fit - logdet;
}

/* The posterior mean at idx; with kv (n doubles), also the kernel with
 * each training point, for the variance. */
static double gp_mean(const struct agent_gp *g, const uint32_t *idx, double *kv)
{
	double m = 0;
	for (size_t i = 0; i < g->n; i++) {
		double k = matern52(dist2(g, idx, g->xi + i * g->d), NULL);
		if (kv)
			kv[i] = k;
		m += k * g->alpha[i];
	}
	return m;
}

double agent_gp_mean(const struct agent_gp *g, const uint32_t *idx)
{
	return gp_mean(g, idx, NULL);
}

void agent_gp_predict(const struct agent_gp *g, const uint32_t *idx, double *kv, double *mu, double *sd)
{
	double m = gp_mean(g, idx, kv);
	fsolve(g->l, g->n, kv);
	double v = 1;
	for (size_t i = 0; i < g->n; i++)
		v -= kv[i] * kv[i];
	*mu = m;
	*sd = sqrt(v > 1e-12 ? v : 1e-12);
}

/* The hyperparameters the gradient moves: pointers to every weight in use
 * (an ordered parameter's walk and jump, a categorical one's difference, a
 * power of two's class) and, last, the noise. */
struct hyper {
	double **at; /* the weights, then &g->noise */
	size_t n;    /* how many */
};

static struct hyper hyper_of(struct agent_gp *g)
{
	struct hyper h = { xcalloc(3 * g->d + 1, sizeof(double *)), 0 };
	for (size_t k = 0; k < g->d; k++) {
		if (g->w[k] > 0)
			h.at[h.n++] = &g->w[k];
		if (g->c[k] > 0)
			h.at[h.n++] = &g->c[k];
		if (g->pow2[k] && g->p2w[k] > 0)
			h.at[h.n++] = &g->p2w[k];
	}
	h.at[h.n++] = &g->noise;
	return h;
}

/* K^-1 into inv (n x n) from the factor l: first L^-1 into li (lower,
 * row by row), then the sum over k of the outer products of its rows
 * (lower half, mirrored). Every inner loop reads memory in order. */
static void inverse(const double *l, size_t n, double *li, double *inv)
{
	memset(li, 0, n * n * sizeof(*li));
	for (size_t i = 0; i < n; i++) {
		const double *row = l + i * n;
		double *restrict out = li + i * n; /* rows apart: no alias to check */
		for (size_t k = 0; k < i; k++) {
			const double *restrict lk = li + k * n;
			for (size_t j = 0; j <= k; j++)
				out[j] -= row[k] * lk[j];
		}
		out[i] = 1;
		for (size_t j = 0; j <= i; j++)
			out[j] /= row[i];
	}
	memset(inv, 0, n * n * sizeof(*inv));
	for (size_t k = 0; k < n; k++) {
		const double *restrict lk = li + k * n;
		for (size_t a = 0; a <= k; a++) {
			double *restrict dst = inv + a * n;
			for (size_t b = 0; b <= a; b++)
				dst[b] += lk[a] * lk[b];
		}
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < a; b++)
			inv[b * n + a] = inv[a * n + b];
}

/* The gradient of the log marginal likelihood in the logs of h's weights,
 * at the fit gp_fit just made: 1/2 tr((alpha alpha^T - K^-1) dK/dlog w),
 * where dK/dlog w = slope(d2) * w * (w's term of d2), the slope being what
 * gp_fit left in l's upper triangle. scratch: 2 n^2 doubles. */
static void gradient(const struct agent_gp *g, const struct hyper *h, double *scratch, double *grad)
{
	size_t n = g->n, d = g->d;
	double *inv = scratch;
	inverse(g->l, n, scratch + n * n, inv);
	memset(grad, 0, h->n * sizeof(*grad));
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < a; b++) {
			const uint32_t *xa = g->xi + a * d, *xb = g->xi + b * d;
			/* the pair (a, b) and (b, a): twice the term, halved */
			double wgt = (g->alpha[a] * g->alpha[b] - inv[a * n + b]) * g->l[b * n + a];
			size_t m = 0;
			for (size_t k = 0; k < d; k++) {
				double t = (double)xa[k] - (double)xb[k];
				if (g->w[k] > 0)
					grad[m++] += wgt * g->w[k] * t * t * g->scale[k];
				if (g->c[k] > 0)
					grad[m++] += t != 0 ? wgt * g->c[k] : 0;
				if (g->pow2[k] && g->p2w[k] > 0)
					grad[m++] += g->pow2[k][xa[k]] != g->pow2[k][xb[k]] ? wgt * g->p2w[k] : 0;
			}
		}
	double tr = 0;
	for (size_t a = 0; a < n; a++)
		tr += g->alpha[a] * g->alpha[a] - inv[a * n + a];
	grad[h->n - 1] = 0.5 * g->noise * tr;
}

/* Gradient ascent on the log marginal likelihood from where the grid left
 * it: Adam (rate GP_RATE, the usual 0.9 and 0.999) on the logs of every
 * weight in use and the noise, GP_STEPS steps, the best fit seen kept.
 * Weights stay within [GP_W_MIN, GP_W_MAX], the noise above GP_NOISE_MIN. */
static void refine(struct agent_gp *g, const double *y)
{
	struct hyper h = hyper_of(g);
	size_t n = g->n;
	double *scratch = xcalloc(2 * n * n + 1, sizeof(double));
	double *v = xcalloc(4 * h.n, sizeof(double)), *grad = v, *m1 = v + h.n, *m2 = v + 2 * h.n, *keep = v + 3 * h.n;
	for (size_t i = 0; i < h.n; i++)
		keep[i] = *h.at[i];
	double ll = gp_fit(g, y), best = ll;
	for (int s = 1; s <= GP_STEPS && isfinite(ll); s++) {
		gradient(g, &h, scratch, grad);
		for (size_t i = 0; i < h.n; i++) {
			m1[i] = 0.9 * m1[i] + 0.1 * grad[i];
			m2[i] = 0.999 * m2[i] + 0.001 * grad[i] * grad[i];
			double step = GP_RATE * (m1[i] / (1 - pow(0.9, s))) / (sqrt(m2[i] / (1 - pow(0.999, s))) + 1e-8);
			double lo = i + 1 == h.n ? GP_NOISE_MIN : GP_W_MIN;
			*h.at[i] = fmin(fmax(*h.at[i] * exp(step), lo), GP_W_MAX);
		}
		ll = gp_fit(g, y);
		if (ll > best) {
			best = ll;
			for (size_t i = 0; i < h.n; i++)
				keep[i] = *h.at[i];
		}
	}
	for (size_t i = 0; i < h.n; i++)
		*h.at[i] = keep[i];
	free(v);
	free(scratch);
	free(h.at);
}

void agent_gp_fit_hyper(struct agent_gp *g, const double *y)
{
	static const double ells[] = { 0.15, 0.3, 0.6, 1.2 }, noises[] = { 1e-2, 1e-1, 0.3, 1 };
	size_t d = g->d;
	double best = -INFINITY, bell = 0.3, bnoise = 0.1;
	for (size_t i = 0; i < RT_ARRAY_SIZE(ells); i++)
		for (size_t j = 0; j < RT_ARRAY_SIZE(noises); j++) {
			for (size_t k = 0; k < d; k++) {
				g->w[k] = g->scale[k] > 0 ? 1 / (ells[i] * ells[i]) : 0;
				g->c[k] = g->scale[k] > 0 ? 0 : 1 / (ells[i] * ells[i]);
			}
			g->noise = noises[j];
			double ll = gp_fit(g, y);
			if (ll > best) {
				best = ll;
				bell = ells[i];
				bnoise = noises[j];
			}
		}
	g->ell = bell;
	g->noise = bnoise;
	/* every weight in use from the grid's length scale (an ordered
	 * parameter's walk and jump, a categorical one's difference, a power of
	 * two's class), then each its own by the gradient (automatic
	 * relevance). With the jump started at 0 instead (the gradient keeps a
	 * weight at 0 there), the synthetic needle, whose unroll is good at
	 * values that are not neighbours, took 382 evaluations on seed 1; from
	 * 0.1 or 1 of the walk's, a median of 45 or 44 on seeds 1-4, and MI50
	 * was the same with either (30 of 30, median 157). */
	for (size_t k = 0; k < d; k++) {
		g->w[k] = g->scale[k] > 0 ? 1 / (bell * bell) : 0;
		g->c[k] = 1 / (bell * bell);
		g->p2w[k] = g->pow2[k] ? 1 / (bell * bell) : 0;
	}
	refine(g, y);
	gp_fit(g, y);
}

double agent_gp_kernel(const struct agent_gp *g, const uint32_t *a, const uint32_t *b)
{
	return matern52(dist2(g, a, b), NULL);
}

size_t agent_gp_jumps(const struct agent_gp *g)
{
	size_t n = 0;
	for (size_t k = 0; k < g->d; k++)
		n += g->scale[k] > 0 && g->c[k] > 0;
	return n;
}

size_t agent_gp_pow2s(const struct agent_gp *g)
{
	size_t n = 0;
	for (size_t k = 0; k < g->d; k++)
		n += g->pow2[k] && g->p2w[k] > 0;
	return n;
}
