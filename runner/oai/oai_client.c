/*
 * The multi-interface driver (see oai.h): one libcurl multi handle, a set of
 * reusable transfers (an easy handle each, so connections are kept), the
 * shared request headers, and the translation of how a transfer ended into
 * an oai_outcome. The loop that decides when to send stays with the caller
 * (the load generator's schedule, the gate's retries); this file only starts
 * transfers, waits, and reports each end once through on_done.
 *
 * It runs libcurl's socket interface on an epoll set: libcurl says which
 * sockets to watch (on_socket) and when its next timeout is due (on_timer);
 * oai_client_wait is one epoll_wait, and oai_client_perform hands libcurl
 * only the sockets that wait found ready, plus CURL_SOCKET_TIMEOUT when the
 * timer is due. The profile of thousands of streams per second showed
 * curl_multi_perform walking every transfer and poll() registering on every
 * socket at each wake as the client's largest cost after JSON parsing.
 */
#include "runner/oai/oai.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define OAI_EXTRA_TAG UINT64_MAX /* epoll data of the caller's extra descriptor */
#define OAI_READY_MAX 256        /* events taken per wait; more stay for the next one */
/* libcurl (7.88 checked) adds "Expect: 100-continue" to a POST body larger
 * than this, never to a smaller one: only those transfers carry the
 * "Expect:" header that turns it off (every custom header costs libcurl a
 * scan of the list at each of its own header checks, per request). */
#define OAI_EXPECT_THRESHOLD (1024 * 1024)

struct oai_xfer {
	CURL *easy;                     /* reused across requests (keeps options) */
	struct oai_client *c;           /* owner */
	void *ud;                       /* the caller's, handed to every callback */
	bool busy;                      /* in the multi handle */
	struct curl_slist *headers;     /* the list CURLOPT_HTTPHEADER points at now */
	bool renew;                     /* reset the handle before its next start (see
					 * xfer_renew: libcurl's retry budget) */
	const char *body;               /* the request body in flight (the caller's) */
	size_t body_len;                /* its bytes */
	bool resent;                    /* resent once already (see resend_dead) */
	long status;                    /* HTTP status once the body starts, else 0 */
	struct rt_sb errbody;           /* start of a non-200 body */
	char curl_err[CURL_ERROR_SIZE]; /* libcurl's detail for a failed transfer */
};

struct oai_client {
	CURLM *multi;                /* the one multi handle */
	struct curl_slist *headers;  /* shared request headers (the key wiped on free) */
	struct curl_slist *headers_big; /* the same plus "Expect:", for bodies over OAI_EXPECT_THRESHOLD */
	char *url;                   /* full endpoint URL */
	CURLU *curlu;                /* url parsed once, shared read-only by every transfer
				      * (libcurl parses CURLOPT_URL again at every start) */
	long timeout_ms;             /* per transfer */
	long connect_timeout_ms;     /* per connection */
	struct oai_handlers h;       /* the caller's callbacks */
	struct oai_xfer **xfers;     /* every transfer made */
	size_t n_xfers;
	int in_flight;               /* transfers in the multi handle */
	int epfd;                    /* epoll set of the sockets libcurl asked to watch */
	int extra_fd;                /* the caller's descriptor in epfd (oai_client_wait), -1 none */
	int64_t timer_at;            /* CLOCK_MONOTONIC ns libcurl's timeout is due, -1 none */
	struct epoll_event ready[OAI_READY_MAX]; /* what the last wait found */
	int n_ready;                 /* entries of ready not yet handed to libcurl */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void oai_global_init(void)
{
	pthread_once(&curl_once, curl_init_once);
}

/* The request headers (with "Expect:" when big); the key goes in only here. */
static struct curl_slist *make_headers(const char *api_key, bool stream, bool big)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	if (stream)
		h = curl_slist_append(h, "Accept: text/event-stream");
	if (big)
		h = curl_slist_append(h, "Expect:");
	if (api_key && *api_key) {
		char *line = xasprintf("Authorization: Bearer %s", api_key);
		h = curl_slist_append(h, line);
		/* do not leave the key lying in freed memory */
		memset(line, 0, strlen(line));
		free(line);
	}
	return h;
}

