/*
 * `model`: Bayesian optimisation with a Gaussian process (agents/gp.h) over
 * the valid points of a space (agents/space.h).
 *
 *   start    the first few points (5 for a space of up to 599 valid
 *            points) come from the seeded order;
 *   fit      a GP on the log of the feasible full-fidelity values (sign
 *            kept: a time to minimise enters as -log(time)), standardised
 *            over all of them, fitted on every one up to MODEL_MAX_TRAIN
 *            (beyond, the best and a spread of the rest), its weights
 *            each by marginal likelihood. The log is there for cliffs: a point 14
 *            times slower beside the optimum is 2.6 units below it, not a
 *            drop that flattens every other difference. Failed, gated and
 *            invalid points enter a separate estimate, the chance that a
 *            point is feasible (a GP of its own on the outcomes,
 *            agents/feas.h), which multiplies the acquisition;
 *   scan     the candidates: every untried valid point of a space of at
 *            most MODEL_ALL valid points, else a fresh seeded sample of
 *            MODEL_FRESH valid points drawn for this proposal (so every
 *            valid point can be proposed, and none is hidden behind a fixed
 *            prefix), plus a local sample around the best points: every
 *            other value of each parameter (a jump along an irregular list)
 *            and MODEL_LOCAL_RAND random two-parameter moves;
 *   pick     the candidate of largest expected improvement over the best
 *            posterior mean, times its chance of being feasible. There is
 *            no separate exploring proposal and no restart: with every
 *            weight of the kernel fitted by gradient (agents/gp.c) and
 *            every point in the fit, expected improvement alone walks to
 *            MI50's single near-optimal point on 30 seeds of 30 and to the
 *            100k space's on 20 of 20, where model v2's upper-bound turns,
 *            look outside the best's basin and restart after 100
 *            evaluations without a gain made it worse (13 of 30 on MI50;
 *            the restart alone 24; docs/figures.md, "sixteenth pass");
 *   stop     when no candidate has even a 1% chance (its sd widened by 1.5;
 *            2 above MODEL_STOP_SCAN valid points)
 *            to beat the best by min_gain, after three times the initial
 *            design, and a scan of every untried valid point (up to
 *            MODEL_STOP_SCAN, else a fresh sample of that many) agrees.
 *
 * Everything is recomputed from the observations on every call, so the
 * choice is a pure function of the history and the seed. Memory is bounded
 * by the candidates (MODEL_FRESH + the local sample, or MODEL_ALL), the
 * training set (MODEL_MAX_TRAIN^2) and the history, never by the space.
 */
#include "agents/feas.h"
#include "agents/gp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"

/* The initial design: one point per MODEL_INIT_PER valid points, between
 * MODEL_INIT_MIN and MODEL_INIT_MAX. bench_search (51 seeds) measured 9
 * points on the 384-point CPU GEMM space against 5: median 23 evaluations
 * against 18 to within 2% (46 against 40 on its sweep under load, 18
 * against 16 on the 583-point H200 SGEMM space); a space-filling (maximin)
 * design of 5 did no better than the seeded order (20, 47, 16). */
#define MODEL_INIT_PER 100
#define MODEL_INIT_MIN 5
#define MODEL_INIT_MAX 10
/* A space of at most this many valid points has every untried one scored. */
#define MODEL_ALL 4096
/* Otherwise: a fresh sample of this many valid points per proposal... */
#define MODEL_FRESH 2048
/* ...plus, around each of the MODEL_LOCAL_INC best points, every other
 * value of each parameter and this many random two-parameter moves. */
#define MODEL_LOCAL_INC 3
#define MODEL_LOCAL_RAND 64
/* Observations the GP is fitted on at most (keep_best), so a step stays
 * fast: every one up to 256. MI50's needle (docs/figures.md, "fifteenth
 * pass") needs the fit on every point measured: a plain GP on our former
 * 80 (the 50 best and 30 spread by rank) found it on 6 seeds of 10, on
 * every point on 10 of 10. */
