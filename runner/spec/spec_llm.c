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
 * The key's value is never part of the spec: only the variable's name.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

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
	  .help = "files (globs) it may touch; default: those the spec's variants or space use" },
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
	check_kinds(ld, v, path, &l->kinds);
}

/* strategy: llm needs llm:, and llm: is only for strategy: llm. */
void spec_llm_post(struct spec_ld *ld, yaml_node_t *root)
{
	struct spec *s = ld->s;
	bool llm = s->strategy == AGENT_STRAT_LLM;
	if (llm && !s->llm.present) {
		yaml_node_t *sn = spec_map_get(ld, root, "strategy");
		spec_lerr(ld, sn ? sn : root, "strategy",
			  "strategy 'llm' asks a chat model: declare llm: with its endpoint and model");
	} else if (!llm && s->llm.present) {
		spec_lerr(ld, spec_map_get(ld, root, "llm"), "llm", "llm settings with strategy '%s' (set strategy: llm)",
			  agent_strategy_name(s->strategy));
	}
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
	memset(l, 0, sizeof(*l));
}
