/*
 * The load generator's engine: one thread driving runner/oai's client
 * (libcurl's multi interface) on the load generator's own schedule.
 *
 * Every request body is built before the clock starts. Open-loop sends happen
 * at absolute CLOCK_MONOTONIC times precomputed from the seed; a timerfd armed
 * for the next send is handed to the client's wait as an extra descriptor, so
 * the loop wakes with microsecond precision instead of curl's millisecond
 * timeouts, while still servicing every stream. Transfers reuse a pool of
 * slots (and with them the connection cache); every timestamp is taken in the
 * data callback. Nothing in a stream can crash or hang a run: bad streams
 * become failed requests with a reason, each request has a timeout, and the
 * run has a deadline.
 */
#include "runner/load/load.h"
#include "runner/base/cancel.h"
#include "runner/oai/oai.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define LOAD_RESP_CAP ((size_t)256 << 20) /* per response: SSE bytes buffered */
/* All responses together: what the parsers of every stream hold. Without it
 * 64 streams at the per-response cap could ask for 16 GiB. */
#define LOAD_RESP_TOTAL_CAP ((size_t)1 << 30)
/* A parser that grew past this gives its memory back when its request ends. */
#define LOAD_RESP_KEEP ((size_t)1 << 20)
#define LOAD_POOL_BYTES ((size_t)256 << 20) /* request bodies kept in memory */

struct eng;

/* One transfer slot: a client transfer and its reusable buffers. */
struct slot {
	struct oai_xfer *x;       /* reused across requests */
	struct eng *e;            /* owner */
	long req;                 /* index into e->res->reqs, -1 when idle */
	struct oai_sse sse;       /* stream parser */
	double *itl;              /* gaps of the current request (s) */
	size_t n_itl, itl_alloc;  /* used / allocated entries */
	int64_t last_chunk;       /* abs ns of the last content chunk */
	int64_t last_byte;        /* abs ns of the last byte */
	size_t held;              /* bytes sse holds, as counted in e->resp_held */
};

struct body {
	char *data;               /* JSON request body (owned) */
	size_t len;               /* bytes of data */
};

struct eng {
	const struct spec_load *cfg; /* what to run */
	struct oai_client *cl;       /* the HTTP client */
	char *url;                   /* full endpoint URL */
	struct slot **slots;         /* every slot made */
	size_t n_slots;
	struct slot **idle;          /* stack of idle slots */
	size_t n_idle;
	struct body *bodies;         /* distinct request bodies */
	size_t n_bodies;
	size_t body_i;               /* next body to send (cycles through bodies) */
	struct run_load_result *res; /* being filled */
	size_t reqs_alloc;           /* allocated entries of res->reqs */
	int64_t t0;                  /* abs ns of the run's start */
	long timeout_ms;             /* per request */
	int tfd;                     /* timerfd for the next scheduled send */
	int64_t deadline;            /* abs ns the run must end by, 0: none */
	size_t resp_held;            /* bytes the parsers of every slot hold */
	size_t resp_cap;             /* limit on resp_held (LOAD_RESP_TOTAL_CAP or the opts') */
};

/* What one run will do, decided before the clock starts. */
struct plan {
	const struct spec_load *cfg; /* what to run */
	const char *model;           /* model name sent */
	uint64_t seed;               /* schedule and prompts */
	bool prefill, closed, open;  /* the pattern's family */
	int n_req;                   /* measured requests; 0: bound by duration */
	int out_tokens;              /* max_tokens of random prompts and of records without one */
	int64_t *sched;              /* open loop: send offsets from t0 (owned) */
	size_t n_sched;
};

/* Where the measured phase is. */
struct phase {
	size_t next;                 /* open loop: next schedule entry */
	int launched;                /* closed loop / prefill: measured requests started */
	bool stop_new;               /* duration over: send nothing more */
	int64_t stop_at;             /* abs ns the duration ends, 0: none */
};

