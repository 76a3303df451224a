/*
 * Clocks, sha256, whole-file reads and atomic writes, folders, secret
 * redaction and small text helpers (did-you-mean, durations, word counts,
 * a qsort comparator); see rt.h.
 */
#define _GNU_SOURCE
#include "runner/base/rt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/evp.h>
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

int rt_redact_secrets(struct rt_sb *sb)
{
	extern char **environ;
	static const char mask[] = "[redacted]";
	int count = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !secret_name(*e, (size_t)(eq - *e)))
			continue;
		const char *val = eq + 1;
		size_t vl = strlen(val);
		if (vl < 8)
			continue;
		struct rt_sb out = RT_SB_INIT;
		const char *p = sb->buf, *end = sb->buf + sb->len, *hit;
		bool any = false;
		while ((hit = memmem(p, (size_t)(end - p), val, vl))) {
			rt_sb_add(&out, p, (size_t)(hit - p));
			rt_sb_adds(&out, mask);
			p = hit + vl;
			count++;
			any = true;
		}
		if (!any) {
			rt_sb_release(&out);
			continue;
		}
		rt_sb_add(&out, p, (size_t)(end - p));
		size_t cap = sb->cap;
		rt_sb_release(sb);
		*sb = out;
		sb->cap = cap;
	}
	return count;
}