static void free_headers(struct curl_slist *headers)
{
	for (struct curl_slist *h = headers; h; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(headers);
}

/* libcurl's socket callback: keep the epoll set to what it wants watched. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	(void)easy;
	struct oai_client *c = arg;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL); /* EBADF: closed, so already gone */
		return 0;
	}
	struct epoll_event ev = { .events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) |
					    ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u),
				  .data.u64 = (uint64_t)fd };
	/* sockp is what curl_multi_assign gave this socket: set once it is in the
	 * set, and forgotten by libcurl with the socket's REMOVE */
	if (sockp) {
		epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev);
	} else if (!epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) ||
		   (errno == EEXIST && !epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev))) {
		curl_multi_assign(c->multi, fd, c);
	}
	return 0;
}

/* libcurl's timer callback: when to call it with CURL_SOCKET_TIMEOUT. */
static int on_timer(CURLM *m, long timeout_ms, void *arg)
{
	(void)m;
	struct oai_client *c = arg;
	c->timer_at = timeout_ms < 0 ? -1 : rt_now_ns() + (int64_t)timeout_ms * 1000000;
	return 0;
}

int oai_client_new(const struct oai_client_cfg *cfg, struct oai_client **out, struct rt_sb *err)
{
	oai_global_init();
	*out = NULL;
	CURLM *m = curl_multi_init();
	if (!m)
		return rt_errf(err, RT_EHTTP, "%s: cannot create a curl multi handle", cfg->url);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		curl_multi_cleanup(m);
		return rt_errf(err, RT_EIO, "%s: cannot create an epoll set: %s", cfg->url,
			       strerror(errno));
	}
	struct oai_client *c = xcalloc(1, sizeof(*c));
	c->multi = m;
	c->epfd = epfd;
	c->extra_fd = -1;
	c->timer_at = -1;
	curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(m, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(m, CURLMOPT_TIMERDATA, c);
	c->headers = make_headers(cfg->api_key, cfg->stream, false);
	c->headers_big = make_headers(cfg->api_key, cfg->stream, true);
	c->url = xstrdup(cfg->url);
	c->curlu = curl_url();
	if (c->curlu && curl_url_set(c->curlu, CURLUPART_URL, c->url, 0) != CURLUE_OK) {
		curl_url_cleanup(c->curlu); /* libcurl will say what is wrong with it */
		c->curlu = NULL;
	}
	c->timeout_ms = cfg->timeout_ms;
	c->connect_timeout_ms = cfg->connect_timeout_ms;
	c->h = cfg->h;
	if (cfg->max_connections > 0)
		curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, cfg->max_connections);
	*out = c;
	return 0;
}

void oai_client_free(struct oai_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_xfers; i++) {
		struct oai_xfer *x = c->xfers[i];
		if (x->busy)
			curl_multi_remove_handle(c->multi, x->easy);
		curl_easy_cleanup(x->easy);
		rt_sb_release(&x->errbody);
		free(x);
	}
	free(c->xfers);
	curl_multi_cleanup(c->multi); /* may still call on_socket: epfd stays open until here */
	close(c->epfd);
	free_headers(c->headers);
	free_headers(c->headers_big);
	curl_url_cleanup(c->curlu);
	free(c->url);
	free(c);
}

/* ---- callbacks from libcurl ---- */

static size_t on_write(char *p, size_t sz, size_t nm, void *arg)
{
	struct oai_xfer *x = arg;
	size_t n = sz * nm;
	if (!x->status)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status != 200) {
		size_t room = OAI_ERRBODY_CAP - x->errbody.len;
		rt_sb_add(&x->errbody, p, n < room ? n : room);
		return n;
	}
	return x->c->h.on_data(x->ud, p, n) < 0 ? 0 : n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg)
{
	struct oai_xfer *x = arg;
	if (x->c->h.on_header)
		x->c->h.on_header(x->ud, p, sz * nm);
	return sz * nm;
}

/*
 * No proxy variable is set, so libcurl would use none: it reads, at every
 * request, http_proxy for http (never HTTP_PROXY), https_proxy or
 * HTTPS_PROXY for https, then all_proxy or ALL_PROXY, and no_proxy only
 * unless CURLOPT_NOPROXY is set (lib/url.c, create_conn_helper_init_proxy
 * and detect_proxy, in 7.88). Setting CURLOPT_PROXY and CURLOPT_NOPROXY to
 * "" then changes nothing but saves those five getenv scans per request.
 */
static bool no_proxy_env(void)
{
	static const char *const vars[] = { "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy",
					    "ALL_PROXY" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (getenv(vars[i]))
			return false; /* even set to "": libcurl's reading of it stays */
	}
	return true;
}