void run_load_result_release(struct run_load_result *r)
{
	for (size_t i = 0; i < r->n_reqs; i++)
		free(r->reqs[i].error);
	free(r->reqs);
	free(r->itl);
	for (size_t i = 0; i < r->n_slo; i++)
		free(r->slo[i].metric);
	free(r->slo);
	memset(r, 0, sizeof(*r));
}

/* ---- client callbacks: timestamps are taken here ---- */

static void on_header(void *ud, const char *p, size_t n)
{
	struct slot *s = ud;
	static const char key[] = "x-server-recv-ns:";
	if (n > sizeof(key) && !strncasecmp(p, key, sizeof(key) - 1) && s->req >= 0)
		s->e->res->reqs[s->req].server_recv_ns = strtoll(p + sizeof(key) - 1, NULL, 10);
}

static void push_gap(struct slot *s, double g)
{
	if (s->n_itl == s->itl_alloc) {
		s->itl_alloc = s->itl_alloc ? s->itl_alloc * 2 : 256;
		s->itl = xrealloc(s->itl, s->itl_alloc * sizeof(*s->itl));
	}
	s->itl[s->n_itl++] = g;
}

/* Count what s's parser holds now into the total; false when the total is
 * over the cap (checked after each read, so one stream's last growth may
 * pass it before that stream is stopped). */
static bool resp_account(struct slot *s)
{
	struct eng *e = s->e;
	size_t held = s->sse.buf.alloc + s->sse.ev.alloc;
	e->resp_held = e->resp_held - s->held + held;
	s->held = held;
	return e->resp_held <= e->resp_cap;
}

/* A request ended: a parser that grew large gives its memory back. */
static void resp_trim(struct slot *s)
{
	if (s->held <= LOAD_RESP_KEEP)
		return;
	oai_sse_release(&s->sse);
	oai_sse_init(&s->sse, LOAD_RESP_CAP);
	resp_account(s);
}

static int on_data(void *ud, const char *p, size_t n)
{
	int64_t now = rt_now_ns();
	struct slot *s = ud;
	s->last_byte = now;
	int got = oai_sse_feed(&s->sse, p, n);
	if (!resp_account(s) && !s->sse.error) {
		s->sse.error = xasprintf("responses in flight hold %zu MiB, over the %zu MiB "
					 "total cap for all streams together; this stream stopped",
					 s->e->resp_held >> 20, s->e->resp_cap >> 20);
		got = -1;
	}
	if (got < 0)
		return -1; /* abort the transfer: the reason is in s->sse.error */
	if (got > 0) {
		struct run_load_req *q = &s->e->res->reqs[s->req];
		if (q->n_chunks == 0)
			q->first_ns = now - s->e->t0;
		else
			push_gap(s, (double)(now - s->last_chunk) / 1e9);
		got--;
		q->n_chunks++;
		/* several chunks in one read arrived together: zero gaps */
		for (; got > 0; got--) {
			push_gap(s, 0);
			q->n_chunks++;
		}
		s->last_chunk = now;
	}
	return 0;
}

static void on_done(void *ud, const struct oai_done *d);

/* ---- slots ---- */

static struct slot *slot_get(struct eng *e)
{
	if (e->n_idle)
		return e->idle[--e->n_idle];
	struct slot *s = xcalloc(1, sizeof(*s));
	s->e = e;
	s->req = -1;
	oai_sse_init(&s->sse, LOAD_RESP_CAP);
	s->x = oai_xfer_new(e->cl, s);
	e->slots = xrealloc(e->slots, (e->n_slots + 1) * sizeof(*e->slots));
	e->slots[e->n_slots++] = s;
	e->idle = xrealloc(e->idle, e->n_slots * sizeof(*e->idle));
	return s;
}

static void slot_free(struct slot *s)
{
	oai_sse_release(&s->sse);
	free(s->itl);
	free(s);
}

