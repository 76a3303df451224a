/*
 * Clocks, sha256, whole-file reads and atomic writes, folders, secrets (the
 * registry and the one redaction function) and small text helpers (did-you-mean, durations, word counts,
 * a qsort comparator); see rt.h.
 */
#define _GNU_SOURCE
#include "runner/base/rt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t rt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double rt_now_s(void)
{
	return (double)rt_now_ns() / 1e9;
}

int64_t rt_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void rt_iso8601(int64_t wall_ms, char out[32])
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void rt_sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void rt_sleep_until_ns(int64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000LL), (long)(t_ns % 1000000000LL) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void hex(const unsigned char *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = 0;
}

void rt_sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_Digest(data, n, md, &len, EVP_sha256(), NULL);
	hex(md, 32, out);
}

int rt_sha256_file(const char *path, char out[65], struct rt_sb *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rt_errf(err, errno == ENOENT ? RT_ENOENT : RT_EIO, "%s: %s", path,
			       strerror(errno));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	unsigned char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		EVP_DigestUpdate(ctx, buf, n);
	int bad = ferror(f);
	fclose(f);
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	if (bad)
		return rt_errf(err, RT_EIO, "%s: read error", path);
	hex(md, 32, out);
	return 0;
}

int rt_read_file(const char *path, char **out, size_t *len, struct rt_sb *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rt_errf(err, errno == ENOENT ? RT_ENOENT : RT_EIO, "%s: %s", path,
			       strerror(errno));
	struct rt_sb sb = RT_SB_INIT;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		rt_sb_add(&sb, buf, n);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		rt_sb_release(&sb);
		return rt_errf(err, RT_EIO, "%s: read error", path);
	}
	*out = rt_sb_detach(&sb, len);
	return 0;
}

int rt_write_file_atomic(const char *path, const void *data, size_t len, int mode,
			 struct rt_sb *err)
{
	struct stat st;
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	char *tmp = xasprintf("%s.ratchet-tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		int rc = rt_errf(err, RT_EIO, "%s: cannot create: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int rc = rt_errf(err, RT_EIO, "%s: write failed: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			free(tmp);
			return rc;
		}
		p += w;
		left -= (size_t)w;
	}
	fchmod(fd, (mode_t)mode);
	if (fsync(fd) || close(fd)) {
		int rc = rt_errf(err, RT_EIO, "%s: fsync failed: %s", tmp, strerror(errno));
		unlink(tmp);
		free(tmp);
		return rc;
	}
	if (rename(tmp, path)) {
		int rc = rt_errf(err, RT_EIO, "%s: rename failed: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return rc;
	}
	free(tmp);
	char *dircopy = xstrdup(path);
	int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dircopy);
	return 0;
}

bool rt_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int rt_mkdirs(const char *path, struct rt_sb *err)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST) {
			int rc = rt_errf(err, RT_EIO, "%s: cannot create folder: %s", p, strerror(errno));
			free(p);
			return rc;
		}
		*s = '/';
	}
	int rc = 0;
	if (mkdir(p, 0755) && errno != EEXIST)
		rc = rt_errf(err, RT_EIO, "%s: cannot create folder: %s", p, strerror(errno));
	free(p);
	return rc;
}

size_t rt_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

const char *rt_did_you_mean(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	size_t limit = strlen(word) / 3;
	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i])
			continue;
		size_t d = rt_edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

