/*
 * The load generator's engine: one thread driving libcurl's multi interface.
 *
 * Every request body is built before the clock starts. Open-loop sends happen
 * at absolute CLOCK_MONOTONIC times precomputed from the seed; a timerfd armed
 * for the next send is handed to curl_multi_poll as an extra descriptor, so
 * the loop wakes with microsecond precision instead of curl's millisecond
 * timeouts, while still servicing every stream. Transfers reuse a pool of
 * easy handles (and with them the connection cache); every timestamp is taken
 * in the write callback. Nothing in a stream can crash or hang a run: bad
 * streams become failed requests with a reason, each request has a timeout,
 * and the run has a deadline.
 */
#include "runner/load/load.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define LOAD_RESP_CAP ((size_t)256 << 20) /* per response: SSE bytes buffered */
#define LOAD_ERRBODY_CAP 512              /* bytes of a non-200 body kept for the reason */
#define LOAD_POOL_BYTES ((size_t)256 << 20) /* request bodies kept in memory */

struct eng;

/* One transfer slot: an easy handle and its reusable buffers. */
struct slot {
	CURL *easy;               /* reused across requests (keeps options) */
	struct eng *e;            /* owner */
	long req;                 /* index into e->res->reqs, -1 when idle */
	struct run_load_sse sse;  /* stream parser */
	struct rt_sb errbody;     /* start of a non-200 body */
	double *itl;              /* gaps of the current request (s) */
	size_t n_itl, itl_alloc;  /* used / allocated entries */
	int64_t last_chunk;       /* abs ns of the last content chunk */
	int64_t last_byte;        /* abs ns of the last byte */
	long status;              /* HTTP status once known, 0 before */
	char curl_err[CURL_ERROR_SIZE]; /* curl's detail for a failed transfer */
};

struct body {
	char *data;               /* JSON request body (owned) */
	size_t len;
};

struct eng {
	const struct spec_load *cfg; /* what to run */
	CURLM *multi;
	struct curl_slist *headers;  /* shared request headers */
	char *url;                   /* full endpoint URL */
	struct slot **slots;         /* every slot made */
	size_t n_slots;
	struct slot **idle;          /* stack of idle slots */
	size_t n_idle;
	int in_flight;               /* transfers in the multi handle */
	struct body *bodies;         /* distinct request bodies */
	size_t n_bodies;
	struct run_load_result *res; /* being filled */
	size_t reqs_alloc;           /* allocated entries of res->reqs */
	int64_t t0;                  /* abs ns of the run's start */
	long timeout_ms;             /* per request */
	int tfd;                     /* timerfd for the next scheduled send */
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

/* ---- curl callbacks: timestamps are taken here ---- */

static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
	struct slot *s = ud;
	size_t n = sz * nm;
	static const char key[] = "x-server-recv-ns:";
	if (n > sizeof(key) && !strncasecmp(p, key, sizeof(key) - 1) && s->req >= 0)
		s->e->res->reqs[s->req].server_recv_ns = strtoll(p + sizeof(key) - 1, NULL, 10);
	return n;
}

static void push_gap(struct slot *s, double g)
{
	if (s->n_itl == s->itl_alloc) {
		s->itl_alloc = s->itl_alloc ? s->itl_alloc * 2 : 256;
		s->itl = xrealloc(s->itl, s->itl_alloc * sizeof(*s->itl));
	}
	s->itl[s->n_itl++] = g;
}

static size_t on_write(char *p, size_t sz, size_t nm, void *ud)
{
	int64_t now = rt_now_ns();
	struct slot *s = ud;
	size_t n = sz * nm;
	s->last_byte = now;
	if (!s->status)
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status != 200) {
		size_t room = LOAD_ERRBODY_CAP - s->errbody.len;
		rt_sb_add(&s->errbody, p, n < room ? n : room);
		return n;
	}
	int got = run_load_sse_feed(&s->sse, p, n);
	if (got < 0)
		return 0; /* abort the transfer: the reason is in s->sse.error */
	if (got > 0) {
		struct run_load_req *q = &s->e->res->reqs[s->req];
		if (q->n_chunks == 0) {
			q->first_ns = now - s->e->t0;
			got--;
		} else {
			push_gap(s, (double)(now - s->last_chunk) / 1e9);
			got--;
		}
		q->n_chunks++;
		/* several chunks in one read arrived together: zero gaps */
		for (; got > 0; got--) {
			push_gap(s, 0);
			q->n_chunks++;
		}
		s->last_chunk = now;
	}
	return n;
}

