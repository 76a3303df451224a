/*
 * The floor every module stands on (runner/base/ includes nothing above
 * it): exit codes, the one list of error codes (RT_ERR_MAP), allocation
 * wrappers that die on out-of-memory, the growable string buffer, sha256,
 * monotonic and wall clocks, whole-file reads and atomic writes, secret
 * redaction, small text helpers and argv-like lists. Options (opt.h),
 * child processes (proc.h) and the PRNG (rand.h) have their own headers.
 *
 * Error convention: library functions return 0 (or a count) on success and a
 * negative RT_E* code on failure. Functions that can say more take a
 * `struct rt_sb *err` and append one line of text to it ("what failed first,
 * then the thing": `spec.yaml:14:5: benchmarks[0].load: unknown key ...`).
 * Only command functions (runner/cmd/cmd_*.c) print and pick the exit code.
 */
#ifndef RT_UTIL_H
#define RT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of the ratchet binary, documented in README and --help. */
enum {
	RT_EXIT_OK = 0,      /* ok */
	RT_EXIT_NO = 1,      /* the gate or decision said no */
	RT_EXIT_USAGE = 2,   /* bad command line or bad spec */
	RT_EXIT_RUNTIME = 3, /* runtime error */
};

/*
 * The one list of error codes (as libuv's UV_ERRNO_MAP): XX(name, value,
 * message). The enum, rt_strerror() and rt_err_name() are generated from it.
 * The values are stored in the database and named by tests: never renumber
 * a code, add new ones at the end.
 */
#define RT_ERR_MAP(XX)                                                                 \
	XX(OK, 0, "ok")                                                                \
	XX(EINVAL, -1, "invalid input")                                                \
	XX(ENOMEM, -2, "out of memory")                                                \
	XX(EIO, -3, "input/output error")                                              \
	XX(ENOENT, -4, "not found")                                                    \
	XX(ETOOBIG, -5, "size limit exceeded")                                         \
	XX(ETIMEDOUT, -6, "timed out")                                                 \
	XX(EPARSE, -7, "parse error")                                                  \
	XX(EDB, -8, "database error")                                                  \
	XX(ESCHEMA, -9, "database written by a newer ratchet")                         \
	XX(EHTTP, -10, "http error")                                                   \
	XX(EPROC, -11, "child process failed")                                         \
	XX(EIDENTITY, -12, "endpoint is not the engine ratchet started")               \
	XX(EBUSY, -13, "already in use")                                               \
	XX(ENOTBUILT, -14, "not built")                                                \
	XX(ENODEV, -15, "no device")                                                   \
	XX(ECHECK, -16, "correctness check failed")                                    \
	XX(ESTATE, -17, "not valid in this state")                                     \
	XX(EINTR, -18, "interrupted")                                                  \
	XX(ENOTSUP, -19, "not supported")                                              \
	XX(EUSAGE, -20, "usage error")

enum rt_err {
#define RT_ERR_ENUM(name, value, msg) RT_##name = (value),
	RT_ERR_MAP(RT_ERR_ENUM)
#undef RT_ERR_ENUM
};

/* Message for an rt_err code ("not found"); "unknown error" for a value
 * not in the list. Never NULL. */
const char *rt_strerror(int err);
/* Name of an rt_err code ("RT_ENOENT"); "RT_E?" for a value not in the
 * list. Never NULL. */
const char *rt_err_name(int err);

/* ---- allocation: these die with a message when memory runs out ---- */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);              /* NULL stays NULL */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- growable string buffer; buf is never NULL, always NUL-terminated ---- */
struct rt_sb {
	char *buf;    /* contents; points at a static "" until the first append */
	size_t len;   /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated, 0 while buf is the static "" */
	size_t cap;   /* most bytes it may hold, 0 for no cap (untrusted input gets a cap) */
};
#define RT_SB_INIT { rt_sb_empty, 0, 0, 0 }
extern char rt_sb_empty[];

