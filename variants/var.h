/*
 * Variants: the kinds of change one iteration may make (table entry, engine
 * flag, environment variable, source patch + build, file swap). Each kind is
 * one ops table (struct var_ops); var_ops_for() is the registry.
 *
 * Crash safety is split between this module and the campaign loop:
 *   1. plan()   computes, touching nothing, the files the change will touch
 *               with their current bytes ("before") and, where it can be
 *               computed in memory, their new bytes ("after");
 *   2. the loop journals the plan (intent + before bytes) in SQLite;
 *   3. apply()  performs the change (atomic writes, git apply, build);
 *   4. revert() writes every planned file back to its before bytes (and
 *               removes files that did not exist), then re-runs the build.
 * flag and env touch no files: they edit a struct var_config, the effective
 * engine configuration (extra argv and environment overrides).
 *
 * Paths in variants are relative to ctx->workdir. Errors are appended to err
 * as "file: key: message" and the functions return negative RT_E* codes.
 */
#ifndef RT_VAR_H
#define RT_VAR_H

#include <stdbool.h>
#include <stddef.h>

#include "variants/var_def.h"
#include "runner/base/rt.h"

/* Runs argv in cwd with a timeout, output (stdout+stderr) appended to out
 * (which may have a cap); *status gets the exit status (128+signal when
 * killed). Returns 0 when the process ran (whatever its status) or a negative
 * RT_E*. The campaign passes run_bcmd_exec's adapter; tests may too. */
typedef int (*var_exec_fn)(char *const *argv, const char *cwd, double timeout_s,
			   struct rt_sb *out, int *status, struct rt_sb *err);

/* The effective engine configuration on top of spec.engine. */
struct var_config {
	struct rt_strv *flags; /* flag groups of kept variants + candidate, in order (owned) */
	char **flag_owner;       /* name of the variant that added each group (owned) */
	char **flag_key;         /* per group: NULL, or the key the group sets inside its option's
				  * JSON value (the group is then [option, value as JSON]) (owned) */
	size_t n_flags;          /* number of groups */
	struct rt_env *env;    /* overrides in order; value NULL = unset (owned) */
	char **env_owner;        /* name of the variant that added each override (owned) */
	size_t n_env;            /* number of overrides */
};

void var_config_init(struct var_config *c);
void var_config_release(struct var_config *c);
/* Deep copy. */
void var_config_copy(struct var_config *dst, const struct var_config *src);
/* base argv (NULL-terminated) + every flag group, in order: "[--x, v]"
 * replaces the value of an existing --x (or --x=v keeps the = form), else
 * appends; a lone "--x" is appended when absent. A group with a flag_key
 * sets that key inside the JSON object --x holds at that point (absent:
 * {}), keeping every other key; a value that is not a JSON object is left
 * as it is (var_flag_key_value refuses it when planned). Returns a
 * NULL-terminated argv the caller frees with rt_argv_free(). */
char **var_config_argv(const struct var_config *c, char *const *base_argv);
/* Effective overrides: base (spec.engine.env, may be NULL) then the config's,
 * one entry per name (the last wins), sorted by name. Caller frees with
 * rt_envv_release(). */
void var_config_env(const struct var_config *c, const struct rt_envv *base,
		    struct rt_envv *out);
void rt_argv_free(char **v);
void rt_envv_release(struct rt_envv *e);

/* Context every op gets. */
struct var_ctx {
	const char *workdir;            /* spec->workdir, absolute */
	struct var_config *cfg;         /* config the flag/env kinds edit */
	char *const *base_argv;         /* spec.engine.command (NULL-terminated) or NULL */
	char *const *flag_argv;         /* the command line a flag's key form reads: base_argv, or
					 * without an engine the first command benchmark's; may be NULL */
	const struct rt_envv *base_env; /* spec.engine.env or NULL */
	var_exec_fn exec;               /* process runner for git and build commands */
	double build_timeout_s;         /* build and git timeout; 0: 3600 */
	size_t build_log_cap;           /* cap of the build log; 0: 4 MiB */
};

/* One file a change touches. */
struct var_file {
	char *path;        /* absolute path (a symbolic link's target) */
	char *rel;         /* path as the user wrote it (or relative to the patch dir) */
	bool existed;      /* false: the change creates it (revert removes it) */
	char *before;      /* current bytes (NULL when !existed) */
	size_t before_len;
	bool has_after;    /* after is known before applying */
	char *after;       /* new bytes when has_after */
	size_t after_len;
};

struct var_plan {
	struct var_file *files; /* in a stable order */
	size_t n;
};

void var_plan_release(struct var_plan *p);

/* The ops table of one kind. */
struct var_ops {
	const char *name; /* "table", "flag", ... */
	/* Compute the plan without touching anything. */
	int (*plan)(const struct var_def *v, const struct var_ctx *ctx, struct var_plan *out,
		    struct rt_sb *err);
	/* Perform the change planned; build output (if any) goes to log. */
	int (*apply)(const struct var_def *v, const struct var_ctx *ctx,
		     const struct var_plan *p, struct rt_sb *log, struct rt_sb *err);
	/* Undo it: files back to before bytes, build re-run; config undone. */
	int (*revert)(const struct var_def *v, const struct var_ctx *ctx,
		      const struct var_plan *p, struct rt_sb *log, struct rt_sb *err);
	/* sha256 hex of kind + canonical content of the change. */
	int (*fingerprint)(const struct var_def *v, const struct var_ctx *ctx, char out[65],
			   struct rt_sb *err);
	/* One readable line (or diffstat) of the change, appended to out. Call
	 * it before apply: it compares with the current state. */
	int (*describe)(const struct var_def *v, const struct var_ctx *ctx,
			const struct var_plan *p, struct rt_sb *out, struct rt_sb *err);
};

