/*
 * One gate run from start to verdict: dataset and subset, prompts, the
 * requests, scoring each answer as it arrives, the early-stop test, the
 * paired comparison with the baseline run, the decision, and the rows in
 * gate_runs / gate_answers. See gate.h for the rules.
 */
#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"
#include "runner/stats/stats_binom.h"
#include "db/gate.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void run_gate_defaults(struct spec_gate *g)
{
	memset(g, 0, sizeof(*g));
	g->present = true;
	g->min_accuracy = 0;
	g->max_drop = 0.01;
	g->alpha = 0.05;
	g->max_failed = 0.02;
	g->format = SPEC_GSM8K;
	g->extract = SPEC_EXTRACT_FLEXIBLE;
	g->api = SPEC_API_COMPLETIONS;
	g->concurrency = 32;
	g->num_fewshot = 5;
	g->max_tokens = 256;
	g->request_timeout_s = 300;
}

void run_gate_opts_init(struct run_gate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_retries = 4;
	o->backoff_s = 0.2;
}

void run_gate_result_release(struct run_gate_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_samples; i++) {
		struct run_gate_sample *m = &r->samples[i];
		free(m->question);
		free(m->answer);
		free(m->prompt);
		free(m->response);
		free(m->strict);
		free(m->flex);
	}
	free(r->samples);
	free(r->flips_to_wrong);
	free(r->flips_to_right);
	free(r->verdict);
	memset(r, 0, sizeof(*r));
}

/* What the baseline said about one question. */
struct base_ans {
	bool present;   /* the baseline answered it (not failed) */
	bool correct;   /* by this run's deciding extraction */
	char *norm;     /* normalised deciding extraction */
	char *response; /* the baseline's stored response, if any */
	char response_sha256[65]; /* of the baseline's response, "" when none */
};

/* One question of this run. */
struct slot {
	size_t idx;              /* dataset index */
	char *prompt;            /* as sent: the text, or the messages JSON (chat) */
	char prompt_sha256[65];  /* of the prompt */
	char *strict, *flex;     /* extractions */
	int c_strict, c_flex;    /* 0/1 */
	bool scored;             /* answered, not failed */
	bool flip;               /* differs from the baseline in correctness */
};

/* Everything the scoring callback needs. */
struct run_state {
	const struct spec_gate *cfg;
	const struct run_gate_opts *opts;
	const struct gsm8k_set *test;
	struct slot *slots;
	struct run_gate_req *reqs;
	struct base_ans *base;   /* per slot, or NULL */
	size_t n;                /* planned */
	int nshot;               /* shots per prompt */
	int done, failed, scored, correct, c_strict, c_flex;
	/* paired counts so far and what the rest could add */
	long n11, n10, n01, n00, ident, pairs;
	long ident_resp;         /* paired answers whose response sha256 is the baseline's */
	long rest_base_right, rest_base_wrong; /* unanswered slots with a baseline answer */
	double z;
	int64_t t0;
	bool early;              /* stopped early */
	bool too_many_failed;
	char *early_reason;
	char *first_error;       /* the first failed request's error (owned), NULL when none failed */
};

static bool deciding_correct(const struct spec_gate *cfg, int c_strict, int c_flex)
{
	return cfg->extract == SPEC_EXTRACT_STRICT ? c_strict : c_flex;
}

