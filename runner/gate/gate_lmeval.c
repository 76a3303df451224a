/*
 * The files lm-evaluation-harness v0.4.12 writes, from a gate run, so that
 * scripts and dashboards that read lm-eval's output read ratchet's:
 *   - samples_<task>_<date>.jsonl (loggers/evaluation_tracker.py
 *     save_results_samples, the example dict of evaluator.py evaluate());
 *   - the results JSON (evaluator_utils.py _to_eval_results, evaluator.py
 *     simple_evaluate's "config", and the tracker's general config).
 * Key order and separators are Python's json.dumps (", " and ": ",
 * ensure_ascii=False); the hashes are lm-eval's hash_string (sha256 of the
 * UTF-8 text). Only answered questions appear (lm-eval has no failed
 * requests); the figures are over them, as ratchet's accuracy is.
 */
#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One of the task's two filters, as its results and samples name it. */
struct filter {
	const char *name; /* "strict-match" or "flexible-extract" */
	bool strict;      /* which extraction */
};
static const struct filter filters[] = { { "strict-match", true }, { "flexible-extract", false } };

/* lm-eval's hash_string. */
static void hash_string(const char *s, char out[65])
{
	rt_sha256_hex(s, strlen(s), out);
}

/* json.dumps(o, ensure_ascii=False) (indent 0: one line) or with indent=2. */
static char *dumps(json_t *o, int indent)
{
	char *s = json_dumps(o, indent ? JSON_INDENT(indent) : 0);
	char *r = xstrdup(s);
	free(s);
	return r;
}

void run_gate_lmeval_init(struct run_gate_lmeval *l, const struct spec_gate *cfg,
			  const struct run_gate_opts *opts, const char *model, const char *endpoint,
			  const struct run_gate_result *r)
{
	memset(l, 0, sizeof(*l));
	l->cfg = cfg;
	l->opts = opts;
	l->model = model;
	l->endpoint = endpoint;
	/* datetime.now().isoformat().replace(":", "-"): local time, microseconds unless 0 */
	time_t sec = (time_t)(r->started_ms / 1000);
	long usec = (long)(r->started_ms % 1000) * 1000;
	struct tm tm;
	localtime_r(&sec, &tm);
	size_t n = strftime(l->date_id, sizeof(l->date_id), "%Y-%m-%dT%H-%M-%S", &tm);
	if (usec)
		snprintf(l->date_id + n, sizeof(l->date_id) - n, ".%06ld", usec);
}

/* The task's target for a test problem (doc_to_target): gsm8k the whole
 * answer; gsm8k_cot answer.split('####')[-1].strip(). */
