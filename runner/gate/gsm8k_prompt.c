/*
 * Prompts for the three GSM8K formats, byte for byte as
 * lm-evaluation-harness v0.4.12 builds them (task.py fewshot_context and
 * build_qa_turn: doc_to_text, a space as target delimiter, "\n\n" after
 * each shot), so a model scores here what it scores there.
 *
 * Shots for `gsm8k`: lm-eval's default sampler, Python's
 * random.Random(1234).sample(train, n) once per question in order
 * (gate_pyrandom.c reproduces the generator). `gsm8k_cot` and `chat` use
 * the first n of the 8 built-in exemplars (the first_n sampler).
 */
#include "runner/gate/gsm8k.h"
#include "runner/gate/gate_pyrandom.h"

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

const char *gsm8k_task_name(enum spec_gsm8k_format fmt)
{
	return fmt == SPEC_GSM8K ? "gsm8k" : "gsm8k_cot";
}

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

int gsm8k_fewshot_draws(size_t n_train, int nshot, size_t n_asked, size_t **shots,
			struct rt_sb *err)
{
	*shots = NULL;
	if (nshot < 0 || (size_t)nshot > n_train)
		return rt_errf(err, RT_EUSAGE, "gsm8k: %d shots asked of %zu training problems",
			       nshot, n_train);
	size_t k = (size_t)nshot;
	*shots = xcalloc(n_asked * k + 1, sizeof(**shots));
	if (!k)
		return 0; /* lm-eval draws nothing for 0 shots */
	struct pyrand r;
	pyrand_seed(&r, GSM8K_FEWSHOT_SEED);
	for (size_t q = 0; q < n_asked; q++)
		pyrand_sample(&r, n_train, k, *shots + q * k);
	return 0;
}

/* The exemplars a cot or chat prompt uses: the first nshot (first_n). */
static size_t cot_count(int nshot)
{
	size_t n = gsm8k_cot_exemplars()->n;
	return nshot < 0 || (size_t)nshot > n ? n : (size_t)nshot;
}

char *gsm8k_prompt(enum spec_gsm8k_format fmt, enum spec_load_api api, const struct gsm8k_set *train,
		   const size_t *shots, int nshot, const char *question)
{
	const struct gsm8k_set *ex = gsm8k_cot_exemplars();
	if (fmt == SPEC_GSM8K_CHAT) {
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
		for (int i = 0; train && shots && i < nshot; i++) {
			const struct gsm8k_item *it = &train->v[shots[i]];
			rt_sb_addf(&sb, "Question: %s\nAnswer: %s\n\n", it->question, it->answer);
		}
		rt_sb_addf(&sb, "Question: %s\nAnswer:", question);
	} else {
		for (size_t i = 0; i < cot_count(nshot); i++)
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