/* Could the rest of the answers still make the run pass? If not, say why. */
static char *cannot_pass(struct run_state *s)
{
	const struct spec_gate *cfg = s->cfg;
	long rest = (long)s->n - s->done;
	long kb = s->correct + rest, nb = s->scored + rest;
	if (cfg->min_accuracy > 0 && nb > 0) {
		double best;
		if (cfg->use_wilson_lower) {
			double hi;
			rt_wilson(kb, nb, s->z, &best, &hi);
		} else {
			best = (double)kb / (double)nb;
		}
		if (best < cfg->min_accuracy)
			return xasprintf("even if every remaining answer is right, %s is %.4f < %.4f",
					 cfg->use_wilson_lower ? "the Wilson lower bound" : "accuracy",
					 best, cfg->min_accuracy);
	}
	if (!s->base)
		return NULL;
	/* Best case: every remaining paired question right. */
	long n11 = s->n11 + s->rest_base_right, n10 = s->n10 + s->rest_base_wrong;
	long n01 = s->n01, n00 = s->n00;
	long np = n11 + n10 + n01 + n00;
	if (np > 0) {
		double diff = (double)(n10 - n01) / (double)np;
		if (-diff > cfg->max_drop + 1e-12)
			return xasprintf("even if every remaining answer is right, the drop is %.4f > %.4f",
					 -diff, cfg->max_drop);
		if (n01 > n10 && rt_mcnemar_midp(n01, n10) < cfg->alpha)
			return xasprintf("even if every remaining answer is right, the drop is "
					 "significant (McNemar mid-p %.4g < %g)",
					 rt_mcnemar_midp(n01, n10), cfg->alpha);
	}
	long rp = s->rest_base_right + s->rest_base_wrong;
	if (cfg->min_identical > 0 && s->pairs + rp > 0) {
		double best = (double)(s->ident + rp) / (double)(s->pairs + rp);
		if (best < cfg->min_identical)
			return xasprintf("even if every remaining answer is identical, the identical "
					 "rate is %.4f < %.4f", best, cfg->min_identical);
	}
	return NULL;
}

static bool on_done(void *arg, size_t i, struct run_gate_req *r)
{
	struct run_state *s = arg;
	struct slot *sl = &s->slots[i];
	const struct gsm8k_item *it = &s->test->v[sl->idx];
	s->done++;
	struct base_ans *b = s->base ? &s->base[i] : NULL;
	if (b && b->present) {
		if (b->correct)
			s->rest_base_right--;
		else
			s->rest_base_wrong--;
	}
	if (r->failed) {
		s->failed++;
		if (!s->first_error)
			s->first_error = xstrdup(r->error ? r->error : "no error recorded");
	} else {
		sl->scored = true;
		s->scored++;
		sl->strict = gsm8k_extract_strict(s->cfg->format, r->ans.text);
		sl->flex = gsm8k_extract_flex(r->ans.text);
		sl->c_strict = gsm8k_match(sl->strict, it->target);
		sl->c_flex = gsm8k_match(sl->flex, it->target);
		s->c_strict += sl->c_strict;
		s->c_flex += sl->c_flex;
		bool ok = deciding_correct(s->cfg, sl->c_strict, sl->c_flex);
		s->correct += ok;
		if (b && b->present) {
			s->pairs++;
			char *mine = gsm8k_normalize(s->cfg->extract == SPEC_EXTRACT_STRICT ? sl->strict
											  : sl->flex);
			s->ident += !strcmp(mine, b->norm);
			free(mine);
			char sha[65];
			rt_sha256_hex(r->ans.text ? r->ans.text : "", r->ans.text ? strlen(r->ans.text) : 0, sha);
			s->ident_resp += !strcmp(sha, b->response_sha256);
			if (ok && b->correct)
				s->n11++;
			else if (ok)
				s->n10++;
			else if (b->correct)
				s->n01++;
			else
				s->n00++;
			sl->flip = ok != b->correct;
		}
	}
	if (s->opts->progress) {
		struct run_gate_progress p = { s->done, (int)s->n, s->correct, s->failed,
					       (double)(rt_now_ns() - s->t0) / 1e9 };
		s->opts->progress(s->opts->progress_arg, &p);
	}
	/* Already stopping: answers that finished meanwhile are counted, nothing more. */
	if (s->early || s->too_many_failed)
		return false;
	/* Too many failures: no decision is possible any more. */
	if ((double)s->failed > s->cfg->max_failed * (double)s->n) {
		s->too_many_failed = true;
		return false;
	}
	if (!s->opts->no_early_stop && (size_t)s->done < s->n) {
		char *why = cannot_pass(s);
		if (why) {
			s->early = true;
			s->early_reason = why;
			return false;
		}
	}
	return true;
}

/*
 * Build a request body: the fields lm-eval's local-completions and
 * local-chat-completions send (_create_payload): the task's temperature
 * (gsm8k.yaml's 0.0, gsm8k-cot.yaml's default int 0), its `until` as stop
 * plus the EOS string when one is given, and the model seed 1234 (never the
 * subset seed: lm-eval's seed is the model's).
 */