/* Every option of x's handle (after curl_easy_init or curl_easy_reset). */
static void xfer_setup(struct oai_client *c, struct oai_xfer *x)
{
	CURL *e = x->easy;
	if (c->curlu)
		curl_easy_setopt(e, CURLOPT_CURLU, c->curlu);
	else
		curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
	x->headers = c->headers;
	if (no_proxy_env()) { /* what libcurl would find, without its lookups */
		curl_easy_setopt(e, CURLOPT_PROXY, "");
		curl_easy_setopt(e, CURLOPT_NOPROXY, "");
	}
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->curl_err);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
}

struct oai_xfer *oai_xfer_new(struct oai_client *c, void *ud)
{
	struct oai_xfer *x = xcalloc(1, sizeof(*x));
	x->c = c;
	x->ud = ud;
	rt_sb_init(&x->errbody, OAI_ERRBODY_CAP);
	x->easy = curl_easy_init();
	if (!x->easy) {
		fprintf(stderr, "ratchet: curl_easy_init failed\n");
		abort();
	}
	xfer_setup(c, x);
	c->xfers = xrealloc(c->xfers, (c->n_xfers + 1) * sizeof(*c->xfers));
	c->xfers[c->n_xfers++] = x;
	return x;
}

/*
 * A server may close a kept-alive connection just as a request is sent on it
 * (llama-server's cpp-httplib does, between two streamed responses). libcurl
 * then resends the request on a fresh connection by itself, when nothing of
 * the response had arrived, and gives up after 5 such retries with
 * "Connection died, tried 5 times before giving up". But libcurl (7.88 here)
 * counts those retries per easy handle, not per request: the counter
 * (state.retrycount, lib/transfer.c Curl_retry_request; checked in 7.88) is
 * cleared only when it gives up or by curl_easy_reset, so a handle reused for
 * many requests fails a request after its 5th retry in all, whatever the
 * request (the cause named in curl/curl pull request #19066, October 2025).
 * 39 of 1,000 streamed requests against llama-server failed this way. So a
 * handle whose last transfer opened a connection (a retry always does) or
 * failed is reset before its next start, which gives each request libcurl's
 * whole budget; a handle that kept its connection is not (nothing to clear,
 * and the reset costs every option again).
 */
static void xfer_renew(struct oai_client *c, struct oai_xfer *x)
{
	curl_easy_reset(x->easy);
	xfer_setup(c, x);
	x->renew = false;
}

/* Hand x's body to libcurl and x to the multi handle. */
static void xfer_send(struct oai_client *c, struct oai_xfer *x)
{
	struct curl_slist *h = x->body_len > OAI_EXPECT_THRESHOLD ? c->headers_big : c->headers;
	if (h != x->headers) {
		curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, h);
		x->headers = h;
	}
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
	curl_multi_add_handle(c->multi, x->easy);
}

void oai_xfer_start(struct oai_client *c, struct oai_xfer *x, const char *body, size_t len)
{
	if (x->renew)
		xfer_renew(c, x);
	x->body = body;
	x->body_len = len;
	x->resent = false;
	x->status = 0;
	rt_sb_reset(&x->errbody);
	x->curl_err[0] = 0;
	xfer_send(c, x);
	x->busy = true;
	c->in_flight++;
}

static enum oai_outcome outcome_of(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK:
		return OAI_OK;
	case CURLE_OPERATION_TIMEDOUT:
		return OAI_TIMEOUT;
	case CURLE_WRITE_ERROR:
		return OAI_ABORTED;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return OAI_NETWORK;
	default:
		return OAI_FAILED;
	}
}

/* x ended with cc (or was cancelled): take it out and tell the caller. */
static void end(struct oai_client *c, struct oai_xfer *x, CURLcode cc, bool cancelled)
{
	curl_multi_remove_handle(c->multi, x->easy);
	x->busy = false;
	c->in_flight--;
	if (!x->status)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	long connects = 0;
	curl_easy_getinfo(x->easy, CURLINFO_NUM_CONNECTS, &connects);
	if (cc != CURLE_OK || connects > 0)
		x->renew = true;
	struct oai_done d = {
		.outcome = cancelled ? OAI_CANCELLED : outcome_of(cc),
		.status = x->status,
		.errbody = &x->errbody,
		.error = cancelled ? "cancelled" : cc == CURLE_OK ? "" : curl_easy_strerror(cc),
		.detail = cancelled ? "" : x->curl_err,
		.resent = x->resent,
	};
	c->h.on_done(x->ud, &d);
}