#define MODEL_MAX_TRAIN 256
#define MODEL_TRAIN_BEST 50
/* Chance of beating the best by min_gain below which the search stops. */
#define MODEL_STOP_PI 0.01
/* The stop asks the model with its uncertainty widened this much: a GP
 * fitted on a few noisy points is overconfident. Model v1 (raw values, no
 * jump term) needed 2.0 (docs/figures.md has its figures of 1.0 to 2.0);
 * v2's kernel carries more of the uncertainty itself (a value that differs
 * may jump, the log compresses the best), and 2.0 on top of it left the
 * stop to fire after a median 236 of simserve's 348 points and 365 of the
 * H200 SGEMM's 583. Measured side by side (bench_search, 30 seeds, the 5
 * sweeps of at most 4,096 points): 1.0 stopped short of 2% on 6 seeds of
 * 150, 1.25 on 1 of 150, 1.5 on none. That holds where the stop's scan sees
 * every untried point; above MODEL_STOP_SCAN valid points it sees a sample,
 * and on the synthetic 100k space 1.5 stopped short on 3 seeds of 10
 * (test_search_v2) against 1 with 2.0, so a large space keeps 2.0. */
#define MODEL_STOP_SD_ALL 1.5
#define MODEL_STOP_SD_SAMPLE 2.0
/* The stop's scan: every untried valid point up to this many, else a
 * fresh sample of this many. */
#define MODEL_STOP_SCAN 10000

/* One observation for the ranking in keep_best. */
struct ranked {
	uint64_t x; /* the point */
	double y;   /* its value, NAN infeasible */
	size_t at;  /* its position in the history (ties) */
};

static int by_value(const void *a, const void *b)
{
	const struct ranked *p = a, *q = b;
	double u = isnan(p->y) ? -INFINITY : p->y, v = isnan(q->y) ? -INFINITY : q->y;
	if (u != v)
		return u > v ? -1 : 1;
	return p->at < q->at ? -1 : p->at > q->at;
}

/* At most MODEL_MAX_TRAIN observations: the MODEL_TRAIN_BEST best (the
 * region expected improvement looks at), then the rest spread evenly by
 * rank, so the model still knows where the poor regions are (fitted on the
 * best alone, it forgets them and proposes them again). */
static size_t keep_best(uint64_t *x, double *y, size_t n)
{
	struct ranked *r = xcalloc(n + 1, sizeof(*r));
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ x[i], y[i], i };
	qsort(r, n, sizeof(*r), by_value);
	size_t k = n < MODEL_MAX_TRAIN ? n : MODEL_MAX_TRAIN, rest = MODEL_MAX_TRAIN - MODEL_TRAIN_BEST;
	for (size_t i = 0; i < k; i++) {
		size_t j = n <= MODEL_MAX_TRAIN || i < MODEL_TRAIN_BEST
				   ? i
				   : MODEL_TRAIN_BEST + (i - MODEL_TRAIN_BEST) * (n - MODEL_TRAIN_BEST) / rest;
		x[i] = r[j].x;
		y[i] = r[j].y;
	}
	free(r);
	return k;
}

/* The objective's transform: log when every feasible value has one sign. */
enum tf { TF_RAW, TF_LOG, TF_NEGLOG };
static const char *const tf_names[] = { "raw", "log", "-log(-y)" };

static double tf_apply(enum tf t, double v)
{
	return t == TF_LOG ? log(v) : t == TF_NEGLOG ? -log(-v) : v;
}

/* The training set: the feasible full-fidelity observations, transformed
 * and standardised over all of them (so the prior mean, where the model has
 * seen nothing, is a typical point's, not the best ones'), then the
 * MODEL_MAX_TRAIN kept by keep_best. Infeasible points are the feasibility
 * estimate's (agents/feas.h), not the objective's: a failure says nothing of
 * how fast a point beside it runs. Returns how many; *t the transform,
 * *mean and *sdev the standardisation. */
