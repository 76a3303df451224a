/*
 * A load run as `vllm bench serve --save-result` writes it, so the scripts
 * that read vLLM's result files read ratchet's. The keys, their order and
 * their meaning follow vllm/benchmarks/serve.py of vLLM's main branch at
 * commit 009e6d4a1cd6 (calculate_metrics, benchmark, main_async,
 * compute_result_filename):
 *   - statistics are over the requests that succeeded, in milliseconds; std
 *     is numpy's (divides by n); percentiles are numpy's linear ones; a
 *     metric without samples is 0, as np.mean(x or 0) makes it;
 *   - the per-request lists (input_lens, output_lens, ttfts, itls,
 *     start_times, generated_texts, errors) only with --save-detailed, while
 *     latencies and queue_times are always there, as vLLM keeps them;
 *   - client_queue_time (vLLM's semaphore wait: ratchet's send lag) and
 *     e2el_including_client_queue are reported only when named in
 *     --percentile-metrics and a concurrency cap is set (the latter also
 *     needs a finite rate), as in vLLM.
 * ratchet's own measurements go alongside under their own names. ratchet
 * keeps no generated text: generated_texts holds empty strings.
 */
#include "runner/load/load.h"
#include "runner/stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every percentile metric vLLM accepts, in the order it reports them, and
 * ratchet's extras: spec.h's lists, which the format's reader shares. */
#define NAME(m) m,
static const char *const vllm_metrics[] = { SPEC_VLLM_METRICS(NAME) };
static const char *const extras[] = { SPEC_VLLM_EXTRAS(NAME) };
#undef NAME

/* Whether name is in the comma-separated list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !memcmp(p, name, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

int run_load_vllm_check_metrics(const char *list, struct rt_sb *err)
{
	char *dup = xstrdup(list), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		bool known = false;
		for (size_t i = 0; i < RT_ARRAY_SIZE(vllm_metrics); i++)
			known |= !strcmp(tok, vllm_metrics[i]);
		const char *dym = known ? NULL : rt_did_you_mean(tok, vllm_metrics,
								 RT_ARRAY_SIZE(vllm_metrics));
		if (!known)
			rc = rt_errf(err, RT_EUSAGE,
				     "--percentile-metrics: unknown metric '%s'%s%s%s (ttft, tpot, itl, e2el, "
				     "client_queue_time, e2el_including_client_queue)",
				     tok, dym ? " (did you mean '" : "", dym ? dym : "", dym ? "'?)" : "");
	}
	free(dup);
	return rc;
}

/* A double as Python's str() prints it (shortest round trip; "inf",
 * "10.0", "2.5", "1e-05", "1e+16"): vLLM puts such strings into its file
 * names and its percentile keys. */
static void py_float(double v, char *out, size_t n)
{
	if (isinf(v) || isnan(v)) {
		snprintf(out, n, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
		return;
	}
	char e[40];
	for (int p = 0; p < 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p, v);
		if (strtod(e, NULL) == v)
			break;
	}
	/* e is "-D.DDDDe+XX": digits without the point, and the exponent */
	char digits[24];
	size_t nd = 0;
	const char *q = e + (e[0] == '-');
	for (; *q && *q != 'e'; q++)
		if (*q != '.')
			digits[nd++] = *q;
	digits[nd] = 0;
	int exp = atoi(q + 1);
	const char *sign = v < 0 ? "-" : "", *zeros = "0000000000000000";
	if (exp < -4 || exp >= 16) /* scientific, at least two exponent digits */
		snprintf(out, n, "%s%c%s%.*se%c%02d", sign, digits[0], nd > 1 ? "." : "",
			 (int)(nd - 1), digits + 1, exp < 0 ? '-' : '+', abs(exp));
	else if (exp < 0) /* 0.000ddd: at most 3 zeros after the point */
		snprintf(out, n, "%s0.%.*s%s", sign, -exp - 1, zeros, digits);
	else if ((size_t)exp + 1 >= nd) /* a whole number: ddd000.0 */
		snprintf(out, n, "%s%s%.*s.0", sign, digits, (int)((size_t)exp + 1 - nd), zeros);
	else
		snprintf(out, n, "%s%.*s.%s", sign, exp + 1, digits, digits + exp + 1);
}