/* Registry: the ops of a kind (never NULL for a valid kind). */
const struct var_ops *var_ops_for(enum var_kind kind);

extern const struct var_ops var_table_ops;
extern const struct var_ops var_flag_ops;
extern const struct var_ops var_env_ops;
extern const struct var_ops var_patch_ops;
extern const struct var_ops var_file_ops;

/* One file of a configuration, for its fingerprint. */
struct var_fp_file {
	const char *path;   /* absolute path */
	const char *sha256; /* sha256 hex of the bytes it will hold, "absent" when it will not
			     * exist; NULL: hash the file's current bytes (absent when missing) */
};

/* The one configuration fingerprint (stored in iterations.config_sha256):
 * sha256 over the files sorted by path (each path once, the first given
 * wins), then the effective argv and the effective env (sorted by name).
 * Every field is length-prefixed, so no path, argument or value (spaces and
 * newlines included) can be confused with another field. Two routes to the
 * same configuration get the same fingerprint. */
int var_config_fingerprint(const struct var_fp_file *files, size_t n, char *const *argv,
			   const struct rt_envv *env, char out[65], struct rt_sb *err);

/* ---- helpers shared by the kinds (var.c) ---- */
/* How a path is shown to people: relative to workdir when it is inside it. */
const char *var_display_path(const struct var_ctx *ctx, const char *path);
/* Absolute path of rel under workdir (rel may already be absolute). */
char *var_path(const struct var_ctx *ctx, const char *rel);
/* sha256 of kind, where (target or folder), the sha256 of the file's bytes
 * and the build argv: the fingerprint of file and patch changes. key names
 * the spec key in the error when the file is missing. */
int var_fingerprint_file(const struct var_def *v, const struct var_ctx *ctx, const char *kind,
			 const char *where, const char *file, const char *key, char out[65],
			 struct rt_sb *err);
/* The revert of kinds that touch files: before bytes back, then the build. */
int var_revert_files(const struct var_def *v, const struct var_ctx *ctx,
		     const struct var_plan *p, struct rt_sb *log, struct rt_sb *err);
/* Write every planned file back to its before bytes (or remove it). */
int var_files_restore(const struct var_plan *p, struct rt_sb *err);
/* Write every planned file with its after bytes. */
int var_files_write_after(const struct var_plan *p, struct rt_sb *err);
/* Run the variant's build argv (if any) in workdir (patch: in patch.dir); failure is RT_EPROC
 * with the log kept in log. */
int var_run_build(const struct var_def *v, const struct var_ctx *ctx, struct rt_sb *log,
		  struct rt_sb *err);
/* Add one file to a plan, reading its current bytes. A symbolic link is
 * followed: its target's path is planned (f->path), so writes and restores
 * go through the link and it stays a link; a link whose target is missing
 * is RT_ENOENT. */
int var_plan_add(struct var_plan *p, const char *abs, const char *rel, struct rt_sb *err);
/* The same for paths a tool other than ratchet writes (git apply): a
 * symbolic link is refused with RT_EINVAL. */
int var_plan_add_nofollow(struct var_plan *p, const char *abs, const char *rel, struct rt_sb *err);

/* The value of option name in argv (NULL-terminated) after key is set to
 * value (JSON text) inside it: *old gets the key's value before (NULL when
 * absent; a new reference), *out the option's new JSON text (caller frees).
 * An absent option starts from {}; a value that is not a JSON object is
 * RT_EINVAL naming the option. */
int var_flag_key_value(char **argv, const char *name, const char *key, const char *value,
		       json_t **old, char **out, struct rt_sb *err);
/* The current value of option name in argv (n entries): NULL when absent,
 * "" when given without a value (or want_value is false). Borrowed. */
const char *var_argv_value(char **argv, size_t n, const char *name, bool want_value);

/* Index of option name in argv (n entries) as "--x" or "--x=v" (*eq_form
 * true), or -1. */
long var_argv_find_opt(char **v, size_t n, const char *name, bool *eq_form);
/* An option ("-x", "--x"), not a value (a negative number is a value). */
bool var_argv_is_option(const char *s);

/* ---- CSV (var_csv.c) ---- */
struct var_csv_field {
	size_t start, end; /* raw bytes (with quotes) */
	char *value;       /* unquoted value (owned) */
	bool quoted;       /* written with quotes */
};

struct var_csv_row {
	size_t start, end;       /* raw bytes including the line terminator */
	size_t term;             /* offset of the terminator (== end when none) */
	struct var_csv_field *f;     /* fields (owned) */
	size_t n;                /* number of fields */
	int line;                /* 1-based line where the row starts */
};

struct var_csv {
	struct var_csv_row *rows; /* header first */
	size_t n;
};

/* Parse a whole CSV text (header row first); file names it in errors
 * ("file:line: unterminated quoted field"). On error c is left empty (no
 * rows, nothing to release). var_csv_release leaves c empty too. */
int var_csv_parse(const char *file, const char *d, size_t len, struct var_csv *c, struct rt_sb *err);
void var_csv_release(struct var_csv *c);

/* The entry of table variant v's file and key as the file holds it now
 * (*entry: a new reference, NULL when absent). RT_ENOENT when the file
 * is missing, a parse error naming the file otherwise. */
int var_table_entry(const struct var_def *v, const struct var_ctx *ctx, json_t **entry, struct rt_sb *err);

/* Table kind internals exposed for tests: parse/serialize one format. */
enum var_table_format var_table_format_of(const struct var_def_table *t);

#endif