static char *target_of(enum spec_gsm8k_format fmt, const char *answer)
{
	if (fmt == SPEC_GSM8K)
		return xstrdup(answer);
	const char *p = answer, *q;
	while ((q = strstr(p, "####")))
		p = q + 4;
	const char *e = p + strlen(p);
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	while (e > p && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r')))
		e--;
	return xstrndup(p, (size_t)(e - p));
}

/* The task's generation_kwargs, as its YAML lists them. */
static json_t *gen_kwargs(enum spec_gsm8k_format fmt)
{
	json_t *g = json_object();
	json_t *until = json_array();
	for (const char *const *st = gsm8k_stops(fmt); *st; st++)
		json_array_append_new(until, json_string(*st));
	json_object_set_new(g, "until", until);
	json_object_set_new(g, "do_sample", json_false());
	if (fmt == SPEC_GSM8K)
		json_object_set_new(g, "temperature", json_real(0));
	return g;
}

/* arg_0 as lm-eval holds it: the text, or for chat json.dumps(messages). */
static char *argument_text(const struct run_gate_lmeval *l, const char *prompt)
{
	if (l->cfg->api != SPEC_API_CHAT)
		return xstrdup(prompt);
	json_error_t je;
	json_t *m = json_loads(prompt, 0, &je);
	char *s = m ? dumps(m, 0) : xstrdup(prompt);
	json_decref(m);
	return s;
}

/* One samples line (a JSON object) for question m under filter f. */
static json_t *sample_line(const struct run_gate_lmeval *l, const struct run_gate_sample *m,
			   const struct filter *f, struct rt_sb *hashes)
{
	enum spec_gsm8k_format fmt = l->cfg->format;
	json_t *doc = json_object();
	json_object_set_new(doc, "question", json_string(m->question));
	json_object_set_new(doc, "answer", json_string(m->answer));
	char *target = target_of(fmt, m->answer);
	char *arg0 = argument_text(l, m->prompt);
	char *docjs = dumps(doc, 2);
	char doc_hash[65], prompt_hash[65], target_hash[65];
	hash_string(docjs, doc_hash);
	hash_string(arg0, prompt_hash);
	hash_string(target, target_hash);
	rt_sb_addf(hashes, "%s%s%s", doc_hash, prompt_hash, target_hash);
	json_t *o = json_object();
	json_object_set_new(o, "doc_id", json_integer(m->doc_id));
	json_object_set_new(o, "doc", doc);
	json_object_set_new(o, "target", json_string(target));
	json_t *args = json_object(), *g0 = json_object();
	json_object_set_new(g0, "arg_0", json_string(arg0));
	json_object_set_new(g0, "arg_1", gen_kwargs(fmt));
	json_object_set_new(args, "gen_args_0", g0);
	json_object_set_new(o, "arguments", args);
	json_t *resps = json_array(), *r0 = json_array();
	json_array_append_new(r0, json_string(m->response));
	json_array_append_new(resps, r0);
	json_object_set_new(o, "resps", resps);
	json_t *filtered = json_array();
	json_array_append_new(filtered, json_string(f->strict ? m->strict : m->flex));
	json_object_set_new(o, "filtered_resps", filtered);
	json_object_set_new(o, "filter", json_string(f->name));
	json_t *metrics = json_array();
	json_array_append_new(metrics, json_string("exact_match"));
	json_object_set_new(o, "metrics", metrics);
	json_object_set_new(o, "doc_hash", json_string(doc_hash));
	json_object_set_new(o, "prompt_hash", json_string(prompt_hash));
	json_object_set_new(o, "target_hash", json_string(target_hash));
	json_object_set_new(o, "exact_match", json_real((f->strict ? m->c_strict : m->c_flex) ? 1 : 0));
	free(docjs);
	free(arg0);
	free(target);
	return o;
}

/* Write text to path (atomically), making its folder. */
static int write_text(const char *path, const struct rt_sb *text, struct rt_sb *err)
{
	const char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		char *dir = xstrndup(path, (size_t)(slash - path));
		int rc = rt_mkdirs(dir, err);
		free(dir);
		if (rc)
			return rc;
	}
	return rt_write_file_atomic(path, text->buf, text->len, 0644, err);
}

int run_gate_write_samples(const struct run_gate_lmeval *l, const struct run_gate_result *r,
			   const char *dir, char **task_hash, struct rt_sb *err)
{
	struct rt_sb text = RT_SB_INIT, hashes = RT_SB_INIT;
	for (size_t f = 0; f < RT_ARRAY_SIZE(filters); f++)
		for (size_t i = 0; i < r->n_samples; i++) {
			json_t *o = sample_line(l, &r->samples[i], &filters[f], &hashes);
			char *line = dumps(o, 0);
			json_decref(o);
			rt_sb_adds(&text, line);
			rt_sb_addc(&text, '\n');
			free(line);
		}
	char *path = xasprintf("%s/samples_%s_%s.jsonl", dir, gsm8k_task_name(l->cfg->format),
			       l->date_id);
	int rc = write_text(path, &text, err);
	if (!rc && task_hash) {
		*task_hash = xcalloc(65, 1);
		hash_string(hashes.buf, *task_hash);
	}
	free(path);
	rt_sb_release(&text);
	rt_sb_release(&hashes);
	return rc;
}

/* mean_stderr of 0/1 items: sample standard deviation / sqrt(n); "N/A" for n < 2. */
static json_t *stderr_of(double p, int n)
{
	if (n < 2 || isnan(p))
		return json_string("N/A");
	return json_real(sqrt(p * (1 - p) * n / (n - 1)) / sqrt(n));
}

/* results["results"][task]. */
static json_t *task_results(const char *task, const struct run_gate_result *r)
{
	json_t *t = json_object();
	json_object_set_new(t, "name", json_string(task));
	json_object_set_new(t, "alias", json_string(task));
	json_object_set_new(t, "sample_len", json_integer(r->n_scored));
	double acc[2] = { r->acc_strict, r->acc_flex };
	for (size_t f = 0; f < RT_ARRAY_SIZE(filters); f++) {
		char *k = xasprintf("exact_match,%s", filters[f].name);
		char *ks = xasprintf("exact_match_stderr,%s", filters[f].name);
		json_object_set_new(t, k, isnan(acc[f]) ? json_null() : json_real(acc[f]));
		json_object_set_new(t, ks, stderr_of(acc[f], r->n_scored));
		free(k);
		free(ks);
	}
	return t;
}