/* ---- slots ---- */

static struct slot *slot_get(struct eng *e)
{
	if (e->n_idle)
		return e->idle[--e->n_idle];
	struct slot *s = xcalloc(1, sizeof(*s));
	s->e = e;
	s->req = -1;
	run_load_sse_init(&s->sse, LOAD_RESP_CAP);
	rt_sb_init(&s->errbody, 0);
	s->easy = curl_easy_init();
	if (!s->easy) {
		fprintf(stderr, "ratchet: curl_easy_init failed\n");
		abort();
	}
	CURL *c = s->easy;
	curl_easy_setopt(c, CURLOPT_URL, e->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, e->headers);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(c, CURLOPT_PRIVATE, s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->curl_err);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, e->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, e->timeout_ms < 30000 ? e->timeout_ms : 30000L);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
	e->slots = xrealloc(e->slots, (e->n_slots + 1) * sizeof(*e->slots));
	e->slots[e->n_slots++] = s;
	e->idle = xrealloc(e->idle, e->n_slots * sizeof(*e->idle));
	return s;
}

static void slot_free(struct slot *s)
{
	curl_easy_cleanup(s->easy);
	run_load_sse_release(&s->sse);
	rt_sb_release(&s->errbody);
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

/* Hand request idx (body b) to curl now. */
static void launch(struct eng *e, long idx, size_t b)
{
	struct slot *s = slot_get(e);
	s->req = idx;
	run_load_sse_reset(&s->sse);
	rt_sb_reset(&s->errbody);
	s->n_itl = 0;
	s->status = 0;
	s->last_chunk = s->last_byte = 0;
	s->curl_err[0] = 0;
	const struct body *bd = &e->bodies[b % e->n_bodies];
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, bd->data);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)bd->len);
	e->res->reqs[idx].sent_ns = rt_now_ns() - e->t0;
	curl_multi_add_handle(e->multi, s->easy);
	e->in_flight++;
}

static void req_fail(struct run_load_req *q, char *why)
{
	q->ok = false;
	free(q->error);
	q->error = why;
}

/* A transfer ended: fill the record and recycle the slot. */
static void finish(struct eng *e, struct slot *s, CURLcode rc)
{
	int64_t now = rt_now_ns();
	struct run_load_req *q = &e->res->reqs[s->req];
	if (!s->status)
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &s->status);
	q->status = s->status;
	int64_t end = s->last_byte ? s->last_byte : now;
	q->done_ns = end - e->t0;
	q->e2el_s = (double)(end - e->t0 - q->sent_ns) / 1e9;
	q->server_first_ns = s->sse.first_server_ns;
	if (s->status && s->status != 200) {
		rt_sb_trim(&s->errbody);
		for (char *c = s->errbody.buf; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		req_fail(q, xasprintf("http %ld: %s", s->status,
				      s->errbody.len ? s->errbody.buf : "(empty body)"));
	} else if (s->sse.error) {
		req_fail(q, xstrdup(s->sse.error));
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		req_fail(q, xasprintf("timed out after %.3g s (request timeout)",
				      (double)e->timeout_ms / 1000));
	} else if (rc != CURLE_OK) {
		req_fail(q, xasprintf("transfer failed: %s%s%s", curl_easy_strerror(rc),
				      s->curl_err[0] ? ": " : "", s->curl_err));
	} else if (!s->sse.done) {
		req_fail(q, xstrdup(s->status ? "stream ended without [DONE]"
					      : "no http response"));
	} else {
		q->ok = true;
	}
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
	/* gaps into the run's pool, contiguous per request */
	struct run_load_result *r = e->res;
	q->itl_off = r->n_itl;
	if (s->n_itl) {
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
	curl_multi_remove_handle(e->multi, s->easy);
	e->in_flight--;
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
		struct run_load_req *q = &e->res->reqs[s->req];
		finish(e, s, CURLE_ABORTED_BY_CALLBACK);
		req_fail(q, xstrdup(why));
	}
}

