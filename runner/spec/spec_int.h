/*
 * Internals shared by the files of the spec loader. Not for other modules:
 * they use spec.h.
 *
 * Each struct of spec.h that is a YAML mapping has one table of struct
 * spec_field rows: the key, its type, where it lives in the struct, its
 * bounds. The same table drives parsing (spec_field.c), validation, the
 * unknown-key did-you-mean and the normalized dump (spec_dump.c), so the
 * three never disagree. Each section of the spec has its own file with its
 * tables and the parsers a table row cannot describe alone:
 *   spec.c              messages, node helpers, paths, loading the document
 *   spec_field.c        the generic field-table machinery, one parser per type
 *   spec_dump.c         the tables back to JSON, and YAML through rt_yaml
 *   spec_enums.c        the enum name tables
 *   spec_metrics.c      metric names per producer, the SLO grammar
 *   spec_top.c          the top-level table, repeats, defaults
 *   spec_engine.c       engine:
 *   spec_bench.c        benchmarks: and command benchmarks
 *   spec_bench_load.c   load benchmarks and their SLOs
 *   spec_bench_kernel.c kernel benchmarks
 *   spec_objective.c    objective:, constraints: and the cross references
 *   spec_gate.c         gate: and log_events:
 *   spec_variants.c     variants:
 *   spec_profile.c      profile: (the op map of imported profiles)
 *   spec_space.c        space: (parameters, bindings, restrictions)
 *   spec_llm.c          llm: (strategy llm's endpoint, budget, allowed kinds and files)
 *   spec_util.c         the public helpers of spec.h and spec_free()
 */
#ifndef RT_SPEC_INT_H
#define RT_SPEC_INT_H

#include "runner/spec/spec.h"

#include <yaml.h>

/* At most this many error lines are collected, then one line says how many
 * more there were (documented in spec.h). */
#define SPEC_MAX_ERRORS 20

#define SPEC_OFF(T, m) offsetof(T, m)

enum spec_ftype {
	SF_END = 0, /* terminates a table */
	SF_STR,     /* char *; FL_PATH resolves it, FL_TMPL checks placeholders */
	SF_INT,     /* int */
	SF_U64,     /* uint64_t */
	SF_UINT,    /* unsigned */
	SF_DBL,     /* double, plain number */
	SF_DUR,     /* double seconds: 300s 250ms 50us 10ns 5m 1h or a bare number */
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
	SF_NTYPES   /* number of types */
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
	int dropped;            /* errors past SPEC_MAX_ERRORS, counted in one last line */
	struct spec *s;         /* being filled */
	bool goal_given;        /* objective.goal was written (else it follows the metric) */
	void *bench_names;      /* benchmark names so far (spec_item_name's tree) */
	void *variant_names;    /* variant names so far (spec_item_name's tree) */
	char *bare_metric;      /* objective.metric written without its benchmark (owned), for a
				 * did-you-mean once every benchmark's metrics are known */
	struct rt_pos bare_pos; /* where */
};

/* Bytes from "64MiB", "1GB", "4096" (spec_field.c); false when not a size. */
bool spec_parse_size(const char *s, size_t *out);

/* ---- tables (one file per section, see above) ---- */
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

/* ---- enum names by value, NULL-terminated (spec_enums.c) ---- */
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
extern const char *const spec_backend_names[];
extern const char *const spec_bench_kind_names[];

/* ---- the custom parsers and dumpers of the top-level table ---- */
void spec_parse_engine(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f);
json_t *spec_dump_engine(const void *base, const struct spec_field *f);
void spec_parse_benches(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f);
json_t *spec_dump_benches(const void *base, const struct spec_field *f);
void spec_parse_objective(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f);
json_t *spec_dump_objective(const void *base, const struct spec_field *f);
void spec_parse_constraints(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			    const struct spec_field *f);
json_t *spec_dump_constraints(const void *base, const struct spec_field *f);
void spec_parse_gate(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		     const struct spec_field *f);
json_t *spec_dump_gate(const void *base, const struct spec_field *f);
void spec_parse_profile(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f);
json_t *spec_dump_profile(const void *base, const struct spec_field *f);
void spec_profile_release(struct spec_profile *p);
void spec_parse_log_events(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			   const struct spec_field *f);
json_t *spec_dump_log_events(const void *base, const struct spec_field *f);
void spec_parse_variants(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			 const struct spec_field *f);
json_t *spec_dump_variants(const void *base, const struct spec_field *f);
/* One variant of the list (arg: the struct spec, whose variants array has room). */
void spec_parse_variant_item(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg);
/* space: (spec_space.c), and its checks against the strategy and variants. */
void spec_parse_space(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f);
json_t *spec_dump_space(const void *base, const struct spec_field *f);
void spec_space_post(struct spec_ld *ld, yaml_node_t *root);
void spec_parse_exec(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		     const struct spec_field *f);
json_t *spec_dump_exec(const void *base, const struct spec_field *f);
/* llm: (spec_llm.c), and its checks against the strategy. */
void spec_parse_llm(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		    const struct spec_field *f);
json_t *spec_dump_llm(const void *base, const struct spec_field *f);
void spec_llm_post(struct spec_ld *ld, yaml_node_t *root);
void spec_parse_telemetry(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f);
json_t *spec_dump_telemetry(const void *base, const struct spec_field *f);
void spec_telemetry_defaults(struct spec_telemetry *t);
void spec_telemetry_release(struct spec_telemetry *t);
void spec_parse_devices(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f);
json_t *spec_dump_devices(const void *base, const struct spec_field *f);