/* results["configs"][task]: the task's YAML, as dump_config() gives it. */
static json_t *task_config(const struct run_gate_lmeval *l, const char *task, int nshot)
{
	enum spec_gsm8k_format fmt = l->cfg->format;
	json_t *c = json_object();
	json_object_set_new(c, "task", json_string(task));
	json_object_set_new(c, "tag", json_pack("[s]", fmt == SPEC_GSM8K ? "math_word_problems"
									: "chain_of_thought"));
	json_object_set_new(c, "dataset_path", json_string("openai/gsm8k"));
	json_object_set_new(c, "dataset_name", json_string("main"));
	if (fmt == SPEC_GSM8K) {
		json_object_set_new(c, "training_split", json_string("train"));
		json_object_set_new(c, "fewshot_split", json_string("train"));
	}
	json_object_set_new(c, "test_split", json_string("test"));
	json_object_set_new(c, "doc_to_text", json_string(fmt == SPEC_GSM8K
							  ? "Question: {{question}}\nAnswer:"
							  : "Q: {{question}}\nA:"));
	json_object_set_new(c, "doc_to_target",
			    json_string(fmt == SPEC_GSM8K ? "{{answer}}"
					: "{{answer.split('####')[-1].strip() if answer is defined else target}}"));
	json_object_set_new(c, "description", json_string(""));
	json_object_set_new(c, "target_delimiter", json_string(" "));
	json_object_set_new(c, "fewshot_delimiter", json_string("\n\n"));
	json_object_set_new(c, "fewshot_config",
			    json_pack("{s:s}", "sampler", fmt == SPEC_GSM8K ? "default" : "first_n"));
	json_object_set_new(c, "num_fewshot", json_integer(nshot));
	json_object_set_new(c, "metric_list",
			    json_pack("[{s:s,s:s,s:b,s:b,s:b,s:[s,s,s,s]}]", "metric", "exact_match",
				      "aggregation", "mean", "higher_is_better", 1, "ignore_case", 1,
				      "ignore_punctuation", 0, "regexes_to_ignore", ",", "\\$",
				      "(?s).*#### ", "\\.$"));
	json_object_set_new(c, "output_type", json_string("generate_until"));
	json_object_set_new(c, "generation_kwargs", gen_kwargs(fmt));
	json_object_set_new(c, "repeats", json_integer(1));
	const char *strict_re = fmt == SPEC_GSM8K ? "#### (\\-?[0-9\\.\\,]+)"
						  : "The answer is (\\-?[0-9\\.\\,]+).";
	json_object_set_new(
		c, "filter_list",
		json_pack("[{s:s,s:[{s:s,s:s},{s:s}]},{s:s,s:[{s:s,s:i,s:s},{s:s}]}]", "name",
			  "strict-match", "filter", "function", "regex", "regex_pattern", strict_re,
			  "function", "take_first", "name", "flexible-extract", "filter", "function",
			  "regex", "group_select", -1, "regex_pattern", "(-?[$0-9.,]{2,})|(-?[0-9]+)",
			  "function", "take_first"));
	json_object_set_new(c, "should_decontaminate", json_false());
	json_object_set_new(c, "metadata", json_pack("{s:f}", "version", GSM8K_TASK_VERSION));
	return c;
}

/* {task: value}, consuming value. */
static json_t *per_task(const char *task, json_t *value)
{
	json_t *o = json_object();
	json_object_set_new(o, task, value);
	return o;
}

/* results["config"]: simple_evaluate's model and run settings. */
static json_t *run_config(const struct run_gate_lmeval *l)
{
	bool chat = l->cfg->api == SPEC_API_CHAT;
	struct rt_sb args = RT_SB_INIT;
	rt_sb_addf(&args, "model=%s,base_url=%s,num_concurrent=%d,max_retries=%d,"
		   "tokenized_requests=False", l->model ? l->model : "", l->endpoint,
		   l->cfg->concurrency, l->opts->max_retries);
	if (l->opts->eos_string)
		rt_sb_addf(&args, ",eos_string=%s", l->opts->eos_string);
	json_t *c = json_object();
	json_object_set_new(c, "model", json_string(chat ? "local-chat-completions"
							  : "local-completions"));
	json_object_set_new(c, "model_args", json_string(args.buf));
	json_object_set_new(c, "batch_size", json_integer(1));
	json_object_set_new(c, "batch_sizes", json_array());
	json_object_set_new(c, "device", json_null());
	json_object_set_new(c, "use_cache", json_null());
	json_object_set_new(c, "limit", l->cfg->limit > 0 ? json_integer(l->cfg->limit) : json_null());
	json_object_set_new(c, "bootstrap_iters", json_integer(100000));
	json_object_set_new(c, "gen_kwargs", json_null());
	json_object_set_new(c, "random_seed", json_integer(0));
	json_object_set_new(c, "numpy_seed", json_integer(1234));
	json_object_set_new(c, "torch_seed", json_integer(1234));
	json_object_set_new(c, "fewshot_seed", json_integer(GSM8K_FEWSHOT_SEED));
	rt_sb_release(&args);
	return c;
}