/* Drain curl's completion messages; returns how many finished. */
static int reap(struct eng *e, int *n_measured_done)
{
	CURLMsg *m;
	int left, n = 0;
	while ((m = curl_multi_info_read(e->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct slot *s;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
		bool warm = e->res->reqs[s->req].warmup;
		finish(e, s, m->data.result);
		if (!warm && n_measured_done)
			(*n_measured_done)++;
		n++;
	}
	return n;
}

/* Wait for I/O, or until abs time `until` (0: no scheduled wake). */
static void wait_io(struct eng *e, int64_t until, int64_t deadline)
{
	int64_t now = rt_now_ns();
	int timeout_ms = 1000;
	if (deadline && deadline - now < (int64_t)timeout_ms * 1000000)
		timeout_ms = (int)((deadline - now) / 1000000) + 1;
	struct curl_waitfd wfd = { e->tfd, CURL_WAIT_POLLIN, 0 };
	unsigned nfd = 0;
	if (until) {
		if (until <= now)
			return;
		struct itimerspec its = { { 0, 0 },
					  { (time_t)(until / 1000000000LL),
					    (long)(until % 1000000000LL) } };
		timerfd_settime(e->tfd, TFD_TIMER_ABSTIME, &its, NULL);
		nfd = 1;
	}
	curl_multi_poll(e->multi, nfd ? &wfd : NULL, nfd, timeout_ms, NULL);
	if (nfd) {
		uint64_t ticks;
		/* disarm and drain so the next poll does not see a stale expiry */
		struct itimerspec off = { { 0, 0 }, { 0, 0 } };
		timerfd_settime(e->tfd, 0, &off, NULL);
		if (read(e->tfd, &ticks, sizeof(ticks)) < 0) {
			/* nothing to drain: the timer had not fired */
		}
	}
}

/* ---- request bodies ---- */

static char *make_body(const struct spec_load *cfg, const char *model, const char *prompt,
		       int max_tokens, size_t *len)
{
	json_t *o = json_object();
	json_object_set_new(o, "model", json_string(model));
	if (cfg->api == SPEC_API_CHAT) {
		json_t *msgs = json_array();
		json_t *m = json_object();
		json_object_set_new(m, "role", json_string("user"));
		json_object_set_new(m, "content", json_string(prompt));
		json_array_append_new(msgs, m);
		json_object_set_new(o, "messages", msgs);
	} else {
		json_object_set_new(o, "prompt", json_string(prompt));
	}
	json_object_set_new(o, "max_tokens", json_integer(max_tokens));
	json_object_set_new(o, "stream", json_true());
	json_t *so = json_object();
	json_object_set_new(so, "include_usage", json_true());
	json_object_set_new(o, "stream_options", so);
	if (cfg->ignore_eos)
		json_object_set_new(o, "ignore_eos", json_true());
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*len = strlen(s);
	return s;
}

static char *endpoint_url(const char *base, enum spec_load_api api)
{
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	const char *path = api == SPEC_API_CHAT ? "/chat/completions" : "/completions";
	if (n >= 3 && !strncmp(base + n - 3, "/v1", 3))
		return xasprintf("%.*s%s", (int)n, base, path);
	return xasprintf("%.*s/v1%s", (int)n, base, path);
}

static int eng_init(struct eng *e, const struct spec_load *cfg, const char *base_url,
		    const struct run_load_opts *opts, struct run_load_result *res)
{
	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->res = res;
	e->url = endpoint_url(base_url, cfg->api);
	e->headers = curl_slist_append(NULL, "Content-Type: application/json");
	e->headers = curl_slist_append(e->headers, "Accept: text/event-stream");
	e->headers = curl_slist_append(e->headers, "Expect:");
	const char *key = getenv("OPENAI_API_KEY");
	if (key && *key) {
		char *h = xasprintf("Authorization: Bearer %s", key);
		e->headers = curl_slist_append(e->headers, h);
		free(h);
	}
	double to = cfg->request_timeout_s > 0 ? cfg->request_timeout_s : 600;
	e->timeout_ms = (long)ceil(to * 1000);
	e->multi = curl_multi_init();
	long maxconn = opts && opts->max_connections > 0 ? opts->max_connections
			: cfg->concurrency > 0 ? cfg->concurrency : 1024;
	curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, maxconn);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e->tfd < 0)
		return RT_EIO;
	return 0;
}

