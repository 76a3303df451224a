/*
 * `ratchet show`'s part for strategy llm: the round of chat exchanges that
 * proposed an iteration (db/llm.h), beside its decision. Text: each
 * attempt's verdict, tokens and latency, the prompt's last message and the
 * answer (or every message and the whole response body when full), cut at
 * SHOW_CLIP bytes otherwise and with control characters shown as '?'.
 * JSON: every field of every exchange, the messages and the response body
 * as JSON where they parse. Both redacted again (rt_redact_secrets), for
 * stores written before ratchet redacted the llm path. May include: reports/, db/, runner/base.
 */
#include "reports/rep_int.h"
#include "db/llm.h"
#include "runner/base/rt_json.h"

#include <stdlib.h>
#include <string.h>

/* A stored JSON text as JSON, or as a string when it does not parse. */
static json_t *stored_json(const char *text)
{
	if (!text)
		return json_null();
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
	return v ? v : json_string(text);
}

/* The chat round, whole: the messages sent and the response body as the
 * server gave them (stored redacted), the verdict and why. */
json_t *rep_llm_json(const struct db_llm_exchange *xs, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct db_llm_exchange *x = &xs[i];
		json_t *o = json_object();
		json_object_set_new(o, "attempt", json_integer(x->attempt));
		json_object_set_new(o, "verdict", json_string(db_llm_verdict_name(x->verdict)));
		json_object_set_new(o, "error", rep_jstr(x->error));
		json_object_set_new(o, "variant", stored_json(x->variant));
		json_object_set_new(o, "fingerprint", rep_jstr(x->fingerprint));
		json_object_set_new(o, "rationale", rep_jstr(x->rationale));
		json_object_set_new(o, "prompt_tokens", x->prompt_tokens < 0 ? json_null() : json_integer(x->prompt_tokens));
		json_object_set_new(o, "completion_tokens",
				    x->completion_tokens < 0 ? json_null() : json_integer(x->completion_tokens));
		json_object_set_new(o, "latency_ms", rep_jnum(x->latency_ms));
		json_object_set_new(o, "created_at", json_integer(x->created_at));
		json_object_set_new(o, "request", stored_json(x->request));
		json_object_set_new(o, "response", stored_json(x->response));
		rt_json_redact(o); /* a store written before redaction, too */
		json_array_append_new(a, o);
	}
	return a;
}

/* Text of the prompt or the answer shown without full. */
#define SHOW_CLIP 400

/* s on one indented line, escaped for the terminal, cut at SHOW_CLIP bytes
 * unless full. */
static void put_clip(struct rt_sb *sb, const char *label, const char *text, bool full)
{
	char *s = rt_redacted(text ? text : ""); /* a store written before redaction, too */
	size_t n = strlen(s);
	size_t k = full || n <= SHOW_CLIP ? n : SHOW_CLIP;
	char *part = xstrndup(s, k);
	rt_sb_addf(sb, "     %s: ", label);
	rep_term_escape(sb, part);
	free(part);
	if (full && n > SHOW_CLIP)
		rt_sb_adds(sb, "\n");
	if (k < n)
		rt_sb_addf(sb, "... (%zu more bytes; --full shows all)", n - k);
	rt_sb_adds(sb, "\n");
	free(s);
}

/* The model's answer in a stored response body, or the body itself. */
static char *answer_of(const char *body)
{
	json_t *b = body ? json_loads(body, 0, NULL) : NULL;
	json_t *m = json_object_get(json_array_get(json_object_get(b, "choices"), 0), "message");
	const char *c = json_string_value(json_object_get(m, "content"));
	char *out = c ? xstrdup(c) : body ? xstrdup(body) : NULL;
	json_decref(b);
	return out;
}

static void text_exchange(const struct db_llm_exchange *x, struct rt_sb *sb, bool full)
{
	rt_sb_addf(sb, "  attempt %d  %-10s  %d+%d tokens  %.0f ms\n", x->attempt,
		   db_llm_verdict_name(x->verdict), x->prompt_tokens, x->completion_tokens, x->latency_ms);
	json_t *msgs = json_loads(x->request, 0, NULL);
	size_t nm = json_array_size(msgs);
	if (full) {
		for (size_t i = 0; i < nm; i++) {
			json_t *m = json_array_get(msgs, i);
			put_clip(sb, json_string_value(json_object_get(m, "role")),
				 json_string_value(json_object_get(m, "content")), true);
		}
	} else if (nm) {
		rt_sb_addf(sb, "     prompt: %zu messages, %zu bytes; the last:\n", nm, strlen(x->request));
		json_t *last = json_array_get(msgs, nm - 1);
		put_clip(sb, json_string_value(json_object_get(last, "role")),
			 json_string_value(json_object_get(last, "content")), false);
	}
	json_decref(msgs);
	char *a = full ? (x->response ? xstrdup(x->response) : NULL) : answer_of(x->response);
	put_clip(sb, full ? "response" : "answer", a, full);
	free(a);
	if (x->error)
		put_clip(sb, "refused", x->error, full);
}

void rep_llm_text(const struct db_llm_exchange *xs, size_t n, struct rt_sb *sb, bool full)
{
	for (size_t i = 0; i < n; i++)
		text_exchange(&xs[i], sb, full);
	const struct db_llm_exchange *last = n ? &xs[n - 1] : NULL;
	if (last && last->verdict == DB_LLM_ACCEPTED && last->rationale) {
		rt_sb_adds(sb, "  accepted; rationale: ");
		char *r = rt_redacted(last->rationale);
		rep_term_escape(sb, r);
		free(r);
		rt_sb_adds(sb, "\n");
	}
}
