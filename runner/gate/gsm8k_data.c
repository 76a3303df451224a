/*
 * The GSM8K dataset: JSONL parsing with errors that name file:line, the
 * search for the file (flag, environment, cache, verified download), the
 * seeded subset, and the built-in chain-of-thought exemplars.
 */
#include "runner/gate/gsm8k.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/base/rand.h"
#include "runner/oai/oai.h"

void gsm8k_set_release(struct gsm8k_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].question);
		free(s->v[i].answer);
		free(s->v[i].target);
	}
	free(s->v);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* The reference answer: the normalised text after the last "#### " of a
 * solution, or of "The answer is N." for a cot target. */
static char *reference(const char *answer, bool cot)
{
	if (!cot)
		return gsm8k_normalize(answer);
	char *x = gsm8k_extract_strict(SPEC_GSM8K_COT, answer);
	char *n = gsm8k_normalize(x);
	free(x);
	return n;
}

int gsm8k_parse(const char *name, const char *text, size_t len, bool cot, struct gsm8k_set *out,
		struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	size_t alloc = 0;
	const char *p = text, *end = text + len;
	const char *akey = cot ? "target" : "answer";
	for (int line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *q = p;
		while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == le) {
			p = nl ? nl + 1 : end;
			continue;
		}
		json_error_t je;
		json_t *o = json_loadb(p, (size_t)(le - p), 0, &je);
		const char *qs = NULL, *as = NULL;
		if (!o) {
			gsm8k_set_release(out);
			return rt_errf(err, RT_EPARSE, "%s:%d:%d: invalid JSON: %s", name, line,
				       je.column > 0 ? je.column : 1, je.text);
		}
		if (!json_is_object(o) || !(qs = json_string_value(json_object_get(o, "question"))) ||
		    !(as = json_string_value(json_object_get(o, akey)))) {
			json_decref(o);
			gsm8k_set_release(out);
			return rt_errf(err, RT_EPARSE,
				       "%s:%d: expected an object with string fields 'question' and '%s'",
				       name, line, akey);
		}
		if (!cot && !strstr(as, "#### ")) {
			json_decref(o);
			gsm8k_set_release(out);
			return rt_errf(err, RT_EPARSE, "%s:%d: answer: no final '#### N'", name, line);
		}
		if (out->n == alloc) {
			alloc = alloc ? alloc * 2 : 1024;
			out->v = xrealloc(out->v, alloc * sizeof(*out->v));
		}
		struct gsm8k_item *it = &out->v[out->n++];
		it->question = xstrdup(qs);
		it->answer = xstrdup(as);
		it->target = reference(as, cot);
		json_decref(o);
		p = nl ? nl + 1 : end;
	}
	if (!out->n)
		return rt_errf(err, RT_EPARSE, "%s: no problems in the file", name);
	out->path = xstrdup(name);
	rt_sha256_hex(text, len, out->sha256);
	return 0;
}

int gsm8k_load(const char *path, struct gsm8k_set *out, struct rt_sb *err)
{
	char *text = NULL;
	size_t len = 0;
	memset(out, 0, sizeof(*out));
	int rc = rt_read_file(path, &text, &len, err);
	if (rc)
		return rc;
	rc = gsm8k_parse(path, text, len, false, out, err);
	free(text);
	return rc;
}

char *gsm8k_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x == '/')
		return xasprintf("%s/ratchet/gsm8k", x);
	const char *h = getenv("HOME");
	return xasprintf("%s/.cache/ratchet/gsm8k", h && *h ? h : ".");
}

static bool is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* A file, or a folder holding <split>.jsonl. */
static char *resolve(const char *p, const char *split)
{
	return is_dir(p) ? xasprintf("%s/%s.jsonl", p, split) : xstrdup(p);
}

