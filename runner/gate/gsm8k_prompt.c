/*
 * Prompts for the three GSM8K formats, laid out as lm-evaluation-harness
 * lays them out (doc_to_text, a space as target delimiter, shots joined by
 * a blank line), so a model scores here what it scores there.
 *
 * Shots for `gsm8k`: the first n problems of train.jsonl (lm-eval samples
 * them at random with a fixed seed; the first n are just as fixed and need
 * no generator to reproduce). `gsm8k_cot` and `chat` use the 8 exemplars.
 */
#include "runner/gate/gsm8k.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const stops_gsm8k[] = { "Question:", "</s>", "<|im_end|>", NULL };
static const char *const stops_cot[] = { "Q:", "</s>", "<|im_end|>", NULL };

const char *const *gsm8k_stops(enum spec_gsm8k_format fmt)
{
	return fmt == SPEC_GSM8K ? stops_gsm8k : stops_cot;
}

static const char *const format_names[] = {
	[SPEC_GSM8K] = "gsm8k", [SPEC_GSM8K_COT] = "gsm8k_cot", [SPEC_GSM8K_CHAT] = "chat",
};

const char *gsm8k_format_name(enum spec_gsm8k_format fmt)
{
	return (size_t)fmt < RT_ARRAY_SIZE(format_names) ? format_names[fmt] : "?";
}

int gsm8k_format_parse(const char *s, enum spec_gsm8k_format *out)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(format_names); i++)
		if (!strcmp(s, format_names[i])) {
			*out = (enum spec_gsm8k_format)i;
			return 0;
		}
	return RT_EINVAL;
}

static void add_message(json_t *arr, const char *role, const char *content)
{
	json_t *m = json_object();
	json_object_set_new(m, "role", json_string(role));
	json_object_set_new(m, "content", json_string(content));
	json_array_append_new(arr, m);
}

static char *dump(json_t *arr)
{
	char *s = json_dumps(arr, JSON_COMPACT);
	char *r = xstrdup(s);
	free(s);
	json_decref(arr);
	return r;
}

char *gsm8k_prompt(enum spec_gsm8k_format fmt, enum spec_load_api api, const struct gsm8k_set *train,
		   int nshot, const char *question)
{
	if (fmt == SPEC_GSM8K_CHAT) {
		const struct gsm8k_set *ex = gsm8k_cot_exemplars();
		json_t *arr = json_array();
		for (size_t i = 0; i < ex->n; i++) {
			char *u = xasprintf("Q: %s\nA:", ex->v[i].question);
			add_message(arr, "user", u);
			add_message(arr, "assistant", ex->v[i].answer);
			free(u);
		}
		char *u = xasprintf("Q: %s\nA:", question);
		add_message(arr, "user", u);
		free(u);
		return dump(arr);
	}
	struct rt_sb sb = RT_SB_INIT;
	if (fmt == SPEC_GSM8K) {
		for (int i = 0; train && i < nshot && (size_t)i < train->n; i++)
			rt_sb_addf(&sb, "Question: %s\nAnswer: %s\n\n", train->v[i].question,
				   train->v[i].answer);
		rt_sb_addf(&sb, "Question: %s\nAnswer:", question);
	} else {
		const struct gsm8k_set *ex = gsm8k_cot_exemplars();
		for (size_t i = 0; i < ex->n; i++)
			rt_sb_addf(&sb, "Q: %s\nA: %s\n\n", ex->v[i].question, ex->v[i].answer);
		rt_sb_addf(&sb, "Q: %s\nA:", question);
	}
	char *text = rt_sb_detach(&sb, NULL);
	if (api != SPEC_API_CHAT)
		return text;
	json_t *arr = json_array();
	add_message(arr, "user", text);
	free(text);
	return dump(arr);
}