/* ---- requests ---- */

static long new_req(struct eng *e, int seq, bool warmup, int64_t intended)
{
	struct run_load_result *r = e->res;
	if (r->n_reqs == e->reqs_alloc) {
		e->reqs_alloc = e->reqs_alloc ? e->reqs_alloc * 2 : 1024;
		r->reqs = xrealloc(r->reqs, e->reqs_alloc * sizeof(*r->reqs));
	}
	struct run_load_req *q = &r->reqs[r->n_reqs];
	memset(q, 0, sizeof(*q));
	q->seq = seq;
	q->warmup = warmup;
	q->intended_ns = intended;
	q->sent_ns = -1;
	q->ttft_s = q->e2el_s = q->itl_mean_s = q->itl_max_s = NAN;
	q->prompt_tokens = -1;
	return (long)r->n_reqs++;
}

/* Hand request idx (body bd) to the client now. */
static void launch_body(struct eng *e, long idx, const struct body *bd)
{
	struct slot *s = slot_get(e);
	s->req = idx;
	oai_sse_reset(&s->sse);
	s->n_itl = 0;
	s->last_chunk = s->last_byte = 0;
	e->res->reqs[idx].sent_ns = rt_now_ns() - e->t0;
	oai_xfer_start(e->cl, s->x, bd->data, bd->len);
}

/* A new request (seq, intended send) with the next body, sent now. */
static void launch(struct eng *e, int seq, bool warmup, int64_t intended)
{
	long idx = new_req(e, seq, warmup, intended);
	launch_body(e, idx, &e->bodies[e->body_i++ % e->n_bodies]);
}

/* q failed for the reason why (consumed). A reason may quote the server, so
 * it is redacted here, before anything stores or prints it. */
static void req_fail(struct run_load_req *q, char *why)
{
	q->ok = false;
	free(q->error);
	q->error = rt_redacted(why);
	free(why);
}

