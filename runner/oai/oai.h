/*
 * The one OpenAI-compatible HTTP client, used by the load generator, the gate
 * and the engine's probes. It owns what talking to such a server takes:
 *   - the endpoint URL from a base URL (oai_url: one builder);
 *   - request bodies' common part and a non-streamed completion's parse;
 *   - the request headers (JSON, SSE, Authorization: Bearer from a key the
 *     CALLER passes in: nothing here reads the environment);
 *   - libcurl's global initialisation, once per process (oai_global_init);
 *   - a driver for libcurl's multi interface that both the load generator
 *     and the gate run their own loops on: start transfers, wait, perform,
 *     and a callback per finished transfer (oai_client_*, oai_xfer_*);
 *   - the incremental parser of streamed (SSE) completions (oai_sse_*);
 *   - a one-shot GET for readiness and identity probes (oai_get).
 * Response bytes are untrusted input: every buffer has a cap.
 *
 * Ownership: oai_url() returns memory the caller frees; an oai_client owns
 * its transfers (oai_client_free frees them); oai_resp_release /
 * oai_sse_release / oai_completion_release free what their init filled.
 */
#ifndef RT_OAI_H
#define RT_OAI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/base/rt.h"

/* Which endpoint. */
enum oai_api {
	OAI_COMPLETIONS, /* /v1/completions: "prompt", choices[0].text */
	OAI_CHAT,        /* /v1/chat/completions: "messages", choices[0].message / delta */
	OAI_MODELS,      /* /v1/models: GET only, data[].id (oai_url only) */
};

/* libcurl's global initialisation, once per process (pthread_once). Every
 * function below that uses libcurl calls it; callers need not. */
void oai_global_init(void);

/* base ("http://host:port", "http://host:port/v1", either with trailing
 * slashes) + "/v1/completions" or "/v1/chat/completions", never a doubled
 * /v1. Caller frees. */
char *oai_url(const char *base, enum oai_api api);

/* ---- request bodies and non-streamed responses (oai_proto.c) ---- */

/* The common part of a request body: "model" (left out when NULL), the
 * input ("prompt" for completions, "messages" for chat; consumed), and
 * "max_tokens"; with stream, "stream": true and stream_options.include_usage
 * too. The caller adds its own fields, then dumps and frees it. */
json_t *oai_body_new(enum oai_api api, const char *model, json_t *input, int max_tokens,
		     bool stream);
/* A chat input of one user message: [{"role": "user", "content": text}]. */
json_t *oai_chat_user(const char *text);

/* A non-streamed completion. */
struct oai_completion {
	char *text;            /* choices[0].text or .message.content (owned), NULL if none */
	char *finish_reason;   /* choices[0].finish_reason (owned), or NULL */
	int prompt_tokens;     /* usage.prompt_tokens, -1 when absent */
	int completion_tokens; /* usage.completion_tokens, -1 when absent */
};
/* Parse a 200 response body into out (released first). RT_EPARSE with err
 * saying what is missing ("response: no choices[0].text") otherwise. */
int oai_completion_parse(const char *body, size_t len, enum oai_api api,
			 struct oai_completion *out, struct rt_sb *err);
void oai_completion_release(struct oai_completion *c);

/* ---- the multi-interface driver (oai_client.c) ---- */

/* How a transfer ended. */
enum oai_outcome {
	OAI_OK,        /* a response arrived in full (any HTTP status: see status) */
	OAI_TIMEOUT,   /* the transfer's timeout expired */
	OAI_NETWORK,   /* connection-level failure (refused, reset, nothing received): worth a retry */
	OAI_ABORTED,   /* on_data returned -1 */
	OAI_CANCELLED, /* oai_xfer_cancel */
	OAI_FAILED,    /* any other transfer failure */
};

/* What on_done is told. Pointers are valid during the call only. */
struct oai_done {
	enum oai_outcome outcome; /* how it ended */
	long status;              /* HTTP status, 0 when none arrived */
	const struct rt_sb *errbody; /* start of a non-200 body (capped at OAI_ERRBODY_CAP) */
	const char *error;        /* libcurl's words for a failure, "" for OAI_OK */
	const char *detail;       /* libcurl's detail for it (may be ""), "" for OAI_OK */
	bool resent;              /* sent a second time after libcurl gave up on dropped
				   * kept-alive connections with nothing received */
};
#define OAI_ERRBODY_CAP 512

/* The user's side of every transfer; ud is the transfer's (oai_xfer_new). */
struct oai_handlers {
	/* Bytes of a 200 response as they arrive (non-200 bodies go to errbody
	 * instead); return 0, or -1 to abort the transfer (OAI_ABORTED). */
	int (*on_data)(void *ud, const char *p, size_t n);
	/* One raw response header line (with its CRLF), or NULL. */
	void (*on_header)(void *ud, const char *line, size_t n);
	/* Exactly once per started transfer, from oai_client_perform or
	 * oai_xfer_cancel; the transfer is idle again (it may be restarted). */
	void (*on_done)(void *ud, const struct oai_done *d);
};

