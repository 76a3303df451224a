/*
 * What the simulated model says. When a request arrives its whole answer is
 * decided at once (the "plan"): a GSM8K worked solution when the prompt holds
 * a known question, otherwise filler words. Stop sequences cut the text,
 * max_tokens cuts the tokens, and ignore_eos pads with filler. A token is a
 * word together with the whitespace before it, so the text streamed is
 * exactly the text planned. The scheduler only decides WHEN tokens appear.
 */
#include "simserve.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "runner/base/rand.h"

/* Filler vocabulary for prompts that are not GSM8K questions. */
static const char *const vocab[] = {
	"the", "model", "token", "batch", "kernel", "tile", "cache", "graph", "step",
	"prefill", "decode", "latency", "throughput", "queue", "request", "stream", "warp",
	"block", "memory", "bandwidth", "compute", "shape", "table", "fast", "slow", "simulated",
	"engine", "server", "answer", "number", "value", "result",
};

#define NATURAL_MIN 256 /* filler length before "EOS": 256..511 words */
#define CHAT_DEFAULT_MAX 4096
#define COMPLETIONS_DEFAULT_MAX 16

static _Atomic uint64_t server_rng = RT_SPLITMIX64_GAMMA;

void ss_plan_seed(uint64_t seed)
{
	atomic_store(&server_rng, seed * RT_SPLITMIX64_GAMMA + 1);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Split text into tokens (leading whitespace + word) and append them. */
static void tokenize(const char *text, struct ss_tok **v, size_t *n, size_t *alloc, size_t max)
{
	const char *p = text;
	while (*p && *n < max) {
		const char *start = p;
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*n == *alloc) {
			*alloc = *alloc ? *alloc * 2 : 32;
			*v = xrealloc(*v, *alloc * sizeof(**v));
		}
		json_t *s = json_stringn(start, (size_t)(p - start));
		if (!s) /* not UTF-8: send a replacement word */
			s = json_string("?");
		(*v)[(*n)++].json = json_dumps(s, JSON_ENCODE_ANY);
		json_decref(s);
	}
}

/* Cut text at the earliest stop sequence; returns true if one was found. */
static bool cut_at_stop(char *text, const struct ss_ask *ask)
{
	char *cut = NULL;
	for (size_t i = 0; i < ask->n_stop; i++) {
		if (!ask->stop[i][0])
			continue;
		char *f = strstr(text, ask->stop[i]);
		if (f && (!cut || f < cut))
			cut = f;
	}
	if (cut)
		*cut = '\0';
	return cut != NULL;
}

static void filler(struct rt_sb *sb, uint64_t *rng, size_t words, bool lead_space)
{
	for (size_t i = 0; i < words; i++) {
		if (i || lead_space)
			rt_sb_addc(sb, ' ');
		rt_sb_adds(sb, vocab[rt_splitmix64(rng) % RT_ARRAY_SIZE(vocab)]);
	}
}

void ss_plan_build(const struct ss_ask *ask, struct ss_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->prompt_tokens = (long)rt_count_words(ask->prompt);
	long max = ask->max_tokens;
	if (max < 0)
		max = ask->chat ? CHAT_DEFAULT_MAX : COMPLETIONS_DEFAULT_MAX;

	uint64_t rng;
	if (ask->has_seed)
		rng = ask->seed ^ 0x5eedULL;
	else if (ask->temperature > 0)
		rng = atomic_fetch_add(&server_rng, RT_SPLITMIX64_GAMMA) * 0xbf58476d1ce4e5b9ULL;
	else
		rng = fnv1a(ask->prompt); /* greedy: same prompt, same answer */

	/* completions continue the prompt: a leading space unless it ends in one */
	size_t plen = strlen(ask->prompt);
	bool lead = !ask->chat && plen && !isspace((unsigned char)ask->prompt[plen - 1]);

	struct rt_sb text = RT_SB_INIT;
	bool known = false;
	char *ans = NULL;
	if (ss_gsm8k_loaded())
		ans = ss_gsm8k_answer(ask->chat ? ask->last_user : ask->prompt, ask->chat, &known);
	if (ans) {
		if (lead)
			rt_sb_addc(&text, ' ');
		rt_sb_adds(&text, ans);
		free(ans);
	} else {
		uint64_t r2 = rng;
		size_t natural = NATURAL_MIN + (size_t)(rt_splitmix64(&r2) % NATURAL_MIN);
		/* one word past max_tokens, so "length" can be told from "stop" */
		filler(&text, &rng, natural <= (size_t)max ? natural : (size_t)max + 1, lead);
	}
	bool stopped = cut_at_stop(text.buf, ask);
	bool truncated = (long)rt_count_words(text.buf) > max;
	size_t alloc = 0;
	tokenize(text.buf, &p->tok, &p->n_tok, &alloc, (size_t)max);
	if (!stopped && ask->ignore_eos && p->n_tok < (size_t)max) {
		rt_sb_reset(&text);
		filler(&text, &rng, (size_t)max - p->n_tok, p->n_tok > 0 || lead);
		tokenize(text.buf, &p->tok, &p->n_tok, &alloc, (size_t)max);
		truncated = true;
	}
	rt_sb_release(&text);
	/* "length" when max_tokens cut the answer short, as OpenAI reports it */
	p->finish_reason = truncated ? "length" : "stop";
}

void ss_plan_release(struct ss_plan *p)
{
	for (size_t i = 0; i < p->n_tok; i++)
		free(p->tok[i].json);
	free(p->tok);
	memset(p, 0, sizeof(*p));
}