/* sanitize_model_name: each run of "<>:/|\?*[] becomes "__". */
static char *sanitize_model_name(const char *name)
{
	struct rt_sb sb = RT_SB_INIT;
	for (const char *p = name; *p;) {
		size_t bad = strspn(p, "\"<>:/|\\?*[]");
		if (bad) {
			rt_sb_adds(&sb, "__");
			p += bad;
		} else {
			rt_sb_addc(&sb, *p++);
		}
	}
	return rt_sb_detach(&sb, NULL);
}

/* The whole results object. */
static json_t *results_json(const struct run_gate_lmeval *l, const struct run_gate_result *r,
			    const char *task_hash)
{
	const char *task = gsm8k_task_name(l->cfg->format);
	const char *model = l->model ? l->model : "";
	json_t *o = json_object();
	json_object_set_new(o, "results", per_task(task, task_results(task, r)));
	json_object_set_new(o, "group_subtasks", per_task(task, json_array()));
	json_object_set_new(o, "configs", per_task(task, task_config(l, task, r->num_fewshot)));
	json_object_set_new(o, "versions", per_task(task, json_real(GSM8K_TASK_VERSION)));
	json_object_set_new(o, "n-shot", per_task(task, json_integer(r->num_fewshot)));
	json_object_set_new(o, "higher_is_better",
			    per_task(task, json_pack("{s:b}", "exact_match", 1)));
	json_object_set_new(o, "n-samples", per_task(task, json_pack("{s:I,s:I}", "original",
								       (json_int_t)r->n_test,
								       "effective",
								       (json_int_t)r->n_scored)));
	json_object_set_new(o, "config", run_config(l));
	json_object_set_new(o, "git_hash", json_null());
	json_object_set_new(o, "date", json_real((double)r->started_ms / 1000));
	json_object_set_new(o, "task_hashes",
			    task_hash ? per_task(task, json_string(task_hash)) : json_object());
	json_object_set_new(o, "model_source", json_string(l->cfg->api == SPEC_API_CHAT
								 ? "local-chat-completions"
								 : "local-completions"));
	json_object_set_new(o, "model_name", json_string(model));
	char *san = sanitize_model_name(model);
	json_object_set_new(o, "model_name_sanitized", json_string(san));
	free(san);
	json_object_set_new(o, "system_instruction", json_null());
	json_object_set_new(o, "system_instruction_sha", json_null());
	json_object_set_new(o, "fewshot_as_multiturn",
			    json_boolean(l->cfg->format == SPEC_GSM8K_CHAT));
	json_object_set_new(o, "chat_template", json_null());
	json_object_set_new(o, "chat_template_sha", json_null());
	char secs[32];
	snprintf(secs, sizeof(secs), "%.6f", r->wall_s);
	json_object_set_new(o, "total_evaluation_time_seconds", json_string(secs));
	json_t *own = json_object();
	json_object_set_new(own, "run_id", json_integer(r->run_id));
	json_object_set_new(own, "status", json_string(r->status == RUN_GATE_PASS   ? "pass"
						       : r->status == RUN_GATE_FAIL ? "fail"
										    : "error"));
	json_object_set_new(own, "verdict", json_string(r->verdict ? r->verdict : ""));
	json_object_set_new(own, "lm_eval_followed", json_string(GSM8K_LMEVAL_VERSION));
	json_object_set_new(own, "n_failed", json_integer(r->fig.n_failed));
	json_object_set_new(own, "early_stop", json_boolean(r->fig.early_stop));
	json_object_set_new(o, "ratchet", own);
	return o;
}

int run_gate_write_results(const struct run_gate_lmeval *l, const struct run_gate_result *r,
			   const char *path, const char *task_hash, char **written, struct rt_sb *err)
{
	size_t n = strlen(path);
	char *file;
	if (n > 5 && !strcmp(path + n - 5, ".json")) {
		file = xstrdup(path);
	} else {
		char *san = sanitize_model_name(l->model ? l->model : "");
		file = xasprintf("%s/%s/results_%s.json", path, san, l->date_id);
		free(san);
	}
	json_t *o = results_json(l, r, task_hash);
	struct rt_sb text = RT_SB_INIT;
	char *s = dumps(o, 2);
	rt_sb_adds(&text, s);
	free(s);
	json_decref(o);
	int rc = write_text(file, &text, err);
	rt_sb_release(&text);
	if (!rc && written)
		*written = file;
	else
		free(file);
	return rc;
}