/* Download url, check its sha256, store it at path atomically. */
static int download(const char *url, const char *want_sha, const char *path, struct rt_sb *why)
{
	struct oai_resp r;
	oai_resp_init(&r, 64u << 20);
	struct rt_sb *body = &r.body;
	int rc = oai_download(url, 120, &r, why);
	long status = r.status;
	char sha[65];
	if (rc) {
		rt_errf(why, 0, " (downloading the GSM8K data)");
	} else if (status != 200 && !(status == 0 && !strncmp(url, "file:", 5))) {
		rc = rt_errf(why, RT_EHTTP, "download %s: HTTP %ld", url, status);
	} else {
		rt_sha256_hex(body->buf, body->len, sha);
		if (strcmp(sha, want_sha))
			rc = rt_errf(why, RT_ECHECK, "download %s: sha256 %s, expected %s", url, sha,
				     want_sha);
	}
	if (!rc) {
		char *dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		rc = rt_mkdirs(dir, why);
		free(dir);
		if (!rc)
			rc = rt_write_file_atomic(path, body->buf, body->len, 0644, why);
	}
	oai_resp_release(&r);
	return rc;
}

int gsm8k_find(const char *split, const char *explicit_path, struct gsm8k_set *out,
	       struct rt_sb *err)
{
	bool train = !strcmp(split, "train");
	const char *want = train ? GSM8K_TRAIN_SHA256 : GSM8K_TEST_SHA256;
	memset(out, 0, sizeof(*out));
	const char *env = getenv("RATCHET_GSM8K");
	const char *given[2] = { explicit_path && *explicit_path ? explicit_path : NULL,
				 env && *env ? env : NULL };
	for (int i = 0; i < 2; i++) {
		if (!given[i])
			continue;
		char *p = NULL;
		if (train && !is_dir(given[i])) {
			/* train.jsonl beside the given test file; else go on searching. */
			char *d = xstrdup(given[i]);
			char *slash = strrchr(d, '/');
			if (slash) {
				slash[1] = 0;
				p = xasprintf("%strain.jsonl", d);
			} else {
				p = xstrdup("train.jsonl");
			}
			free(d);
			if (!rt_file_exists(p)) {
				free(p);
				continue;
			}
		} else {
			p = resolve(given[i], split);
		}
		int rc = gsm8k_load(p, out, err);
		if (rc == RT_ENOENT)
			rt_sb_addf(err, " (from %s)", i ? "RATCHET_GSM8K" : "--dataset");
		free(p);
		return rc;
	}
	char *dir = gsm8k_cache_dir();
	char *cached = xasprintf("%s/%s.jsonl", dir, split);
	free(dir);
	if (rt_file_exists(cached)) {
		int rc = gsm8k_load(cached, out, err);
		free(cached);
		return rc;
	}
	const char *base = getenv("RATCHET_GSM8K_URL");
	if (!base || !*base)
		base = GSM8K_UPSTREAM_URL;
	char *url = xasprintf("%s/%s.jsonl", base, split);
	struct rt_sb why = RT_SB_INIT;
	const char *off = getenv("RATCHET_OFFLINE");
	int rc;
	if (off && *off && strcmp(off, "0"))
		rc = rt_errf(&why, RT_EHTTP, "RATCHET_OFFLINE is set");
	else
		rc = download(url, want, cached, &why);
	if (!rc)
		rc = gsm8k_load(cached, out, &why);
	if (rc)
		rt_errf(err, rc,
			"gsm8k: %s.jsonl not found and not downloaded (%s); put the file at %s "
			"(from %s, sha256 %s), or pass --dataset FILE or set RATCHET_GSM8K",
			split, why.buf, cached, url, want);
	rt_sb_release(&why);
	free(url);
	free(cached);
	return rc;
}