/* ---- benchmark kinds (spec_bench_load.c, spec_bench_kernel.c) ---- */
void spec_load_defaults(struct spec_load *l);
void spec_load_post(struct spec_ld *ld, yaml_node_t *lv, const char *path, struct spec_load *l);
void spec_kernel_defaults(struct spec_kernel *k);
void spec_kernel_post(struct spec_ld *ld, yaml_node_t *kv, const char *path, struct spec_kernel *k);

/* ---- metric names (spec_metrics.c) ---- */
/* The metrics a built-in format yields (static); 0 and NULL for none. */
size_t spec_format_metrics(enum spec_cmd_format f, const char *const **names);
/* Fill b->metric_names from its kind, format and explicit metrics. */
void spec_bench_metric_names(struct spec_bench *b);

/* ---- messages, nodes and paths (spec.c) ---- */
void spec_lerr(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void spec_lerr_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A warning (not an error: the spec loads) at pos, into ld->s->warnings. */
void spec_lwarn_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
struct rt_pos spec_node_pos(const yaml_node_t *n);
const char *spec_got(const yaml_node_t *n, char *buf, size_t len);
yaml_node_t *spec_node(struct spec_ld *ld, int id);
yaml_node_t *spec_map_get(struct spec_ld *ld, yaml_node_t *map, const char *key);
const char *spec_scalar(const yaml_node_t *n); /* NULL unless a scalar */
bool spec_is_null(const yaml_node_t *n);
size_t spec_seq_len(const yaml_node_t *v);
yaml_node_t *spec_seq_item(struct spec_ld *ld, yaml_node_t *v, size_t i);
bool spec_want_seq(struct spec_ld *ld, yaml_node_t *v, const char *path);
bool spec_want_map(struct spec_ld *ld, yaml_node_t *v, const char *path);
char *spec_path_join(const char *path, const char *key); /* "a.b", or "b" when path is "" */
char *spec_path_index(const char *path, size_t i);        /* "a[i]" */
char *spec_resolve(const struct spec *s, const char *p); /* new string */
/* A node as JSON (rt_yaml's typing rule), or NULL with the error reported. */
json_t *spec_node_json(struct spec_ld *ld, yaml_node_t *n, const char *path);

/* ---- the field machinery (spec_field.c) ---- */
void spec_parse_fields(struct spec_ld *ld, yaml_node_t *map, const char *path, void *base,
		       const struct spec_field *tbl, const char *const *extra_keys);
bool spec_in_table(const struct spec_field *tbl, const char *key);
void spec_check_keys(struct spec_ld *ld, yaml_node_t *map, const char *path,
		     const struct spec_field *tbl, const char *const *extra);
void spec_parse_strv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_strv *out);
void spec_parse_envv(struct spec_ld *ld, yaml_node_t *v, const char *path, unsigned flags,
		     struct rt_envv *out);
const char *spec_want_scalar(struct spec_ld *ld, yaml_node_t *v, const char *path, const char *what);
bool spec_check_tmpl(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *s);
bool spec_check_regex(struct spec_ld *ld, yaml_node_t *at, const char *path, const char *re);
/* Index of s in names (NULL-terminated), or -1 after reporting "unknown WHAT
 * 's'" with a did-you-mean or the list of names. */
int spec_name_index(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *what,
		    const char *s, const char *const *names);
/* s is non-empty and holds only letters, digits, _ and the characters of extra. */
bool spec_ident_ok(const char *s, const char *extra);
/* A mapping of free-form NAME: value entries (metrics, SLOs, log events,
 * environment): duplicate keys are reported, then fn is called on the first
 * occurrence of each string key, with the mapping's path and the entry's
 * ("path.NAME"). */
typedef void (*spec_entry_fn)(struct spec_ld *ld, yaml_node_t *kn, const char *key,
			      yaml_node_t *vn, const char *path, const char *kpath, void *arg);
void spec_map_each(struct spec_ld *ld, yaml_node_t *map, const char *path, spec_entry_fn fn,
		   void *arg);
size_t spec_map_len(const yaml_node_t *map); /* pairs in a mapping */
/* A list of mappings (benchmarks, kernel arguments, variants): fn is called
 * on each item with path "path[i]"; an item that is not a mapping is
 * reported instead. */
typedef void (*spec_item_fn)(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg);
void spec_seq_each(struct spec_ld *ld, yaml_node_t *seq, const char *path, spec_item_fn fn,
		   void *arg);
/* The name: of a list item (a benchmark, a variant): present, made of
 * letters, digits, _ and the characters of extra, and not taken by an
 * earlier item of the same list (*seen: the names so far, a search tree
 * that spec_names_release frees, so a list of n items costs n log n). A new
 * string, or NULL after reporting; a duplicate is reported and still
 * returned. */
char *spec_item_name(struct spec_ld *ld, yaml_node_t *it, const char *ip, const char *what,
		     const char *extra, void **seen);
/* Free the name trees of spec_item_name. */
void spec_names_release(struct spec_ld *ld);
/* Which of keys[0..n) the mapping has: the first in *first, the second in
 * *second (-1 when none); returns how many. nodes[i] gets each value or NULL. */
int spec_which_keys(struct spec_ld *ld, yaml_node_t *map, const char *const *keys, int n,
		    yaml_node_t **nodes, int *first, int *second);

/* ---- the top and the cross references ---- */
void spec_defaults(struct spec *s);
void spec_post_validate(struct spec_ld *ld, yaml_node_t *root);

/* ---- the dump (spec_dump.c) ---- */
json_t *spec_fields_json(const void *base, const struct spec_field *tbl);
/* A number as JSON: an integer when whole (300 seconds dumps as 300). */
json_t *spec_json_num(double x);
json_t *spec_strv_json(const struct rt_strv *v);  /* a list of strings */

#endif