static char *request_body(const struct spec_gate *cfg, const char *eos, const char *model,
			  const char *prompt, bool chat)
{
	json_error_t je;
	json_t *in = chat ? json_loads(prompt, 0, &je) : json_string(prompt);
	json_t *o = oai_body_new(chat ? OAI_CHAT : OAI_COMPLETIONS, model, in,
				 cfg->max_tokens > 0 ? cfg->max_tokens : 256, false);
	json_object_set_new(o, "temperature",
			    cfg->format == SPEC_GSM8K ? json_real(0) : json_integer(0));
	json_t *stop = json_array();
	bool has_eos = !eos || !*eos;
	for (const char *const *st = gsm8k_stops(cfg->format); *st; st++) {
		json_array_append_new(stop, json_string(*st));
		has_eos = has_eos || !strcmp(*st, eos);
	}
	if (!has_eos)
		json_array_append_new(stop, json_string(eos));
	json_object_set_new(o, "stop", stop);
	json_object_set_new(o, "seed", json_integer(GSM8K_REQUEST_SEED));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	char *r = xstrdup(s);
	free(s);
	return r;
}

char *run_gate_strip_credentials(const char *url)
{
	const char *sch = strstr(url, "://");
	const char *host = sch ? sch + 3 : url;
	const char *slash = strchr(host, '/');
	const char *at = strchr(host, '@');
	if (!at || (slash && at > slash))
		return xstrdup(url);
	return xasprintf("%.*s%s", (int)(host - url), url, at + 1);
}

static char *params_json(const struct spec_gate *cfg, const struct run_gate_opts *o, int nshot)
{
	json_t *p = json_object();
	json_object_set_new(p, "min_accuracy", json_real(cfg->min_accuracy));
	json_object_set_new(p, "wilson_lower", json_boolean(cfg->use_wilson_lower));
	json_object_set_new(p, "max_drop", json_real(cfg->max_drop));
	json_object_set_new(p, "alpha", json_real(cfg->alpha));
	json_object_set_new(p, "min_identical", json_real(cfg->min_identical));
	json_object_set_new(p, "max_failed", json_real(cfg->max_failed));
	json_object_set_new(p, "concurrency", json_integer(cfg->concurrency));
	json_object_set_new(p, "limit", json_integer(cfg->limit));
	json_object_set_new(p, "offset", json_integer(cfg->offset));
	json_object_set_new(p, "seed", json_integer((json_int_t)cfg->seed));
	json_object_set_new(p, "num_fewshot", json_integer(nshot));
	json_object_set_new(p, "max_tokens", json_integer(cfg->max_tokens));
	json_object_set_new(p, "request_timeout_s", json_real(cfg->request_timeout_s));
	json_object_set_new(p, "early_stop", json_boolean(!o->no_early_stop));
	json_object_set_new(p, "max_retries", json_integer(o->max_retries));
	/* What the prompts follow: lm-eval's release, task and its version. */
	json_object_set_new(p, "lm_eval", json_string(GSM8K_LMEVAL_VERSION));
	json_object_set_new(p, "task", json_string(gsm8k_task_name(cfg->format)));
	json_object_set_new(p, "task_version", json_real(GSM8K_TASK_VERSION));
	json_object_set_new(p, "fewshot_seed", json_integer(GSM8K_FEWSHOT_SEED));
	if (o->eos_string)
		json_object_set_new(p, "eos_string", json_string(o->eos_string));
	char *s = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(p);
	char *r = xstrdup(s);
	free(s);
	return r;
}

