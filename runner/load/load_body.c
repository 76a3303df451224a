/*
 * Request bodies of the load generator (see load.h, "request bodies"): the
 * whole object dumped by jansson (make_body, the reference and the slow
 * path), and the frame serialized once per max_tokens with each escaped
 * prompt spliced into it.
 */
#include "runner/load/load.h"
#include "runner/oai/oai.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *make_body(const struct spec_load *cfg, const char *model, const char *prompt,
		       int max_tokens, size_t *len)
{
	enum oai_api api = cfg->api == SPEC_API_CHAT ? OAI_CHAT : OAI_COMPLETIONS;
	json_t *in = api == OAI_CHAT ? oai_chat_user(prompt) : json_string(prompt);
	json_t *o = oai_body_new(api, model, in, max_tokens, true);
	if (cfg->ignore_eos)
		json_object_set_new(o, "ignore_eos", json_true());
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*len = strlen(s);
	return s;
}

/* What the template's prompt is while its frame is serialized: control
 * characters, so jansson writes it as one unmistakable escaped run. */
#define BODY_MARK "\x01ratchet-prompt\x02"
#define BODY_MARK_JSON "\"\\u0001ratchet-prompt\\u0002\""

char *run_load_body(const struct spec_load *cfg, const char *model, const char *prompt,
		    int max_tokens, struct run_load_body_tmpl *t, size_t *len)
{
	json_t *str = json_string(prompt);
	char *quoted = str ? json_dumps(str, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	json_decref(str);
	if (!quoted) /* not UTF-8: the slow path, as it always behaved */
		return make_body(cfg, model, prompt, max_tokens, len);
	if (!t->frame || t->max_tokens != max_tokens) {
		free(t->frame);
		size_t n;
		t->frame = make_body(cfg, model, BODY_MARK, max_tokens, &n);
		t->max_tokens = max_tokens;
		char *at = strstr(t->frame, BODY_MARK_JSON);
		/* exactly one mark, or no template (the model's name holding it) */
		t->at = at && !strstr(at + 1, BODY_MARK_JSON) ? (size_t)(at - t->frame) : SIZE_MAX;
	}
	if (t->at == SIZE_MAX) {
		free(quoted);
		return make_body(cfg, model, prompt, max_tokens, len);
	}
	size_t nq = strlen(quoted), nm = strlen(BODY_MARK_JSON), nf = strlen(t->frame);
	*len = nf - nm + nq;
	char *s = xmalloc(*len + 1);
	memcpy(s, t->frame, t->at);
	memcpy(s + t->at, quoted, nq);
	memcpy(s + t->at + nq, t->frame + t->at + nm, nf - t->at - nm + 1);
	free(quoted);
	return s;
}

void run_load_body_tmpl_release(struct run_load_body_tmpl *t)
{
	free(t->frame);
	memset(t, 0, sizeof(*t));
}