void rt_sb_init(struct rt_sb *sb, size_t cap);
/* Frees the contents and leaves sb empty and reusable. */
void rt_sb_release(struct rt_sb *sb);
void rt_sb_reset(struct rt_sb *sb);           /* len = 0, keeps memory */
/* Append; return 0, or RT_ETOOBIG (nothing appended) when the cap would be exceeded. */
int rt_sb_add(struct rt_sb *sb, const void *data, size_t n);
int rt_sb_adds(struct rt_sb *sb, const char *s);
int rt_sb_addc(struct rt_sb *sb, char c);
int rt_sb_addf(struct rt_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rt_sb_vaddf(struct rt_sb *sb, const char *fmt, va_list ap);
/* Hands the contents to the caller (who frees them) and leaves sb empty. */
char *rt_sb_detach(struct rt_sb *sb, size_t *len);
void rt_sb_trim(struct rt_sb *sb);            /* drop trailing whitespace */
/* Append s as one single-quoted POSIX shell word ('it'\''s'). */
int rt_sb_add_shq(struct rt_sb *sb, const char *s);
/* Append s escaped for HTML and XML text and attribute values (& < > " ' as
 * entities; control characters (C0 but newline and tab, DEL, and the C1
 * range U+0080..U+009F, which holds the one-character CSI) become a space,
 * so no terminal escape survives; each
 * ill-formed UTF-8 sequence becomes U+FFFD, so the output is always UTF-8). */
void rt_sb_add_markup(struct rt_sb *sb, const char *s);
/* The length (1 to 4) of the well-formed UTF-8 sequence that starts s, within
 * its n bytes (Unicode's table 3-7: no overlong forms, no surrogates, nothing
 * above U+10FFFF); 0 when s does not start one, and then *bad is the length of
 * the ill-formed part (1 to 3 bytes) that one U+FFFD replaces. */
size_t rt_utf8_seq(const char *s, size_t n, size_t *bad);
/* Whether the two bytes at s encode a C1 control (U+0080..U+009F); s must
 * hold at least two bytes or end with a NUL. */
bool rt_utf8_c1(const char *s);

/* Append a formatted message to err (if non-NULL) and return code. */
int rt_errf(struct rt_sb *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- hashing ---- */
/* Lowercase hex sha256 of data into out (65 bytes incl. NUL). */
void rt_sha256_hex(const void *data, size_t n, char out[65]);
/* sha256 of a file's bytes; RT_ENOENT if it does not exist. */
int rt_sha256_file(const char *path, char out[65], struct rt_sb *err);

/* ---- time ---- */
int64_t rt_now_ns(void);        /* CLOCK_MONOTONIC in ns */
double rt_now_s(void);          /* CLOCK_MONOTONIC in s */
int64_t rt_wall_ms(void);       /* CLOCK_REALTIME in ms since the epoch */
void rt_iso8601(int64_t wall_ms, char out[32]); /* 2026-11-30T03:53:46Z */
void rt_sleep_ns(int64_t ns);
/* Sleep until an absolute CLOCK_MONOTONIC time (ns). */
void rt_sleep_until_ns(int64_t t_ns);

/* ---- files ---- */
/* Read a whole file; *out is NUL-terminated and owned by the caller. */
int rt_read_file(const char *path, char **out, size_t *len, struct rt_sb *err);
/* Write atomically: temp file in the same folder, fsync, rename, fsync dir.
 * mode is used when the file is new; an existing file keeps its mode. */
/* An absolute path with its "." and ".." parts and repeated slashes
 * resolved lexically ("/a/b/../c" is "/a/c"; ".." above / stays /). New string. */
char *rt_path_normalize_abs(const char *p);
int rt_write_file_atomic(const char *path, const void *data, size_t len, int mode,
			 struct rt_sb *err);
bool rt_file_exists(const char *path);
/* Make a folder and its parents. */
int rt_mkdirs(const char *path, struct rt_sb *err);
/* Where the absolute path really leads, relative to root (a real path, as
 * realpath gives it): symbolic links are followed, and a path that does not
 * exist yet is resolved through its longest existing ancestor (a new file
 * in a real folder). *rel gets the path below root ("." for root itself;
 * the caller frees it). RT_EINVAL naming the path when it is not absolute,
 * cannot be resolved (a dangling link, a file used as a folder) or leads
 * outside root (rt_path.c). */
int rt_path_within(const char *root, const char *path, char **rel, struct rt_sb *err);

/* ---- secrets ---- */
/* Replace, in place, with "[redacted]":
 *   - every occurrence of the value of an environment variable that looks
 *     secret (its name contains KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL in
 *     any case, and its value has at least 8 characters);
 *   - every occurrence of a value given to rt_secret_add or rt_secret_add_env;
 *   - the credential after Authorization (and its scheme word), Bearer,
 *     api_key, api-key or apikey followed by ':' or '=' (quoted or not, as in
 *     headers, URLs, JSON and YAML), a URL's password (://user:PASS@), and
 *     the value of an upper-case NAME that looks secret, set with ':' or '='
 *     (HF_TOKEN: x, HF_TOKEN=x), when the value has at least 8 characters.
 * The one redaction function: applied to whatever is stored or printed that
 * may quote a server, a benchmark, an engine or the spec (logs, outputs,
 * errors, answers, change descriptions, exports). Returns how many
 * replacements it made. */
int rt_redact_secrets(struct rt_sb *sb);
/* A copy of s through rt_redact_secrets (the caller frees it); NULL for NULL. */
char *rt_redacted(const char *s);
/* Remember value (copied) as a secret for the rest of the process; values
 * under 4 bytes are ignored. The API key, from whoever is handed it. */
void rt_secret_add(const char *value);
/* The same for a NAME=value setting (the spec's engine.env, a variant's env)
 * when the environment rule above would call it secret. */
void rt_secret_add_env(const char *name, const char *value);
/* The same for the credentials a URL carries: its password
 * (://user:PASS@) and its api_key, api-key, apikey, key, token and
 * access_token query parameters (those of 8 characters or more). */
void rt_secret_add_url(const char *url);

/* ---- misc ---- */
/* Levenshtein distance, for did-you-mean suggestions. */
size_t rt_edit_distance(const char *a, const char *b);
/* Closest candidate within distance 2 (or a third of the length), or NULL. */
const char *rt_did_you_mean(const char *word, const char *const *candidates, size_t n);
/* Format seconds for people: 812us, 3.20ms, 4.00s, 2m05s, 1h02m. */
void rt_fmt_duration(double seconds, char *out, size_t n);
/* qsort comparator: doubles in ascending order. */
int rt_cmp_double(const void *a, const void *b);
/* Words in s: runs of non-whitespace (0 for NULL). The simulated engines
 * count prompt and output tokens this way. */
size_t rt_count_words(const char *s);

/* ---- numbers and durations (rt_duration.c): 0, or RT_EINVAL ---- */
/* A plain decimal: [+-]digits[.digits][e[+-]digits]; no hex, inf or nan. */
int rt_parse_number(const char *s, double *out);
/* A decimal and what follows it (spaces around it skipped): "64 MiB" -> 64, "MiB". */
int rt_split_unit(const char *s, double *v, const char **unit);
/* Seconds from "300s", "250ms", "50us", "10ns", "5m", "5min", "1h" or a bare number
 * (seconds). The sign is kept: callers bound the value. */
int rt_parse_duration(const char *s, double *out);

/* ---- argv-like lists (rt_list.c) ---- */
/* A position in an input file, kept so later errors can name file:line:col. */
struct rt_pos {
	int line; /* 1-based, 0 when not from a file */
	int col;  /* 1-based */
};

/* An argv-like list; v[n] is NULL. Strings may hold placeholders. */
struct rt_strv {
	char **v;
	size_t n;
};

/* One environment variable; value NULL means "unset it". */
struct rt_env {
	char *name;
	char *value;
};

struct rt_envv {
	struct rt_env *v;
	size_t n;
};

/* Free every string and the array; leaves v empty. */
void rt_strv_release(struct rt_strv *v);
/* Append a copy of s (v stays NULL-terminated); returns the copy. */
char *rt_strv_push(struct rt_strv *v, const char *s);
/* Free every name and value and the array; leaves e empty. */
void rt_envv_release(struct rt_envv *e);
/* Free a NULL-terminated argv and its strings (NULL is fine). */
void rt_argv_free(char **v);

#define RT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
