/*
 * GSM8K for the accuracy gate: the dataset (JSONL loading, the usual search
 * for the file, a verified download into the cache), the three prompt
 * formats, and the answer extraction and normalisation of
 * lm-evaluation-harness (strict-match and flexible-extract), so that the
 * figures compare with what users already know.
 *
 * Ownership: gsm8k_load() fills a struct gsm8k_set released with
 * gsm8k_set_release(); every string inside is owned by it.
 */
#ifndef RT_GSM8K_H
#define RT_GSM8K_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/spec/spec.h"
#include "runner/base/rt.h"

/* sha256 of the upstream files (openai/grade-school-math). */
#define GSM8K_TEST_SHA256 "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14"
#define GSM8K_TRAIN_SHA256 "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465"
/* Upstream folder; RATCHET_GSM8K_URL replaces it (a mirror, or a test server). */
#define GSM8K_UPSTREAM_URL \
	"https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data"

/* The string extraction gives when nothing matched (lm-eval's fallback). */
#define GSM8K_INVALID "[invalid]"

/* One problem. */
struct gsm8k_item {
	char *question; /* the problem text */
	char *answer;   /* worked solution ending in "#### N" (train/test); the exemplar target (cot) */
	char *target;   /* normalised reference answer, e.g. "18" */
};

/* A loaded file. */
struct gsm8k_set {
	struct gsm8k_item *v; /* items in file order */
	size_t n;             /* number of items */
	char *path;           /* where it was read from */
	char sha256[65];      /* of the file's bytes */
};

void gsm8k_set_release(struct gsm8k_set *s);

/*
 * Parse GSM8K JSONL text ({"question", "answer"} per line; blank lines are
 * skipped). name is used in errors, which read "name:line: message".
 * With cot, lines hold {"question", "target"} instead.
 */
int gsm8k_parse(const char *name, const char *text, size_t len, bool cot, struct gsm8k_set *out,
		struct rt_sb *err);
int gsm8k_load(const char *path, struct gsm8k_set *out, struct rt_sb *err);

/*
 * Find a split ("test" or "train") and load it. Search order:
 *   1. explicit (a file, or a folder holding <split>.jsonl); for train, the
 *      folder of the explicit test file comes first;
 *   2. $RATCHET_GSM8K (file or folder, same rule);
 *   3. the cache: $XDG_CACHE_HOME/ratchet/gsm8k/<split>.jsonl (default
 *      ~/.cache/ratchet/gsm8k/);
 *   4. a download from GSM8K_UPSTREAM_URL/<split>.jsonl ($RATCHET_GSM8K_URL
 *      overrides the folder), checked against the known sha256 and written
 *      to the cache atomically. RATCHET_OFFLINE=1 skips the download.
 * When every step fails, err says where to put the file.
 */
int gsm8k_find(const char *split, const char *explicit_path, struct gsm8k_set *out,
	       struct rt_sb *err);
/* The cache folder (…/ratchet/gsm8k), newly allocated. */
char *gsm8k_cache_dir(void);

/* The 8 fixed chain-of-thought exemplars (Wei et al., 2022), built in. */
const struct gsm8k_set *gsm8k_cot_exemplars(void);

/*
 * Choose question indexes: from offset, `limit` of them (0: all). With seed
 * 0 they are consecutive; otherwise a seeded shuffle (splitmix64 +
 * Fisher-Yates, the same on every machine) picks them, returned in
 * ascending order. *idx is newly allocated.
 */
int gsm8k_select(size_t total, long offset, long limit, uint64_t seed, size_t **idx, size_t *n,
		 struct rt_sb *err);

/* ---- prompts ---- */
/*
 * The lm-evaluation-harness release whose GSM8K tasks the gate follows
 * (lm_eval/tasks/gsm8k/gsm8k.yaml and gsm8k-cot.yaml, both version 3.0),
 * recorded with every run. See docs/gate.md.
 */
#define GSM8K_LMEVAL_VERSION "0.4.12"
#define GSM8K_LMEVAL_COMMIT "6d642546f4688648fced259eb3302efd36ece5af"
#define GSM8K_TASK_VERSION 3.0
/* lm-eval's default fewshot seed (--seed's fourth value) and the "seed" its
 * API models send with every request (model_args seed). */
#define GSM8K_FEWSHOT_SEED 1234
#define GSM8K_REQUEST_SEED 1234

/* The prompt of one question. For the completions API, text holds the whole
 * prompt; for chat, messages_json holds the JSON array of messages. */
struct gsm8k_prompt {
	char *text;          /* completions prompt, or NULL */
	char *messages_json; /* chat messages array, or NULL */
};
/*
 * lm-eval's few-shot draws for `gsm8k` (its default sampler): one
 * random.Random(GSM8K_FEWSHOT_SEED), seeded once per run, draws
 * sample(train, nshot) once per question in the order the questions are
 * asked (test order; for a subset, the order of lm-eval's --samples). The
 * question itself is never excluded: the shots come from train, the
 * questions from test. *shots, newly allocated, holds n_asked * nshot train
 * indexes, question k's at [k * nshot]. RT_EUSAGE when nshot > n_train.
 */
int gsm8k_fewshot_draws(size_t n_train, int nshot, size_t n_asked, size_t **shots,
			struct rt_sb *err);
/*
 * Build the prompt. format gsm8k: the train problems shots[0..nshot)
 * ("Question: q\nAnswer: a", each followed by a blank line) then
 * "Question: q\nAnswer:"; gsm8k_cot: the first nshot of the 8 exemplars
 * "Q: q\nA: t" (lm-eval's first_n sampler) then "Q: q\nA:"; chat: the 8
 * exemplars as user/assistant turns, the question as the last user turn
 * (lm-eval's --apply_chat_template --fewshot_as_multiturn; nshot unused). With api chat
 * and a text format, the text becomes one user message. shots is read for
 * gsm8k only (NULL when nshot is 0). Returns a string the caller frees
 * (text or JSON, by api).
 */
char *gsm8k_prompt(enum spec_gsm8k_format fmt, enum spec_load_api api, const struct gsm8k_set *train,
		   const size_t *shots, int nshot, const char *question);
/* Stop sequences of a format, NULL-terminated: the task's `until`. */
const char *const *gsm8k_stops(enum spec_gsm8k_format fmt);
const char *gsm8k_format_name(enum spec_gsm8k_format fmt);
/* The lm-eval task a format follows: "gsm8k", or "gsm8k_cot" (gsm8k_cot and chat). */
const char *gsm8k_task_name(enum spec_gsm8k_format fmt);
int gsm8k_format_parse(const char *s, enum spec_gsm8k_format *out);

/* ---- extraction ---- */
/*
 * lm-eval normalisation, in order: remove every ',', remove every '$',
 * remove everything up to and including the last "#### ", remove one
 * trailing '.', lowercase. Returns a new string.
 */
char *gsm8k_normalize(const char *s);
/* strict-match: first match of `#### (\-?[0-9\.\,]+)` (gsm8k) or
 * `The answer is (\-?[0-9\.\,]+).` (gsm8k_cot, chat), group 1; GSM8K_INVALID
 * when none. Returns a new string (not normalised). */
char *gsm8k_extract_strict(enum spec_gsm8k_format fmt, const char *response);
/* flexible-extract: LAST match of `(-?[$0-9.,]{2,})|(-?[0-9]+)`, its first
 * non-empty group; GSM8K_INVALID when none. Returns a new string. */
char *gsm8k_extract_flex(const char *response);
/* Is an extracted answer correct: normalised strings equal. */
bool gsm8k_match(const char *extracted, const char *target);

#endif
