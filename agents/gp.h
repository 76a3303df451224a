/*
 * The Gaussian process behind `model` (agents/model.c), private to agents/.
 * Points are a space's codes (agents/space.h). The kernel is Matern 5/2
 * over a weighted squared distance with two terms per parameter:
 *
 *   d2(a, b) = sum_i w[i] * (pos_a - pos_b)^2 / (r_i - 1)^2  (ordered only)
 *            + sum_i c[i] * [value a != value b]
 *            + sum_i p2w[i] * [pow2(value a) != pow2(value b)]
 *
 * The first is the walk along an ordered parameter's list; the second lets
 * the model jump: with c[i] > 0, points that differ in parameter i are
 * apart however close their values sit in the list, so a non-monotone
 * ordered parameter (an unroll factor good at 2, 6 and 13 but poor in
 * between) is modelled as well as a categorical one. A categorical
 * parameter has only the second term. The third is for a list of positive
 * integers that mixes powers of two and other values (a block size of 16,
 * 32, 48, ... 256): on a GPU, 48 or 80 threads fill partial wavefronts
 * and may be many times slower than 32 or 64 beside them, so the model
 * may learn "a power of two" as a class and jump from 16 to 128 past the
 * slow values between. Every weight is chosen by marginal likelihood
 * (gp_fit_hyper): all start at the length scale a small grid picks, then
 * each moves on its own by gradient ascent.
 */
#ifndef AGENT_GP_H
#define AGENT_GP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/space.h"

/* A fitted GP. Every array is owned; gp_release frees them. */
struct agent_gp {
	const struct agent_space *sp; /* the space */
	size_t d;                     /* its parameters */
	size_t n;                     /* training points */
	uint32_t *xi;                 /* n x d value indices of the training points */
	double *l;                    /* Cholesky factor of K + noise I (n x n, lower) */
	double *alpha;                /* (K + noise I)^-1 y */
	double *w;                    /* per parameter: weight of the position difference (1 / length^2) */
	double *c;                    /* per parameter: weight of a differing value */
	double noise;                 /* the noise variance (the signal's is 1) */
	double ell;                   /* the common length scale the grid picked */
	double *scale;                /* per parameter: 1 / (r_i - 1)^2, 0 for a categorical one */
	double *p2w;                  /* per parameter: weight of "one value is a power of two, the other not" */
	uint8_t **pow2;               /* per parameter: per value, 1 for a power of two; NULL when no term */
};

/* Set up for the n points x (copied); y is not kept. */
void agent_gp_init(struct agent_gp *g, const struct agent_space *sp, const uint64_t *x, size_t n);
void agent_gp_release(struct agent_gp *g);
/* The hyperparameters by marginal likelihood, then the fit on y
 * (standardised values, n of them). */
void agent_gp_fit_hyper(struct agent_gp *g, const double *y);
/* Value indices of code into idx (d of them). */
void agent_gp_decode(const struct agent_gp *g, uint64_t code, uint32_t *idx);
/* Posterior mean and standard deviation at the point with indices idx;
 * kv: scratch of n doubles. */
void agent_gp_predict(const struct agent_gp *g, const uint32_t *idx, double *kv, double *mu, double *sd);
/* The posterior mean alone (no variance, so no triangular solve). */
double agent_gp_mean(const struct agent_gp *g, const uint32_t *idx);
/* The kernel between two points given by their value indices. */
double agent_gp_kernel(const struct agent_gp *g, const uint32_t *a, const uint32_t *b);
/* How many parameters the fit lets jump (c > 0), for reasons. */
size_t agent_gp_jumps(const struct agent_gp *g);
/* How many parameters the fit splits into powers of two and others (p2w > 0). */
size_t agent_gp_pow2s(const struct agent_gp *g);

#endif
