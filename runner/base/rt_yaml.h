/*
 * YAML and JSON both ways, through libyaml and jansson: the one YAML-to-JSON
 * converter and the one JSON-to-YAML emitter. The spec loader reads table
 * entries of variants with it, `ratchet check` prints the normalized spec
 * with it, and the table variant kind reads and writes YAML tables with it.
 *
 * Reading follows one scalar-typing rule, the YAML 1.2 core schema with
 * decimal numbers only:
 *   - a plain scalar that is empty, ~, null, Null or NULL is null;
 *   - true, True, TRUE, false, False, FALSE are booleans;
 *   - a decimal without a point or an exponent that fits in 64 bits is an
 *     integer; any other decimal (rt_parse_number) is a real;
 *   - everything else is a string, and so is every quoted or block scalar.
 * So 0x10, 0o17, .inf, .nan (JSON has no inf or nan) and YAML 1.1's yes,
 * no, on and off stay strings.
 *
 * Writing is cautious: a string that a YAML 1.1 or 1.2 reader could take
 * for something else (empty, a null or boolean word in any case, y, n,
 * anything that starts like a number or .inf/.nan) is double quoted, and a
 * real always carries a point or an exponent, so it reads back as a real.
 * Mappings are written in block style; a list of scalars that fits on a
 * short line is written in flow style ([1, 2, 4]).
 *
 * Ownership: the json_t results are new references the caller releases.
 */
#ifndef RT_YAML_H
#define RT_YAML_H

#include <jansson.h>
#include <stdbool.h>
#include <yaml.h>

#include "runner/base/rt.h"

/* Why a conversion failed, and where. */
struct rt_yaml_err {
	const yaml_node_t *at; /* the node at fault (for its line and column), or NULL */
	char msg[160];         /* what is wrong, e.g. "duplicate key 'a' (first at 3:5)" */
};

/* A plain null scalar: empty, ~, null, Null or NULL. */
bool rt_yaml_is_null(const yaml_node_t *n);
/* One scalar node as JSON, by the rule above; NULL when it is not valid UTF-8. */
json_t *rt_yaml_scalar_json(const yaml_node_t *n);
/* A node and everything under it as JSON. Mapping keys must be scalars and
 * unique; nesting stops at 64 levels (which also ends alias cycles). NULL
 * with err filled on failure. */
json_t *rt_yaml_to_json(yaml_document_t *doc, yaml_node_t *n, struct rt_yaml_err *err);

/* The first document of YAML text as JSON; NULL with err filled ("NAME:LINE:COL: what")
 * when it does not parse or convert. name is used in messages. */
json_t *rt_yaml_text_json(const char *name, const char *text, size_t len, struct rt_sb *err);

/* Add v to doc as new nodes; returns the id of the top one (0 when libyaml
 * refuses, e.g. out of memory). */
int rt_yaml_add_json(yaml_document_t *doc, const json_t *v);
/* Emit doc as YAML text appended to out. doc is consumed (deleted) either
 * way. Returns 0 or RT_EIO with err filled. */
int rt_yaml_emit(yaml_document_t *doc, struct rt_sb *out, struct rt_sb *err);
/* v as a YAML document appended to out; 0 or RT_EIO with err filled. */
int rt_yaml_from_json(const json_t *v, struct rt_sb *out, struct rt_sb *err);

/* Shortest decimal text that reads back as x ("4", "0.25", "1e-06"); whole
 * numbers below 1e15 print without a point. */
void rt_yaml_real_text(double x, char *out, size_t n);

#endif