/* Load the baseline's answers into base[] (by slot). */
static int load_baseline(struct db *db, int64_t id, const struct spec_gate *cfg,
			 const struct slot *slots, size_t n, struct base_ans **out, struct rt_sb *err)
{
	struct db_gate_run br;
	int rc = db_gate_run_get(db, id, &br, err);
	if (rc)
		return rc;
	bool running = br.passed < 0 && !br.finished_at;
	db_gate_run_release(&br);
	if (running)
		return rt_errf(err, RT_ESTATE, "baseline gate run %lld has not finished", (long long)id);
	struct db_gate_answer *v;
	size_t nv;
	rc = db_gate_answers_list(db, id, &v, &nv, err);
	if (rc)
		return rc;
	struct base_ans *b = xcalloc(n ? n : 1, sizeof(*b));
	/* Both lists are in idx order: merge. */
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < nv && (size_t)v[j].idx < slots[i].idx)
			j++;
		if (j >= nv || (size_t)v[j].idx != slots[i].idx || v[j].failed)
			continue;
		const char *ex = cfg->extract == SPEC_EXTRACT_STRICT ? v[j].extracted_strict
								     : v[j].extracted_flex;
		int c = cfg->extract == SPEC_EXTRACT_STRICT ? v[j].correct_strict : v[j].correct_flex;
		if (!ex || c < 0)
			continue;
		b[i].present = true;
		b[i].correct = c == 1;
		b[i].norm = gsm8k_normalize(ex);
		b[i].response = v[j].response ? xstrdup(v[j].response) : NULL;
		memcpy(b[i].response_sha256, v[j].response_sha256, sizeof(b[i].response_sha256));
	}
	db_gate_answers_free(v, nv);
	*out = b;
	return 0;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Store the answers and the run's figures in one transaction. */
static int store(struct db *db, struct run_state *s, const struct db_gate_run *row,
		 struct rt_sb *err)
{
	int rc = db_begin(db, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < s->n && !rc; i++) {
		struct run_gate_req *r = &s->reqs[i];
		if (!r->done)
			continue; /* never asked, or cancelled by the early stop */
		struct slot *sl = &s->slots[i];
		struct db_gate_answer a = { 0 };
		a.run_id = row->id;
		a.idx = (int)sl->idx;
		memcpy(a.prompt_sha256, sl->prompt_sha256, 65);
		if (r->ans.text)
			rt_sha256_hex(r->ans.text, strlen(r->ans.text), a.response_sha256);
		bool keep = r->failed || sl->flip ||
			    (sl->scored && !deciding_correct(s->cfg, sl->c_strict, sl->c_flex));
		char *response = keep ? rt_redacted(r->ans.text) : NULL; /* may echo the key */
		a.response = response;
		a.extracted_strict = sl->strict;
		a.extracted_flex = sl->flex;
		a.target = s->test->v[sl->idx].target;
		a.correct = sl->scored ? deciding_correct(s->cfg, sl->c_strict, sl->c_flex) : -1;
		a.correct_strict = sl->scored ? sl->c_strict : -1;
		a.correct_flex = sl->scored ? sl->c_flex : -1;
		a.finish_reason = r->ans.finish_reason;
		a.prompt_tokens = r->ans.prompt_tokens;
		a.completion_tokens = r->ans.completion_tokens;
		a.failed = r->failed;
		a.error = r->error;
		a.latency_s = r->attempts ? r->latency_s : NAN;
		rc = db_gate_answer_add(db, &a, err);
		free(response);
	}
	if (!rc)
		rc = db_gate_run_finish(db, row, err);
	if (rc) {
		db_rollback(db);
		return rc;
	}
	return db_commit(db, err);
}

static void add_list(struct rt_sb *sb, const int *v, size_t n)
{
	for (size_t i = 0; i < n && i < 10; i++)
		rt_sb_addf(sb, "%s%d", i ? "," : "", v[i]);
	if (n > 10)
		rt_sb_addf(sb, ",... (%zu)", n);
}

static void result_init(struct run_gate_result *out)
{
	memset(out, 0, sizeof(*out));
	out->accuracy = out->wilson_lo = out->wilson_hi = NAN;
	out->base_accuracy = out->diff = out->diff_lo = out->diff_hi = NAN;
	out->mcnemar_p = out->identical_rate = out->acc_strict = out->acc_flex = NAN;
	out->identical_response_rate = NAN;
	out->status = RUN_GATE_ERROR;
}

/* Shots per prompt: the setting, or the task's default (gsm8k 5, gsm8k_cot 8). */
static int num_fewshot(const struct spec_gate *cfg)
{
	if (cfg->format == SPEC_GSM8K_CHAT)
		return (int)gsm8k_cot_exemplars()->n;
	if (cfg->num_fewshot >= 0)
		return cfg->num_fewshot;
	return cfg->format == SPEC_GSM8K ? 5 : (int)gsm8k_cot_exemplars()->n;
}

