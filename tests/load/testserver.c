/* The load generator's misbehaving test server (see testserver.h). */
#include "testserver.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"

struct lts {
	struct MHD_Daemon *d;  /* the daemon */
	enum lts_mode mode;    /* how to misbehave */
	int token_us;          /* delay between tokens */
	int service_us;        /* LTS_SERIAL: time each request holds the server */
	atomic_long requests;  /* received */
	atomic_int stopping;   /* set by lts_stop: hanging streams end */
	pthread_mutex_t serial;/* LTS_SERIAL */
	pthread_mutex_t mu;    /* guards auth */
	char auth[256];        /* last Authorization header */
	char *require_key;     /* non-NULL: requests without "Bearer <it>" get 401 (owned) */
};

/* Per-connection upload and stream state. */
struct conn {
	struct rt_sb body;     /* request body */
	int64_t recv_ns;       /* when the request was complete */
};

struct stream {
	struct lts *s;
	bool chat;             /* chat/completions */
	int max_tokens;        /* tokens to send */
	int prompt_tokens;     /* words in the prompt */
	int sent;              /* tokens sent */
	int phase;             /* 0 tokens, 1 usage, 2 done, 3 end */
	struct rt_sb out;      /* pending bytes */
	size_t off;            /* consumed of out */
};

static void sleep_us(struct lts *s, int us)
{
	if (us > 0)
		rt_sleep_ns((int64_t)us * 1000);
	(void)s;
}

static void add_token(struct stream *st, const char *text)
{
	int64_t now = rt_now_ns();
	if (st->chat)
		rt_sb_addf(&st->out,
			   "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
			   "\"delta\":{\"content\":\"%s\"},\"finish_reason\":null}],\"server_ns\":%lld}\n\n",
			   text, (long long)now);
	else
		rt_sb_addf(&st->out,
			   "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
			   "\"text\":\"%s\",\"finish_reason\":null}],\"server_ns\":%lld}\n\n",
			   text, (long long)now);
}