static void eng_release(struct eng *e)
{
	for (size_t i = 0; i < e->n_slots; i++) {
		if (e->slots[i]->req >= 0)
			curl_multi_remove_handle(e->multi, e->slots[i]->easy);
		slot_free(e->slots[i]);
	}
	free(e->slots);
	free(e->idle);
	if (e->multi)
		curl_multi_cleanup(e->multi);
	curl_slist_free_all(e->headers);
	free(e->url);
	for (size_t i = 0; i < e->n_bodies; i++)
		free(e->bodies[i].data);
	free(e->bodies);
	if (e->tfd >= 0)
		close(e->tfd);
}

/* One blocking request (calibration probe); returns usage.prompt_tokens or <0. */
static int probe(struct eng *e, const char *body, size_t len, struct rt_sb *err)
{
	e->t0 = rt_now_ns();
	long idx = new_req(e, -1, true, 0);
	struct body saved = { (char *)body, len };
	struct body *old = e->bodies;
	size_t oldn = e->n_bodies;
	e->bodies = &saved;
	e->n_bodies = 1;
	launch(e, idx, 0);
	int running = 1;
	while (e->in_flight) {
		curl_multi_perform(e->multi, &running);
		reap(e, NULL);
		if (e->in_flight)
			curl_multi_poll(e->multi, NULL, 0, 100, NULL);
	}
	e->bodies = old;
	e->n_bodies = oldn;
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

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int run_load_run(const struct spec_load *cfg, const char *base_url, const char *model,
		 uint64_t seed, const struct run_load_opts *opts, struct run_load_result *out,
		 struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	pthread_once(&curl_once, curl_init_once);
	if (!base_url || !*base_url)
		return rt_errf(err, RT_EINVAL, "load: no endpoint");
	bool prefill = cfg->pattern == SPEC_LOAD_PREFILL;
	bool closed = cfg->pattern == SPEC_LOAD_CLOSED;
	bool open = !prefill && !closed;
	if (open && !(cfg->rate > 0))
		return rt_errf(err, RT_EINVAL, "load: an open-loop pattern needs rate > 0");
	if ((closed || prefill) && cfg->concurrency < 1)
		return rt_errf(err, RT_EINVAL, "load: %s needs concurrency >= 1",
			       prefill ? "prefill" : "a closed loop");
	if (cfg->requests <= 0 && !(cfg->duration_s > 0) && !prefill)
		return rt_errf(err, RT_EINVAL, "load: give requests or duration");
	if (!model || !*model)
		model = cfg->model && *cfg->model ? cfg->model : "default";
	int n_req = cfg->requests > 0 ? cfg->requests : 0;
	if (prefill && !n_req && !(cfg->duration_s > 0))
		n_req = cfg->concurrency;
	int out_tokens = prefill ? 1 : (cfg->output_tokens > 0 ? cfg->output_tokens : 128);

	struct eng e;
	int rc = eng_init(&e, cfg, base_url, opts, out);
	if (rc) {
		eng_release(&e);
		return rt_errf(err, rc, "load: cannot create a timer");
	}
	out->offered_rate = open ? cfg->rate : 0;
	if (cfg->n_slo) {
		out->slo = xcalloc(cfg->n_slo, sizeof(*out->slo));
		out->n_slo = cfg->n_slo;
		for (size_t i = 0; i < cfg->n_slo; i++) {
			out->slo[i].metric = xstrdup(cfg->slo[i].metric);
			out->slo[i].limit = cfg->slo[i].limit;
		}
	}

	/* open loop: the whole schedule, from the seed */
	int64_t *sched = NULL;
	size_t n_sched = 0;
	if (open) {
		if (n_req) {
			n_sched = (size_t)n_req;
		} else {
			n_sched = (size_t)(cfg->rate * cfg->duration_s * 1.5) + 64;
		}
		sched = xmalloc(n_sched * sizeof(*sched));
		run_load_schedule(cfg->pattern, cfg->rate, cfg->burstiness, seed, n_sched, sched);
		if (!n_req) {
			size_t k = 0;
			int64_t lim = (int64_t)(cfg->duration_s * 1e9);
			while (k < n_sched && sched[k] < lim)
				k++;
			if (k == n_sched) {
				/* unlikely: extend by regenerating a longer schedule */
				n_sched *= 4;
				sched = xrealloc(sched, n_sched * sizeof(*sched));
				run_load_schedule(cfg->pattern, cfg->rate, cfg->burstiness, seed, n_sched,
						  sched);
				k = 0;
				while (k < n_sched && sched[k] < lim)
					k++;
			}
			n_sched = k;
		}
	}

	/* prompts and bodies, built before the clock starts */
	struct run_load_dataset ds = { 0 };
	size_t total = (size_t)cfg->warmup + (n_req ? (size_t)n_req : n_sched);
	if (!total || (!n_req && !open))
		total = 1024; /* duration-bound closed loop: cycle through a pool */
	if (cfg->dataset) {
		rc = run_load_dataset_read(cfg->dataset, out_tokens,
					   prefill ? 1 : cfg->output_tokens, &ds, err);
		if (rc)
			goto out;
	} else {
		int words = cfg->prompt_tokens > 0 ? cfg->prompt_tokens : 128;
		if (!(opts && opts->no_calibrate)) {
			struct run_load_dataset one;
			run_load_dataset_random(1, words, 1, seed ^ 0xca11b, &one);
			size_t bl;
			char *b = make_body(cfg, model, one.v[0].text, 1, &bl);
			int pt = probe(&e, b, bl, err);
			free(b);
			run_load_dataset_release(&one);
			if (pt < 0) {
				rc = pt;
				goto out;
			}
			out->words_per_token = (double)words / pt;
			words = (int)lround((double)words * out->words_per_token);
			if (words < 1)
				words = 1;
		}
		size_t per = (size_t)words * 8 + 256;
		size_t pool = total;
		if (pool * per > LOAD_POOL_BYTES)
			pool = LOAD_POOL_BYTES / per ? LOAD_POOL_BYTES / per : 1;
		run_load_dataset_random(pool, words, out_tokens, seed, &ds);
	}
	e.n_bodies = ds.n;
	e.bodies = xcalloc(ds.n, sizeof(*e.bodies));
	for (size_t i = 0; i < ds.n; i++)
		e.bodies[i].data = make_body(cfg, model, ds.v[i].text, prefill ? 1 : ds.v[i].max_tokens,
					    &e.bodies[i].len);
	run_load_dataset_release(&ds);

	double dl_s = opts && opts->deadline_s > 0 ? opts->deadline_s : 0;
	if (!dl_s) {
		double est = cfg->duration_s > 0 ? cfg->duration_s
			   : open ? (double)n_sched / cfg->rate : 0;
		dl_s = est + (double)e.timeout_ms / 1000.0 * (closed || prefill ? 4 : 1) + 60;
		if (!open && !(cfg->duration_s > 0))
			dl_s = 0; /* count-bound closed loop: per-request timeouts bound it */
	}
	int64_t run_start = rt_now_ns();
	int64_t deadline = dl_s > 0 ? run_start + (int64_t)(dl_s * 1e9) : 0;
	int running = 0;
	size_t body_i = 0;

	/* warm-up: closed loop, excluded from metrics */
	if (cfg->warmup > 0) {
		int c = cfg->concurrency > 0 ? cfg->concurrency : 8;
		int sent = 0;
		e.t0 = rt_now_ns();
		while (sent < cfg->warmup || e.in_flight) {
			while (sent < cfg->warmup && e.in_flight < c) {
				long idx = new_req(&e, -cfg->warmup + sent, true, rt_now_ns() - e.t0);
				launch(&e, idx, body_i++);
				sent++;
			}
			curl_multi_perform(e.multi, &running);
			if (!reap(&e, NULL))
				wait_io(&e, 0, deadline);
			if (deadline && rt_now_ns() > deadline) {
				abort_all(&e, "run deadline reached");
				out->deadline_hit = true;
				break;
			}
		}
	}

	/* measured phase */
	size_t first_measured = out->n_reqs;
	e.t0 = rt_now_ns() + 200000; /* a small lead so the first send is on time */
	out->t0_abs_ns = e.t0;
	int64_t stop_at = cfg->duration_s > 0 ? e.t0 + (int64_t)(cfg->duration_s * 1e9) : 0;
	size_t next = 0;      /* open loop: next schedule entry */
	int launched = 0;     /* closed loop / prefill: measured requests started */
	int done = 0;
	bool stop_new = false;
	if (prefill || closed)
		rt_sleep_until_ns(e.t0);
	for (;;) {
		int64_t now = rt_now_ns();
		if (deadline && now > deadline) {
			abort_all(&e, "run deadline reached");
			out->deadline_hit = true;
			break;
		}
		if (stop_at && now >= stop_at)
			stop_new = true;
		bool any = false;
		if (open) {
			while (next < n_sched && e.t0 + sched[next] <= now &&
			       (cfg->concurrency <= 0 || e.in_flight < cfg->concurrency)) {
				long idx = new_req(&e, (int)next, false, sched[next]);
				launch(&e, idx, body_i++);
				next++;
				any = true;
			}
		} else if (prefill) {
			if (!e.in_flight && !stop_new && (!n_req || launched < n_req)) {
				int wave = cfg->concurrency;
				if (n_req && n_req - launched < wave)
					wave = n_req - launched;
				int64_t t = now - e.t0;
				for (int k = 0; k < wave; k++) {
					long idx = new_req(&e, launched + k, false, t);
					launch(&e, idx, body_i++);
				}
				launched += wave;
				any = true;
			}
		} else {
			while (!stop_new && (!n_req || launched < n_req) &&
			       e.in_flight < cfg->concurrency) {
				long idx = new_req(&e, launched, false, rt_now_ns() - e.t0);
				launch(&e, idx, body_i++);
				launched++;
				any = true;
			}
		}
		curl_multi_perform(e.multi, &running);
		int fin = reap(&e, &done);
		bool more = open ? next < n_sched
			  : !stop_new && (!n_req || launched < n_req);
		if (!more && !e.in_flight)
			break;
		if (fin && !open)
			continue; /* refill the freed slots at once */
		if (any && fin)
			continue;
		int64_t until = 0;
		if (open && next < n_sched &&
		    (cfg->concurrency <= 0 || e.in_flight < cfg->concurrency))
			until = e.t0 + sched[next];
		else if (stop_at && !stop_new)
			until = stop_at;
		if (!fin)
			wait_io(&e, until, deadline);
	}
	/* requests that never went out (deadline) are failed records too */
	if (open) {
		for (; next < n_sched; next++) {
			long idx = new_req(&e, (int)next, false, sched[next]);
			req_fail(&out->reqs[idx], xstrdup("not sent: run deadline reached"));
		}
	}
	int64_t last = e.t0;
	for (size_t i = first_measured; i < out->n_reqs; i++) {
		struct run_load_req *q = &out->reqs[i];
		if (q->sent_ns >= 0 && e.t0 + q->done_ns > last)
			last = e.t0 + q->done_ns;
		if (q->ok) {
			out->completed++;
			out->output_tokens_total += q->output_tokens > 0 ? q->output_tokens : 0;
			out->prompt_tokens_total += q->prompt_tokens > 0 ? q->prompt_tokens : 0;
		} else {
			out->failed++;
		}
	}
	out->duration_s = (double)(last - e.t0) / 1e9;
	rc = 0;
out:
	free(sched);
	eng_release(&e);
	if (rc)
		run_load_result_release(out);
	return rc;
}
