/*
 * strategy: llm, the parts that need neither the spec nor the store: the
 * prompt (built only from what the campaign gathered, in its order, so the
 * same store asks the same question), the follow-up that carries an
 * answer's error, the answer's envelope ({"variant": ..., "rationale": ...})
 * and the files a variant names; what an answer may touch is
 * agents/llm_allow.c. The variant itself is read by the
 * spec's own parser in runner/campaign/llm.c, as a spec entry would be.
 */
#include "agents/agent.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A journal's reason or change is cut here: the prompt stays small. */
#define STEP_TEXT_MAX 400

/* The exact answer schema (JSON Schema), the kinds filled in. */
static json_t *answer_schema(const struct rt_strv *kinds)
{
	json_t *kl = json_array();
	for (size_t i = 0; i < kinds->n; i++)
		json_array_append_new(kl, json_string(kinds->v[i]));
	json_t *variant = json_pack("{s:s, s:[s], s:s, s:o}", "type", "object", "required", "name",
				    "description",
				    "one entry of the spec's variants: list: name, optional description, and "
				    "exactly one of the keys in kinds",
				    "kinds", kl);
	return json_pack("{s:s, s:b, s:[s,s], s:{s:o, s:{s:s}}}", "type", "object", "additionalProperties", 0,
			 "required", "variant", "rationale", "properties", "variant", variant, "rationale", "type",
			 "string");
}

const char *const agent_llm_format_names[] = { "none", "json_object", "json_schema", NULL };

/* The OpenAI chat completions API's response_format, as vLLM's
 * OpenAI-compatible server reads it (vllm/entrypoints/openai/protocol.py,
 * ResponseFormat: type "text" | "json_object" | "json_schema", and
 * json_schema: {name, description, schema, strict}; v0.14.0), and
 * llama.cpp's llama-server and SGLang accept the same two types. */
json_t *agent_llm_response_format(enum agent_llm_format f, const struct rt_strv *kinds)
{
	if (f == AGENT_LLM_FMT_JSON_OBJECT)
		return json_pack("{s:s}", "type", "json_object");
	if (f == AGENT_LLM_FMT_JSON_SCHEMA)
		return json_pack("{s:s, s:{s:s, s:o}}", "type", "json_schema", "json_schema", "name",
				 "ratchet_change", "schema", answer_schema(kinds));
	return NULL;
}

static const char system_text[] =
	"You tune an inference engine through ratchet. Each answer proposes exactly one change; ratchet "
	"measures it against the current best configuration (interleaved A/B runs and a statistical "
	"decision) and keeps it only when the objective improves and the accuracy gate passes.\n"
	"Answer with one JSON object and nothing else, valid against this JSON Schema:\n%s\n"
	"The variant is written as an entry of the spec's variants: list (the examples show it): "
	"table: {file, set: {KEY: {FIELD: VALUE}}} sets fields of one table entry; flag: [--option, "
	"value] adds or replaces an engine flag; env: {NAME: value} sets environment variables; "
	"patch: {file, dir} applies a unified diff; file: {target, source} swaps a file. "
	"Propose only the kinds, files, options and variables you are allowed, never a build or any "
	"other command, and never a change the journal already measured.";

static void add_clip(struct rt_sb *sb, const char *s)
{
	size_t n = strlen(s);
	if (n <= STEP_TEXT_MAX) {
		rt_sb_adds(sb, s);
		return;
	}
	rt_sb_add(sb, s, STEP_TEXT_MAX);
	rt_sb_addf(sb, "... (%zu more bytes)", n - STEP_TEXT_MAX);
}

static void add_list(struct rt_sb *sb, const char *title, const struct rt_strv *v)
{
	rt_sb_addf(sb, "%s: ", title);
	for (size_t i = 0; i < v->n; i++)
		rt_sb_addf(sb, "%s%s", i ? ", " : "", v->v[i]);
	rt_sb_adds(sb, v->n ? "\n" : "(none)\n");
}

static void add_json(struct rt_sb *sb, const json_t *j)
{
	char *t = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
	rt_sb_adds(sb, t ? t : "null");
	rt_sb_addc(sb, '\n');
	free(t);
}

static void add_journal(struct rt_sb *sb, const struct agent_llm_view *v)
{
	rt_sb_adds(sb, "\nJournal (every iteration so far, in order):\n");
	if (!v->n_journal)
		rt_sb_adds(sb, "(empty)\n");
	for (size_t i = 0; i < v->n_journal; i++) {
		const struct agent_llm_step *s = &v->journal[i];
		rt_sb_addf(sb, "%d. %s (%s): %s", s->seq, s->variant, s->kind, s->state);
		if (isfinite(s->effect))
			rt_sb_addf(sb, ", effect %+.2f%%", s->effect * 100);
		if (s->reason && *s->reason) {
			rt_sb_adds(sb, "; reason: ");
			add_clip(sb, s->reason);
		}
		if (s->change && *s->change) {
			rt_sb_adds(sb, "; change: ");
			add_clip(sb, s->change);
		}
		rt_sb_addc(sb, '\n');
	}
}