static size_t training(const struct agent_search *q, uint64_t *x, double *y, enum tf *t, double *mean, double *sdev)
{
	size_t n = 0, pos = 0, neg = 0;
	double s = 0, s2 = 0;
	for (size_t i = 0; i < q->n_obs; i++) {
		if (q->obs[i].fidelity < 1 || isnan(q->obs[i].value))
			continue;
		x[n] = q->obs[i].code;
		y[n] = q->obs[i].value;
		pos += y[n] > 0;
		neg += y[n] < 0;
		n++;
	}
	*t = neg == 0 && pos ? TF_LOG : pos == 0 && neg ? TF_NEGLOG : TF_RAW;
	for (size_t i = 0; i < n; i++) {
		y[i] = tf_apply(*t, y[i]);
		s += y[i];
	}
	*mean = n ? s / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		s2 += (y[i] - *mean) * (y[i] - *mean);
	*sdev = n > 1 && s2 > 0 ? sqrt(s2 / (double)(n - 1)) : 1;
	for (size_t i = 0; i < n; i++)
		y[i] = (y[i] - *mean) / *sdev;
	return keep_best(x, y, n);
}

/* A growable list of candidate codes. */
struct cands {
	uint64_t *c; /* codes */
	size_t n;    /* entries */
	size_t cap;  /* allocated */
};

static void cand_add(struct cands *k, const struct agent_seen *s, uint64_t c)
{
	if (agent_seen_has(s, c))
		return;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		uint64_t *m = xcalloc(k->cap, sizeof(*m));
		if (k->n)
			memcpy(m, k->c, k->n * sizeof(*m));
		free(k->c);
		k->c = m;
	}
	k->c[k->n++] = c;
}

/* A sample of the valid points: all of them when there are at most most,
 * else most drawn with the generator r. */
static void sample_valid(const struct agent_search *q, const struct agent_seen *s, size_t most, struct rt_rand *r,
			 struct cands *k)
{
	if (q->n_valid <= most) {
		for (size_t i = 0; i < q->n_valid; i++)
			cand_add(k, s, q->valid[i]);
		return;
	}
	for (size_t i = 0; i < most; i++)
		cand_add(k, s, q->valid[rt_rand_below(r, q->n_valid)]);
}

/* Around point at: every other value of each parameter (the lines through
 * it), and random moves of two parameters; valid points only. */
static void sample_local(const struct agent_search *q, const struct agent_seen *s, uint64_t at, struct rt_rand *r,
			 struct cands *k)
{
	const struct agent_space *sp = q->sp;
	for (size_t i = 0; i < sp->n_params; i++) {
		size_t rad = json_array_size(sp->params[i].values), cur = agent_point_index(sp, at, i);
		for (size_t v = 0; v < rad; v++) {
			uint64_t c = agent_point_with(sp, at, i, v);
			if (v != cur && agent_point_valid(sp, c, NULL))
				cand_add(k, s, c);
		}
	}
	for (size_t m = 0; m < MODEL_LOCAL_RAND && sp->n_params > 1; m++) {
		uint64_t c = at;
		for (int t = 0; t < 2; t++) {
			size_t i = (size_t)rt_rand_below(r, sp->n_params);
			c = agent_point_with(sp, c, i, (size_t)rt_rand_below(r, json_array_size(sp->params[i].values)));
		}
		if (c != at && agent_point_valid(sp, c, NULL))
			cand_add(k, s, c);
	}
}

/* The candidates of this proposal, sorted and distinct. */
static struct cands candidates(const struct agent_search *q, const struct agent_seen *s, const uint64_t *best, size_t nb,
			       size_t full)
{
	struct cands k = { 0 };
	struct rt_rand r;
	rt_rand_seed(&r, q->seed ^ (((uint64_t)full + 1) * RT_SPLITMIX64_GAMMA) ^ 0x6d6f64656cULL);
	sample_valid(q, s, q->n_valid <= MODEL_ALL ? MODEL_ALL : MODEL_FRESH, &r, &k);
	for (size_t i = 0; i < nb && q->n_valid > MODEL_ALL; i++)
		sample_local(q, s, best[i], &r, &k);
	if (k.n)
		qsort(k.c, k.n, sizeof(*k.c), agent_code_cmp);
	size_t u = 0;
	for (size_t i = 0; i < k.n; i++)
		if (!u || k.c[u - 1] != k.c[i])
			k.c[u++] = k.c[i];
	k.n = u;
	return k;
}