/* vLLM's percentile key word: "99" for 99.0, "99.9" otherwise. */
static void p_word(double p, char *out, size_t n)
{
	if (p == floor(p) && fabs(p) < 1e15)
		snprintf(out, n, "%lld", (long long)p);
	else
		py_float(p, out, n);
}

/* mean/median/std/pP of x (seconds, n of them; sorted here) as
 * {stat}_{name}_ms keys. */
static void put_stats(json_t *o, const char *name, double *x, size_t n, const double *pcts,
		      size_t np)
{
	char key[128], pw[64];
	double mean = 0, med = 0, sd = 0;
	if (n) {
		qsort(x, n, sizeof(*x), rt_cmp_double);
		mean = run_stats_mean(x, n);
		med = run_stats_quantile_sorted(x, n, 0.5);
		sd = n > 1 ? run_stats_stddev(x, n) * sqrt((double)(n - 1) / (double)n) : 0;
	}
	snprintf(key, sizeof(key), "mean_%s_ms", name);
	json_object_set_new(o, key, json_real(mean * 1e3));
	snprintf(key, sizeof(key), "median_%s_ms", name);
	json_object_set_new(o, key, json_real(med * 1e3));
	snprintf(key, sizeof(key), "std_%s_ms", name);
	json_object_set_new(o, key, json_real(sd * 1e3));
	for (size_t i = 0; i < np; i++) {
		p_word(pcts[i], pw, sizeof(pw));
		snprintf(key, sizeof(key), "p%s_%s_ms", pw, name);
		double v = n ? run_stats_quantile_sorted(x, n, pcts[i] / 100) : 0;
		json_object_set_new(o, key, json_real(v * 1e3));
	}
}

/* The measured requests (warm-up excluded), in order. */
static const struct run_load_req *measured(const struct run_load_result *r, size_t *n)
{
	size_t first = 0;
	while (first < r->n_reqs && r->reqs[first].warmup)
		first++;
	*n = r->n_reqs - first;
	return r->reqs + first;
}

/* Client-side queueing of one request: its send lag (vLLM: start_time -
 * arrival, the wait for the concurrency semaphore). */
static double queue_s(const struct run_load_req *q)
{
	return q->sent_ns >= 0 ? (double)(q->sent_ns - q->intended_ns) / 1e9 : 0;
}

/* Gaps of request q (seconds) in r->itl. */
static size_t gaps_of(const struct run_load_req *q)
{
	return q->n_chunks > 0 ? (size_t)q->n_chunks - 1 : 0;
}

/* vLLM's max_output_tokens_per_s: content chunks per one-second bucket from
 * the first send, the fullest bucket. */
static double peak_tokens_per_s(const struct run_load_result *r)
{
	size_t n;
	const struct run_load_req *q = measured(r, &n);
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	for (size_t i = 0; i < n; i++)
		if (q[i].ok) {
			t0 = q[i].sent_ns < t0 ? q[i].sent_ns : t0;
			t1 = q[i].done_ns > t1 ? q[i].done_ns : t1;
		}
	if (t0 == INT64_MAX)
		return 0;
	size_t nb = (size_t)ceil((double)(t1 - t0) / 1e9) + 1;
	double *b = xcalloc(nb, sizeof(*b)), best = 0;
	for (size_t i = 0; i < n; i++) {
		if (!q[i].ok || q[i].n_chunks < 1)
			continue;
		double t = (double)(q[i].first_ns - t0) / 1e9;
		for (size_t k = 0;; k++) {
			if (t >= 0 && (size_t)t < nb)
				b[(size_t)t] += 1;
			if (k == gaps_of(&q[i]))
				break;
			t += r->itl[q[i].itl_off + k];
		}
	}
	for (size_t k = 0; k < nb; k++)
		best = b[k] > best ? b[k] : best;
	free(b);
	return best;
}

/* One end of a request's [send, done) interval for the concurrency sweep. */
struct edge {
	int64_t t;  /* ns */
	int delta;  /* +1 send, -1 done */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta; /* a departure before an arrival at the same time */
}

