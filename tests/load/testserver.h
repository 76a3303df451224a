/*
 * A tiny OpenAI-compatible streaming server (libmicrohttpd, in-process,
 * loopback, port 0) for the load generator's tests and bench: it streams one
 * token per SSE event with "server_ns" stamps and the X-Server-Recv-Ns header
 * like simserve, it can misbehave on purpose (the lts_mode values), and it can
 * require an API key and tell which Authorization header it saw.
 */
#ifndef LOAD_TESTSERVER_H
#define LOAD_TESTSERVER_H

#include <stddef.h>
#include <stdint.h>

enum lts_mode {
	LTS_OK,        /* well-formed stream with usage and [DONE] */
	LTS_BADJSON,   /* broken JSON after two tokens */
	LTS_NODONE,    /* tokens and usage, then the stream ends without [DONE] */
	LTS_STATUS500, /* HTTP 500 with a JSON error body */
	LTS_MIDCLOSE,  /* connection dropped after three tokens (chunked stream cut) */
	LTS_ERREVENT,  /* an {"error":...} event after two tokens, then the end */
	LTS_HANG,      /* one token, then nothing until the client gives up */
	LTS_BIGCHUNK,  /* one 4 MiB content event in the middle */
	LTS_NOUSAGE,   /* no usage chunk */
	LTS_SERIAL,    /* one request at a time, each holding the server service_us */
};

struct lts;

/* Start on 127.0.0.1, port 0; *port gets the bound port. NULL on failure. */
struct lts *lts_start(enum lts_mode mode, int token_us, int service_us, int *port);
void lts_stop(struct lts *s);
/* Requests the server has received. */
long lts_requests(struct lts *s);
/* From now on, answer 401 to requests without "Authorization: Bearer <key>"
 * (NULL: no key needed). */
void lts_require_key(struct lts *s, const char *key);
/* Last Authorization header seen, copied into out ("" if none). */
void lts_last_auth(struct lts *s, char *out, size_t n);

#endif