/* "http 500: <body start>" on one line. */
static char *status_reason(long status, const struct rt_sb *body)
{
	size_t n = body->len;
	while (n && (body->buf[n - 1] == ' ' || body->buf[n - 1] == '\t' ||
		     body->buf[n - 1] == '\n' || body->buf[n - 1] == '\r'))
		n--;
	char *why = xasprintf("http %ld: %.*s", status, (int)n, n ? body->buf : "(empty body)");
	for (char *c = why; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return why;
}

/* Whether the request succeeded, or why not. */
static void set_outcome(struct eng *e, struct slot *s, struct run_load_req *q,
			const struct oai_done *d)
{
	if (d->status && d->status != 200)
		req_fail(q, status_reason(d->status, d->errbody));
	else if (s->sse.error)
		req_fail(q, xstrdup(s->sse.error));
	else if (d->outcome == OAI_TIMEOUT)
		req_fail(q, xasprintf("timed out after %.3g s (request timeout)",
				      (double)e->timeout_ms / 1000));
	else if (d->outcome != OAI_OK)
		req_fail(q, xasprintf("transfer failed: %s%s%s", d->error, d->detail[0] ? ": " : "",
				      d->detail));
	else if (!s->sse.done)
		req_fail(q, xstrdup(d->status ? "stream ended without [DONE]" : "no http response"));
	else
		q->ok = true;
}

/* The request's gaps into the run's pool, contiguous per request. */
static void pool_gaps(struct run_load_result *r, struct run_load_req *q, const struct slot *s)
{
	q->itl_off = r->n_itl;
	if (!s->n_itl)
		return;
	if (r->n_itl + s->n_itl > r->itl_alloc) {
		while (r->n_itl + s->n_itl > r->itl_alloc)
			r->itl_alloc = r->itl_alloc ? r->itl_alloc * 2 : 4096;
		r->itl = xrealloc(r->itl, r->itl_alloc * sizeof(*r->itl));
	}
	double sum = 0, mx = 0;
	for (size_t i = 0; i < s->n_itl; i++) {
		sum += s->itl[i];
		if (s->itl[i] > mx)
			mx = s->itl[i];
	}
	memcpy(r->itl + r->n_itl, s->itl, s->n_itl * sizeof(double));
	r->n_itl += s->n_itl;
	q->itl_mean_s = sum / (double)s->n_itl;
	q->itl_max_s = mx;
}

/* A transfer ended: fill the record and recycle the slot. */
static void on_done(void *ud, const struct oai_done *d)
{
	struct slot *s = ud;
	struct eng *e = s->e;
	int64_t now = rt_now_ns();
	struct run_load_req *q = &e->res->reqs[s->req];
	q->status = d->status;
	int64_t end = s->last_byte ? s->last_byte : now;
	q->done_ns = end - e->t0;
	q->e2el_s = (double)(end - e->t0 - q->sent_ns) / 1e9;
	q->server_first_ns = s->sse.first_server_ns;
	if (d->resent && !q->warmup)
		e->res->resent++;
	set_outcome(e, s, q, d);
	if (q->n_chunks > 0)
		q->ttft_s = (double)(q->first_ns - q->sent_ns) / 1e9;
	if (s->sse.saw_usage) {
		q->output_tokens = s->sse.completion_tokens;
		q->prompt_tokens = s->sse.prompt_tokens;
	} else {
		q->output_tokens = q->n_chunks;
		if (q->ok) {
			q->usage_missing = true;
			q->error = xstrdup("no usage from the server: output tokens counted from "
					   "content chunks");
		}
	}
	pool_gaps(e->res, q, s);
	resp_trim(s);
	s->req = -1;
	e->idle[e->n_idle++] = s;
}

/* Abort every transfer in flight with a reason. */
static void abort_all(struct eng *e, const char *why)
{
	for (size_t i = 0; i < e->n_slots; i++) {
		struct slot *s = e->slots[i];
		if (s->req < 0)
			continue;
		long idx = s->req;
		oai_xfer_cancel(e->cl, s->x);
		req_fail(&e->res->reqs[idx], xstrdup(why));
	}
}

/* Past the run's deadline, or cancelled (runner/base/cancel.h: the second
 * Ctrl-C)? Then everything in flight is aborted. */
static bool deadline_hit(struct eng *e)
{
	if (rt_cancelled()) {
		abort_all(e, "stopped by a signal");
		return true;
	}
	if (!e->deadline || rt_now_ns() <= e->deadline)
		return false;
	abort_all(e, "run deadline reached");
	e->res->deadline_hit = true;
	return true;
}

/* Wait for I/O, or until abs time `until` (0: no scheduled wake). */
static void wait_io(struct eng *e, int64_t until)
{
	int64_t now = rt_now_ns();
	int timeout_ms = 1000;
	if (e->deadline && e->deadline - now < (int64_t)timeout_ms * 1000000)
		timeout_ms = (int)((e->deadline - now) / 1000000) + 1;
	if (!until) {
		oai_client_wait(e->cl, -1, timeout_ms);
		return;
	}
	if (until <= now)
		return;
	struct itimerspec its = { { 0, 0 },
				  { (time_t)(until / 1000000000LL), (long)(until % 1000000000LL) } };
	timerfd_settime(e->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	oai_client_wait(e->cl, e->tfd, timeout_ms);
	/* disarm and drain so the next wait does not see a stale expiry */
	uint64_t ticks;
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	timerfd_settime(e->tfd, 0, &off, NULL);
	if (read(e->tfd, &ticks, sizeof(ticks)) < 0) {
		/* nothing to drain: the timer had not fired */
	}
}

static int eng_init(struct eng *e, const struct spec_load *cfg, const char *base_url,
		    const struct run_load_opts *opts, struct run_load_result *res,
		    struct rt_sb *err)
{
	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->res = res;
	e->resp_cap = opts && opts->resp_total_cap ? opts->resp_total_cap : LOAD_RESP_TOTAL_CAP;
	rt_secret_add(opts ? opts->api_key : NULL); /* a server may echo them */
	rt_secret_add_url(base_url);
	e->url = oai_url(base_url, cfg->api == SPEC_API_CHAT ? OAI_CHAT : OAI_COMPLETIONS);
	double to = cfg->request_timeout_s > 0 ? cfg->request_timeout_s : 600;
	e->timeout_ms = (long)ceil(to * 1000);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e->tfd < 0)
		return rt_errf(err, RT_EIO, "load: cannot create a timer");
	struct oai_client_cfg cc = {
		.url = e->url,
		.api_key = opts ? opts->api_key : NULL,
		.stream = true,
		.timeout_ms = e->timeout_ms,
		.connect_timeout_ms = e->timeout_ms < 30000 ? e->timeout_ms : 30000L,
		.max_connections = opts && opts->max_connections > 0 ? opts->max_connections
				   : cfg->concurrency > 0 ? cfg->concurrency : 1024,
		.h = { on_data, on_header, on_done },
	};
	return oai_client_new(&cc, &e->cl, err);
}

static void eng_release(struct eng *e)
{
	oai_client_free(e->cl);
	for (size_t i = 0; i < e->n_slots; i++)
		slot_free(e->slots[i]);
	free(e->slots);
	free(e->idle);
	free(e->url);
	for (size_t i = 0; i < e->n_bodies; i++)
		free(e->bodies[i].data);
	free(e->bodies);
	if (e->tfd >= 0)
		close(e->tfd);
}

/* One blocking request (calibration probe); returns usage.prompt_tokens or <0. */
static int probe(struct eng *e, const struct body *bd, struct rt_sb *err)
{
	e->t0 = rt_now_ns();
	long idx = new_req(e, -1, true, 0);
	launch_body(e, idx, bd);
	while (oai_client_in_flight(e->cl)) {
		oai_client_perform(e->cl, NULL);
		oai_client_wait(e->cl, -1, 100);
	}
	struct run_load_req *q = &e->res->reqs[idx];
	int pt = q->prompt_tokens;
	int rc = 0;
	if (!q->ok)
		rc = rt_errf(err, RT_EHTTP, "%s: calibration probe failed: %s", e->url,
			     q->error ? q->error : "unknown error");
	else if (pt <= 0)
		rc = rt_errf(err, RT_EHTTP,
			     "%s: calibration probe: the server reported no usage.prompt_tokens",
			     e->url);
	free(q->error);
	e->res->n_reqs--;
	return rc ? rc : pt;
}

/* ---- the plan: checks, schedule, prompts ---- */

static int plan_check(struct plan *p, const struct spec_load *cfg, const char *base_url,
		      struct rt_sb *err)
{
	p->cfg = cfg;
	p->prefill = cfg->pattern == SPEC_LOAD_PREFILL;
	p->closed = cfg->pattern == SPEC_LOAD_CLOSED;
	p->open = !p->prefill && !p->closed;
	if (!base_url || !*base_url)
		return rt_errf(err, RT_EINVAL, "load: no endpoint");
	if (p->open && !(cfg->rate > 0))
		return rt_errf(err, RT_EINVAL, "load: an open-loop pattern needs rate > 0");
	if ((p->closed || p->prefill) && cfg->concurrency < 1)
		return rt_errf(err, RT_EINVAL, "load: %s needs concurrency >= 1",
			       p->prefill ? "prefill" : "a closed loop");
	if (cfg->requests <= 0 && !(cfg->duration_s > 0) && !p->prefill)
		return rt_errf(err, RT_EINVAL, "load: give requests or duration");
	p->n_req = cfg->requests > 0 ? cfg->requests : 0;
	if (p->prefill && !p->n_req && !(cfg->duration_s > 0))
		p->n_req = cfg->concurrency;
	p->out_tokens = p->prefill ? 1 : cfg->output_tokens > 0 ? cfg->output_tokens : 128;
	return 0;
}

/* Entries of sched before the duration ends. */
static size_t within_duration(const struct plan *p)
{
	size_t k = 0;
	int64_t lim = (int64_t)(p->cfg->duration_s * 1e9);
	while (k < p->n_sched && p->sched[k] < lim)
		k++;
	return k;
}

/* Open loop: the whole schedule, from the seed. */
static void plan_schedule(struct plan *p)
{
	const struct spec_load *cfg = p->cfg;
	if (!p->open)
		return;
	p->n_sched = p->n_req ? (size_t)p->n_req : (size_t)(cfg->rate * cfg->duration_s * 1.5) + 64;
	p->sched = xmalloc(p->n_sched * sizeof(*p->sched));
	run_load_schedule(cfg->pattern, cfg->rate, cfg->burstiness, p->seed, p->n_sched, p->sched);
	if (p->n_req)
		return;
	size_t k = within_duration(p);
	if (k == p->n_sched) {
		/* unlikely: extend by regenerating a longer schedule */
		p->n_sched *= 4;
		p->sched = xrealloc(p->sched, p->n_sched * sizeof(*p->sched));
		run_load_schedule(cfg->pattern, cfg->rate, cfg->burstiness, p->seed, p->n_sched,
				  p->sched);
		k = within_duration(p);
	}
	p->n_sched = k;
}

/* Random prompts: calibrate words per token on the server, then a pool. */
static int random_prompts(struct eng *e, const struct plan *p, size_t total,
			  const struct run_load_opts *opts, struct run_load_dataset *ds,
			  struct rt_sb *err)
{
	const struct spec_load *cfg = p->cfg;
	int words = cfg->prompt_tokens > 0 ? cfg->prompt_tokens : 128;
	if (!(opts && opts->no_calibrate)) {
		struct run_load_dataset one;
		run_load_dataset_random(1, words, 1, p->seed ^ 0xca11b, &one);
		struct body b;
		struct run_load_body_tmpl t = { 0 };
		b.data = run_load_body(cfg, p->model, one.v[0].text, 1, &t, &b.len);
		run_load_body_tmpl_release(&t);
		int pt = probe(e, &b, err);
		free(b.data);
		run_load_dataset_release(&one);
		if (pt < 0)
			return pt;
		e->res->words_per_token = (double)words / pt;
		words = (int)lround((double)words * e->res->words_per_token);
		if (words < 1)
			words = 1;
	}
	size_t per = (size_t)words * 8 + 256;
	size_t pool = total;
	if (pool * per > LOAD_POOL_BYTES)
		pool = LOAD_POOL_BYTES / per ? LOAD_POOL_BYTES / per : 1;
	run_load_dataset_random(pool, words, p->out_tokens, p->seed, ds);
	return 0;
}

/* Prompts and request bodies, built before the clock starts. */
static int make_bodies(struct eng *e, const struct plan *p, const struct run_load_opts *opts,
		       struct rt_sb *err)
{
	const struct spec_load *cfg = p->cfg;
	struct run_load_dataset ds = { 0 };
	size_t total = (size_t)cfg->warmup + (p->n_req ? (size_t)p->n_req : p->n_sched);
	if (!total || (!p->n_req && !p->open))
		total = 1024; /* duration-bound closed loop: cycle through a pool */
	int rc = cfg->dataset ? run_load_dataset_read(cfg->dataset, p->out_tokens,
						      p->prefill ? 1 : cfg->output_tokens, &ds, err)
			      : random_prompts(e, p, total, opts, &ds, err);
	if (rc)
		return rc;
	e->n_bodies = ds.n;
	e->bodies = xcalloc(ds.n, sizeof(*e->bodies));
	struct run_load_body_tmpl t = { 0 };
	for (size_t i = 0; i < ds.n; i++)
		e->bodies[i].data = run_load_body(cfg, p->model, ds.v[i].text,
						  p->prefill ? 1 : ds.v[i].max_tokens, &t, &e->bodies[i].len);
	run_load_body_tmpl_release(&t);
	run_load_dataset_release(&ds);
	return 0;
}

/* The run-level deadline in seconds from now (0: none). */
static double run_deadline_s(const struct eng *e, const struct plan *p,
			     const struct run_load_opts *opts)
{
	const struct spec_load *cfg = p->cfg;
	if (opts && opts->deadline_s > 0)
		return opts->deadline_s;
	if (!p->open && !(cfg->duration_s > 0))
		return 0; /* count-bound closed loop: per-request timeouts bound it */
	double est = cfg->duration_s > 0 ? cfg->duration_s
		     : p->open ? (double)p->n_sched / cfg->rate : 0;
	return est + (double)e->timeout_ms / 1000.0 * (p->closed || p->prefill ? 4 : 1) + 60;
}

/* ---- the phases ---- */

/* Warm-up: a closed loop, excluded from metrics. */
static void warmup_phase(struct eng *e)
{
	const struct spec_load *cfg = e->cfg;
	int c = cfg->concurrency > 0 ? cfg->concurrency : 8;
	int sent = 0;
	e->t0 = rt_now_ns();
	while (sent < cfg->warmup || oai_client_in_flight(e->cl)) {
		while (sent < cfg->warmup && oai_client_in_flight(e->cl) < c) {
			launch(e, -cfg->warmup + sent, true, rt_now_ns() - e->t0);
			sent++;
		}
		if (!oai_client_perform(e->cl, NULL))
			wait_io(e, 0);
		if (deadline_hit(e))
			break;
	}
}

/* Send what is due now; true when something was sent. */
static bool launch_due(struct eng *e, const struct plan *p, struct phase *ph, int64_t now)
{
	const struct spec_load *cfg = p->cfg;
	bool any = false;
	if (p->open) {
		while (ph->next < p->n_sched && e->t0 + p->sched[ph->next] <= now &&
		       (cfg->concurrency <= 0 || oai_client_in_flight(e->cl) < cfg->concurrency)) {
			launch(e, (int)ph->next, false, p->sched[ph->next]);
			ph->next++;
			any = true;
		}
	} else if (p->prefill) {
		if (!oai_client_in_flight(e->cl) && !ph->stop_new &&
		    (!p->n_req || ph->launched < p->n_req)) {
			int wave = cfg->concurrency;
			if (p->n_req && p->n_req - ph->launched < wave)
				wave = p->n_req - ph->launched;
			int64_t t = now - e->t0;
			for (int k = 0; k < wave; k++)
				launch(e, ph->launched + k, false, t);
			ph->launched += wave;
			any = true;
		}
	} else {
		while (!ph->stop_new && (!p->n_req || ph->launched < p->n_req) &&
		       oai_client_in_flight(e->cl) < cfg->concurrency) {
			launch(e, ph->launched, false, rt_now_ns() - e->t0);
			ph->launched++;
			any = true;
		}
	}
	return any;
}

/* When to wake for the next send (abs ns), 0: only on traffic. */
static int64_t next_wake(struct eng *e, const struct plan *p, const struct phase *ph)
{
	if (p->open && ph->next < p->n_sched &&
	    (p->cfg->concurrency <= 0 || oai_client_in_flight(e->cl) < p->cfg->concurrency))
		return e->t0 + p->sched[ph->next];
	if (ph->stop_at && !ph->stop_new)
		return ph->stop_at;
	return 0;
}

/* The measured requests, on the pattern's clock. */
static void measured_phase(struct eng *e, const struct plan *p)
{
	const struct spec_load *cfg = p->cfg;
	e->t0 = rt_now_ns() + 200000; /* a small lead so the first send is on time */
	e->res->t0_abs_ns = e->t0;
	struct phase ph = { 0 };
	ph.stop_at = cfg->duration_s > 0 ? e->t0 + (int64_t)(cfg->duration_s * 1e9) : 0;
	if (p->prefill || p->closed)
		rt_sleep_until_ns(e->t0);
	for (;;) {
		if (deadline_hit(e))
			break;
		int64_t now = rt_now_ns();
		if (ph.stop_at && now >= ph.stop_at)
			ph.stop_new = true;
		bool any = launch_due(e, p, &ph, now);
		int fin = oai_client_perform(e->cl, NULL);
		bool more = p->open ? ph.next < p->n_sched
				    : !ph.stop_new && (!p->n_req || ph.launched < p->n_req);
		if (!more && !oai_client_in_flight(e->cl))
			break;
		if (fin > 0 && (!p->open || any))
			continue; /* refill the freed slots at once */
		if (fin <= 0)
			wait_io(e, next_wake(e, p, &ph));
	}
	/* requests that never went out (deadline) are failed records too */
	for (size_t k = ph.next; p->open && k < p->n_sched; k++) {
		long idx = new_req(e, (int)k, false, p->sched[k]);
		req_fail(&e->res->reqs[idx], xstrdup("not sent: run deadline reached"));
	}
}

/* Totals over the measured requests (those from index first). */
static void summarize(struct run_load_result *out, size_t first, int64_t t0)
{
	int64_t last = t0;
	for (size_t i = first; i < out->n_reqs; i++) {
		struct run_load_req *q = &out->reqs[i];
		if (q->sent_ns >= 0 && t0 + q->done_ns > last)
			last = t0 + q->done_ns;
		if (q->ok) {
			out->completed++;
			out->output_tokens_total += q->output_tokens > 0 ? q->output_tokens : 0;
			out->prompt_tokens_total += q->prompt_tokens > 0 ? q->prompt_tokens : 0;
		} else {
			out->failed++;
		}
	}
	out->duration_s = (double)(last - t0) / 1e9;
}

static void copy_slo(struct run_load_result *out, const struct spec_load *cfg)
{
	if (!cfg->n_slo)
		return;
	out->slo = xcalloc(cfg->n_slo, sizeof(*out->slo));
	out->n_slo = cfg->n_slo;
	for (size_t i = 0; i < cfg->n_slo; i++) {
		out->slo[i].metric = xstrdup(cfg->slo[i].metric);
		out->slo[i].limit = cfg->slo[i].limit;
	}
}

int run_load_run(const struct spec_load *cfg, const char *base_url, const char *model,
		 uint64_t seed, const struct run_load_opts *opts, struct run_load_result *out,
		 struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	struct plan p = { .seed = seed };
	int rc = plan_check(&p, cfg, base_url, err);
	if (rc)
		return rc;
	if (!p.prefill && cfg->output_tokens <= 0 && opts && opts->default_max_tokens > 0)
		p.out_tokens = opts->default_max_tokens;
	p.model = model && *model ? model : cfg->model && *cfg->model ? cfg->model : "default";
	struct eng e;
	rc = eng_init(&e, cfg, base_url, opts, out, err);
	if (!rc) {
		out->offered_rate = p.open ? cfg->rate : 0;
		copy_slo(out, cfg);
		plan_schedule(&p);
		rc = make_bodies(&e, &p, opts, err);
	}
	if (!rc) {
		double dl = run_deadline_s(&e, &p, opts);
		e.deadline = dl > 0 ? rt_now_ns() + (int64_t)(dl * 1e9) : 0;
		if (cfg->warmup > 0)
			warmup_phase(&e);
		size_t first_measured = out->n_reqs;
		measured_phase(&e, &p);
		summarize(out, first_measured, e.t0);
	}
	free(p.sched);
	eng_release(&e);
	if (rc)
		run_load_result_release(out);
	return rc;
}
