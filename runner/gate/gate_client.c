/*
 * The gate's HTTP client: libcurl's multi interface with a fixed number of
 * requests in flight, retries with exponential backoff on connection errors
 * and on 429/5xx, a timeout per attempt, and cancellation of everything in
 * flight when the caller's callback says stop. Responses are capped (they
 * are untrusted input) and parsed with jansson.
 */
#include "runner/gate/gate.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define RESPONSE_CAP (4u << 20)

void run_gate_req_release(struct run_gate_req *r)
{
	if (!r)
		return;
	free(r->body);
	free(r->text);
	free(r->finish_reason);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

char *run_gate_url(const char *base, bool chat)
{
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	const char *path = chat ? "/chat/completions" : "/completions";
	if (n >= 3 && !strncmp(base + n - 3, "/v1", 3))
		return xasprintf("%.*s%s", (int)n, base, path);
	return xasprintf("%.*s/v1%s", (int)n, base, path);
}

/* One transfer slot. */
struct xfer {
	CURL *easy;              /* reused across requests (keeps its connection) */
	struct rt_sb body;       /* response bytes, capped */
	size_t req;              /* index of the request it carries */
	bool busy;               /* in the multi handle */
	int64_t t0;              /* start of this attempt, ns */
};

/* A request waiting for its backoff to end. */
struct retry {
	size_t req;
	int64_t due_ns;
};

static size_t on_body(char *d, size_t sz, size_t n, void *arg)
{
	struct xfer *x = arg;
	return rt_sb_add(&x->body, d, sz * n) ? 0 : sz * n;
}

static void set_failed(struct run_gate_req *r, char *why)
{
	free(r->error);
	r->error = why;
	r->failed = true;
	r->done = true;
}

/* Parse a 200 response into r; false (with r->error) when it is not one. */
static bool parse_ok(struct run_gate_req *r, const char *body, size_t len, bool chat)
{
	json_error_t je;
	json_t *o = json_loadb(body, len, 0, &je);
	json_t *c0 = o ? json_array_get(json_object_get(o, "choices"), 0) : NULL;
	const char *text = NULL;
	if (c0)
		text = chat ? json_string_value(json_object_get(json_object_get(c0, "message"), "content"))
			    : json_string_value(json_object_get(c0, "text"));
	if (!text) {
		set_failed(r, o ? xstrdup(chat ? "response: no choices[0].message.content"
					       : "response: no choices[0].text")
				: xasprintf("response: invalid JSON: %s", je.text));
		json_decref(o);
		return false;
	}
	r->text = xstrdup(text);
	const char *fr = json_string_value(json_object_get(c0, "finish_reason"));
	r->finish_reason = xstrdup(fr);
	json_t *u = json_object_get(o, "usage");
	json_t *pt = json_object_get(u, "prompt_tokens"), *ct = json_object_get(u, "completion_tokens");
	r->prompt_tokens = json_is_integer(pt) ? (int)json_integer_value(pt) : -1;
	r->completion_tokens = json_is_integer(ct) ? (int)json_integer_value(ct) : -1;
	r->done = true;
	r->failed = false;
	free(r->error);
	r->error = NULL;
	json_decref(o);
	return true;
}

static bool retryable_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return true;
	default:
		return false;
	}
}

