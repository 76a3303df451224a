/*
 * llm: the settings of `strategy: llm`, the tuning agent that asks a chat
 * model for one change at a time (runner/campaign/llm.c, agents/llm.c):
 *   llm:
 *     endpoint: http://127.0.0.1:8000/v1   # an OpenAI-compatible server
 *     model: Qwen/Qwen2.5-7B-Instruct
 *     api_key_env: OPENAI_API_KEY          # the variable holding the key
 *     max_calls: 20                        # chat requests over the campaign
 *     max_tokens: 200000                   # prompt + completion tokens, 0: no cap
 *     answer_tokens: 1024                  # max_tokens of each request
 *     temperature: 0
 *     timeout: 120s
 *     response_format: json_schema         # none (default), json_object
 *     kinds: [table, flag]                 # default: the kinds the spec uses
 *     files: ["tiles.json", "kernels/(glob).json"]  # default: the files the spec uses
 *     flags: [--max-num-seqs, -b]          # default: the options the spec's variants set
 *     env: [VLLM_ATTENTION_BACKEND]        # default: the variables the spec's variants set
 * The key's value is never part of the spec: only the variable's name.
 * Here too: what an answer may touch, from these lists and the spec's
 * variants and space (spec_llm_allow), and the reader of one answer
 * (spec_llm_read) that the campaign and the fuzz harness share.
 */
#include "runner/spec/spec_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt_json.h"
#include "runner/spec/spec_space.h"
#include "variants/var.h"

static const struct spec_field llm_fields[] = {
	{ "endpoint", SF_STR, SPEC_OFF(struct agent_llm_cfg, endpoint), 0, FL_REQ,
	  .help = "base URL of an OpenAI-compatible server (/v1/chat/completions is added)" },
	{ "model", SF_STR, SPEC_OFF(struct agent_llm_cfg, model), 0, FL_REQ, .help = "the model to ask" },
	{ "api_key_env", SF_STR, SPEC_OFF(struct agent_llm_cfg, api_key_env), 0, FL_OMIT0,
	  .help = "environment variable holding the API key; absent: no key" },
	{ "max_calls", SF_INT, SPEC_OFF(struct agent_llm_cfg, max_calls), 0, FL_LO, 1,
	  .help = "chat requests over the campaign" },
	{ "max_tokens", SF_U64, SPEC_OFF(struct agent_llm_cfg, max_tokens), 0, FL_OMIT0,
	  .help = "prompt + completion tokens over the campaign (from usage); 0: no cap" },
	{ "answer_tokens", SF_INT, SPEC_OFF(struct agent_llm_cfg, answer_tokens), 0, FL_LO, 1,
	  .help = "max_tokens of each request" },
	{ "temperature", SF_DBL, SPEC_OFF(struct agent_llm_cfg, temperature), 0, FL_LO | FL_HI, 0, 2,
	  .help = "sampling temperature" },
	{ "timeout", SF_DUR, SPEC_OFF(struct agent_llm_cfg, timeout_s), 0, FL_LOX, 0,
	  .help = "per request" },
	{ "response_format", SF_ENUM, SPEC_OFF(struct agent_llm_cfg, response_format), 0, FL_OMIT0,
	  .names = agent_llm_format_names,
	  .help = "none, json_object or json_schema (the answer schema): the request's response_format" },
	{ "kinds", SF_STRV, SPEC_OFF(struct agent_llm_cfg, kinds), 0, FL_OMIT0,
	  .help = "change kinds it may propose; default: those the spec's variants or space use" },
	{ "files", SF_STRV, SPEC_OFF(struct agent_llm_cfg, files), 0, FL_OMIT0,
	  .help = "files (globs, relative to the workdir, '*' within one path component) it may touch; "
		  "default: those the spec's variants or space use" },
	{ "flags", SF_STRV, SPEC_OFF(struct agent_llm_cfg, flags), 0, FL_OMIT0,
	  .help = "option names it may set (flag); default: those the spec's variants or space set; never one "
		  "that carries a program in a measured command (sh -c)" },
	{ "env", SF_STRV, SPEC_OFF(struct agent_llm_cfg, env), 0, FL_OMIT0,
	  .help = "environment variables it may set; default: those the spec's variants or space set; never "
		  "LD_*, PATH, PYTHON*, BASH_ENV and the like" },
	{ 0 }
};