void rt_fmt_duration(double s, char *out, size_t n)
{
	if (s < 0) {
		snprintf(out, n, "-");
	} else if (s < 1e-3) {
		snprintf(out, n, "%.0fus", s * 1e6);
	} else if (s < 1) {
		snprintf(out, n, "%.2fms", s * 1e3);
	} else if (s < 60) {
		snprintf(out, n, "%.2fs", s);
	} else if (s < 3600) {
		snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
	} else {
		snprintf(out, n, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
	}
}

int rt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

size_t rt_count_words(const char *s)
{
	size_t n = 0;
	bool in = false;
	for (; s && *s; s++) {
		bool sp = isspace((unsigned char)*s);
		if (!sp && !in)
			n++;
		in = !sp;
	}
	return n;
}

/* ---- secrets ----
 * What is secret: the values of environment variables whose names say so,
 * the values registered with rt_secret_add (the API key, secret-named
 * settings of the spec), and whatever follows Authorization, Bearer, api_key
 * or a URL's user: in any text, and secret-looking NAME=value settings. One
 * function redacts them all. */

static bool secret_name(const char *name, size_t n)
{
	static const char *const marks[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL" };
	for (size_t m = 0; m < RT_ARRAY_SIZE(marks); m++) {
		size_t ml = strlen(marks[m]);
		for (size_t i = 0; i + ml <= n; i++)
			if (!strncasecmp(name + i, marks[m], ml))
				return true;
	}
	return false;
}

/* Shorter values are left alone: replacing them everywhere would mangle
 * text (a TOKENS=4096 setting is a count, not a secret). */
#define SECRET_ENV_MIN 8
#define SECRET_MIN 4

static pthread_mutex_t secrets_mu = PTHREAD_MUTEX_INITIALIZER;
static char **secrets;  /* rt_secret_add's copies */
static size_t n_secrets;

void rt_secret_add(const char *value)
{
	if (!value || strlen(value) < SECRET_MIN)
		return;
	pthread_mutex_lock(&secrets_mu);
	bool have = false;
	for (size_t i = 0; i < n_secrets && !have; i++)
		have = !strcmp(secrets[i], value);
	if (!have) {
		secrets = xrealloc(secrets, (n_secrets + 1) * sizeof(*secrets));
		secrets[n_secrets++] = xstrdup(value);
	}
	pthread_mutex_unlock(&secrets_mu);
}

void rt_secret_add_env(const char *name, const char *value)
{
	if (name && value && secret_name(name, strlen(name)) && strlen(value) >= SECRET_ENV_MIN)
		rt_secret_add(value);
}

static const char mask[] = "[redacted]";

/* The rewrite is done: out, with the text after its last replacement (from
 * tail), takes sb's place (count > 0), or is dropped; returns count. */
static int redact_finish(struct rt_sb *sb, struct rt_sb *out, const char *tail, int count)
{
	if (!count) {
		rt_sb_release(out);
		return 0;
	}
	rt_sb_add(out, tail, (size_t)(sb->buf + sb->len - tail));
	size_t cap = sb->cap;
	rt_sb_release(sb);
	*sb = *out;
	sb->cap = cap;
	return count;
}

/* Replace every occurrence of val in sb with the mask; returns how many. */
static int redact_value(struct rt_sb *sb, const char *val, size_t vl)
{
	int count = 0;
	struct rt_sb out = RT_SB_INIT;
	const char *p = sb->buf, *end = sb->buf + sb->len, *hit;
	while ((hit = memmem(p, (size_t)(end - p), val, vl))) {
		rt_sb_add(&out, p, (size_t)(hit - p));
		rt_sb_adds(&out, mask);
		p = hit + vl;
		count++;
	}
	return redact_finish(sb, &out, p, count);
}

static int by_length_down(const void *x, const void *y)
{
	size_t a = strlen(*(char *const *)x), b = strlen(*(char *const *)y);
	return (a < b) - (a > b);
}

/* The values to replace: secret environment values and registered ones,
 * copied, longest first (so a value that holds another goes whole). Made
 * again only when the environment's entries or the registry changed, so an
 * export of a million cells does not scan the environment a million times.
 * Guarded by secrets_mu. */
static struct {
	char **env;       /* environ's entries when vals was made */
	size_t n_env;
	size_t n_secrets; /* registered values then */
	char **vals;      /* the values (copies) */
	size_t n_vals;
	bool made;        /* vals is there */
} cache;

static bool cache_fresh(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ && environ[n])
		n++;
	return cache.made && cache.n_secrets == n_secrets && cache.n_env == n &&
	       (!n || !memcmp(cache.env, environ, n * sizeof(*environ)));
}

static void cache_make(void)
{
	extern char **environ;
	for (size_t i = 0; i < cache.n_vals; i++)
		free(cache.vals[i]);
	free(cache.vals);
	free(cache.env);
	size_t n_env = 0;
	while (environ && environ[n_env])
		n_env++;
	cache.env = xmalloc((n_env + 1) * sizeof(*cache.env));
	if (n_env)
		memcpy(cache.env, environ, n_env * sizeof(*environ));
	cache.n_env = n_env;
	cache.n_secrets = n_secrets;
	cache.vals = xmalloc((n_secrets + n_env + 1) * sizeof(*cache.vals));
	cache.n_vals = 0;
	for (size_t i = 0; i < n_secrets; i++)
		cache.vals[cache.n_vals++] = xstrdup(secrets[i]);
	for (size_t i = 0; i < n_env; i++) {
		const char *e = environ[i], *eq = strchr(e, '=');
		if (eq && secret_name(e, (size_t)(eq - e)) && strlen(eq + 1) >= SECRET_ENV_MIN)
			cache.vals[cache.n_vals++] = xstrdup(eq + 1);
	}
	qsort(cache.vals, cache.n_vals, sizeof(*cache.vals), by_length_down);
	cache.made = true;
}

/* Replace every secret value in sb; returns how many. */
static int redact_values(struct rt_sb *sb)
{
	int count = 0;
	pthread_mutex_lock(&secrets_mu);
	if (!cache_fresh())
		cache_make();
	for (size_t i = 0; i < cache.n_vals; i++)
		count += redact_value(sb, cache.vals[i], strlen(cache.vals[i]));
	pthread_mutex_unlock(&secrets_mu);
	return count;
}

/* The end of a credential that starts at p: up to a space, a quote or a
 * separator of headers, URLs, JSON and YAML. */
static const char *cred_end(const char *p, const char *end)
{
	while (p < end && !isspace((unsigned char)*p) && !strchr("\"'&,;})]<>`", *p))
		p++;
	return p;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* After a setting's name at q: an optional closing quote, ':' or '=', and an
 * optional opening quote; where the value starts, or NULL. */
static const char *after_assign(const char *q, const char *end)
{
	q = skip_blanks(q + (q < end && (*q == '"' || *q == '\'')), end);
	if (q >= end || (*q != ':' && *q != '='))
		return NULL;
	q = skip_blanks(q + 1, end);
	return q + (q < end && (*q == '"' || *q == '\''));
}

/* At p (a word start), an environment-style name that looks secret, set to
 * a value as long as the environment rule wants (HF_TOKEN: x, HF_TOKEN=x,
 * "HF_TOKEN": "x")? Then where the value starts; else NULL. Upper case only:
 * max_tokens: 256 is a setting, not a secret. */
static const char *cred_after_env_name(const char *p, const char *end)
{
	const char *q = p;
	bool letter = false;
	while (q < end && (isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_'))
		letter |= isupper((unsigned char)*q++);
	if (!letter || (q < end && (isalnum((unsigned char)*q) || *q == '-')) ||
	    !secret_name(p, (size_t)(q - p)) || !(q = after_assign(q, end)))
		return NULL;
	return cred_end(q, end) - q >= SECRET_ENV_MIN ? q : NULL;
}

/* At p, a name that announces a credential ("Authorization: Basic x",
 * "api_key=x", "Bearer x", "\"api-key\": \"x\"")? Then where the credential
 * starts; else NULL. */
static const char *cred_after_name(const char *p, const char *end)
{
	static const struct {
		const char *name;  /* matched in any case */
		bool scheme;       /* a scheme word may come before the credential */
		bool assign;       /* ':' or '=' must follow */
	} names[] = {
		{ "authorization", true, true }, { "api_key", false, true },
		{ "api-key", false, true },      { "apikey", false, true },
		{ "bearer ", false, false },     { "bearer\t", false, false },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(names); i++) {
		size_t nl = strlen(names[i].name);
		if ((size_t)(end - p) < nl || strncasecmp(p, names[i].name, nl))
			continue;
		const char *q = p + nl;
		if (names[i].assign && !(q = after_assign(q, end)))
			continue;
		q = skip_blanks(q, end);
		if (names[i].scheme) { /* "Basic x", "Bearer x": the word is not the secret */
			const char *w = q;
			while (w < end && isalpha((unsigned char)*w))
				w++;
			if (w > q && w < end && (*w == ' ' || *w == '\t'))
				q = skip_blanks(w, end);
		}
		return q;
	}
	return NULL;
}

/* At p, "://user:password@"? Then where the password starts (*stop: the
 * '@'); else NULL. */
static const char *cred_in_url(const char *p, const char *end, const char **stop)
{
	if ((size_t)(end - p) < 3 || memcmp(p, "://", 3))
		return NULL;
	const char *colon = NULL, *q;
	for (q = p + 3; q < end && !isspace((unsigned char)*q) && !strchr("/?#@\"'<>", *q); q++)
		if (*q == ':' && !colon)
			colon = q;
	if (q >= end || *q != '@' || !colon)
		return NULL;
	*stop = q;
	return colon + 1;
}

/* Credentials announced by their names, and URL passwords. */
static int redact_patterns(struct rt_sb *sb)
{
	struct rt_sb out = RT_SB_INIT;
	const char *p = sb->buf, *end = sb->buf + sb->len, *copied = p;
	int count = 0;
	size_t ml = strlen(mask);
	while (p < end) {
		/* Only these start a match: a/A (Authorization, api_key), b/B
		 * (Bearer), ':' (://), and a word in upper case (HF_TOKEN). */
		unsigned char ch = (unsigned char)*p;
		bool word = p == sb->buf || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		if (!strchr("aAbB:", ch) && !(word && (isupper(ch) || ch == '_'))) {
			p++;
			continue;
		}
		const char *stop = NULL, *c = cred_after_name(p, end);
		if (!c && word)
			c = cred_after_env_name(p, end);
		if (c)
			stop = cred_end(c, end);
		else if ((c = cred_in_url(p, end, &stop)) == NULL) {
			p++;
			continue;
		}
		if ((size_t)(end - c) >= ml && !memcmp(c, mask, ml)) {
			stop = c + ml; /* already done */
		} else if (stop > c) {
			rt_sb_add(&out, copied, (size_t)(c - copied));
			rt_sb_adds(&out, mask);
			copied = stop;
			count++;
		}
		p = stop > p ? stop : p + 1;
	}
	return redact_finish(sb, &out, copied, count);
}

void rt_secret_add_url(const char *url)
{
	static const char *const names[] = { "api_key", "api-key", "apikey", "key", "token",
					     "access_token" };
	if (!url)
		return;
	const char *end = url + strlen(url), *stop, *sch = strstr(url, "://");
	const char *pw = sch ? cred_in_url(sch, end, &stop) : NULL;
	if (pw) {
		char *v = xstrndup(pw, (size_t)(stop - pw));
		rt_secret_add(v);
		free(v);
	}
	for (const char *q = strchr(url, '?'); q && *q && *q != '#';) {
		const char *name = q + 1, *eq = name + strcspn(name, "=&#");
		const char *val = *eq == '=' ? eq + 1 : eq, *next = val + strcspn(val, "&#");
		for (size_t i = 0; *eq == '=' && i < RT_ARRAY_SIZE(names); i++) {
			if (strlen(names[i]) == (size_t)(eq - name) &&
			    !strncasecmp(name, names[i], (size_t)(eq - name)) &&
			    next - val >= SECRET_ENV_MIN) { /* ?key=test is no credential */
				char *v = xstrndup(val, (size_t)(next - val));
				rt_secret_add(v);
				free(v);
			}
		}
		q = next;
	}
}

int rt_redact_secrets(struct rt_sb *sb)
{
	int count = redact_values(sb);
	return count + redact_patterns(sb);
}

char *rt_redacted(const char *s)
{
	if (!s)
		return NULL;
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, s);
	rt_redact_secrets(&sb);
	return rt_sb_detach(&sb, NULL);
}

/* Lexically: no filesystem access, so a path that does not exist yet works. */
char *rt_path_normalize_abs(const char *p)
{
	size_t n = strlen(p);
	char *out = xmalloc(n + 2);
	size_t len = 0;
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchr(s, '/');
		size_t seg = e ? (size_t)(e - s) : strlen(s);
		if (seg == 1 && s[0] == '.') {
			/* skip */
		} else if (seg == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else {
			out[len++] = '/';
			memcpy(out + len, s, seg);
			len += seg;
		}
		s += seg;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}
