/*
 * The gate's request loop on runner/oai's client: a fixed number of requests
 * in flight, retries with exponential backoff on connection errors and on
 * 429/5xx, a timeout per attempt, and cancellation of everything in flight
 * when the caller's callback says stop. Responses are capped (they are
 * untrusted input) and parsed by oai_completion_parse. Also the default
 * model: the first id of GET /v1/models.
 */
#include "runner/gate/gate.h"
#include "runner/base/cancel.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define RESPONSE_CAP (4u << 20)

void run_gate_req_release(struct run_gate_req *r)
{
	if (!r)
		return;
	free(r->body);
	oai_completion_release(&r->ans);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

struct loop;

/* One transfer slot. */
struct xfer {
	struct oai_xfer *x;      /* the client's transfer (keeps its connection) */
	struct loop *l;          /* owner */
	struct rt_sb body;       /* response bytes, capped */
	size_t req;              /* index of the request it carries */
	bool busy;               /* in flight */
	int64_t t0;              /* start of this attempt, ns */
};

/* A request waiting for its backoff to end. */
struct retry {
	size_t req;              /* index of the request */
	int64_t due_ns;          /* when it may be sent again */
};

/* One run of the loop. */
struct loop {
	const struct run_gate_client *c; /* settings and the caller's callback */
	struct run_gate_req *reqs;       /* the requests */
	size_t n;                        /* of reqs */
	struct oai_client *cl;           /* HTTP */
	struct xfer *xs;                 /* concurrency slots */
	int conc;                        /* of xs */
	struct retry *rq;                /* waiting retries */
	size_t nrq;
	size_t next;                     /* next request never sent */
	size_t finished;                 /* requests answered or failed for good */
	bool stopped;                    /* the callback said stop */
};

/* r failed for the reason why (consumed), redacted: it may quote the server,
 * and it is stored and printed. */
static void set_failed(struct run_gate_req *r, char *why)
{
	free(r->error);
	r->error = rt_redacted(why);
	free(why);
	r->failed = true;
	r->done = true;
}

static int on_data(void *ud, const char *p, size_t n)
{
	struct xfer *x = ud;
	return rt_sb_add(&x->body, p, n) ? -1 : 0;
}

/* Parse a 200 response into r; r->failed (with r->error) when it is not one. */
static void parse_ok(struct run_gate_req *r, const struct rt_sb *body, bool chat)
{
	struct rt_sb why = RT_SB_INIT;
	if (oai_completion_parse(body->buf, body->len, chat ? OAI_CHAT : OAI_COMPLETIONS, &r->ans,
				 &why)) {
		set_failed(r, rt_sb_detach(&why, NULL));
		return;
	}
	r->done = true;
	r->failed = false;
	free(r->error);
	r->error = NULL;
}

/* An attempt ended: record it; true when it should be tried again. */
static bool attempt_done(struct loop *l, struct xfer *x, const struct oai_done *d)
{
	struct run_gate_req *r = &l->reqs[x->req];
	r->latency_s = (double)(rt_now_ns() - x->t0) / 1e9;
	if (d->outcome != OAI_OK) {
		set_failed(r, xstrdup(d->outcome == OAI_ABORTED ? "response larger than 4 MiB"
								 : d->error));
		return d->outcome == OAI_NETWORK;
	}
	if (d->status != 200) {
		/* A short excerpt of the body says why; it is the server's text. */
		set_failed(r, xasprintf("HTTP %ld: %.200s", d->status, d->errbody->buf));
		return d->status == 429 || d->status >= 500;
	}
	parse_ok(r, &x->body, l->c->chat);
	return false;
}

static void on_done(void *ud, const struct oai_done *d)
{
	struct xfer *x = ud;
	struct loop *l = x->l;
	const struct run_gate_client *c = l->c;
	x->busy = false;
	struct run_gate_req *r = &l->reqs[x->req];
	if (attempt_done(l, x, d) && r->attempts <= c->max_retries) {
		double b = c->backoff_s > 0 ? c->backoff_s : 0.2;
		for (int k = 1; k < r->attempts; k++)
			b *= 2;
		r->done = false;
		l->rq[l->nrq].req = x->req;
		l->rq[l->nrq].due_ns = rt_now_ns() + (int64_t)(b * 1e9);
		l->nrq++;
		return;
	}
	l->finished++;
	if (c->on_done && !c->on_done(c->arg, x->req, r))
		l->stopped = true;
}

/* The next request to send: a retry that is due, else a new one; SIZE_MAX: none. */
static size_t next_request(struct loop *l, int64_t now)
{
	for (size_t k = 0; k < l->nrq; k++)
		if (l->rq[k].due_ns <= now) {
			size_t req = l->rq[k].req;
			l->rq[k] = l->rq[--l->nrq];
			return req;
		}
	return l->next < l->n ? l->next++ : SIZE_MAX;
}

/* Fill free slots: due retries first, then new requests in order. */
static void fill_slots(struct loop *l)
{
	int64_t now = rt_now_ns();
	for (int i = 0; i < l->conc; i++) {
		struct xfer *x = &l->xs[i];
		if (x->busy)
			continue;
		size_t req = next_request(l, now);
		if (req == SIZE_MAX)
			break;
		rt_sb_reset(&x->body);
		x->req = req;
		x->busy = true;
		x->t0 = rt_now_ns();
		l->reqs[req].attempts++;
		oai_xfer_start(l->cl, x->x, l->reqs[req].body, strlen(l->reqs[req].body));
	}
}

/* Wait for traffic, or for the next retry to come due. */
static void wait_next(struct loop *l)
{
	int active = oai_client_in_flight(l->cl);
	int wait_ms = 100;
	if (l->nrq && active < l->conc) {
		int64_t soonest = l->rq[0].due_ns;
		for (size_t k = 1; k < l->nrq; k++)
			if (l->rq[k].due_ns < soonest)
				soonest = l->rq[k].due_ns;
		int64_t d = (soonest - rt_now_ns()) / 1000000;
		wait_ms = d < 0 ? 0 : d < 100 ? (int)d : 100;
	}
	if (active < l->conc && l->next < l->n)
		wait_ms = 0;
	if (active)
		oai_client_wait(l->cl, -1, wait_ms);
	else if (wait_ms > 0)
		rt_sleep_ns((int64_t)wait_ms * 1000000);
}

static int loop_init(struct loop *l, const struct run_gate_client *c, struct run_gate_req *reqs,
		     size_t n, struct rt_sb *err)
{
	memset(l, 0, sizeof(*l));
	l->c = c;
	l->reqs = reqs;
	l->n = n;
	l->conc = c->concurrency > 0 ? c->concurrency : 1;
	if ((size_t)l->conc > n)
		l->conc = n ? (int)n : 1;
	long timeout_ms = c->timeout_s > 0 ? (long)(c->timeout_s * 1000) : 300000;
	struct oai_client_cfg cc = {
		.url = c->url,
		.api_key = c->api_key,
		.timeout_ms = timeout_ms,
		.connect_timeout_ms = timeout_ms < 10000 ? timeout_ms : 10000L,
		.h = { on_data, NULL, on_done },
	};
	int rc = oai_client_new(&cc, &l->cl, err);
	if (rc)
		return rc;
	l->xs = xcalloc((size_t)l->conc, sizeof(*l->xs));
	l->rq = xcalloc(n ? n : 1, sizeof(*l->rq));
	for (int i = 0; i < l->conc; i++) {
		l->xs[i].l = l;
		l->xs[i].x = oai_xfer_new(l->cl, &l->xs[i]);
		rt_sb_init(&l->xs[i].body, RESPONSE_CAP);
	}
	return 0;
}

static void loop_release(struct loop *l)
{
	/* whatever is still in flight (early stop) is dropped here */
	oai_client_free(l->cl);
	for (int i = 0; l->xs && i < l->conc; i++)
		rt_sb_release(&l->xs[i].body);
	free(l->xs);
	free(l->rq);
}

int run_gate_client_run(const struct run_gate_client *c, struct run_gate_req *reqs, size_t n,
			bool *stopped, struct rt_sb *err)
{
	*stopped = false;
	struct loop l;
	int rc = loop_init(&l, c, reqs, n, err);
	while (!rc && l.finished < n && !l.stopped) {
		fill_slots(&l);
		int fin = oai_client_perform(l.cl, err);
		if (fin < 0)
			rc = fin;
		else if (rt_cancelled()) /* the second Ctrl-C (runner/base/cancel.h) */
			rc = rt_errf(err, RT_EINTR, "gate: stopped by a signal");
		else if (l.finished < n && !l.stopped)
			wait_next(&l);
	}
	*stopped = l.stopped;
	loop_release(&l);
	return rc;
}

int run_gate_first_model(const char *base_url, const char *api_key, double timeout_s, char **model,
			 struct rt_sb *err)
{
	*model = NULL;
	char *models = oai_url(base_url, OAI_MODELS);
	struct oai_resp r;
	oai_resp_init(&r, 1u << 20);
	int rc = oai_get_auth(models, timeout_s, api_key, &r, err);
	if (!rc && r.status != 200)
		rc = rt_errf(err, RT_EHTTP, "GET %s: HTTP %ld", models, r.status);
	if (!rc) {
		json_error_t je;
		json_t *o = json_loads(r.body.buf, 0, &je);
		const char *id = json_string_value(
			json_object_get(json_array_get(json_object_get(o, "data"), 0), "id"));
		if (id && *id)
			*model = xstrdup(id);
		else
			rc = rt_errf(err, RT_EPARSE, "GET %s: no data[0].id in the answer", models);
		json_decref(o);
	}
	oai_resp_release(&r);
	free(models);
	return rc;
}