/* ---- chain-of-thought exemplars ---- */
static const char *const cot_rows[][2] = {
	{ "There are 15 trees in the grove. Grove workers will plant trees in the grove today. After they are done, there will be 21 trees. How many trees did the grove workers plant today?",
	  "There are 15 trees originally. Then there were 21 trees after some more were planted. So there must have been 21 - 15 = 6. The answer is 6." },
	{ "If there are 3 cars in the parking lot and 2 more cars arrive, how many cars are in the parking lot?",
	  "There are originally 3 cars. 2 more cars arrive. 3 + 2 = 5. The answer is 5." },
	{ "Leah had 32 chocolates and her sister had 42. If they ate 35, how many pieces do they have left in total?",
	  "Originally, Leah had 32 chocolates. Her sister had 42. So in total they had 32 + 42 = 74. After eating 35, they had 74 - 35 = 39. The answer is 39." },
	{ "Jason had 20 lollipops. He gave Denny some lollipops. Now Jason has 12 lollipops. How many lollipops did Jason give to Denny?",
	  "Jason started with 20 lollipops. Then he had 12 after giving some to Denny. So he gave Denny 20 - 12 = 8. The answer is 8." },
	{ "Shawn has five toys. For Christmas, he got two toys each from his mom and dad. How many toys does he have now?",
	  "Shawn started with 5 toys. If he got 2 toys each from his mom and dad, then that is 4 more toys. 5 + 4 = 9. The answer is 9." },
	{ "There were nine computers in the server room. Five more computers were installed each day, from monday to thursday. How many computers are now in the server room?",
	  "There were originally 9 computers. For each of 4 days, 5 more computers were added. So 5 * 4 = 20 computers were added. 9 + 20 is 29. The answer is 29." },
	{ "Michael had 58 golf balls. On tuesday, he lost 23 golf balls. On wednesday, he lost 2 more. How many golf balls did he have at the end of wednesday?",
	  "Michael started with 58 golf balls. After losing 23 on tuesday, he had 58 - 23 = 35. After losing 2 more, he had 35 - 2 = 33 golf balls. The answer is 33." },
	{ "Olivia has $23. She bought five bagels for $3 each. How much money does she have left?",
	  "Olivia had 23 dollars. 5 bagels for 3 dollars each will be 5 x 3 = 15 dollars. So she has 23 - 15 dollars left. 23 - 15 is 8. The answer is 8." },
};

static struct gsm8k_set cot_set;
static pthread_once_t cot_once = PTHREAD_ONCE_INIT;

static void cot_init(void)
{
	size_t n = RT_ARRAY_SIZE(cot_rows);
	cot_set.v = xcalloc(n, sizeof(*cot_set.v));
	for (size_t i = 0; i < n; i++) {
		cot_set.v[i].question = xstrdup(cot_rows[i][0]);
		cot_set.v[i].answer = xstrdup(cot_rows[i][1]);
		cot_set.v[i].target = reference(cot_rows[i][1], true);
	}
	cot_set.n = n;
	cot_set.path = xstrdup("(built-in cot exemplars)");
}

const struct gsm8k_set *gsm8k_cot_exemplars(void)
{
	pthread_once(&cot_once, cot_init);
	return &cot_set;
}

/* ---- subsets ---- */
static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

int gsm8k_select(size_t total, long offset, long limit, uint64_t seed, size_t **idx, size_t *n,
		 struct rt_sb *err)
{
	*idx = NULL;
	*n = 0;
	if (offset < 0 || limit < 0)
		return rt_errf(err, RT_EUSAGE, "gsm8k: offset and limit must not be negative");
	if ((size_t)offset >= total)
		return rt_errf(err, RT_EUSAGE, "gsm8k: offset %ld is past the last question (%zu)",
			       offset, total);
	size_t avail = total - (size_t)offset;
	size_t want = limit && (size_t)limit < avail ? (size_t)limit : avail;
	size_t *v = xcalloc(avail, sizeof(*v));
	for (size_t i = 0; i < avail; i++)
		v[i] = (size_t)offset + i;
	if (seed) {
		uint64_t s = seed;
		/* Partial Fisher-Yates: the first `want` slots get a uniform sample. */
		for (size_t i = 0; i < want; i++) {
			size_t j = i + (size_t)(rt_splitmix64(&s) % (avail - i));
			size_t t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
		qsort(v, want, sizeof(*v), cmp_size);
	}
	*idx = v;
	*n = want;
	return 0;
}
