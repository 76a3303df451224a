/*
 * The spec's `space:` section: named parameters, each bound to a target (a
 * field of one table entry, a flag's value, an environment variable, or a
 * template file rendered with the values), and restrictions between them.
 * Parameters with the same binding (one table entry, one template) form a
 * target; a point of a target becomes one change, built as the spec would
 * write the variant and read by the variant parser of spec_variants.c, so
 * a generated variant is validated as a written one.
 *
 * Ownership: struct spec owns its struct spec_space (spec_free frees it).
 */
#ifndef RT_SPEC_SPACE_H
#define RT_SPEC_SPACE_H

#include <jansson.h>

#include "agents/space.h"
#include "runner/spec/spec.h"

/* What a target's parameters set. */
enum spec_bind {
	SPEC_BIND_TABLE,    /* fields of one table entry */
	SPEC_BIND_FLAG,     /* one flag's value */
	SPEC_BIND_ENV,      /* one environment variable */
	SPEC_BIND_TEMPLATE, /* a file rendered from a template ({{NAME}} replaced) */
};

/* One target: the parameters that together make one change. */
struct spec_target {
	enum spec_bind kind;      /* what they set */
	char *label;              /* for people: "table tiles.json entry small" */
	json_t *table;            /* table: file, format, key_columns as written (owned) */
	char *key;                /* table: the entry's key */
	char *name;               /* flag (--x) or env variable name */
	char *source;             /* template: the template file (resolved) */
	char *target;             /* template: the file it replaces (as written) */
	json_t *build;            /* template: the build argv run after it is applied, or NULL (owned) */
	char **fields;            /* table: the field of each parameter, as space.params */
	struct agent_space space; /* the parameters bound here and their restrictions */
	struct rt_pos pos;        /* where the first of its parameters is declared */
};

struct spec_space {
	struct spec_target *targets; /* in order of first declaration */
	size_t n_targets;            /* entries in targets */
	size_t n_params;             /* parameters over all targets */
};

void spec_space_free(struct spec_space *sp);
/* The variant of point code of target t, as the spec would write it (a
 * JSON object: name, description, and one of table, flag, env, file); a
 * template is rendered first, into <workdir>/.ratchet/space/. Caller owns
 * *variant. RT_EIO when the template cannot be read or written. */
int spec_space_variant(const struct spec *s, size_t t, uint64_t code, json_t **variant, struct rt_sb *err);
/* Read a variant object through the spec's own variant parser, with the
 * spec's engine, benchmarks and workdir. RT_EUSAGE with the parser's
 * messages when it is not a valid variant. Free with spec_variant_release. */
int spec_variant_from_json(const struct spec *s, json_t *variant, struct var_def *out, struct rt_sb *err);
void spec_variant_release(struct var_def *v);

#endif