/* Each of kinds: a variant kind, with a did-you-mean. */
static void check_kinds(struct spec_ld *ld, yaml_node_t *m, const char *path, const struct rt_strv *k)
{
	const char *names[VAR_KIND_FILE + 2];
	for (int i = 0; i <= VAR_KIND_FILE; i++)
		names[i] = var_kind_name((enum var_kind)i);
	names[VAR_KIND_FILE + 1] = NULL;
	yaml_node_t *kn = spec_map_get(ld, m, "kinds");
	for (size_t i = 0; i < k->n; i++) {
		char *kp = spec_path_join(path, "kinds");
		char *ip = spec_path_index(kp, i);
		yaml_node_t *it = kn ? spec_seq_item(ld, kn, i) : NULL;
		spec_name_index(ld, it ? it : m, ip, "change kind", k->v[i], names);
		free(ip);
		free(kp);
	}
}

/* An error at llm.KEY[i]. */
static void item_err(struct spec_ld *ld, yaml_node_t *m, const char *path, const char *key, size_t i,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void item_err(struct spec_ld *ld, yaml_node_t *m, const char *path, const char *key, size_t i,
		     const char *fmt, ...)
{
	char *kp = spec_path_join(path, key);
	char *ip = spec_path_index(kp, i);
	yaml_node_t *kn = spec_map_get(ld, m, key);
	yaml_node_t *it = kn ? spec_seq_item(ld, kn, i) : NULL;
	struct rt_sb msg = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&msg, fmt, ap);
	va_end(ap);
	spec_lerr(ld, it ? it : m, ip, "%s", msg.buf);
	rt_sb_release(&msg);
	free(ip);
	free(kp);
}

static void check_endpoint(struct spec_ld *ld, yaml_node_t *m, const char *path, const char *e)
{
	if (!e || !strncmp(e, "http://", 7) || !strncmp(e, "https://", 8))
		return;
	char *kp = spec_path_join(path, "endpoint");
	spec_lerr(ld, spec_map_get(ld, m, "endpoint"), kp, "expected an http:// or https:// URL, got '%s'", e);
	free(kp);
}

void spec_parse_llm(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		    const struct spec_field *f)
{
	struct agent_llm_cfg *l = &((struct spec *)base)->llm;
	(void)f;
	if (!spec_want_map(ld, v, path))
		return;
	l->present = true;
	l->max_calls = 20;
	l->answer_tokens = 1024;
	l->timeout_s = 120;
	spec_parse_fields(ld, v, path, l, llm_fields, NULL);
	check_endpoint(ld, v, path, l->endpoint);
	rt_secret_add_url(l->endpoint); /* user:PASSWORD@ and ?api_key=: redacted wherever quoted */
	check_kinds(ld, v, path, &l->kinds);
	for (size_t i = 0; i < l->env.n; i++)
		if (agent_llm_env_forbidden(l->env.v[i]))
			item_err(ld, v, path, "env", i, "'%s' changes how programs are loaded or run: the model may "
				 "never set it", l->env.v[i]);
}

/* The options that carry a program in a command line a flag changes: the
 * engine's, else each command benchmark's (runner/campaign/measure.c). */
static void measured_script_opts(const struct spec *s, struct rt_strv *out)
{
	agent_llm_script_opts(NULL, out);
	if (s->engine.present) {
		agent_llm_script_opts(s->engine.command.v, out);
		return;
	}
	for (size_t i = 0; i < s->n_benches; i++)
		if (s->benches[i].kind == SPEC_BENCH_COMMAND)
			agent_llm_script_opts(s->benches[i].cmd.command.v, out);
}

/* strategy: llm needs llm:, and llm: is only for strategy: llm. */
void spec_llm_post(struct spec_ld *ld, yaml_node_t *root)
{
	struct spec *s = ld->s;
	bool llm = agent_strategy_source(s->strategy) == AGENT_FROM_CHAT;
	if (llm && !s->llm.present) {
		yaml_node_t *sn = spec_map_get(ld, root, "strategy");
		spec_lerr(ld, sn ? sn : root, "strategy",
			  "strategy 'llm' asks a chat model: declare llm: with its endpoint and model");
	} else if (!llm && s->llm.present) {
		spec_lerr(ld, spec_map_get(ld, root, "llm"), "llm", "llm settings with strategy '%s' (set strategy: llm)",
			  agent_strategy_name(s->strategy));
	}
	/* llm.flags: options only, none that carries a program in a measured command */
	struct rt_strv script = { 0 };
	measured_script_opts(s, &script);
	yaml_node_t *ln = s->llm.present ? spec_map_get(ld, root, "llm") : NULL;
	for (size_t i = 0; ln && i < s->llm.flags.n; i++) {
		const char *f = s->llm.flags.v[i];
		if (!var_argv_is_option(f) || strchr(f, '='))
			item_err(ld, ln, "llm", "flags", i, "expected an option name (-b, --max-num-seqs), got '%s'", f);
		for (size_t k = 0; k < script.n; k++)
			if (!strcmp(script.v[k], f))
				item_err(ld, ln, "llm", "flags", i, "'%s' carries a program in a measured command: the "
					 "model may never set it", f);
	}
	rt_strv_release(&script);
}