/* Fill st->out with the next piece; returns false at end, -1 via *err for a cut. */
static bool produce(struct stream *st, bool *cut)
{
	struct lts *s = st->s;
	*cut = false;
	if (st->phase == 0) {
		if (st->sent >= st->max_tokens) {
			st->phase = 1;
			return produce(st, cut);
		}
		if (s->mode == LTS_HANG && st->sent == 1) {
			while (!atomic_load(&s->stopping))
				rt_sleep_ns(5000000);
			*cut = true;
			return false;
		}
		if (s->mode == LTS_MIDCLOSE && st->sent == 3) {
			*cut = true;
			return false;
		}
		if (s->mode == LTS_BADJSON && st->sent == 2) {
			rt_sb_adds(&st->out, "data: {\"choices\": [{\"text\": \"x\"\n\n");
			st->phase = 3;
			return true;
		}
		if (s->mode == LTS_ERREVENT && st->sent == 2) {
			rt_sb_adds(&st->out, "data: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n");
			st->phase = 3;
			return true;
		}
		if (st->sent)
			sleep_us(s, s->token_us);
		if (s->mode == LTS_BIGCHUNK && st->sent == 1) {
			size_t n = (size_t)4 << 20;
			char *big = malloc(n + 1);
			memset(big, 'a', n);
			big[n] = 0;
			add_token(st, big);
			free(big);
		} else {
			add_token(st, " tok");
		}
		st->sent++;
		return true;
	}
	if (st->phase == 1) {
		st->phase = 2;
		if (s->mode != LTS_NOUSAGE)
			rt_sb_addf(&st->out,
				   "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,"
				   "\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
				   st->prompt_tokens, st->sent, st->prompt_tokens + st->sent);
		if (st->out.len)
			return true;
	}
	if (st->phase == 2) {
		st->phase = 3;
		if (s->mode != LTS_NODONE) {
			rt_sb_adds(&st->out, "data: [DONE]\n\n");
			return true;
		}
	}
	return false;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	(void)pos;
	if (st->off == st->out.len) {
		rt_sb_reset(&st->out);
		st->off = 0;
		bool cut;
		if (!produce(st, &cut))
			return cut ? MHD_CONTENT_READER_END_WITH_ERROR
				   : MHD_CONTENT_READER_END_OF_STREAM;
	}
	size_t n = st->out.len - st->off;
	if (n > max)
		n = max;
	memcpy(buf, st->out.buf + st->off, n);
	st->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;
	if (st->s->mode == LTS_SERIAL)
		pthread_mutex_unlock(&st->s->serial);
	rt_sb_release(&st->out);
	free(st);
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned code, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

/* Record the Authorization header; false when a required key is missing. */
static bool auth_ok(struct lts *s, struct MHD_Connection *c)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&s->mu);
	snprintf(s->auth, sizeof(s->auth), "%s", auth ? auth : "");
	bool ok = !s->require_key ||
		  (auth && !strncmp(auth, "Bearer ", 7) && !strcmp(auth + 7, s->require_key));
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct lts *s = cls;
	(void)version;
	struct conn *cn = *con_cls;
	if (!cn) {
		cn = xcalloc(1, sizeof(*cn));
		*con_cls = cn;
		return MHD_YES;
	}
	if (*upload_size) {
		rt_sb_add(&cn->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	cn->recv_ns = rt_now_ns();
	atomic_fetch_add(&s->requests, 1);
	if (!auth_ok(s, c))
		return reply_text(c, 401, "{\"error\":{\"message\":\"invalid api key\"}}");
	if (strcmp(method, "POST"))
		return reply_text(c, 404, "{\"error\":\"not found\"}");
	bool chat = strstr(url, "chat") != NULL;
	if (s->mode == LTS_STATUS500)
		return reply_text(c, 500, "{\"error\":{\"message\":\"internal failure\"}}");
	json_error_t je;
	json_t *b = json_loadb(cn->body.buf, cn->body.len, 0, &je);
	if (!b)
		return reply_text(c, 400, "{\"error\":\"bad json\"}");
	struct stream *st = xcalloc(1, sizeof(*st));
	st->s = s;
	st->chat = chat;
	json_t *mt = json_object_get(b, "max_tokens");
	st->max_tokens = json_is_integer(mt) ? (int)json_integer_value(mt) : 16;
	const char *prompt = chat ? json_string_value(json_object_get(
					    json_array_get(json_object_get(b, "messages"), 0), "content"))
				  : json_string_value(json_object_get(b, "prompt"));
	st->prompt_tokens = (int)rt_count_words(prompt);
	json_decref(b);
	if (s->mode == LTS_SERIAL) {
		pthread_mutex_lock(&s->serial);
		sleep_us(s, s->service_us);
	}
	struct MHD_Response *r =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, reader, st, stream_free);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	char hv[32];
	snprintf(hv, sizeof(hv), "%lld", (long long)cn->recv_ns);
	MHD_add_response_header(r, "X-Server-Recv-Ns", hv);
	enum MHD_Result rc = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return rc;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct conn *cn = *con_cls;
	(void)cls;
	(void)c;
	(void)toe;
	if (cn) {
		rt_sb_release(&cn->body);
		free(cn);
		*con_cls = NULL;
	}
}

struct lts *lts_start(enum lts_mode mode, int token_us, int service_us, int *port)
{
	struct lts *s = xcalloc(1, sizeof(*s));
	s->mode = mode;
	s->token_us = token_us;
	s->service_us = service_us;
	pthread_mutex_init(&s->serial, NULL);
	pthread_mutex_init(&s->mu, NULL);
	struct sockaddr_in sa = { 0 };
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(0x7f000001);
	sa.sin_port = 0;
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
				0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)4000, MHD_OPTION_END);
	if (!s->d) {
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : 0;
	return s;
}

void lts_stop(struct lts *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, 1);
	MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->serial);
	pthread_mutex_destroy(&s->mu);
	free(s->require_key);
	free(s);
}

void lts_require_key(struct lts *s, const char *key)
{
	pthread_mutex_lock(&s->mu);
	free(s->require_key);
	s->require_key = xstrdup(key);
	pthread_mutex_unlock(&s->mu);
}

void lts_last_auth(struct lts *s, char *out, size_t n)
{
	pthread_mutex_lock(&s->mu);
	snprintf(out, n, "%s", s->auth);
	pthread_mutex_unlock(&s->mu);
}

long lts_requests(struct lts *s)
{
	return atomic_load(&s->requests);
}