/* The fitted model and what a proposal needs of it. */
struct fitted {
	struct agent_gp g; /* the GP */
	enum tf t;         /* the transform */
	double fbest;      /* the best posterior mean at a training point (standardised) */
	double target;     /* the best beaten by min_gain (standardised) */
	double stop_sd;    /* the stop's widening of the sd */
	double *kv;        /* scratch */
	uint32_t *idx;     /* scratch */
	struct agent_feas feas; /* the chance of a feasible point */
};

/* The largest chance, over the points in k, to beat the target. */
static double max_pi(const struct fitted *f, const struct cands *k)
{
	double p = 0;
	for (size_t i = 0; i < k->n; i++) {
		double mu, sd;
		agent_gp_decode(&f->g, k->c[i], f->idx);
		agent_gp_predict(&f->g, f->idx, f->kv, &mu, &sd);
		double raw = 0.5 * erfc(-((mu - f->target) / (f->stop_sd * sd)) / sqrt(2));
		if (raw > p) /* the chance of a feasible point only where it can matter */
			p = fmax(p, agent_feas_p(&f->feas, &f->g, f->idx) * raw);
	}
	return p;
}

/* The stop's second look: every untried valid point (or a fresh sample). */
static double scan_pi(const struct agent_search *q, const struct agent_seen *s, const struct fitted *f)
{
	struct cands k = { 0 };
	struct rt_rand r;
	rt_rand_seed(&r, q->seed ^ ((uint64_t)q->n_obs * RT_SPLITMIX64_GAMMA) ^ 0x73746f70ULL);
	sample_valid(q, s, MODEL_STOP_SCAN, &r, &k);
	double p = max_pi(f, &k);
	free(k.c);
	return p;
}

/* Fit the model on the history (full: its full-fidelity observations);
 * *n gets the training points, x their codes. */
static void fit(const struct agent_search *q, size_t full, struct fitted *f, uint64_t *x, size_t *n)
{
	double *y = xcalloc(full + 1, sizeof(double)), mean, sdev;
	*n = training(q, x, y, &f->t, &mean, &sdev);
	agent_gp_init(&f->g, q->sp, x, *n);
	agent_gp_fit_hyper(&f->g, y);
	f->kv = xcalloc(*n + 1, sizeof(double));
	f->idx = xcalloc(q->sp->n_params + 1, sizeof(uint32_t));
	/* The incumbent: the best posterior mean among the measured points
	 * (a noisy best observation would flatter it). */
	f->fbest = -INFINITY;
	for (size_t i = 0; i < *n; i++) /* the mean alone: no solve for a variance */
		f->fbest = fmax(f->fbest, agent_gp_mean(&f->g, f->g.xi + i * f->g.d));
	/* min_gain on the raw scale is log(1 + min_gain) on the log scale */
	double gain = f->t == TF_RAW ? fabs(f->fbest * sdev + mean) * fmax(q->min_gain, 0) : log1p(fmax(q->min_gain, 0));
	f->target = f->fbest + gain / sdev;
	f->feas = agent_feas_of(q);
	f->stop_sd = q->n_valid <= MODEL_STOP_SCAN ? MODEL_STOP_SD_ALL : MODEL_STOP_SD_SAMPLE;
	free(y);
}

static void fitted_release(struct fitted *f)
{
	agent_gp_release(&f->g);
	agent_feas_release(&f->feas);
	free(f->kv);
	free(f->idx);
}

/* The first points: the configuration's current value (when known), then
 * the seeded order. */
static int model_start(const struct agent_search *q, size_t n_init, size_t have, struct agent_pick *pk)
{
	size_t k;
	/* the design goes on past n_init points while none ran */
	char at[96];
	if (have < n_init)
		snprintf(at, sizeof(at), "point %zu of %zu", have + 1, n_init);
	else
		snprintf(at, sizeof(at), "point %zu (none of the %zu before ran)", have + 1, have);
	if (agent_start_due(q)) {
		pk->code = (uint64_t)q->start;
		pk->fidelity = 1;
		snprintf(pk->reason, sizeof(pk->reason), "model: initial design starts at the configuration's "
			 "current value");
		return 1;
	}
	if (!agent_first_untried(q, 1, &pk->code, &k)) {
		snprintf(pk->reason, sizeof(pk->reason), "model: all %zu valid points measured", q->n_valid);
		return 0;
	}
	pk->fidelity = 1;
	snprintf(pk->reason, sizeof(pk->reason), "model: initial design, %s (seeded)", at);
	return 1;
}

