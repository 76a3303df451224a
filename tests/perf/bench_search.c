/*
 * bench_search: the search strategies replayed offline on exhaustive
 * sweeps (docs/search.md, "Sweep files"). For every sweep file, every space
 * strategy and 30 seeds (10 on a space of more than 4,096 valid points),
 * the strategy proposes points; each measurement is drawn from the point's
 * recorded samples (3 draws with replacement for a full measurement, fewer
 * at a lower fidelity, the median of the draws), so
 * the replay carries the sweep's own spread as noise. A run ends when a
 * full measurement lands on a point whose sweep median is within 2% of the
 * sweep's best, or when the strategy stops. Prints, per space and strategy,
 * the median and 90th percentile of the evaluations it took (and of their
 * cost, a cheap measurement counting its fidelity), how many seeds reached
 * the target, each median's ratio to random's and its share of the space,
 * and whether the best strategy used at most a third of random's median and
 * at most 10% of the space; for model, where it stops when left to run
 * (a live campaign cannot tell it has reached the optimum) and whether the
 * point it would keep there is within 2%; then one summary line per space.
 *
 * A sweep file either opens with its header line, or is a device's raw
 * output (experiments/search-h200-sgemm/results-h200/sweep.jsonl: lines
 * {"point", "values": [one number per repeat], "status"}, a status other
 * than "ok" infeasible) whose header is space.json in its folder or the one
 * above.
 *
 * BENCH_TRACE=1 writes every proposal to standard error: the strategy, the
 * seed, the evaluation, how near the point's sweep median is to the best (1:
 * the best, 0.9: 10% slower or lower, 0: infeasible), and the strategy's reason and state.
 *
 * usage: bench_search [SWEEP.jsonl ...]
 *   default: $RATCHET_SRC/experiments/search-*\/sweep.jsonl and
 *   experiments/search-*\/results-*\/sweep.jsonl, plus the files named in
 *   $RATCHET_SWEEPS (space-separated)
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent.h"
#include "agents/space.h"
#include "runner/base/rand.h"
#include "search_synth.h"

/* Seeds per space: the 30, and 10 on a space of more than
 * LARGE_SPACE valid points (its strategies' runs are capped at 1,000
 * evaluations, not 200, and the model scores 2,048+ candidates each time:
 * 30 seeds there took longer than a `make bench` should on the 2-core
 * development host). BENCH_SEEDS sets both. */
#define SEEDS 30
#define SEEDS_LARGE 10
#define LARGE_SPACE 4096
#define FULL_DRAWS 3 /* repeats.min's default: the samples of a full measurement */
#define WITHIN 0.02