/* lm-eval's shots for the n questions asked (gsm8k), or NULL: *shots. */
static int draw_shots(const struct spec_gate *cfg, int nshot, size_t n, struct gsm8k_set *train,
		      size_t **shots, struct rt_sb *err)
{
	*shots = NULL;
	if (cfg->format != SPEC_GSM8K || nshot <= 0)
		return 0;
	int rc = gsm8k_find("train", cfg->dataset, train, err);
	return rc ? rc : gsm8k_fewshot_draws(train->n, nshot, n, shots, err);
}

/* The questions, their prompts and request bodies: s->slots and s->reqs. */
static int prepare(struct run_state *s, const struct gsm8k_set *test, const char *model,
		   struct rt_sb *err)
{
	const struct spec_gate *cfg = s->cfg;
	s->nshot = num_fewshot(cfg);
	if (cfg->format == SPEC_GSM8K_COT && (size_t)s->nshot > gsm8k_cot_exemplars()->n)
		return rt_errf(err, RT_EUSAGE, "gate: gsm8k_cot has %zu exemplars, %d shots asked",
			       gsm8k_cot_exemplars()->n, s->nshot);
	size_t *idx = NULL, n = 0, *shots = NULL;
	struct gsm8k_set train = { 0 };
	int rc = gsm8k_select(test->n, cfg->offset, cfg->limit, cfg->seed, &idx, &n, err);
	if (!rc)
		rc = draw_shots(cfg, s->nshot, n, &train, &shots, err);
	if (rc) {
		free(idx);
		gsm8k_set_release(&train);
		return rc;
	}
	s->n = n;
	s->slots = xcalloc(n, sizeof(*s->slots));
	s->reqs = xcalloc(n, sizeof(*s->reqs));
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = &s->slots[i];
		sl->idx = idx[i];
		sl->prompt = gsm8k_prompt(cfg->format, cfg->api, &train,
					  shots ? shots + i * (size_t)s->nshot : NULL, s->nshot,
					  test->v[idx[i]].question);
		rt_sha256_hex(sl->prompt, strlen(sl->prompt), sl->prompt_sha256);
		s->reqs[i].body = request_body(cfg, s->opts->eos_string, model, sl->prompt,
					       cfg->api == SPEC_API_CHAT);
		s->reqs[i].ans.prompt_tokens = s->reqs[i].ans.completion_tokens = -1;
	}
	free(idx);
	free(shots);
	gsm8k_set_release(&train);
	return 0;
}

/* The answered questions into out->samples (opts->keep_samples). */
static void keep_samples(struct run_gate_result *out, struct run_state *s)
{
	out->samples = xcalloc(s->n + 1, sizeof(*out->samples));
	for (size_t i = 0; i < s->n; i++) {
		struct slot *sl = &s->slots[i];
		if (!sl->scored)
			continue;
		const struct gsm8k_item *it = &s->test->v[sl->idx];
		struct run_gate_sample *m = &out->samples[out->n_samples++];
		m->doc_id = (int)sl->idx;
		m->question = xstrdup(it->question);
		m->answer = xstrdup(it->answer);
		m->prompt = sl->prompt;
		sl->prompt = NULL;
		m->response = xstrdup(s->reqs[i].ans.text ? s->reqs[i].ans.text : "");
		m->strict = xstrdup(sl->strict);
		m->flex = xstrdup(sl->flex);
		m->c_strict = sl->c_strict;
		m->c_flex = sl->c_flex;
	}
}

static void state_release(struct run_state *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->slots[i].prompt);
		free(s->slots[i].strict);
		free(s->slots[i].flex);
		run_gate_req_release(&s->reqs[i]);
		if (s->base) {
			free(s->base[i].norm);
			free(s->base[i].response);
		}
	}
	free(s->slots);
	free(s->reqs);
	free(s->base);
	free(s->early_reason);
	free(s->first_error);
}

/* The gate_runs row as it is created (figures come at the end). */
static void row_init(struct db_gate_run *row, const struct run_state *s, const char *base_url,
		     const char *model, int64_t iteration_id, int64_t baseline_run_id)
{
	const struct spec_gate *cfg = s->cfg;
	memset(row, 0, sizeof(*row));
	row->iteration_id = iteration_id;
	row->label = (char *)s->opts->label;
	char *endpoint = run_gate_strip_credentials(base_url);
	row->endpoint = rt_redacted(endpoint); /* ?api_key= too */
	free(endpoint);
	row->model = (char *)model;
	row->api = cfg->api == SPEC_API_CHAT ? "chat" : "completions";
	row->format = (char *)gsm8k_format_name(cfg->format);
	row->extract = cfg->extract == SPEC_EXTRACT_STRICT ? "strict" : "flexible";
	row->dataset_sha256 = (char *)s->test->sha256;
	row->n_planned = (int)s->n;
	row->baseline_run_id = baseline_run_id;
	row->params_json = params_json(cfg, s->opts, s->nshot);
	row->started_at = rt_wall_ms();
	row->passed = -1;
}

