/*
 * Internals shared by the spec loader (spec.c), the field tables
 * (spec_fields.c) and the normalizer (spec_dump.c). Not for other modules:
 * they use spec.h.
 *
 * Each struct of spec.h that is a YAML mapping has one table of struct
 * spec_field rows: the key, its type, where it lives in the struct, its
 * bounds. The same table drives parsing, validation, the unknown-key
 * did-you-mean and the normalized dump, so the three never disagree.
 */
#ifndef RT_SPEC_INT_H
#define RT_SPEC_INT_H

#include "runner/spec/spec.h"

#include <yaml.h>

/* At most this many error lines are collected. */
#define SPEC_MAX_ERRORS 20

enum spec_ftype {
	SF_END = 0, /* terminates a table */
	SF_STR,     /* char *; FL_PATH resolves it, FL_TMPL checks placeholders */
	SF_INT,     /* int */
	SF_U64,     /* uint64_t */
	SF_UINT,    /* unsigned */
	SF_DBL,     /* double, plain number */
	SF_DUR,     /* double seconds: 300s 250ms 50us 5m 1h or a bare number */
	SF_FRAC,    /* double fraction: 2% or a bare number in [0,1] */
	SF_BOOL,    /* bool */
	SF_SIZE,    /* size_t bytes: 64MiB 1GB 4096 */
	SF_ENUM,    /* int-sized enum, names in .names */
	SF_STRV,    /* struct rt_strv (argv); FL_TMPL checks placeholders */
	SF_ENVV,    /* struct rt_envv: map NAME -> string, number, bool or null */
	SF_DIM3U,   /* unsigned[3]: a number or a list of up to 3 */
	SF_DIM3L,   /* uint64_t[3]: a number or a list of up to 3 */
	SF_DBLV,    /* double * at .off, size_t count at .off2 */
	SF_U64V,    /* uint64_t * at .off, size_t count at .off2 */
	SF_SUB,     /* nested mapping whose fields (.sub) live in the same struct */
	SF_CUSTOM,  /* parsed by .parse, dumped by .dump */
};

enum {
	FL_REQ = 1 << 0,    /* key must be present */
	FL_NULLOK = 1 << 1, /* explicit null gives NULL; dumped as null when NULL */
	FL_TMPL = 1 << 2,   /* placeholders allowed and checked */
	FL_PATH = 1 << 3,   /* relative path resolved against workdir (implies FL_TMPL) */
	FL_LO = 1 << 4,     /* value >= lo */
	FL_LOX = 1 << 5,    /* value > lo */
	FL_HI = 1 << 6,     /* value <= hi */
	FL_HIX = 1 << 7,    /* value < hi */
	FL_OMIT0 = 1 << 8,  /* not dumped when zero / empty / NULL */
};

struct spec_ld;
struct spec_field;

typedef void (*spec_parse_fn)(struct spec_ld *ld, yaml_node_t *val, const char *path, void *base,
			      const struct spec_field *f);
typedef json_t *(*spec_dump_fn)(const void *base, const struct spec_field *f);

struct spec_field {
	const char *key;                  /* YAML key */
	enum spec_ftype type;             /* how the value is read */
	size_t off;                       /* offset of the value in the struct */
	size_t off2;                      /* count offset for SF_DBLV / SF_U64V */
	unsigned flags;                   /* FL_* */
	double lo, hi;                    /* bounds, used with FL_LO/LOX/HI/HIX */
	const char *const *names;         /* SF_ENUM: names by value, NULL-terminated */
	const struct spec_field *sub;     /* SF_SUB: nested table */
	spec_parse_fn parse;              /* SF_CUSTOM */
	spec_dump_fn dump;                /* SF_CUSTOM */
	const char *help;                 /* one line for docs/spec.md */
};

/* Loader state for one spec_load_text call. */
struct spec_ld {
	const char *file;       /* name used in messages */
	yaml_document_t *doc;   /* the parsed document */
	struct rt_sb *err;      /* where messages go */
	int nerr;               /* messages so far */
	struct spec *s;         /* being filled */
	bool goal_given;        /* objective.goal was written (else it follows the metric) */
};

/* Tables (spec_fields.c). */
extern const struct spec_field spec_top_fields[];
extern const struct spec_field spec_engine_fields[];
extern const struct spec_field spec_cmd_fields[];
extern const struct spec_field spec_load_fields[];
extern const struct spec_field spec_kernel_fields[];
extern const struct spec_field spec_karg_buf_fields[];
extern const struct spec_field spec_karg_scalar_fields[];
extern const struct spec_field spec_repeats_fields[];
extern const struct spec_field spec_gate_fields[];
extern const struct spec_field spec_objective_fields[];
extern const struct spec_field spec_table_fields[];
extern const struct spec_field spec_patch_fields[];
extern const struct spec_field spec_file_fields[];
extern const char *const spec_format_names[];
extern const char *const spec_api_names[];
extern const char *const spec_pattern_names[];
extern const char *const spec_dtype_names[];
extern const char *const spec_init_names[];
extern const char *const spec_goal_names[];
extern const char *const spec_gsm8k_format_names[];
extern const char *const spec_extract_names[];
extern const char *const spec_tblfmt_names[];
extern const char *const spec_better_names[];

/* Loader helpers (spec.c) used by custom parsers in spec_fields.c. */
void spec_lerr(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void spec_lerr_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct rt_pos spec_node_pos(const yaml_node_t *n);
bool spec_in_table(const struct spec_field *tbl, const char *key);
void spec_check_keys(struct spec_ld *ld, yaml_node_t *map, const char *path,
		     const struct spec_field *tbl, const char *const *extra);
void spec_parse_strv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_strv *out);
void spec_parse_envv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_envv *out);
const char *spec_want_scalar(struct spec_ld *ld, yaml_node_t *v, const char *path, const char *what);
const char *spec_got(const yaml_node_t *n, char *buf, size_t len);
bool spec_parse_number(const char *s, double *out);
bool spec_split_num(const char *s, double *v, const char **unit);
yaml_node_t *spec_node(struct spec_ld *ld, int id);
void spec_post_validate(struct spec_ld *ld, yaml_node_t *root);
void spec_defaults(struct spec *s);
void rt_strv_release(struct rt_strv *v);
void rt_envv_release(struct rt_envv *e);
void spec_parse_fields(struct spec_ld *ld, yaml_node_t *map, const char *path, void *base,
		       const struct spec_field *tbl, const char *const *extra_keys);
yaml_node_t *spec_map_get(struct spec_ld *ld, yaml_node_t *map, const char *key);
const char *spec_scalar(const yaml_node_t *n); /* NULL unless a scalar */
bool spec_is_null(const yaml_node_t *n);
bool spec_parse_duration(const char *s, double *out);
char *spec_path_join(const char *path, const char *key); /* "a.b", or "b" when path is "" */
char *spec_path_index(const char *path, size_t i);        /* "a[i]" */
bool spec_check_tmpl(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *s);
char *spec_resolve(const struct spec *s, const char *p); /* new string */
json_t *spec_node_json(struct spec_ld *ld, yaml_node_t *n, const char *path, int depth);

/* Dump helpers (spec_dump.c). */
void spec_shortest(double x, char *out, size_t n); /* shortest text that reads back as x */
json_t *spec_fields_json(const void *base, const struct spec_field *tbl);
void spec_yaml_json(const json_t *v, struct rt_sb *out); /* json -> block YAML */

#endif