json_t *spec_dump_llm(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	(void)f;
	return s->llm.present ? spec_fields_json(&s->llm, llm_fields) : NULL;
}

void spec_llm_release(struct agent_llm_cfg *l)
{
	free(l->endpoint);
	free(l->model);
	free(l->api_key_env);
	rt_strv_release(&l->kinds);
	rt_strv_release(&l->files);
	rt_strv_release(&l->flags);
	rt_strv_release(&l->env);
	memset(l, 0, sizeof(*l));
}

/* ---- what an answer may touch, and the reader of one answer ---- */

/* Append a copy of s unless v holds it. */
static void add_once(struct rt_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return;
	rt_strv_push(v, s);
}

/* What one of the spec's own variants touches, allowed by default. */
static void allow_def(const struct var_def *d, struct agent_llm_allow *a)
{
	add_once(&a->kinds, var_kind_name(d->kind));
	const char *f[4];
	size_t n = agent_llm_files(d, f);
	for (size_t i = 0; i < n; i++) {
		char *rel = NULL;
		if (f[i] && !rt_path_within(a->workdir, f[i], &rel, NULL))
			add_once(&a->files, rel); /* its real path: the one an answer's path resolves to */
		free(rel);
	}
	for (size_t i = 0; d->kind == VAR_KIND_FLAG && i < d->flag.n; i++) {
		if (!var_argv_is_option(d->flag.v[i]))
			continue;
		char *name = xstrndup(d->flag.v[i], strcspn(d->flag.v[i], "="));
		add_once(&a->flags, name);
		free(name);
	}
	if (d->kind == VAR_KIND_FLAG && d->flag_key.name)
		add_once(&a->flags, d->flag_key.name);
	for (size_t i = 0; d->kind == VAR_KIND_ENV && i < d->env.n; i++)
		add_once(&a->env, d->env.v[i].name);
}

/* A list of the llm: section replaces the default when given. */
static void override(struct rt_strv *list, const struct rt_strv *given)
{
	if (!given->n)
		return;
	rt_strv_release(list);
	for (size_t i = 0; i < given->n; i++)
		add_once(list, given->v[i]);
}

int spec_llm_allow(const struct spec *s, struct agent_llm_allow *a, struct rt_sb *err)
{
	memset(a, 0, sizeof(*a));
	a->workdir = s->workdir ? realpath(s->workdir, NULL) : NULL;
	if (!a->workdir)
		return rt_errf(err, RT_ENOENT, "workdir %s: %s", s->workdir ? s->workdir : "(none)", strerror(errno));
	for (size_t i = 0; i < s->n_variants; i++)
		allow_def(&s->variants[i], a);
	for (size_t t = 0; s->space && t < s->space->n_targets; t++) {
		size_t nv = 0;
		uint64_t *valid = agent_space_valid(&s->space->targets[t].space, &nv);
		json_t *vj = NULL;
		struct var_def d;
		memset(&d, 0, sizeof(d));
		if (nv && !spec_space_variant(s, t, valid[0], &vj, NULL) && !spec_variant_from_json(s, vj, &d, NULL))
			allow_def(&d, a);
		spec_variant_release(&d);
		json_decref(vj);
		free(valid);
	}
	override(&a->kinds, &s->llm.kinds);
	override(&a->files, &s->llm.files);
	override(&a->flags, &s->llm.flags);
	override(&a->env, &s->llm.env);
	measured_script_opts(s, &a->script_opts);
	return 0;
}

int spec_llm_read(const struct spec *s, const struct agent_llm_allow *a, const char *text, json_t **variant,
		  struct var_def *d, char **rationale, struct rt_sb *why)
{
	memset(d, 0, sizeof(*d));
	*variant = NULL;
	if (agent_llm_answer(text, variant, rationale, why))
		return RT_EPARSE;
	if (spec_variant_from_json(s, *variant, d, why))
		return RT_EPARSE;
	char *vt = json_dumps(*variant, JSON_COMPACT | JSON_SORT_KEYS);
	char *red = rt_redacted(vt);
	bool secret = strcmp(vt, red) != 0;
	free(vt);
	free(red);
	if (secret)
		return rt_errf(why, RT_EINVAL, "the variant quotes a secret (shown as [redacted]): an answer never "
			       "carries one");
	return agent_llm_allowed(d, a, why) ? RT_EINVAL : 0;
}