/* The baseline's answers, and how many of them are still to be paired. */
static int baseline_init(struct run_state *s, struct db *db, int64_t id, struct rt_sb *err)
{
	int rc = load_baseline(db, id, s->cfg, s->slots, s->n, &s->base, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->base[i].present)
			continue;
		if (s->base[i].correct)
			s->rest_base_right++;
		else
			s->rest_base_wrong++;
	}
	return 0;
}

/* Ask every question (until on_done stops the run). */
static int ask(struct run_state *s, const char *base_url, struct rt_sb *err)
{
	const struct spec_gate *cfg = s->cfg;
	bool chat = cfg->api == SPEC_API_CHAT;
	char *url = oai_url(base_url, chat ? OAI_CHAT : OAI_COMPLETIONS);
	struct run_gate_client cl = {
		.url = url,
		.chat = chat,
		.api_key = s->opts->api_key,
		.concurrency = cfg->concurrency > 0 ? cfg->concurrency : 32,
		.timeout_s = cfg->request_timeout_s > 0 ? cfg->request_timeout_s : 300,
		.max_retries = s->opts->max_retries,
		.backoff_s = s->opts->backoff_s,
		.on_done = on_done,
		.arg = s,
	};
	s->t0 = rt_now_ns();
	bool stopped = false;
	int rc = run_gate_client_run(&cl, s->reqs, s->n, &stopped, err);
	free(url);
	return rc;
}

/* Counts, accuracies, intervals and the paired comparison into out. */
static void figures(struct run_gate_result *out, const struct run_state *s, int64_t baseline_run_id)
{
	out->n_planned = (int)s->n;
	out->n_done = s->done;
	out->n_scored = s->scored;
	out->n_failed = s->failed;
	out->n_correct = s->correct;
	out->n_correct_strict = s->c_strict;
	out->n_correct_flex = s->c_flex;
	out->early_stop = s->early;
	if (s->scored) {
		out->accuracy = (double)s->correct / s->scored;
		out->acc_strict = (double)s->c_strict / s->scored;
		out->acc_flex = (double)s->c_flex / s->scored;
	}
	rt_wilson(s->correct, s->scored, s->z, &out->wilson_lo, &out->wilson_hi);
	out->baseline_run_id = baseline_run_id;
	if (!s->base)
		return;
	out->n_paired = (int)s->pairs;
	if (s->pairs) {
		rt_newcombe_paired(s->n11, s->n10, s->n01, s->n00, s->z, &out->diff, &out->diff_lo,
				   &out->diff_hi);
		out->base_accuracy = (double)(s->n11 + s->n01) / (double)s->pairs;
		out->mcnemar_p = rt_mcnemar_midp(s->n01, s->n10);
		out->identical_rate = (double)s->ident / (double)s->pairs;
		out->identical_response_rate = (double)s->ident_resp / (double)s->pairs;
	}
	out->flips_to_wrong = xcalloc((size_t)s->n01 + 1, sizeof(int));
	out->flips_to_right = xcalloc((size_t)s->n10 + 1, sizeof(int));
	for (size_t i = 0; i < s->n; i++) {
		if (!s->slots[i].flip)
			continue;
		if (s->base[i].correct)
			out->flips_to_wrong[out->n_flips_to_wrong++] = (int)s->slots[i].idx;
		else
			out->flips_to_right[out->n_flips_to_right++] = (int)s->slots[i].idx;
	}
}