/* The candidate of largest expected improvement (times its chance of
 * being feasible); *acq that, *pi the largest chance to beat the target
 * (for the stop). */
static long acquire(const struct fitted *f, const struct cands *k, double *acq, double *pi)
{
	long win = -1;
	*acq = -INFINITY;
	*pi = 0;
	for (size_t i = 0; i < k->n; i++) {
		double mu, sd;
		agent_gp_decode(&f->g, k->c[i], f->idx);
		agent_gp_predict(&f->g, f->idx, f->kv, &mu, &sd);
		double z = (mu - f->fbest) / sd;
		double a = (mu - f->fbest) * 0.5 * erfc(-z / sqrt(2)) + sd * exp(-0.5 * z * z) / sqrt(2 * M_PI);
		double raw = 0.5 * erfc(-((mu - f->target) / (f->stop_sd * sd)) / sqrt(2));
		/* times the chance of a feasible point, computed only where it can
		 * change the answer (it is at most 1) */
		if (a > *acq || a < 0 || raw > *pi) {
			double pf = agent_feas_p(&f->feas, &f->g, f->idx);
			a *= a < 0 ? 1 / fmax(pf, 1e-6) : pf;
			*pi = fmax(*pi, pf * raw);
		}
		if (a > *acq) {
			*acq = a;
			win = (long)i;
		}
	}
	return win;
}

int agent_search_model(const struct agent_search *q, struct agent_pick *pk)
{
	size_t n_init = q->n_valid / MODEL_INIT_PER;
	n_init = n_init < MODEL_INIT_MIN ? MODEL_INIT_MIN : n_init > MODEL_INIT_MAX ? MODEL_INIT_MAX : n_init;
	size_t full = 0;
	for (size_t i = 0; i < q->n_obs; i++)
		full += q->obs[i].fidelity >= 1;
	if (full < n_init || agent_best_obs(q) < 0)
		return model_start(q, n_init, full, pk);
	uint64_t *x = xcalloc(full + 1, sizeof(*x));
	size_t n;
	struct fitted f;
	fit(q, full, &f, x, &n);
	struct agent_seen s = agent_seen_of(q->obs, q->n_obs);
	struct cands k = candidates(q, &s, x, n < MODEL_LOCAL_INC ? n : MODEL_LOCAL_INC, full);
	double acq, pi;
	long win = acquire(&f, &k, &acq, &pi);
	acq = win < 0 ? 0 : acq;
	int rc = 0;
	if (win < 0) {
		snprintf(pk->reason, sizeof(pk->reason), "model: all %zu valid points measured", q->n_valid);
	} else if (pi < MODEL_STOP_PI && full >= 3 * n_init && !q->no_early_stop &&
		   (pi = fmax(pi, scan_pi(q, &s, &f))) < MODEL_STOP_PI) {
		snprintf(pk->reason, sizeof(pk->reason),
			 "model: no untried point has a %.0f%% chance to beat the best by min_gain %.3g%% "
			 "(GP on the %s of %zu values); stopping early", MODEL_STOP_PI * 100, q->min_gain * 100,
			 tf_names[f.t], n);
	} else {
		pk->code = k.c[win];
		pk->fidelity = 1;
		char *t = agent_point_text(q->sp, k.c[win]);
		snprintf(pk->reason, sizeof(pk->reason), "model: GP (%s) expected improvement %.3g sd at %s",
			 tf_names[f.t], acq, t);
		free(t);
		rc = 1;
	}
	snprintf(pk->state, sizeof(pk->state),
		 "{\"observed\":%zu,\"transform\":\"%s\",\"length_scale\":%g,\"noise\":%g,\"jumps\":%zu,\"pow2\":%zu,"
		 "\"candidates\":%zu,\"acq\":%.4g,\"max_pi\":%.4g}",
		 n, tf_names[f.t], f.g.ell, f.g.noise, agent_gp_jumps(&f.g), agent_gp_pow2s(&f.g), k.n, acq, pi);
	fitted_release(&f);
	free(k.c);
	free(s.code);
	free(x);
	return rc;
}