int run_gate_client_run(const struct run_gate_client *c, struct run_gate_req *reqs, size_t n,
			bool *stopped, struct rt_sb *err)
{
	*stopped = false;
	int conc = c->concurrency > 0 ? c->concurrency : 1;
	if ((size_t)conc > n)
		conc = n ? (int)n : 1;
	CURLM *m = curl_multi_init();
	if (!m)
		return rt_errf(err, RT_EHTTP, "gate: curl_multi_init failed");
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (c->api_key && *c->api_key) {
		char *h = xasprintf("Authorization: Bearer %s", c->api_key);
		hdrs = curl_slist_append(hdrs, h);
		/* Do not leave the key lying in freed memory longer than needed. */
		memset(h, 0, strlen(h));
		free(h);
	}
	struct xfer *xs = xcalloc((size_t)conc, sizeof(*xs));
	struct retry *rq = xcalloc(n ? n : 1, sizeof(*rq));
	size_t nrq = 0, next = 0, active = 0, finished = 0;
	int rc = 0;
	for (int i = 0; i < conc; i++) {
		xs[i].easy = curl_easy_init();
		rt_sb_init(&xs[i].body, RESPONSE_CAP);
	}
	long timeout_ms = c->timeout_s > 0 ? (long)(c->timeout_s * 1000) : 300000;
	while (finished < n && !*stopped) {
		/* Fill free slots: due retries first, then new requests in order. */
		int64_t now = rt_now_ns();
		for (int i = 0; i < conc; i++) {
			if (xs[i].busy)
				continue;
			size_t req = SIZE_MAX;
			for (size_t k = 0; k < nrq; k++)
				if (rq[k].due_ns <= now) {
					req = rq[k].req;
					rq[k] = rq[--nrq];
					break;
				}
			if (req == SIZE_MAX && next < n)
				req = next++;
			if (req == SIZE_MAX)
				break;
			struct xfer *x = &xs[i];
			CURL *e = x->easy;
			rt_sb_reset(&x->body);
			x->req = req;
			x->busy = true;
			x->t0 = rt_now_ns();
			reqs[req].attempts++;
			curl_easy_setopt(e, CURLOPT_URL, c->url);
			curl_easy_setopt(e, CURLOPT_POST, 1L);
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, reqs[req].body);
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(reqs[req].body));
			curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
			curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
			curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
			curl_easy_setopt(e, CURLOPT_PRIVATE, x);
			curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
			curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
			curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
			curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
			curl_multi_add_handle(m, e);
			active++;
		}
		int running = 0;
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc != CURLM_OK) {
			rc = rt_errf(err, RT_EHTTP, "gate: curl: %s", curl_multi_strerror(mc));
			break;
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct xfer *x = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			CURLcode cc = msg->data.result;
			curl_multi_remove_handle(m, msg->easy_handle);
			x->busy = false;
			active--;
			struct run_gate_req *r = &reqs[x->req];
			r->latency_s = (double)(rt_now_ns() - x->t0) / 1e9;
			long status = 0;
			curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
			bool retry = false;
			if (cc != CURLE_OK) {
				retry = retryable_curl(cc);
				set_failed(r, xasprintf("%s", cc == CURLE_WRITE_ERROR
								   ? "response larger than 4 MiB"
								   : curl_easy_strerror(cc)));
			} else if (status != 200) {
				retry = status == 429 || status >= 500;
				/* A short excerpt of the body says why; it is the server's text. */
				set_failed(r, xasprintf("HTTP %ld: %.200s", status, x->body.buf));
			} else {
				parse_ok(r, x->body.buf, x->body.len, c->chat);
			}
			if (retry && r->attempts <= c->max_retries) {
				double b = c->backoff_s > 0 ? c->backoff_s : 0.2;
				for (int k = 1; k < r->attempts; k++)
					b *= 2;
				r->done = false;
				rq[nrq].req = x->req;
				rq[nrq].due_ns = rt_now_ns() + (int64_t)(b * 1e9);
				nrq++;
				continue;
			}
			finished++;
			if (c->on_done && !c->on_done(c->arg, x->req, r))
				*stopped = true;
		}
		if (finished >= n || *stopped)
			break;
		/* Wait for traffic, or for the next retry to come due. */
		int wait_ms = 100;
		if (nrq && active < (size_t)conc) {
			int64_t soonest = rq[0].due_ns;
			for (size_t k = 1; k < nrq; k++)
				if (rq[k].due_ns < soonest)
					soonest = rq[k].due_ns;
			int64_t d = (soonest - rt_now_ns()) / 1000000;
			wait_ms = d < 0 ? 0 : d < 100 ? (int)d : 100;
		}
		if (active < (size_t)conc && next < n)
			wait_ms = 0;
		if (active)
			curl_multi_poll(m, NULL, 0, wait_ms, NULL);
		else if (wait_ms > 0)
			rt_sleep_ns((int64_t)wait_ms * 1000000);
	}
	/* Cancel whatever is still in flight (early stop). */
	for (int i = 0; i < conc; i++) {
		if (xs[i].busy)
			curl_multi_remove_handle(m, xs[i].easy);
		curl_easy_cleanup(xs[i].easy);
		rt_sb_release(&xs[i].body);
	}
	curl_multi_cleanup(m);
	/* Wipe the key from the header list before it is freed. */
	for (struct curl_slist *h = hdrs; h; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(hdrs);
	free(xs);
	free(rq);
	return rc;
}