/* No decision possible? Then why, into why. */
static bool no_decision(const struct run_state *s, int64_t baseline_run_id, struct rt_sb *why)
{
	if (s->too_many_failed || (double)s->failed > s->cfg->max_failed * (double)s->n)
		rt_sb_addf(why, "%d of %zu requests failed (more than %.1f%%); the first: %s", s->failed, s->n,
			   s->cfg->max_failed * 100, s->first_error ? s->first_error : "no error recorded");
	else if (!s->scored)
		rt_sb_adds(why, "no question was answered");
	else if (s->base && !s->pairs)
		rt_sb_addf(why, "baseline run %lld answered none of these questions",
			   (long long)baseline_run_id);
	else
		return false;
	return true;
}

/* Every bound the run did not meet, into why (empty: a pass). */
static void unmet_bounds(const struct run_gate_result *out, const struct run_state *s,
			 struct rt_sb *why)
{
	const struct spec_gate *cfg = s->cfg;
	const char *what = cfg->use_wilson_lower ? "Wilson lower bound" : "accuracy";
	double acc_for_bound = cfg->use_wilson_lower ? out->wilson_lo : out->accuracy;
	if (s->early)
		rt_sb_addf(why, "stopped early after %d of %zu: %s", s->done, s->n, s->early_reason);
	if (cfg->min_accuracy > 0 && !(acc_for_bound >= cfg->min_accuracy))
		rt_sb_addf(why, "%s%s %.4f < %.4f", why->len ? "; " : "", what, acc_for_bound,
			   cfg->min_accuracy);
	if (!s->base)
		return;
	if (-out->diff > cfg->max_drop + 1e-12)
		rt_sb_addf(why, "%sdrop %.4f > %.4f", why->len ? "; " : "", -out->diff, cfg->max_drop);
	if (out->diff < 0 && out->mcnemar_p < cfg->alpha)
		rt_sb_addf(why, "%sdrop significant (mid-p %.3g < %g)", why->len ? "; " : "",
			   out->mcnemar_p, cfg->alpha);
	if (cfg->min_identical > 0 && out->identical_rate < cfg->min_identical)
		rt_sb_addf(why, "%sidentical %.4f < %.4f", why->len ? "; " : "", out->identical_rate,
			   cfg->min_identical);
}

/* " (3,17)" after a flip count, when there are any. */
static void add_flips(struct rt_sb *v, const int *idx, size_t n)
{
	if (!n)
		return;
	rt_sb_adds(v, " (");
	add_list(v, idx, n);
	rt_sb_adds(v, ")");
}

/* The one-line verdict: status, figures, the comparison, the reason. */
static char *verdict_line(const struct run_gate_result *out, const struct run_state *s,
			  const char *extract, int64_t baseline_run_id, const struct rt_sb *why)
{
	struct rt_sb v = RT_SB_INIT;
	rt_sb_addf(&v, "%s: accuracy %.4f [%.4f, %.4f] (%d/%d %s",
		   out->status == RUN_GATE_PASS ? "PASS" : out->status == RUN_GATE_FAIL ? "FAIL" : "ERROR",
		   isnan(out->accuracy) ? 0.0 : out->accuracy, out->wilson_lo, out->wilson_hi, s->correct,
		   s->scored, extract);
	if (s->failed)
		rt_sb_addf(&v, ", %d failed", s->failed);
	rt_sb_adds(&v, ")");
	if (s->base && s->pairs) {
		rt_sb_addf(&v, ", vs run %lld: %+.4f [%+.4f, %+.4f] p=%.3g, flips %zu to wrong",
			   (long long)baseline_run_id, out->diff, out->diff_lo, out->diff_hi,
			   out->mcnemar_p, out->n_flips_to_wrong);
		add_flips(&v, out->flips_to_wrong, out->n_flips_to_wrong);
		rt_sb_addf(&v, " / %zu to right", out->n_flips_to_right);
		add_flips(&v, out->flips_to_right, out->n_flips_to_right);
		rt_sb_addf(&v, ", identical %.1f%% (responses %.1f%%)", out->identical_rate * 100,
			   out->identical_response_rate * 100);
	}
	if (why->len)
		rt_sb_addf(&v, ": %s", why->buf);
	else
		rt_sb_adds(&v, ": every bound met");
	return rt_sb_detach(&v, NULL);
}