/* One sweep: the space and each valid point's samples. */
struct sweep {
	char *name;              /* from the header */
	bool minimize;           /* goal: min */
	struct agent_space sp;   /* the space */
	uint64_t *valid;         /* its valid points */
	size_t n_valid;          /* how many */
	double **samples;        /* per valid point: its samples, NULL: failed or not swept */
	size_t *n_samples;       /* per valid point */
	double *median;          /* per valid point: oriented (higher is better), NAN if failed */
	double best;             /* the best median */
	size_t n_near;           /* points within WITHIN of it */
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long find_valid(const struct sweep *w, uint64_t code)
{
	size_t lo = 0, hi = w->n_valid;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (w->valid[mid] < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->n_valid && w->valid[lo] == code ? (long)lo : -1;
}

/* The header: {"sweep":1, "name", "goal", "parameters":[{"name","values",
 * "kind"?}], "restrictions":[...]} */
static int load_header(struct sweep *w, json_t *h, const char *path)
{
	json_t *ps = json_object_get(h, "parameters"), *rs = json_object_get(h, "restrictions");
	if (json_integer_value(json_object_get(h, "sweep")) != 1 || !json_is_array(ps)) {
		fprintf(stderr, "%s:1: not a sweep header (want {\"sweep\":1, \"parameters\": [...]})\n", path);
		return -1;
	}
	w->name = xstrdup(json_string_value(json_object_get(h, "name")) ? json_string_value(json_object_get(h, "name")) : path);
	w->minimize = json_is_string(json_object_get(h, "goal")) && !strcmp(json_string_value(json_object_get(h, "goal")), "min");
	w->sp.n_params = json_array_size(ps);
	w->sp.params = xcalloc(w->sp.n_params, sizeof(*w->sp.params));
	const char **names = xcalloc(w->sp.n_params + 1, sizeof(*names));
	for (size_t i = 0; i < w->sp.n_params; i++) {
		json_t *p = json_array_get(ps, i);
		const char *kind = json_string_value(json_object_get(p, "kind"));
		w->sp.params[i].name = xstrdup(json_string_value(json_object_get(p, "name")));
		w->sp.params[i].values = json_incref(json_object_get(p, "values"));
		w->sp.params[i].kind = kind && !strcmp(kind, "choices") ? AGENT_PARAM_CHOICE : AGENT_PARAM_ORDERED;
		names[i] = w->sp.params[i].name;
	}
	w->sp.n_restr = json_array_size(rs);
	w->sp.restr = xcalloc(w->sp.n_restr + 1, sizeof(*w->sp.restr));
	w->sp.restr_text = xcalloc(w->sp.n_restr + 1, sizeof(*w->sp.restr_text));
	for (size_t r = 0; r < w->sp.n_restr; r++) {
		struct rt_sb err = RT_SB_INIT;
		w->sp.restr_text[r] = xstrdup(json_string_value(json_array_get(rs, r)));
		w->sp.restr[r] = agent_expr_compile(w->sp.restr_text[r], names, w->sp.n_params, &err);
		if (!w->sp.restr[r]) {
			fprintf(stderr, "%s:1: restriction '%s': %s\n", path, w->sp.restr_text[r], err.buf);
			free(names);
			return -1;
		}
		rt_sb_release(&err);
	}
	free(names);
	w->valid = agent_space_valid(&w->sp, &w->n_valid);
	w->samples = xcalloc(w->n_valid + 1, sizeof(*w->samples));
	w->n_samples = xcalloc(w->n_valid + 1, sizeof(*w->n_samples));
	w->median = xcalloc(w->n_valid + 1, sizeof(*w->median));
	for (size_t i = 0; i < w->n_valid; i++)
		w->median[i] = NAN;
	return 0;
}

/* A point line: {"point": {...}, "samples": [numbers; null for a failed run]}
 * (or "values", with "status" other than "ok" infeasible). */
static void load_point(struct sweep *w, json_t *o, const char *path, size_t line)
{
	uint64_t code;
	json_t *s = json_object_get(o, "samples"), *st = json_object_get(o, "status");
	if (!s)
		s = json_object_get(o, "values");
	long k = agent_point_from_json(&w->sp, json_object_get(o, "point"), &code) ? -1 : find_valid(w, code);
	if (k < 0) {
		fprintf(stderr, "%s:%zu: a point outside the space's valid points; skipped\n", path, line);
		return;
	}
	size_t n = 0;
	double *v = xcalloc(json_array_size(s) + 1, sizeof(*v));
	for (size_t i = 0; i < json_array_size(s); i++)
		if (json_is_number(json_array_get(s, i)))
			v[n++] = json_number_value(json_array_get(s, i)) * (w->minimize ? -1 : 1);
	if (!n || json_is_true(json_object_get(o, "failed")) || (json_is_string(st) && strcmp(json_string_value(st), "ok"))) {
		free(v);
		return;
	}
	free(w->samples[k]);
	w->samples[k] = v;
	w->n_samples[k] = n;
	double *tmp = xcalloc(n, sizeof(*tmp));
	memcpy(tmp, v, n * sizeof(*tmp));
	w->median[k] = median_of(tmp, n);
	free(tmp);
}

/* A raw sweep's header: space.json beside it, or in the folder above. */
static int load_side_header(struct sweep *w, const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	int rc = -1;
	for (int up = 0; up < 2 && rc; up++) {
		char *h = xasprintf("%s/%sspace.json", dir, up ? "../" : "");
		json_t *o = json_load_file(h, 0, NULL);
		if (o)
			rc = load_header(w, o, h);
		json_decref(o);
		free(h);
	}
	if (rc)
		fprintf(stderr, "%s: no header line and no space.json beside it\n", path);
	free(dir);
	return rc;
}

static int load_sweep(struct sweep *w, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0, no = 0;
	int rc = 0;
	while (getline(&line, &cap, f) > 0 && !rc) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		no++;
		if (!o) {
			fprintf(stderr, "%s:%zu: %s\n", path, no, je.text), rc = -1;
		} else if (no == 1 && json_object_get(o, "sweep")) {
			rc = load_header(w, o, path);
		} else {
			if (no == 1)
				rc = load_side_header(w, path);
			if (!rc)
				load_point(w, o, path, no);
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	w->best = -INFINITY;
	for (size_t i = 0; i < w->n_valid; i++)
		if (!isnan(w->median[i]) && w->median[i] > w->best)
			w->best = w->median[i];
	for (size_t i = 0; i < w->n_valid; i++)
		w->n_near += !isnan(w->median[i]) && w->median[i] >= w->best - fabs(w->best) * WITHIN;
	return rc || w->best == -INFINITY ? -1 : 0;
}

static void sweep_release(struct sweep *w)
{
	for (size_t i = 0; i < w->n_valid; i++)
		free(w->samples[i]);
	free(w->samples);
	free(w->n_samples);
	free(w->median);
	free(w->valid);
	free(w->name);
	agent_space_release(&w->sp);
}

/* One measurement: the median of draws from the recorded samples. */
static double measure(const struct sweep *w, long k, double fidelity, struct rt_rand *r)
{
	if (k < 0 || !w->samples[k])
		return NAN;
	long n = lround(FULL_DRAWS * fidelity);
	double d[FULL_DRAWS + 1];
	n = n < 1 ? 1 : n > FULL_DRAWS ? FULL_DRAWS : n;
	for (long i = 0; i < n; i++)
		d[i] = w->samples[k][rt_rand_below(r, w->n_samples[k])];
	return median_of(d, (size_t)n);
}

/* Is the sweep's point at (index into its valid points, -1: none) within
 * WITHIN of the sweep's best? */
static bool within(const struct sweep *w, long at)
{
	return at >= 0 && !isnan(w->median[at]) && w->median[at] >= w->best - fabs(w->best) * WITHIN;
}

/* How one replayed search went. */
/* How one replayed search went. */
struct run {
	size_t reached; /* the evaluation whose full measurement first landed within WITHIN, 0: none */
	size_t stopped; /* the evaluations when the strategy stopped by itself, 0: it did not */
	size_t n;       /* the evaluations made */
	double cost;    /* the evaluations' fidelities, summed */
	bool kept_ok;   /* the best full measurement at the end (what a campaign keeps) is within WITHIN */
	double cpu;     /* CPU seconds in the strategy's proposals, summed */
	double cpu_max; /* the longest proposal, CPU seconds */
};

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One search, each measurement drawn from the sweep's samples. It ends
 * when the strategy stops (which it may do by itself only when early),
 * after cap evaluations, or, unless to_stop, once it has reached. */
static void replay(const struct sweep *w, enum agent_strategy k, uint64_t seed, bool early, bool to_stop,
		   size_t cap, struct run *r)
{
	const struct agent_ops *ops = agent_ops_for(k);
	struct agent_obs *obs = xcalloc(cap + 1, sizeof(*obs));
	struct rt_rand noise;
	rt_rand_seed(&noise, seed * 7919 + 17);
	bool trace = getenv("BENCH_TRACE") && *getenv("BENCH_TRACE") && strcmp(getenv("BENCH_TRACE"), "0");
	size_t n = 0;
	long best_at = -1;
	double best_v = -INFINITY;
	*r = (struct run){ 0 };
	while (n < cap && (to_stop || !r->reached)) {
		struct agent_search q = { .sp = &w->sp, .valid = w->valid, .n_valid = w->n_valid, .obs = obs, .n_obs = n,
					  .seed = seed, .min_gain = 0.02, .no_early_stop = !early };
		struct agent_pick pk;
		memset(&pk, 0, sizeof(pk));
		double t0 = cpu_now();
		int rc = ops->search(&q, &pk);
		double dt = cpu_now() - t0;
		r->cpu += dt;
		r->cpu_max = fmax(r->cpu_max, dt);
		if (rc != 1) {
			r->stopped = n;
			break;
		}
		long at = find_valid(w, pk.code);
		double v = measure(w, at, pk.fidelity, &noise);
		obs[n++] = (struct agent_obs){ pk.code, v, pk.fidelity };
		if (trace)
			fprintf(stderr, "trace %s seed %llu evaluation %zu: %.4f of the best (0: infeasible): %s | %s\n",
				agent_strategy_name(k), (unsigned long long)seed, n,
				at < 0 || isnan(w->median[at]) ? 0
				: w->best < 0			  ? w->best / w->median[at]
								  : w->median[at] / w->best,
				pk.reason, pk.state);
		r->cost += pk.fidelity;
		if (pk.fidelity >= 1 && !r->reached && within(w, at))
			r->reached = n;
		if (pk.fidelity >= 1 && !isnan(v) && v > best_v) {
			best_v = v;
			best_at = at;
		}
	}
	r->n = n;
	r->kept_ok = within(w, best_at);
	free(obs);
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return v[(size_t)ceil(p * (double)n) - 1];
}

/* The strategies replayed: every space strategy of the ops table, random
 * first (the yardstick); BENCH_STRATS (comma-separated names) keeps fewer. */
static enum agent_strategy ks[16];
static size_t n_ks;

static void pick_strategies(void)
{
	const char *only = getenv("BENCH_STRATS");
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; agent_strategy_names[k] && n_ks < RT_ARRAY_SIZE(ks); k++) {
			const char *name = agent_strategy_names[k];
			bool random = !strcmp(name, "random");
			if (!agent_searches_space((enum agent_strategy)k) || random != (pass == 0))
				continue;
			if (only && !random && !strstr(only, name))
				continue;
			ks[n_ks++] = (enum agent_strategy)k;
		}
}

static bool named(enum agent_strategy k, const char *name)
{
	return !strcmp(agent_strategy_name(k), name);
}

/* One space's summary line, printed again after every space. */
struct summary {
	char line[800]; /* "space: best strategy, ratio, share, met" */
};

/* The most evaluations one replay may take: every valid point, at most a
 * fifth of the space when that is more than 200, at most BENCH_CAP (default
 * 1000). A run that has not reached by then counts as never. */
static size_t run_cap(const struct sweep *w)
{
	size_t cap = w->n_valid / 5 > 200 ? w->n_valid / 5 : 200;
	const char *e = getenv("BENCH_CAP");
	size_t most = e && strtoul(e, NULL, 10) ? strtoul(e, NULL, 10) : 1000;
	cap = cap < most ? cap : most;
	return cap < w->n_valid ? cap : w->n_valid;
}

/* The cap of the replay left to the strategy's own stop: the run's cap, or
 * BENCH_STOP_CAP (at most every valid point) to see where a stop that comes
 * late would come. */
static size_t stop_cap(const struct sweep *w, size_t cap)
{
	const char *e = getenv("BENCH_STOP_CAP");
	size_t c = e && strtoul(e, NULL, 10) ? strtoul(e, NULL, 10) : cap;
	return c < w->n_valid ? c : w->n_valid;
}

/* One strategy over every seed: to within 2% (no early stop), then left to
 * its own stop; prints its line and returns its median (never: the cap). */
static double bench_strategy(const struct sweep *w, enum agent_strategy k, size_t seeds, size_t cap, double rand_med,
			     size_t *tenth_ok)
{
	double *ev = xcalloc(seeds, sizeof(double)), *co = xcalloc(seeds, sizeof(double));
	double *stop_at = xcalloc(seeds, sizeof(double));
	size_t ok = 0, nstop = 0, stop_ok = 0, kept = 0, props = 0;
	double cpu = 0, cpu_max = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*tenth_ok = 0;
	/* BENCH_SEED0: seeds after this one (a figure checked on fresh seeds) */
	uint64_t s0 = getenv("BENCH_SEED0") ? strtoull(getenv("BENCH_SEED0"), NULL, 10) : 0;
	for (uint64_t seed = 1; seed <= seeds; seed++) {
		struct run r;
		replay(w, k, seed + s0, false, false, cap, &r);
		ev[seed - 1] = r.reached ? (double)r.reached : (double)cap;
		co[seed - 1] = r.reached ? r.cost : (double)cap;
		ok += r.reached > 0;
		*tenth_ok += r.reached > 0 && (double)r.reached <= 0.1 * (double)w->n_valid;
		cpu += r.cpu;
		cpu_max = fmax(cpu_max, r.cpu_max);
		props += r.n + (r.n < cap);
		/* left to its own stop (a live campaign cannot tell it has reached);
		 * BENCH_OWN_STOP=0 leaves it out */
		if (getenv("BENCH_OWN_STOP") && !strcmp(getenv("BENCH_OWN_STOP"), "0"))
			continue;
		replay(w, k, seed + s0, true, true, stop_cap(w, cap), &r);
		stop_at[seed - 1] = r.stopped ? (double)r.stopped : (double)stop_cap(w, cap);
		nstop += r.stopped > 0;
		stop_ok += r.reached > 0;
		kept += r.kept_ok;
		cpu += r.cpu;
		cpu_max = fmax(cpu_max, r.cpu_max);
		props += r.n + (r.n < cap);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double med = pct(ev, seeds, 0.5);
	printf("search %-10s to within 2%%: median %5.0f  p90 %5.0f  (cost %6.1f / %6.1f)  never %2zu/%zu  "
	       "%5.2f of random's  %5.1f%% of the space  within 10%% of the space %2zu/%zu  "
	       "cpu/proposal %.1f ms (max %.0f ms)\n",
	       agent_strategy_name(k), med, pct(ev, seeds, 0.9), pct(co, seeds, 0.5), pct(co, seeds, 0.9), seeds - ok,
	       seeds, rand_med > 0 ? med / rand_med : 1.0, 100 * med / (double)w->n_valid, *tenth_ok, seeds,
	       1e3 * cpu / (double)(props ? props : 1), 1e3 * cpu_max);
	if (getenv("BENCH_OWN_STOP") && !strcmp(getenv("BENCH_OWN_STOP"), "0"))
		printf("search %-10s   own stop: not run (BENCH_OWN_STOP=0)\n", agent_strategy_name(k));
	else
		printf("search %-10s   own stop: median %5.0f  p90 %5.0f  stopped %2zu/%zu before the cap %zu, reached 2%% "
	       "%2zu/%zu, keeps a point within 2%% %2zu/%zu  [%.1f s]\n",
	       agent_strategy_name(k), pct(stop_at, seeds, 0.5), pct(stop_at, seeds, 0.9), nstop, seeds, stop_cap(w, cap), stop_ok,
	       seeds, kept, seeds, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	fflush(stdout);
	free(ev);
	free(co);
	free(stop_at);
	return med;
}

/* The figures of one space; returns 0 when the targets held. */
static int bench_space(const struct sweep *w, size_t seeds, struct summary *sum)
{
	double med[RT_ARRAY_SIZE(ks)] = { 0 };
	size_t tenth[RT_ARRAY_SIZE(ks)] = { 0 }, cap = run_cap(w);
	printf("space: %s: %zu valid points, best %.5g, %zu within 2%%; %zu seeds, each run capped at %zu "
	       "evaluations\n",
	       w->name, w->n_valid, w->best * (w->minimize ? -1 : 1), w->n_near, seeds, cap);
	fflush(stdout);
	for (size_t s = 0; s < n_ks; s++)
		med[s] = bench_strategy(w, ks[s], seeds, cap, s ? med[0] : 0, &tenth[s]);
	/* the best single strategy (auto aside), and the best of model and auto */
	size_t b = 0, ia = n_ks; /* n_ks: no auto in this build */
	for (size_t s = 0; s < n_ks; s++) {
		if (named(ks[s], "auto"))
			ia = s;
		else if (med[s] < med[b])
			b = s;
	}
	size_t best_tenth = 0;
	for (size_t s = 0; s < n_ks; s++)
		if ((named(ks[s], "model") || named(ks[s], "auto")) && tenth[s] > best_tenth)
			best_tenth = tenth[s];
	bool ninety = 10 * best_tenth >= 9 * seeds, close = ia == n_ks || med[ia] <= 1.5 * med[b];
	char autos[120];
	if (ia < n_ks)
		snprintf(autos, sizeof(autos), "auto's median %.0f = %.2fx the best single (target <= 1.5x: %s)", med[ia],
			 med[ia] / med[b], close ? "met" : "NOT met");
	else
		snprintf(autos, sizeof(autos), "auto not run (BENCH_STRATS)");
	snprintf(sum->line, sizeof(sum->line),
		 "search best on %s: %s, median %.0f evaluations = %.2f of random's %.0f, %.1f%% of the space; "
		 "best of model and auto within 10%% of the space on %zu/%zu seeds (target >= 90%%: %s); %s",
		 w->name, agent_strategy_name(ks[b]), med[b], med[b] / med[0], med[0], 100 * med[b] / (double)w->n_valid,
		 best_tenth, seeds, ninety ? "met" : "NOT met", autos);
	printf("%s\n", sum->line);
	fflush(stdout);
	return ninety && close ? 0 : 1;
}

/* The synthetic spaces (tests/perf/search_synth.h), written under $TMPDIR. */
static char *synth_file(const char *name, void (*gen)(FILE *))
{
	const char *tmp = getenv("TMPDIR");
	char *path = xasprintf("%s/bench_search_%s_%ld.jsonl", tmp ? tmp : "/tmp", name, (long)getpid());
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		free(path);
		return NULL;
	}
	gen(f);
	fclose(f);
	return path;
}

int main(int argc, char **argv)
{
	glob_t g;
	memset(&g, 0, sizeof(g));
	const char *src = getenv("RATCHET_SRC");
	char *pat = xasprintf("%s/experiments/search-*/sweep.jsonl", src ? src : ".");
	char *raw = xasprintf("%s/experiments/search-*/results-*/sweep.jsonl", src ? src : ".");
	if (argc < 2) {
		glob(pat, 0, NULL, &g);
		glob(raw, GLOB_APPEND, NULL, &g);
	}
	free(pat);
	free(raw);
	/* BENCH_SEEDS: fewer (or more) seeds while iterating, on every space */
	size_t seeds = getenv("BENCH_SEEDS") ? strtoul(getenv("BENCH_SEEDS"), NULL, 10) : 0;
	/* BENCH_ONLY: replay only the spaces whose file name contains it */
	const char *only = getenv("BENCH_ONLY");
	char *extra = getenv("RATCHET_SWEEPS") ? xstrdup(getenv("RATCHET_SWEEPS")) : NULL;
	size_t n = argc > 1 ? (size_t)argc - 1 : g.gl_pathc;
	char **files = xcalloc(n + 67, sizeof(*files));
	char *synth[2] = { NULL, NULL };
	for (size_t i = 0; i < n; i++)
		files[i] = argc > 1 ? argv[i + 1] : g.gl_pathv[i];
	for (char *tok = extra ? strtok(extra, " ") : NULL; tok && n < 64; tok = strtok(NULL, " "))
		files[n++] = tok;
	if (argc < 2 && (synth[0] = synth_file("needle", synth_needle)))
		files[n++] = synth[0];
	if (argc < 2 && (synth[1] = synth_file("large", synth_large)))
		files[n++] = synth[1];
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (!only || strstr(files[i], only))
			files[kept++] = files[i];
	n = kept;
	if (!n) {
		fprintf(stderr, "bench_search: no sweep files (experiments/search-*/sweep.jsonl under $RATCHET_SRC)\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pick_strategies();
	int fails = 0;
	struct summary *sum = xcalloc(n + 1, sizeof(*sum));
	for (size_t i = 0; i < n; i++) {
		struct sweep w;
		memset(&w, 0, sizeof(w));
		if (load_sweep(&w, files[i])) {
			fprintf(stderr, "bench_search: %s: cannot replay\n", files[i]);
			snprintf(sum[i].line, sizeof(sum[i].line), "search %s: cannot replay", files[i]);
			fails++;
		} else {
			fails += bench_space(&w, seeds ? seeds : w.n_valid > LARGE_SPACE ? SEEDS_LARGE : SEEDS, &sum[i]);
		}
		sweep_release(&w);
	}
	if (seeds)
		printf("== search summary (%zu seeds)\n", seeds);
	else
		printf("== search summary (%d seeds; %d on spaces of more than %d valid points)\n", SEEDS, SEEDS_LARGE,
		       LARGE_SPACE);
	for (size_t i = 0; i < n; i++)
		printf("%s\n", sum[i].line);
	for (size_t i = 0; i < 2; i++)
		if (synth[i])
			unlink(synth[i]);
	free(synth[0]);
	free(synth[1]);
	free(sum);
	globfree(&g);
	free(extra);
	free(files);
	return fails ? 1 : 0;
}