/* vLLM's max_concurrent_requests: most successful requests in flight at once. */
static long peak_concurrency(const struct run_load_result *r)
{
	size_t n, k = 0;
	const struct run_load_req *q = measured(r, &n);
	struct edge *e = xcalloc(2 * n + 1, sizeof(*e));
	for (size_t i = 0; i < n; i++)
		if (q[i].ok) {
			e[k++] = (struct edge){ q[i].sent_ns, 1 };
			e[k++] = (struct edge){ q[i].done_ns, -1 };
		}
	qsort(e, k, sizeof(*e), cmp_edge);
	long cur = 0, best = 0;
	for (size_t i = 0; i < k; i++) {
		cur += e[i].delta;
		best = cur > best ? cur : best;
	}
	free(e);
	return best;
}

/* The run's settings, first in vLLM's file. */
static void put_setup(json_t *o, const struct run_load_vllm_run *v)
{
	json_object_set_new(o, "date", json_string(v->date));
	json_object_set_new(o, "endpoint_type", json_string(v->backend));
	json_object_set_new(o, "backend", json_string(v->backend));
	json_object_set_new(o, "label", v->label ? json_string(v->label) : json_null());
	json_object_set_new(o, "model_id", json_string(v->model_id));
	json_object_set_new(o, "tokenizer_id", json_null()); /* no tokenizer: the server counts */
	json_object_set_new(o, "num_prompts", json_integer(v->num_prompts));
	for (size_t i = 0; i < v->n_metadata; i++) {
		const char *eq = strchr(v->metadata[i], '=');
		if (!eq)
			continue; /* the command refuses these before the run */
		char *k = xstrndup(v->metadata[i], (size_t)(eq - v->metadata[i]));
		json_object_set_new(o, k, json_string(eq + 1));
		free(k);
	}
	json_object_set_new(o, "request_rate", isinf(v->request_rate) ? json_string("inf")
								      : json_real(v->request_rate));
	json_object_set_new(o, "burstiness", json_real(v->burstiness));
	json_object_set_new(o, "max_concurrency",
			    v->max_concurrency > 0 ? json_integer(v->max_concurrency) : json_null());
}

/* The per-request lists; detailed adds the ones vLLM drops without --save-detailed. */
static void put_lists(json_t *o, const struct run_load_result *r, bool detailed)
{
	size_t n;
	const struct run_load_req *q = measured(r, &n);
	json_t *in = json_array(), *out = json_array(), *ttft = json_array(), *itls = json_array(),
	       *lat = json_array(), *start = json_array(), *queue = json_array(),
	       *texts = json_array(), *errs = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(in, json_integer(q[i].prompt_tokens > 0 ? q[i].prompt_tokens : 0));
		json_array_append_new(out, json_integer(q[i].ok ? q[i].output_tokens : 0));
		json_array_append_new(ttft, json_real(isnan(q[i].ttft_s) ? 0 : q[i].ttft_s));
		json_t *g = json_array();
		for (size_t k = 0; k < gaps_of(&q[i]); k++)
			json_array_append_new(g, json_real(r->itl[q[i].itl_off + k]));
		json_array_append_new(itls, g);
		json_array_append_new(lat, json_real(q[i].ok ? q[i].e2el_s : 0));
		json_array_append_new(start, json_real((double)(r->t0_abs_ns + q[i].sent_ns) / 1e9));
		json_array_append_new(queue, json_real(queue_s(&q[i])));
		json_array_append_new(texts, json_string(""));
		json_array_append_new(errs, json_string(q[i].ok ? "" : q[i].error ? q[i].error : ""));
	}
	json_t *all[] = { in, out, ttft, itls, lat, start, queue, texts, errs };
	static const char *const names[] = { "input_lens", "output_lens", "ttfts", "itls",
					     "latencies", "start_times", "queue_times",
					     "generated_texts", "errors" };
	for (size_t k = 0; k < RT_ARRAY_SIZE(all); k++) {
		bool always = !strcmp(names[k], "latencies") || !strcmp(names[k], "queue_times");
		if (detailed || always)
			json_object_set_new(o, names[k], all[k]);
		else
			json_decref(all[k]);
	}
}

/* Samples of a vLLM metric in seconds (caller frees), or NULL when the
 * metric is not reported in this run. */