/* Pass, fail or error, and the verdict. */
static void decide(struct run_gate_result *out, const struct run_state *s, const char *extract,
		   int64_t baseline_run_id)
{
	struct rt_sb why = RT_SB_INIT;
	bool error = no_decision(s, baseline_run_id, &why);
	if (!error)
		unmet_bounds(out, s, &why);
	out->status = error ? RUN_GATE_ERROR : why.len ? RUN_GATE_FAIL : RUN_GATE_PASS;
	out->passed = out->status == RUN_GATE_PASS;
	out->verdict = verdict_line(out, s, extract, baseline_run_id, &why);
	rt_sb_release(&why);
}

/* The row's figures once the run is decided. */
static void row_finish(struct db_gate_run *row, const struct run_gate_result *out,
		       const struct run_state *s)
{
	row->n_done = s->done;
	row->n_correct = s->correct;
	row->n_correct_strict = s->c_strict;
	row->n_correct_flex = s->c_flex;
	row->n_failed = s->failed;
	row->accuracy = s->scored ? out->accuracy : NAN;
	row->wilson_lo = out->wilson_lo;
	row->wilson_hi = out->wilson_hi;
	row->diff = out->diff;
	row->diff_lo = out->diff_lo;
	row->diff_hi = out->diff_hi;
	row->mcnemar_p = out->mcnemar_p;
	row->identical_rate = out->identical_rate;
	row->identical_response_rate = out->identical_response_rate;
	row->flips_to_wrong = (int)out->n_flips_to_wrong;
	row->flips_to_right = (int)out->n_flips_to_right;
	row->early_stop = s->early;
	row->passed = out->status == RUN_GATE_ERROR ? -1 : out->passed;
	row->verdict = out->verdict;
	row->finished_at = rt_wall_ms();
}

int run_gate_run(struct db *db, const struct spec_gate *cfg, const char *base_url, const char *model,
		 const char *api_key, int64_t iteration_id, int64_t baseline_run_id,
		 struct run_gate_result *out, struct rt_sb *err)
{
	struct run_gate_opts o;
	run_gate_opts_init(&o);
	o.api_key = api_key;
	return run_gate_run_opts(db, cfg, &o, base_url, model, iteration_id, baseline_run_id, out,
				 err);
}

int run_gate_run_opts(struct db *db, const struct spec_gate *cfg, const struct run_gate_opts *opts,
		      const char *base_url, const char *model, int64_t iteration_id,
		      int64_t baseline_run_id, struct run_gate_result *out, struct rt_sb *err)
{
	result_init(out);
	rt_secret_add(opts->api_key); /* a server may echo them */
	rt_secret_add_url(base_url);
	int64_t t0 = rt_now_ns();
	double cpu0 = cpu_now();
	if (cfg->format == SPEC_GSM8K_CHAT && cfg->api != SPEC_API_CHAT)
		return rt_errf(err, RT_EUSAGE, "gate: format chat needs api chat");
	struct gsm8k_set test;
	int rc = gsm8k_find("test", cfg->dataset, &test, err);
	if (rc)
		return rc;
	struct run_state s = { .cfg = cfg, .opts = opts, .test = &test };
	s.z = rt_z_two_sided(cfg->alpha);
	rc = prepare(&s, &test, model, err);
	struct db_gate_run row;
	row_init(&row, &s, base_url, model, iteration_id, baseline_run_id);
	if (!rc && baseline_run_id > 0)
		rc = baseline_init(&s, db, baseline_run_id, err);
	if (!rc)
		rc = db_gate_run_create(db, &row, &row.id, err);
	if (!rc) {
		out->run_id = row.id;
		rc = ask(&s, base_url, err);
	}
	if (!rc) {
		figures(out, &s, baseline_run_id);
		decide(out, &s, row.extract, baseline_run_id);
		row_finish(&row, out, &s);
		rc = store(db, &s, &row, err);
		if (!rc && out->status == RUN_GATE_ERROR)
			rc = rt_errf(err, RT_EHTTP, "gate: %s", out->verdict);
		out->wall_s = (double)(rt_now_ns() - t0) / 1e9;
		out->cpu_s = cpu_now() - cpu0;
		out->started_ms = row.started_at;
		out->num_fewshot = s.nshot;
		out->n_test = (int)test.n;
		if (opts->keep_samples)
			keep_samples(out, &s);
	}
	state_release(&s);
	free(row.params_json);
	free(row.endpoint);
	gsm8k_set_release(&test);
	return rc ? rc : (int)row.id;
}
