/*
 * strategy: llm's one request (the campaign's side: agents/ does no I/O): a non-streamed chat completion POSTed to the
 * spec's endpoint through the one OpenAI client (runner/oai), the key as a
 * Bearer token that only libcurl sees. The request body follows the OpenAI
 * chat completions API (model, messages, max_tokens, temperature, and
 * response_format when llm.response_format asks for one; the
 * reply's choices[0].message.content and usage), as vLLM's
 * OpenAI-compatible server (v0.6 and later) serves it too.
 */
#include "runner/campaign/campaign_int.h"

#include <stdlib.h>
#include <string.h>

#include "runner/oai/oai.h"

/* A response body larger than this is refused, not cut short. */
#define REPLY_CAP (4u << 20)

/* One transfer's state, for the client's callbacks. */
struct chat {
	struct rt_sb body;           /* the 200 response's bytes */
	bool done;                   /* on_done was called */
	bool capped;                 /* the body passed REPLY_CAP: the transfer was stopped */
	enum oai_outcome outcome;    /* how it ended */
	long status;                 /* HTTP status */
	char why[512];               /* libcurl's words, or the start of a non-200 body */
};

static int on_data(void *ud, const char *p, size_t n)
{
	struct chat *c = ud;
	if (rt_sb_add(&c->body, p, n)) {
		c->capped = true;
		return -1;
	}
	return 0;
}

static void on_done(void *ud, const struct oai_done *d)
{
	struct chat *c = ud;
	c->done = true;
	c->outcome = d->outcome;
	c->status = d->status;
	if (d->outcome != OAI_OK)
		snprintf(c->why, sizeof(c->why), "%s%s%s", d->error, *d->detail ? ": " : "", d->detail);
	else if (d->errbody && d->errbody->len)
		snprintf(c->why, sizeof(c->why), "%s", d->errbody->buf);
}

static int post(const struct agent_llm_cfg *cfg, const char *key, const char *body, struct chat *c,
		struct rt_sb *err)
{
	char *url = oai_url(cfg->endpoint, OAI_CHAT);
	struct oai_client_cfg cc = { .url = url, .api_key = key, .timeout_ms = (long)(cfg->timeout_s * 1000),
				     .connect_timeout_ms = 10000, .max_connections = 1,
				     .h = { .on_data = on_data, .on_done = on_done } };
	struct oai_client *cl = NULL;
	int rc = oai_client_new(&cc, &cl, err);
	free(url);
	if (rc)
		return rc;
	struct oai_xfer *x = oai_xfer_new(cl, c);
	oai_xfer_start(cl, x, body, strlen(body));
	while (!c->done && !rc) {
		int fin = oai_client_perform(cl, err);
		if (fin < 0)
			rc = fin;
		else if (!c->done)
			oai_client_wait(cl, -1, 100);
	}
	oai_client_free(cl);
	return rc;
}

int camp_llm_chat(const struct agent_llm_cfg *cfg, const char *key, const json_t *messages,
		  const json_t *format, struct camp_llm_reply *r, struct rt_sb *err)
{
	memset(r, 0, sizeof(*r));
	r->prompt_tokens = r->completion_tokens = -1;
	rt_secret_add(key); /* a server may echo it: redacted wherever it is quoted */
	rt_secret_add_url(cfg->endpoint);
	json_t *req = oai_body_new(OAI_CHAT, cfg->model, json_deep_copy(messages), cfg->answer_tokens, false);
	json_object_set_new(req, "temperature", json_real(cfg->temperature));
	if (format)
		json_object_set_new(req, "response_format", json_deep_copy(format));
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	struct chat c = { .outcome = OAI_FAILED };
	rt_sb_init(&c.body, REPLY_CAP);
	double t0 = rt_now_s();
	int rc = post(cfg, key, body, &c, err);
	r->latency_ms = (rt_now_s() - t0) * 1000;
	free(body);
	r->status = c.status;
	if (c.body.len && !c.capped)
		r->body = xasprintf("%s", c.body.buf);
	else if (c.why[0] && c.outcome == OAI_OK)
		r->body = xstrdup(c.why); /* a non-200 body's start */
	if (!rc && c.capped)
		rc = rt_errf(err, RT_ETOOBIG, "%s: the reply is larger than %u MiB (the chat reply cap); not read",
			     cfg->endpoint, REPLY_CAP >> 20);
	else if (!rc && c.outcome == OAI_TIMEOUT)
		rc = rt_errf(err, RT_ETIMEDOUT, "%s: no answer within %gs", cfg->endpoint, cfg->timeout_s);
	else if (!rc && c.outcome != OAI_OK)
		rc = rt_errf(err, RT_EHTTP, "%s: %s", cfg->endpoint, c.why);
	else if (!rc && c.status != 200)
		rc = rt_errf(err, RT_EHTTP, "%s: HTTP %ld: %.200s", cfg->endpoint, c.status, c.why);
	struct oai_completion oc = { 0 };
	if (!rc && !(rc = oai_completion_parse(c.body.buf, c.body.len, OAI_CHAT, &oc, err))) {
		r->content = oc.text;
		oc.text = NULL;
		r->prompt_tokens = oc.prompt_tokens;
		r->completion_tokens = oc.completion_tokens;
	}
	oai_completion_release(&oc);
	rt_sb_release(&c.body);
	return rc;
}

void camp_llm_reply_release(struct camp_llm_reply *r)
{
	free(r->body);
	free(r->content);
	memset(r, 0, sizeof(*r));
}
