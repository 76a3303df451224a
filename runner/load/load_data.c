/*
 * What the load generator sends and when: open-loop send schedules from a
 * seed (poisson, gamma with burstiness, constant), random prompts of common
 * English words (one word is one token for most tokenizers; run_load_run
 * calibrates the count against the server's usage.prompt_tokens), and JSONL
 * prompt files (ShareGPT records or {"prompt","max_tokens"} records).
 */
#include "runner/load/load.h"

#include "runner/base/rand.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Uniform in (0, 1): the +0.5 keeps 0 out (rt_rand's uniform is [0, 1)),
 * and the prompts recorded so far depend on exactly this sequence. */
static double uniform(uint64_t *st)
{
	return ((double)(rt_splitmix64(st) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t *st)
{
	double u1 = uniform(st), u2 = uniform(st);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Gamma(shape k, scale 1), Marsaglia and Tsang's method. */
static double gamma1(uint64_t *st, double k)
{
	if (k < 1.0)
		return gamma1(st, k + 1.0) * pow(uniform(st), 1.0 / k);
	double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x, v;
		do {
			x = normal(st);
			v = 1.0 + c * x;
		} while (v <= 0);
		v = v * v * v;
		double u = uniform(st);
		if (u < 1.0 - 0.0331 * x * x * x * x)
			return d * v;
		if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v;
	}
}

void run_load_schedule(enum spec_load_pattern pattern, double rate, double burstiness,
		       uint64_t seed, size_t n, int64_t *out)
{
	uint64_t st = seed * 0x2545f4914f6cdd1dULL + 17;
	double t = 0;
	double k = burstiness > 0 ? burstiness : 1.0;
	for (size_t i = 0; i < n; i++) {
		out[i] = (int64_t)llround(t * 1e9);
		double gap;
		if (rate <= 0 || isinf(rate))
			gap = 0;
		else if (pattern == SPEC_LOAD_CONSTANT)
			gap = 1.0 / rate;
		else if (pattern == SPEC_LOAD_GAMMA && k != 1.0)
			gap = gamma1(&st, k) / (rate * k); /* mean 1/rate, CV 1/sqrt(k) */
		else
			gap = -log(uniform(&st)) / rate;   /* exponential: poisson arrivals */
		t += gap;
	}
}

/* ---- random prompts ---- */
static const char *const words[] = {
	"the", "of", "and", "to", "in", "is", "it", "that", "was", "for", "on", "are", "as",
	"with", "his", "they", "at", "be", "this", "from", "have", "or", "by", "one", "had",
	"not", "but", "what", "all", "were", "when", "we", "there", "can", "an", "your", "which",
	"their", "said", "if", "do", "will", "each", "about", "how", "up", "out", "them", "then",
	"she", "many", "some", "so", "these", "would", "other", "into", "has", "more", "her",
	"two", "like", "him", "see", "time", "could", "no", "make", "than", "first", "been",
	"its", "who", "now", "people", "my", "made", "over", "did", "down", "only", "way",
	"find", "use", "may", "water", "long", "little", "very", "after", "words", "called",
	"just", "where", "most", "know", "get", "through", "back", "much", "before", "go",
	"good", "new", "write", "our", "used", "me", "man", "too", "any", "day", "same",
	"right", "look", "think", "also", "around", "another", "came", "come", "work", "three",
	"word", "must", "because", "does", "part", "even", "place", "well", "such", "here",
	"take", "why", "things", "help", "put", "years", "different", "away", "again", "off",
	"went", "old", "number", "great", "tell", "men", "say", "small", "every", "found",
	"still", "between", "name", "should", "home", "big", "give", "air", "line", "set",
	"own", "under", "read", "last", "never", "us", "left", "end", "along", "while",
	"might", "next", "sound", "below", "saw", "something", "thought", "both", "few",
	"those", "always", "show", "large", "often", "together", "asked", "house", "world",
	"going", "want", "school", "important", "until", "form", "food", "keep", "children",
	"feet", "land", "side", "without", "boy", "once", "animals", "life", "enough", "took",
	"sometimes", "four", "head", "above", "kind", "began", "almost", "live", "page", "got",
	"earth", "need", "far", "hand", "high", "year", "mother", "light", "parts", "country",
	"father", "let", "night", "following", "picture", "being", "study", "second", "eyes",
	"soon", "times", "story", "boys", "since", "white", "days", "ever", "paper", "hard",
	"near", "sentence", "better", "best", "across", "during", "today", "others", "however",
	"sure", "means", "knew", "try", "told", "young", "miles", "sun", "ways", "thing",
	"whole", "hear", "example", "heard", "several", "change", "answer", "room", "sea",
	"against", "top", "turned", "learn", "point", "city", "play", "toward", "five",
};

void run_load_dataset_random(size_t n, int nwords, int max_tokens, uint64_t seed,
			     struct run_load_dataset *out)
{
	uint64_t st = seed * 0x9e3779b97f4a7c15ULL + 101;
	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	out->n = n;
	if (nwords < 1)
		nwords = 1;
	for (size_t i = 0; i < n; i++) {
		struct rt_sb sb = RT_SB_INIT;
		for (int w = 0; w < nwords; w++) {
			if (w)
				rt_sb_addc(&sb, ' ');
			rt_sb_adds(&sb, words[rt_splitmix64(&st) % RT_ARRAY_SIZE(words)]);
		}
		out->v[i].text = rt_sb_detach(&sb, NULL);
		out->v[i].max_tokens = max_tokens > 0 ? max_tokens : 1;
	}
}

void run_load_dataset_release(struct run_load_dataset *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].text);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* One record; 0 ok, 1 skipped (no usable prompt), <0 error. */
static int take_record(json_t *rec, const char *path, size_t line, int def_max, int over_max,
		       struct run_load_dataset *d, size_t *alloc, struct rt_sb *err)
{
	if (!json_is_object(rec))
		return rt_errf(err, RT_EPARSE, "%s:%zu: record is not a json object", path, line);
	const char *prompt = NULL;
	int max_tokens = 0;
	json_t *conv = json_object_get(rec, "conversations");
	if (conv) {
		if (!json_is_array(conv))
			return rt_errf(err, RT_EPARSE, "%s:%zu: conversations: not an array", path,
				       line);
		if (json_array_size(conv) < 2)
			return 1; /* ShareGPT records without a reply are skipped, like vLLM */
		prompt = json_string_value(json_object_get(json_array_get(conv, 0), "value"));
		const char *reply =
			json_string_value(json_object_get(json_array_get(conv, 1), "value"));
		if (!prompt || !reply)
			return rt_errf(err, RT_EPARSE,
				       "%s:%zu: conversations[0..1].value: missing or not a string",
				       path, line);
		max_tokens = (int)rt_count_words(reply);
	} else {
		json_t *p = json_object_get(rec, "prompt");
		if (!json_is_string(p))
			return rt_errf(err, RT_EPARSE,
				       "%s:%zu: prompt: missing or not a string (expected ShareGPT "
				       "conversations or {\"prompt\", \"max_tokens\"})", path, line);
		prompt = json_string_value(p);
		json_t *m = json_object_get(rec, "max_tokens");
		if (m && !json_is_integer(m))
			return rt_errf(err, RT_EPARSE, "%s:%zu: max_tokens: not an integer", path,
				       line);
		if (m && json_integer_value(m) < 1)
			return rt_errf(err, RT_EPARSE, "%s:%zu: max_tokens: must be at least 1", path,
				       line);
		max_tokens = m ? (int)json_integer_value(m) : 0;
	}
	if (!*prompt)
		return 1;
	if (over_max > 0)
		max_tokens = over_max;
	if (max_tokens < 1)
		max_tokens = def_max > 0 ? def_max : 128;
	if (d->n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		d->v = xrealloc(d->v, *alloc * sizeof(*d->v));
	}
	d->v[d->n].text = xstrdup(prompt);
	d->v[d->n].max_tokens = max_tokens;
	d->n++;
	return 0;
}

int run_load_dataset_read(const char *path, int def_max, int over_max,
			  struct run_load_dataset *out, struct rt_sb *err)
{
	char *text;
	size_t len;
	int rc = rt_read_file(path, &text, &len, err);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	size_t alloc = 0;
	const char *p = text;
	while (*p && isspace((unsigned char)*p))
		p++;
	if (*p == '[') {
		/* a JSON array (the usual ShareGPT file) */
		json_error_t je;
		json_t *arr = json_loadb(text, len, 0, &je);
		if (!arr) {
			rc = rt_errf(err, RT_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
			goto out;
		}
		for (size_t i = 0; i < json_array_size(arr); i++) {
			rc = take_record(json_array_get(arr, i), path, i + 1, def_max, over_max, out,
					 &alloc, err);
			if (rc < 0)
				break;
			rc = 0;
		}
		json_decref(arr);
	} else {
		size_t line = 0;
		char *s = text;
		while (s && *s) {
			line++;
			char *nl = strchr(s, '\n');
			size_t ll = nl ? (size_t)(nl - s) : strlen(s);
			const char *q = s;
			while (q < s + ll && isspace((unsigned char)*q))
				q++;
			if (q < s + ll) {
				json_error_t je;
				json_t *rec = json_loadb(s, ll, 0, &je);
				if (!rec) {
					rc = rt_errf(err, RT_EPARSE, "%s:%zu:%d: %s", path, line,
						     je.column, je.text);
					break;
				}
				rc = take_record(rec, path, line, def_max, over_max, out, &alloc, err);
				json_decref(rec);
				if (rc < 0)
					break;
				rc = 0;
			}
			s = nl ? nl + 1 : NULL;
		}
	}
	if (!rc && out->n == 0)
		rc = rt_errf(err, RT_EPARSE, "%s: no usable prompts", path);
out:
	free(text);
	if (rc)
		run_load_dataset_release(out);
	return rc;
}
