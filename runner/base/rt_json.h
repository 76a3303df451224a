/*
 * Paths into a JSON document, the one parser of them: an RFC 6901 JSON
 * pointer ("/a/b~1c/0", every token unescaped: ~1 is '/', ~0 is '~') or a
 * dotted path ("a.b", each part an object key). The command benchmark reads
 * metrics with pointers; a flag variant sets one key inside a JSON-valued
 * flag with either form.
 *
 * Ownership: tokens are new strings in out (rt_strv_release); the json_t
 * results are borrowed from root unless said otherwise.
 */
#ifndef RT_JSON_H
#define RT_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "runner/base/rt.h"

/* Split a JSON pointer (must start with '/'; "" is the whole document, no
 * tokens) into its unescaped tokens. RT_EINVAL names the pointer on a bad
 * escape or a missing leading '/'. */
int rt_json_pointer_split(const char *ptr, struct rt_strv *out, struct rt_sb *err);
/* A key as a flag variant writes it: a JSON pointer when it starts with '/',
 * else a dotted path (no empty parts). */
int rt_json_path_split(const char *key, struct rt_strv *out, struct rt_sb *err);
/* The member tok of an object, or the element of an array when tok is a
 * canonical decimal index ("0", "12", never "01"); NULL when absent. */
json_t *rt_json_step(json_t *cur, const char *tok);
/* Set value (a reference is taken) at the path of tokens in root, creating
 * the objects on the way; an existing array element may be replaced. What
 * lies on the way and is neither an object nor such an array is RT_EINVAL
 * naming the token. */
int rt_json_set_path(json_t *root, const struct rt_strv *path, json_t *value, struct rt_sb *err);
/* Redact, in place, every string of the document (keys stay) through
 * rt_redact_secrets; returns how many replacements were made. A prompt
 * built from the spec and the store carries no secret to a chat server. */
int rt_json_redact(json_t *root);

#endif
