/*
 * What one change is: the definition of a variant as the spec declares it
 * (runner/spec/ fills these from YAML; the kinds in var.h apply them). It
 * lives here, beside the kinds, so that variants/ needs nothing from runner/
 * but runner/base/.
 */
#ifndef RT_VAR_DEF_H
#define RT_VAR_DEF_H

#include <jansson.h>
#include <stdbool.h>

#include "runner/base/rt.h"

enum var_kind {
	VAR_KIND_TABLE,
	VAR_KIND_FLAG,
	VAR_KIND_ENV,
	VAR_KIND_PATCH,
	VAR_KIND_FILE,
};

enum var_table_format { VAR_TBL_AUTO, VAR_TBL_JSON, VAR_TBL_CSV, VAR_TBL_YAML };
enum var_table_op { VAR_TBL_SET, VAR_TBL_REPLACE, VAR_TBL_DELETE };

/* One entry of an atomic table change. */
struct var_def_tbl_entry {
	char *key;                  /* entry key, as var_def_table.key */
	json_t *value;              /* set/replace: object of fields (owned); NULL for delete */
};

struct var_def_table {
	char *file;                 /* path, relative to workdir */
	enum var_table_format format;
	enum var_table_op op;      /* set merges fields, replace swaps the entry, delete removes it */
	char *key;                  /* entry key (JSON/YAML: top-level key, dots not split; CSV: "v1,v2,.." of key columns) */
	json_t *value;              /* set/replace: object of fields (owned); NULL for delete */
	struct rt_strv key_columns; /* CSV: columns forming the key, e.g. M,N,K */
	bool atomic;                /* several entries of the file as one change: entries, not key/value */
	struct var_def_tbl_entry *entries; /* atomic: the entries, in spec order (owned) */
	size_t n_entries;           /* number of entries */
};

struct var_def_patch {
	char *file;                 /* unified diff */
	char *dir;                  /* source folder it applies to */
};

struct var_def_file {
	char *target;               /* file to replace */
	char *source;               /* the variant's copy */
};

/* flag: {name, key, value}: one key inside a JSON-valued flag. */
struct var_def_flag_key {
	char *name;                 /* the option, e.g. --compilation-config; NULL: not this form */
	char *key;                  /* dotted path (a.b) or, starting with '/', a JSON pointer */
	json_t *value;              /* what the key is set to (owned) */
};

struct var_def {
	char *name;                 /* unique */
	enum var_kind kind;
	struct var_def_table table;
	struct rt_strv flag;      /* engine args: "--x v" replaces an existing --x, else appended */
	struct var_def_flag_key flag_key; /* or one key inside a JSON-valued flag (flag.n == 0) */
	struct rt_envv env;       /* set or (value NULL) unset */
	struct var_def_patch patch;
	struct var_def_file file;
	struct rt_strv build;     /* build command run after apply and after revert (patch, file) */
	char *description;          /* optional free text: why this change might help */
	struct rt_pos pos;
};

/* "table", "flag", ...; "unknown" for a value out of range. */
const char *var_kind_name(enum var_kind k);

#endif
