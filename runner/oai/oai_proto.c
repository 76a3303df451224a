/*
 * The protocol's plain parts (see oai.h): the endpoint URL, the common part
 * of a request body, and the parse of a non-streamed completion.
 */
#include "runner/oai/oai.h"

#include <stdlib.h>
#include <string.h>

char *oai_url(const char *base, enum oai_api api)
{
	/* The path goes before a query or a fragment (?api-version=..., as
	 * some gateways want), never after it. */
	size_t n = strcspn(base, "?#");
	const char *rest = base + n;
	while (n && base[n - 1] == '/')
		n--;
	const char *path = api == OAI_CHAT     ? "/chat/completions"
			   : api == OAI_MODELS ? "/models"
					       : "/completions";
	if (n >= 3 && !strncmp(base + n - 3, "/v1", 3))
		return xasprintf("%.*s%s%s", (int)n, base, path, rest);
	return xasprintf("%.*s/v1%s%s", (int)n, base, path, rest);
}

json_t *oai_body_new(enum oai_api api, const char *model, json_t *input, int max_tokens,
		     bool stream)
{
	json_t *o = json_object();
	if (model)
		json_object_set_new(o, "model", json_string(model));
	json_object_set_new(o, api == OAI_CHAT ? "messages" : "prompt", input);
	json_object_set_new(o, "max_tokens", json_integer(max_tokens));
	if (stream) {
		json_object_set_new(o, "stream", json_true());
		json_t *so = json_object();
		json_object_set_new(so, "include_usage", json_true());
		json_object_set_new(o, "stream_options", so);
	}
	return o;
}

json_t *oai_chat_user(const char *text)
{
	json_t *m = json_object();
	json_object_set_new(m, "role", json_string("user"));
	json_object_set_new(m, "content", json_string(text));
	json_t *msgs = json_array();
	json_array_append_new(msgs, m);
	return msgs;
}

void oai_completion_release(struct oai_completion *c)
{
	free(c->text);
	free(c->finish_reason);
	c->text = c->finish_reason = NULL;
	c->prompt_tokens = c->completion_tokens = -1;
}

static int usage_int(json_t *usage, const char *key)
{
	json_t *v = json_object_get(usage, key);
	return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

int oai_completion_parse(const char *body, size_t len, enum oai_api api,
			 struct oai_completion *out, struct rt_sb *err)
{
	oai_completion_release(out);
	bool chat = api == OAI_CHAT;
	json_error_t je;
	json_t *o = json_loadb(body, len, 0, &je);
	json_t *c0 = o ? json_array_get(json_object_get(o, "choices"), 0) : NULL;
	const char *text = NULL;
	if (c0)
		text = chat ? json_string_value(json_object_get(json_object_get(c0, "message"), "content"))
			    : json_string_value(json_object_get(c0, "text"));
	if (!text) {
		int rc = o ? rt_errf(err, RT_EPARSE, "%s", chat ? "response: no choices[0].message.content"
								: "response: no choices[0].text")
			   : rt_errf(err, RT_EPARSE, "response: invalid JSON: %s", je.text);
		json_decref(o);
		return rc;
	}
	out->text = xstrdup(text);
	const char *fr = json_string_value(json_object_get(c0, "finish_reason"));
	out->finish_reason = fr ? xstrdup(fr) : NULL;
	json_t *u = json_object_get(o, "usage");
	out->prompt_tokens = usage_int(u, "prompt_tokens");
	out->completion_tokens = usage_int(u, "completion_tokens");
	json_decref(o);
	return 0;
}