void oai_xfer_cancel(struct oai_client *c, struct oai_xfer *x)
{
	if (x->busy)
		end(c, x, CURLE_ABORTED_BY_CALLBACK, true);
}

/* Hand libcurl one socket's events (or the timeout); RT_EHTTP when it fails
 * as a whole (a socket it no longer knows is not a failure). */
static int act(struct oai_client *c, curl_socket_t fd, int mask, struct rt_sb *err)
{
	int running = 0;
	CURLMcode mc = curl_multi_socket_action(c->multi, fd, mask, &running);
	if (mc != CURLM_OK && mc != CURLM_BAD_SOCKET)
		return rt_errf(err, RT_EHTTP, "curl: %s", curl_multi_strerror(mc));
	return 0;
}

/*
 * libcurl's own resends (xfer_renew) pick an idle kept-alive connection when
 * the pool has one, not a new one, although it logs "retrying a fresh
 * connect": when the server drops every connection at the same point, each
 * resend can land on another connection about to die, and the request fails
 * after 5 with "Connection died, tried 5 times before giving up" (seen with
 * simserve --keepalive-drop 2 on a loaded host: two transfers passing their
 * once-used connections back and forth). Such a transfer, where nothing of an
 * answer arrived, is started once more with a reset handle (a new budget);
 * the caller hears of it in oai_done.resent. Only CURLE_SEND_ERROR, libcurl's
 * code for that ending: a transfer that received anything is never resent.
 */
static bool resend_dead(struct oai_client *c, struct oai_xfer *x, CURLcode cc)
{
	curl_off_t got = 0;
	long hdr = 0;
	curl_easy_getinfo(x->easy, CURLINFO_SIZE_DOWNLOAD_T, &got);
	curl_easy_getinfo(x->easy, CURLINFO_HEADER_SIZE, &hdr);
	if (cc != CURLE_SEND_ERROR || x->resent || got > 0 || hdr > 0)
		return false;
	curl_multi_remove_handle(c->multi, x->easy);
	xfer_renew(c, x);
	x->resent = true;
	x->curl_err[0] = 0;
	xfer_send(c, x);
	return true;
}

int oai_client_perform(struct oai_client *c, struct rt_sb *err)
{
	int rc = 0;
	for (int i = 0; i < c->n_ready && !rc; i++) {
		const struct epoll_event *ev = &c->ready[i];
		if (ev->data.u64 == OAI_EXTRA_TAG)
			continue;
		int mask = ((ev->events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
			   ((ev->events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
			   ((ev->events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
		rc = act(c, (curl_socket_t)ev->data.u64, mask, err);
	}
	c->n_ready = 0;
	if (!rc && c->timer_at >= 0 && rt_now_ns() >= c->timer_at) {
		c->timer_at = -1; /* on_timer sets the next one */
		rc = act(c, CURL_SOCKET_TIMEOUT, 0, err);
	}
	if (rc)
		return rc;
	CURLMsg *m;
	int left, n = 0;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct oai_xfer *x;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (resend_dead(c, x, m->data.result))
			continue;
		end(c, x, m->data.result, false);
		n++;
	}
	return n;
}

/* Watch the caller's descriptor fd (-1: none) in the epoll set. */
static void set_extra(struct oai_client *c, int fd)
{
	if (fd == c->extra_fd)
		return;
	if (c->extra_fd >= 0)
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->extra_fd, NULL);
	c->extra_fd = fd;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = OAI_EXTRA_TAG };
	if (fd >= 0 && epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev))
		c->extra_fd = -1; /* not watchable: the timeout still bounds the wait */
}

void oai_client_wait(struct oai_client *c, int fd, int timeout_ms)
{
	if (!c->in_flight && fd < 0)
		return;
	set_extra(c, fd);
	if (c->n_ready)
		return; /* events not yet handed to libcurl: no need to sleep */
	if (c->timer_at >= 0) {
		int64_t left = c->timer_at - rt_now_ns();
		int t = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
		if (timeout_ms < 0 || t < timeout_ms)
			timeout_ms = t;
	}
	int n = epoll_wait(c->epfd, c->ready, OAI_READY_MAX, timeout_ms);
	c->n_ready = n > 0 ? n : 0;
}

int oai_client_in_flight(const struct oai_client *c)
{
	return c->in_flight;
}