json_t *agent_llm_messages(const struct agent_llm_view *v)
{
	json_t *schema = answer_schema(v->kinds);
	char *st = json_dumps(schema, JSON_COMPACT);
	json_decref(schema);
	struct rt_sb sys = RT_SB_INIT, user = RT_SB_INIT;
	rt_sb_addf(&sys, system_text, st);
	free(st);
	rt_sb_addf(&user, "Objective: %s\n", v->objective);
	add_list(&user, "Kinds you may propose", v->kinds);
	add_list(&user, "Files you may touch (globs, relative to the workdir)", v->files);
	if (v->flags)
		add_list(&user, "Options you may set", v->flags);
	if (v->env)
		add_list(&user, "Environment variables you may set", v->env);
	add_journal(&user, v);
	rt_sb_adds(&user, "\nTop findings (best first; the bound is the most the change could gain):\n");
	if (!v->n_findings)
		rt_sb_adds(&user, "(none: no profile imported)\n");
	for (size_t i = 0; i < v->n_findings; i++)
		rt_sb_addf(&user, "%zu. %s\n", i + 1, v->findings[i]);
	if (v->space) {
		rt_sb_adds(&user, "\nSearch space declared by the spec:\n");
		add_json(&user, v->space);
	}
	if (v->examples && json_array_size(v->examples)) {
		rt_sb_adds(&user, "\nThe spec's variants (examples of the schema):\n");
		add_json(&user, v->examples);
	}
	rt_sb_adds(&user, "\nPropose the next change.");
	json_t *m = json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", sys.buf, "role", "user",
			      "content", user.buf);
	rt_sb_release(&sys);
	rt_sb_release(&user);
	return m;
}

void agent_llm_reask(json_t *messages, const char *answer, const char *error)
{
	char *follow = xasprintf("That answer was refused: %s\nAnswer again with one JSON object that follows "
				 "the schema and fixes this.", error);
	json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "assistant", "content", answer ? answer : ""));
	json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", follow));
	free(follow);
}

/* The answer without white space around it and without a ```json fence. */
static char *unfence(const char *text)
{
	const char *b = text, *e = text + strlen(text);
	while (b < e && strchr(" \t\r\n", *b))
		b++;
	while (e > b && strchr(" \t\r\n", e[-1]))
		e--;
	if (e - b >= 6 && !strncmp(b, "```", 3) && !strncmp(e - 3, "```", 3)) {
		const char *nl = memchr(b, '\n', (size_t)(e - b));
		if (nl && nl < e - 3) {
			b = nl + 1;
			e -= 3;
		}
	}
	return xasprintf("%.*s", (int)(e - b), b);
}

int agent_llm_answer(const char *text, json_t **variant, char **rationale, struct rt_sb *err)
{
	*variant = NULL;
	*rationale = NULL;
	if (!text || !*text)
		return rt_errf(err, RT_EPARSE, "the answer is empty");
	char *t = unfence(text);
	json_error_t je;
	json_t *a = json_loads(t, JSON_REJECT_DUPLICATES, &je);
	free(t);
	if (!a)
		return rt_errf(err, RT_EPARSE, "the answer is not JSON: %s (line %d, column %d)", je.text, je.line,
			       je.column);
	int rc = 0;
	const char *k;
	json_t *val;
	if (!json_is_object(a))
		rc = rt_errf(err, RT_EPARSE, "the answer is not a JSON object");
	json_object_foreach(json_is_object(a) ? a : NULL, k, val)
	{
		if (!rc && strcmp(k, "variant") && strcmp(k, "rationale"))
			rc = rt_errf(err, RT_EPARSE, "unexpected key '%s': the answer holds variant and rationale only%s",
				     k, !strcmp(k, "variants") ? " (name exactly one change)" : "");
	}
	json_t *v = rc ? NULL : json_object_get(a, "variant");
	json_t *r = rc ? NULL : json_object_get(a, "rationale");
	if (!rc && !json_is_object(v))
		rc = rt_errf(err, RT_EPARSE, "variant: expected one object (a variants: entry), got %s",
			     v ? "another type" : "nothing");
	if (!rc && (!json_is_string(r) || !json_string_length(r)))
		rc = rt_errf(err, RT_EPARSE, "rationale: expected a non-empty string");
	if (!rc) {
		*variant = json_incref(v);
		*rationale = xstrdup(json_string_value(r));
	}
	json_decref(a);
	return rc;
}

size_t agent_llm_files(const struct var_def *v, const char *out[4])
{
	size_t n = 0;
	switch (v->kind) {
	case VAR_KIND_TABLE:
		out[n++] = v->table.file;
		break;
	case VAR_KIND_PATCH:
		out[n++] = v->patch.file;
		if (v->patch.dir)
			out[n++] = v->patch.dir;
		break;
	case VAR_KIND_FILE:
		out[n++] = v->file.target;
		if (v->file.source)
			out[n++] = v->file.source;
		break;
	case VAR_KIND_FLAG:
	case VAR_KIND_ENV:
		break;
	}
	return n;
}

const char *agent_llm_relpath(const char *path, const char *workdir)
{
	size_t n = workdir ? strlen(workdir) : 0;
	if (n && !strncmp(path, workdir, n) && path[n] == '/' && path[n + 1])
		return path + n + 1;
	return path;
}
