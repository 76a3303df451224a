/*
 * JSON paths (rt_json.h): pointers (RFC 6901) and dotted paths split into
 * tokens, one step of a walk, a set that creates objects on the way, and
 * the redaction of a whole document.
 */
#include "runner/base/rt_json.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void strv_push(struct rt_strv *v, char *s)
{
	v->v = xrealloc(v->v, (v->n + 2) * sizeof(char *));
	v->v[v->n++] = s;
	v->v[v->n] = NULL;
}

int rt_json_pointer_split(const char *ptr, struct rt_strv *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	if (!ptr || !*ptr)
		return 0;
	if (*ptr != '/')
		return rt_errf(err, RT_EINVAL, "json pointer \"%s\" must start with '/'", ptr);
	for (const char *p = ptr; *p == '/';) {
		p++;
		size_t n = strcspn(p, "/");
		/* unescape ~1 -> '/', ~0 -> '~' (in that order, per RFC 6901) */
		char *tok = xmalloc(n + 1);
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
				tok[k++] = p[++i] == '0' ? '~' : '/';
			} else if (p[i] == '~') {
				free(tok);
				rt_strv_release(out);
				return rt_errf(err, RT_EINVAL, "json pointer \"%s\": bad escape", ptr);
			} else {
				tok[k++] = p[i];
			}
		}
		tok[k] = 0;
		strv_push(out, tok);
		p += n;
	}
	return 0;
}

int rt_json_path_split(const char *key, struct rt_strv *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	if (key && key[0] == '/')
		return rt_json_pointer_split(key, out, err);
	if (!key || !*key)
		return rt_errf(err, RT_EINVAL, "an empty key");
	for (const char *p = key;; p++) {
		size_t n = strcspn(p, ".");
		if (!n) {
			rt_strv_release(out);
			return rt_errf(err, RT_EINVAL,
				       "key \"%s\": an empty part (a key holding a dot is written as a JSON "
				       "pointer, /a.b)", key);
		}
		strv_push(out, xstrndup(p, n));
		p += n;
		if (!*p)
			return 0;
	}
}

/* A canonical array index: digits, no leading zero. */
static bool index_of(const char *tok, size_t *idx)
{
	size_t k = strlen(tok);
	if (!k || (k > 1 && tok[0] == '0'))
		return false;
	for (size_t i = 0; i < k; i++)
		if (!isdigit((unsigned char)tok[i]))
			return false;
	*idx = (size_t)strtoul(tok, NULL, 10);
	return true;
}

json_t *rt_json_step(json_t *cur, const char *tok)
{
	size_t idx;
	if (json_is_object(cur))
		return json_object_get(cur, tok);
	if (json_is_array(cur) && index_of(tok, &idx))
		return json_array_get(cur, idx);
	return NULL;
}

int rt_json_set_path(json_t *root, const struct rt_strv *path, json_t *value, struct rt_sb *err)
{
	json_t *cur = root;
	for (size_t i = 0; i < path->n; i++) {
		const char *tok = path->v[i];
		bool last = i + 1 == path->n;
		size_t idx;
		if (json_is_array(cur) && index_of(tok, &idx) && idx < json_array_size(cur)) {
			if (last)
				return json_array_set(cur, idx, value) ? RT_EINVAL : 0;
			cur = json_array_get(cur, idx);
			continue;
		}
		if (!json_is_object(cur))
			return rt_errf(err, RT_EINVAL, "\"%s\": the value on the way is not an object", tok);
		if (last)
			return json_object_set(cur, tok, value) ? RT_EINVAL : 0;
		json_t *next = json_object_get(cur, tok);
		if (!next) {
			next = json_object();
			json_object_set_new(cur, tok, next);
		}
		cur = next;
	}
	return rt_errf(err, RT_EINVAL, "an empty path");
}

int rt_json_redact(json_t *root)
{
	int count = 0;
	if (json_is_string(root)) {
		struct rt_sb sb = RT_SB_INIT;
		rt_sb_add(&sb, json_string_value(root), json_string_length(root));
		if ((count = rt_redact_secrets(&sb)) > 0)
			json_string_setn(root, sb.buf, sb.len);
		rt_sb_release(&sb);
	} else if (json_is_array(root)) {
		for (size_t i = 0; i < json_array_size(root); i++)
			count += rt_json_redact(json_array_get(root, i));
	} else if (json_is_object(root)) {
		const char *k;
		json_t *v;
		json_object_foreach(root, k, v)
			count += rt_json_redact(v);
	}
	return count;
}