/* A client's fixed settings. */
struct oai_client_cfg {
	const char *url;          /* full endpoint URL (oai_url); copied */
	const char *api_key;      /* Authorization: Bearer; NULL or "": none; copied, wiped on free */
	bool stream;              /* SSE responses: Accept: text/event-stream */
	long timeout_ms;          /* per transfer (attempt) */
	long connect_timeout_ms;  /* per connection */
	long max_connections;     /* connection cache size; 0: libcurl's default */
	struct oai_handlers h;    /* callbacks */
};

struct oai_client;
struct oai_xfer;

/* A client; RT_EHTTP when libcurl cannot make one. Free with oai_client_free,
 * which drops transfers still in flight without calling on_done. */
int oai_client_new(const struct oai_client_cfg *cfg, struct oai_client **out, struct rt_sb *err);
void oai_client_free(struct oai_client *c);
/* A reusable transfer (one easy handle; it keeps its connection) whose
 * callbacks get ud. Owned by c. Dies when libcurl cannot make one. */
struct oai_xfer *oai_xfer_new(struct oai_client *c, void *ud);
/* POST body (not copied: it must live until on_done) on the idle transfer x. */
void oai_xfer_start(struct oai_client *c, struct oai_xfer *x, const char *body, size_t len);
/* Stop x if it is in flight: on_done is called with OAI_CANCELLED. */
void oai_xfer_cancel(struct oai_client *c, struct oai_xfer *x);
/* Move transfers forward (those with traffic the last oai_client_wait saw,
 * and any libcurl timeout due, which starts new transfers) and call on_done
 * for those that ended. Returns how many ended, or RT_EHTTP (err filled)
 * when libcurl fails. */
int oai_client_perform(struct oai_client *c, struct rt_sb *err);
/* Wait up to timeout_ms for traffic on any transfer, or for fd (>= 0) to be
 * readable. Returns at once when nothing is in flight and fd < 0. */
void oai_client_wait(struct oai_client *c, int fd, int timeout_ms);
/* Transfers in flight. */
int oai_client_in_flight(const struct oai_client *c);

/* ---- streamed completions (oai_sse.c) ---- */

/* What the parser found in one stream. */
struct oai_sse {
	struct rt_sb buf;       /* bytes not yet consumed (capped) */
	size_t scan;            /* where to resume looking for an event end in buf */
	struct rt_sb ev;        /* data: lines of the event being assembled, joined by \n */
	bool ev_has;            /* the event being assembled has a data: line */
	int n_content;          /* content chunks */
	bool done;              /* data: [DONE] seen */
	bool saw_usage;         /* a usage object was seen */
	int prompt_tokens;      /* usage.prompt_tokens, -1 unknown */
	int completion_tokens;  /* usage.completion_tokens, -1 unknown */
	int64_t first_server_ns;/* server_ns of the first content chunk, 0 if none */
	char *error;            /* first protocol error (owned), NULL if none */
};

void oai_sse_init(struct oai_sse *s, size_t cap);
void oai_sse_reset(struct oai_sse *s);
void oai_sse_release(struct oai_sse *s);
/* Feed bytes; returns the number of NEW content chunks seen (>= 0), or -1 on a
 * protocol error (s->error says why; the stream should be aborted). */
int oai_sse_feed(struct oai_sse *s, const char *data, size_t n);

/* ---- one-shot GET for probes (oai_http.c) ---- */

struct oai_resp {
	long status;          /* HTTP status, 0 when no response */
	struct rt_sb body;    /* response body, capped */
	struct rt_sb headers; /* raw response headers, capped */
};

void oai_resp_init(struct oai_resp *r, size_t cap);
void oai_resp_release(struct oai_resp *r);

/* GET url. Returns 0 when a response arrived (any status), RT_EHTTP when the
 * connection failed (err says why: "connection refused", ...). */
int oai_get(const char *url, double timeout_s, struct oai_resp *r, struct rt_sb *err);
/* The same with Authorization: Bearer api_key (NULL: none), for endpoints a
 * server protects, such as vLLM's /v1/models under --api-key. */
int oai_get_auth(const char *url, double timeout_s, const char *api_key, struct oai_resp *r,
		 struct rt_sb *err);
/* GET a file (the GSM8K data): follows redirects and the environment's proxy
 * settings; a body over r's cap is an error (RT_EHTTP), never cut short. */
int oai_download(const char *url, double timeout_s, struct oai_resp *r, struct rt_sb *err);

/* Value of a response header (case-insensitive name) copied into out; 0 or RT_ENOENT. */
int oai_resp_header(const struct oai_resp *r, const char *name, char *out, size_t n);

#endif