static double *metric_samples(const struct run_load_result *r, const struct run_load_vllm_run *v,
			      const char *m, size_t *n)
{
	bool queue = !strcmp(m, "client_queue_time");
	bool incl = !strcmp(m, "e2el_including_client_queue");
	*n = 0;
	if (!queue && !incl)
		return run_load_values(r, m, n);
	if (v->max_concurrency <= 0 || (incl && isinf(v->request_rate)))
		return NULL;
	size_t nq;
	const struct run_load_req *q = measured(r, &nq);
	double *x = xcalloc(nq + 1, sizeof(*x));
	for (size_t i = 0; i < nq; i++)
		if (q[i].ok)
			x[(*n)++] = queue_s(&q[i]) + (incl ? q[i].e2el_s : 0);
	return x;
}

json_t *run_load_vllm_result(const struct run_load_result *r, const struct run_load_vllm_run *v)
{
	static const double p99[] = { 99 };
	const double *pcts = v->percentiles ? v->percentiles : p99;
	size_t np = v->percentiles ? v->n_percentiles : 1;
	const char *sel = v->percentile_metrics ? v->percentile_metrics : "ttft,tpot,itl";
	const char *names[RUN_LOAD_MAX_METRICS], *units[RUN_LOAD_MAX_METRICS];
	double m[RUN_LOAD_MAX_METRICS];
	run_load_metrics(r, NULL, names, m, units, RUN_LOAD_MAX_METRICS);
	json_t *o = json_object();
	put_setup(o, v);
	json_object_set_new(o, "duration", json_real(r->duration_s));
	json_object_set_new(o, "completed", json_integer(r->completed));
	json_object_set_new(o, "failed", json_integer(r->failed));
	json_object_set_new(o, "total_input_tokens", json_integer(r->prompt_tokens_total));
	json_object_set_new(o, "total_output_tokens", json_integer(r->output_tokens_total));
	json_object_set_new(o, "request_throughput", json_real(m[SPEC_LM_REQUEST_THROUGHPUT]));
	json_object_set_new(o, "request_goodput",
			    v->goodput ? json_real(m[SPEC_LM_GOODPUT]) : json_null());
	json_object_set_new(o, "output_throughput", json_real(m[SPEC_LM_OUTPUT_THROUGHPUT]));
	json_object_set_new(o, "total_token_throughput",
			    json_real(m[SPEC_LM_TOTAL_TOKEN_THROUGHPUT]));
	put_lists(o, r, v->detailed);
	json_object_set_new(o, "max_output_tokens_per_s", json_real(peak_tokens_per_s(r)));
	json_object_set_new(o, "max_concurrent_requests", json_integer(peak_concurrency(r)));
	json_object_set_new(o, "rtfx", json_real(0));
	for (size_t k = 0; k < RT_ARRAY_SIZE(vllm_metrics); k++) {
		size_t n;
		double *x = listed(sel, vllm_metrics[k]) ? metric_samples(r, v, vllm_metrics[k], &n)
							 : NULL;
		if (x)
			put_stats(o, vllm_metrics[k], x, n, pcts, np);
		free(x);
	}
	/* ratchet's extras */
	for (size_t k = 0; k < RT_ARRAY_SIZE(extras); k++) {
		size_t n;
		double *x = run_load_values(r, extras[k], &n);
		put_stats(o, extras[k], x, n, pcts, np);
		free(x);
	}
	double mi = run_load_mean_input(r), mo = run_load_mean_output(r);
	json_object_set_new(o, "mean_input_tokens", isnan(mi) ? json_null() : json_real(mi));
	json_object_set_new(o, "mean_output_tokens", isnan(mo) ? json_null() : json_real(mo));
	return o;
}

char *run_load_vllm_filename(const struct run_load_vllm_run *v)
{
	char rate[64], conc[40] = "";
	py_float(v->request_rate, rate, sizeof(rate));
	if (v->max_concurrency > 0)
		snprintf(conc, sizeof(conc), "-concurrency%ld", v->max_concurrency);
	const char *slash = strrchr(v->model_id, '/');
	return xasprintf("%s-%sqps%s-%s-%s.json", v->label ? v->label : v->backend, rate, conc,
			 slash ? slash + 1 : v->model_id, v->date);
}
