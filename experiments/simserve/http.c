/*
 * The HTTP side of simserve, on libmicrohttpd: /health, /v1/models and the
 * OpenAI completions and chat endpoints, streaming (SSE) or not, plus the
 * fault knobs (--crash-after, --hang-after, --malformed, --keepalive-drop).
 *
 * A completion request is parsed with jansson, planned (plan.c) and handed
 * to the scheduler. A streaming response is a callback response: the
 * callback formats one SSE event per token the scheduler has produced and,
 * when there is nothing to send, suspends the connection; the scheduler
 * resumes it when the next token exists. A non-streaming request suspends in
 * the access handler until its answer is complete. MHD runs its own thread
 * pool; no thread is created per request.
 */
#include "simserve.h"

#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STREAM_BLOCK (64 * 1024)     /* MHD buffer for callback responses */
#define BIGCHUNK_BYTES (4u << 20)    /* --malformed bigchunk padding */
#define TOKENS_PER_FORMAT 256        /* events formatted per callback pass */

static struct {
	const struct ss_config *cfg; /* options */
	struct MHD_Daemon *d;        /* the daemon */
	char *model_json;            /* model id as a JSON string literal */
	char *models_body;           /* GET /v1/models body */
	enum ss_malformed mal;       /* fault mode */
	_Atomic long completions;    /* completion requests received */
	_Atomic bool hang;           /* --hang-after tripped */
} H;

static const char *const mal_names[] = {
	[SS_MAL_NONE] = "", [SS_MAL_BADJSON] = "badjson", [SS_MAL_NODONE] = "nodone",
	[SS_MAL_500MID] = "500mid", [SS_MAL_RESET] = "reset", [SS_MAL_BIGCHUNK] = "bigchunk",
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
			     const char *ctype)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
								    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", ctype);
	if (H.cfg->nonce && *H.cfg->nonce)
		MHD_add_response_header(resp, "X-Launch-Nonce", H.cfg->nonce);
	enum MHD_Result rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

int ss_http_reply(struct MHD_Connection *c, unsigned status, const char *body, const char *ctype)
{
	return (int)reply(c, status, body, ctype);
}

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *type,
				   const char *msg)
{
	json_t *o = json_pack("{s:{s:s,s:s,s:i}}", "error", "message", msg, "type", type, "code",
			      (int)status);
	char *s = json_dumps(o, JSON_COMPACT);
	enum MHD_Result rc = reply(c, status, s, "application/json");
	free(s);
	json_decref(o);
	return rc;
}

/* ---- request parsing ---- */

struct parsed {
	struct ss_ask ask;      /* what the plan needs */
	struct rt_sb prompt;    /* owns ask.prompt */
	const char **stop;      /* owns the array (strings live in the JSON) */
	bool stream;            /* "stream": true */
	bool include_usage;     /* stream_options.include_usage */
};

static const char *content_text(json_t *content, struct rt_sb *tmp)
{
	if (json_is_string(content))
		return json_string_value(content);
	if (!json_is_array(content))
		return NULL;
	size_t i;
	json_t *part;
	rt_sb_reset(tmp);
	json_array_foreach(content, i, part) {
		const char *t = json_string_value(json_object_get(part, "text"));
		if (t) {
			if (tmp->len)
				rt_sb_addc(tmp, '\n');
			rt_sb_adds(tmp, t);
		}
	}
	return tmp->buf;
}

/* Fill p from the request JSON; returns NULL or an error message. The
 * strings in p point into root, which must outlive p. */
static const char *parse(json_t *root, bool chat, struct parsed *p, struct rt_sb *last_user)
{
	if (!json_is_object(root))
		return "request body must be a JSON object";
	p->ask.chat = chat;
	p->ask.max_tokens = -1;
	if (chat) {
		json_t *msgs = json_object_get(root, "messages");
		if (!json_is_array(msgs) || !json_array_size(msgs))
			return "messages: expected a non-empty array";
		size_t i;
		json_t *m;
		struct rt_sb tmp = RT_SB_INIT;
		json_array_foreach(msgs, i, m) {
			const char *role = json_string_value(json_object_get(m, "role"));
			const char *text = content_text(json_object_get(m, "content"), &tmp);
			if (!role || !text) {
				rt_sb_release(&tmp);
				return "messages: each message needs a role and a content";
			}
			if (p->prompt.len)
				rt_sb_addc(&p->prompt, '\n');
			rt_sb_adds(&p->prompt, text);
			if (!strcmp(role, "user")) {
				rt_sb_reset(last_user);
				rt_sb_adds(last_user, text);
				p->ask.last_user = last_user->buf;
			}
		}
		rt_sb_release(&tmp);
	} else {
		json_t *pr = json_object_get(root, "prompt");
		if (json_is_array(pr) && json_array_size(pr) == 1 && json_is_string(json_array_get(pr, 0)))
			pr = json_array_get(pr, 0);
		if (json_is_string(pr)) {
			rt_sb_adds(&p->prompt, json_string_value(pr));
		} else if (json_is_array(pr) && json_array_size(pr)) {
			size_t i;
			json_t *t;
			json_array_foreach(pr, i, t) {
				if (!json_is_integer(t))
					return "prompt: expected a string or a list of token ids";
				rt_sb_adds(&p->prompt, i ? " tok" : "tok");
			}
		} else {
			return "prompt: expected a string or a list of token ids";
		}
	}
	p->ask.prompt = p->prompt.buf;

	json_t *v = json_object_get(root, "max_tokens");
	if (!v || json_is_null(v))
		v = json_object_get(root, "max_completion_tokens");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return "max_tokens: expected a non-negative integer";
		p->ask.max_tokens = (long)json_integer_value(v);
	}
	v = json_object_get(root, "n");
	if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) != 1))
		return "n: only n = 1 is supported";
	v = json_object_get(root, "stop");
	if (json_is_string(v)) {
		p->stop = xmalloc(sizeof(*p->stop));
		p->stop[0] = json_string_value(v);
		p->ask.n_stop = 1;
	} else if (json_is_array(v)) {
		p->stop = xcalloc(json_array_size(v) + 1, sizeof(*p->stop));
		size_t i;
		json_t *s;
		json_array_foreach(v, i, s) {
			if (!json_is_string(s))
				return "stop: expected a string or a list of strings";
			p->stop[p->ask.n_stop++] = json_string_value(s);
		}
	} else if (v && !json_is_null(v)) {
		return "stop: expected a string or a list of strings";
	}
	p->ask.stop = p->stop;
	v = json_object_get(root, "stream");
	p->stream = json_is_true(v);
	v = json_object_get(root, "stream_options");
	p->include_usage = json_is_true(json_object_get(v, "include_usage"));
	p->ask.ignore_eos = json_is_true(json_object_get(root, "ignore_eos"));
	v = json_object_get(root, "temperature");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v) || json_number_value(v) < 0)
			return "temperature: expected a non-negative number";
		p->ask.temperature = json_number_value(v);
	}
	v = json_object_get(root, "seed");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v))
			return "seed: expected an integer";
		p->ask.has_seed = true;
		p->ask.seed = (uint64_t)json_integer_value(v);
	}
	return NULL;
}

/* ---- formatting ---- */

static void add_usage(struct rt_sb *sb, const struct ss_req *r)
{
	rt_sb_addf(sb, "\"usage\":{\"prompt_tokens\":%ld,\"completion_tokens\":%zu,\"total_tokens\":%ld}",
		   r->plan.prompt_tokens, r->plan.n_tok,
		   r->plan.prompt_tokens + (long)r->plan.n_tok);
}

static void add_head(struct rt_sb *sb, const struct ss_req *r, bool chunk)
{
	rt_sb_addf(sb, "{\"id\":\"%s%llu\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,",
		   r->chat ? "chatcmpl-" : "cmpl-", (unsigned long long)r->id,
		   r->chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion",
		   (long long)time(NULL), H.model_json);
}

/* One SSE event for token i (or an empty final event when i == n_tok). */
static void add_token_event(struct ss_req *r, size_t i)
{
	struct rt_sb *sb = &r->out;
	bool last = i + 1 >= r->plan.n_tok;
	const char *text = i < r->plan.n_tok ? r->plan.tok[i].json : "\"\"";
	char fin[32];
	snprintf(fin, sizeof(fin), last ? "\"%s\"" : "null", r->plan.finish_reason);
	rt_sb_adds(sb, "data: ");
	if (H.mal == SS_MAL_BADJSON && i == 0) {
		rt_sb_addf(sb, "{\"id\":\"cmpl-%llu\",\"choices\":[{\"text\":%s,}]\n\n",
			   (unsigned long long)r->id, text);
		return;
	}
	add_head(sb, r, true);
	if (r->chat)
		rt_sb_addf(sb, "\"choices\":[{\"index\":0,\"delta\":{%s\"content\":%s},"
			       "\"logprobs\":null,\"finish_reason\":%s}],",
			   i == 0 ? "\"role\":\"assistant\"," : "", text, fin);
	else
		rt_sb_addf(sb, "\"choices\":[{\"index\":0,\"text\":%s,\"logprobs\":null,"
			       "\"finish_reason\":%s}],", text, fin);
	if (H.mal == SS_MAL_BIGCHUNK && i == 0) {
		rt_sb_adds(sb, "\"padding\":\"");
		for (size_t k = 0; k < BIGCHUNK_BYTES; k += 64)
			rt_sb_adds(sb, "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp");
		rt_sb_adds(sb, "\",");
	}
	rt_sb_addf(sb, "\"server_ns\":%lld}\n\n", (long long)rt_now_ns());
}

/* Format what can be sent now into r->out; false when we must wait. */
static bool format_more(struct ss_req *r)
{
	size_t n = r->plan.n_tok;
	size_t mid = n / 2 > 0 ? n / 2 : 1;
	bool cut = H.mal == SS_MAL_500MID || H.mal == SS_MAL_RESET;
	switch (r->tail_stage) {
	case 0:
		if (cut && r->sent >= mid) {
			if (H.mal == SS_MAL_500MID)
				rt_sb_adds(&r->out, "data: {\"error\":{\"message\":\"simulated internal error\","
						    "\"type\":\"internal_server_error\",\"code\":500}}\n\n");
			r->tail_stage = 3;
			return true;
		}
		if (r->sent < r->produced) {
			size_t stop = r->produced;
			if (stop - r->sent > TOKENS_PER_FORMAT)
				stop = r->sent + TOKENS_PER_FORMAT;
			if (cut && stop > mid)
				stop = mid;
			for (; r->sent < stop; r->sent++)
				add_token_event(r, r->sent);
			return true;
		}
		if (!r->done)
			return false;
		if (n == 0)
			add_token_event(r, 0);
		r->tail_stage = 1;
		return true;
	case 1:
		if (r->include_usage) {
			rt_sb_adds(&r->out, "data: ");
			add_head(&r->out, r, true);
			rt_sb_adds(&r->out, "\"choices\":[],");
			add_usage(&r->out, r);
			rt_sb_addf(&r->out, ",\"server_ns\":%lld}\n\n", (long long)rt_now_ns());
		}
		r->tail_stage = 2;
		return true;
	case 2:
		if (H.mal != SS_MAL_NODONE)
			rt_sb_adds(&r->out, "data: [DONE]\n\n");
		r->tail_stage = 3;
		return true;
	default:
		return false;
	}
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct ss_req *r = cls;
	ssize_t rc;
	(void)pos;
	pthread_mutex_lock(&ss_lock);
	for (;;) {
		if (ss_closing) {
			rc = MHD_CONTENT_READER_END_WITH_ERROR;
			break;
		}
		if (r->out_off < r->out.len) {
			size_t n = r->out.len - r->out_off;
			if (n > max)
				n = max;
			memcpy(buf, r->out.buf + r->out_off, n);
			r->out_off += n;
			if (r->out_off == r->out.len) {
				rt_sb_reset(&r->out);
				r->out_off = 0;
			}
			rc = (ssize_t)n;
			break;
		}
		if (r->tail_stage == 3) {
			rc = H.mal == SS_MAL_RESET ? MHD_CONTENT_READER_END_WITH_ERROR
						   : MHD_CONTENT_READER_END_OF_STREAM;
			break;
		}
		if (!format_more(r)) {
			r->suspended = true;
			MHD_suspend_connection(r->conn);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ss_lock);
	return rc;
}

static enum MHD_Result reply_full(struct MHD_Connection *c, struct ss_req *r)
{
	if (H.mal == SS_MAL_500MID)
		return reply_error(c, 500, "internal_server_error", "simulated internal error");
	if (H.mal == SS_MAL_RESET)
		return MHD_NO;
	struct rt_sb sb = RT_SB_INIT;
	if (H.mal == SS_MAL_BADJSON) {
		rt_sb_addf(&sb, "{\"id\":\"cmpl-%llu\",\"choices\":[", (unsigned long long)r->id);
	} else {
		add_head(&sb, r, false);
		rt_sb_adds(&sb, r->chat ? "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
					: "\"choices\":[{\"index\":0,\"text\":\"");
		for (size_t i = 0; i < r->plan.n_tok; i++) {
			const char *t = r->plan.tok[i].json;
			rt_sb_add(&sb, t + 1, strlen(t) - 2); /* escaped text without quotes */
		}
		rt_sb_addf(&sb, "\"%s,\"logprobs\":null,\"finish_reason\":\"%s\"}],",
			   r->chat ? "}" : "", r->plan.finish_reason);
		add_usage(&sb, r);
		if (H.mal == SS_MAL_BIGCHUNK) {
			rt_sb_adds(&sb, ",\"padding\":\"");
			for (size_t k = 0; k < BIGCHUNK_BYTES; k += 64)
				rt_sb_adds(&sb, "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp");
			rt_sb_adds(&sb, "\"");
		}
		rt_sb_addf(&sb, ",\"server_recv_ns\":%lld,\"server_done_ns\":%lld}",
			   (long long)r->recv_ns, (long long)rt_now_ns());
	}
	size_t len;
	char *body = rt_sb_detach(&sb, &len);
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	char recv[32];
	snprintf(recv, sizeof(recv), "%lld", (long long)r->recv_ns);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "X-Server-Recv-Ns", recv);
	enum MHD_Result rc = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* Park a request forever (--hang-after); shutdown resumes and closes it. */
static enum MHD_Result hang(struct MHD_Connection *c, struct ss_req *r)
{
	pthread_mutex_lock(&ss_lock);
	if (ss_closing) {
		pthread_mutex_unlock(&ss_lock);
		return MHD_NO;
	}
	r->hung = true;
	r->suspended = true;
	MHD_suspend_connection(c);
	pthread_mutex_unlock(&ss_lock);
	return MHD_YES;
}

/* llama-server's refusal of a prompt that does not fit its slot: the
 * prompt's tokens and BOS against n_ctx_slot (tools/server/server-context.cpp,
 * "n_tokens >= slot.n_ctx"), logged as its send_error line and answered
 * 400 with exceed_context_size_error, n_prompt_tokens and n_ctx
 * (server-common.cpp format_error_response, server-task.cpp). */
static enum MHD_Result ctx_exceeded(struct MHD_Connection *c, long task, long n_tokens, long n_ctx)
{
	char msg[160];
	snprintf(msg, sizeof(msg), "request (%ld tokens) exceeds the available context size (%ld tokens), "
		 "try increasing it", n_tokens, n_ctx);
	fprintf(stderr, "srv    send_error: task id = %ld, error: %s\n", task, msg);
	json_t *o = json_pack("{s:{s:i,s:s,s:s,s:I,s:I}}", "error", "code", 400, "message", msg, "type",
			      "exceed_context_size_error", "n_prompt_tokens", (json_int_t)n_tokens, "n_ctx",
			      (json_int_t)n_ctx);
	char *s = json_dumps(o, JSON_COMPACT);
	enum MHD_Result rc = reply(c, 400, s, "application/json");
	free(s);
	json_decref(o);
	return rc;
}

static enum MHD_Result start_completion(struct MHD_Connection *c, struct ss_req *r, bool chat)
{
	r->recv_ns = rt_now_ns();
	long n = atomic_fetch_add(&H.completions, 1) + 1;
	if (H.cfg->crash_after > 0 && n > H.cfg->crash_after) {
		fprintf(stderr, "simserve: --crash-after %ld: exiting with status 70\n", H.cfg->crash_after);
		fflush(NULL);
		_exit(70);
	}
	if (H.cfg->hang_after > 0 && n > H.cfg->hang_after) {
		atomic_store(&H.hang, true);
		return hang(c, r);
	}
	json_error_t je;
	json_t *root = json_loadb(r->body.buf, r->body.len, 0, &je);
	if (!root) {
		char msg[256];
		snprintf(msg, sizeof(msg), "request body:%d:%d: %s", je.line, je.column, je.text);
		return reply_error(c, 400, "invalid_request_error", msg);
	}
	struct parsed p = { 0 };
	struct rt_sb last_user = RT_SB_INIT;
	const char *bad = parse(root, chat, &p, &last_user);
	if (!bad)
		ss_plan_build(&p.ask, &r->plan);
	rt_sb_release(&p.prompt);
	rt_sb_release(&last_user);
	free(p.stop);
	if (bad) {
		enum MHD_Result rc = reply_error(c, 400, "invalid_request_error", bad);
		json_decref(root);
		return rc;
	}
	json_decref(root);
	long slot_ctx = ss_persona_slot_ctx();
	if (slot_ctx > 0 && r->plan.prompt_tokens + 1 >= slot_ctx)
		return ctx_exceeded(c, n, r->plan.prompt_tokens + 1, slot_ctx);
	r->chat = chat;
	r->stream = p.stream;
	r->include_usage = p.include_usage;
	r->is_completion = true;

	pthread_mutex_lock(&ss_lock);
	if (ss_closing) {
		pthread_mutex_unlock(&ss_lock);
		return MHD_NO;
	}
	ss_sched_submit_locked(r);
	if (!r->stream) {
		r->suspended = true;
		MHD_suspend_connection(c);
		pthread_mutex_unlock(&ss_lock);
		return MHD_YES;
	}
	pthread_mutex_unlock(&ss_lock);

	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
								      stream_reader, r, NULL);
	if (!resp)
		return MHD_NO;
	char recv[32];
	snprintf(recv, sizeof(recv), "%lld", (long long)r->recv_ns);
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "X-Server-Recv-Ns", recv);
	enum MHD_Result rc = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return rc;
}

/*
 * --keepalive-drop N: a connection's requests are counted in its socket
 * context, and the Nth is not answered: MHD closes the connection (the
 * handler's MHD_NO) with nothing sent. That is what a client sees when a
 * server closes an idle kept-alive connection just as the client sends its
 * next request on it (llama-server's cpp-httplib between streamed answers):
 * the request went out on a reused connection, and the connection died
 * before any byte of an answer. The request itself is never processed.
 */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)c;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = xcalloc(1, sizeof(long));
	} else {
		free(*socket_context);
		*socket_context = NULL;
	}
}

/* Is c's request that just began the one --keepalive-drop closes? */
static bool keepalive_drop(struct MHD_Connection *c)
{
	if (H.cfg->keepalive_drop < 2)
		return false;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	long *n = ci ? ci->socket_context : NULL;
	return n && ++*n == H.cfg->keepalive_drop;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct ss_req *r = *con_cls;
	bool post = !strcmp(method, "POST");
	if (!r) {
		if (keepalive_drop(c))
			return MHD_NO; /* closed, unanswered */
		r = ss_req_new(c);
		*con_cls = r;
		if (atomic_load(&H.hang))
			return hang(c, r);
		if (post)
			return MHD_YES; /* the body comes in the next calls */
	}
	if (r->hung)
		return MHD_NO; /* resumed by shutdown */
	if (r->is_completion) {
		/* resumed: the answer is complete, or we are shutting down */
		pthread_mutex_lock(&ss_lock);
		bool done = r->done && !ss_closing;
		pthread_mutex_unlock(&ss_lock);
		return done ? reply_full(c, r) : MHD_NO;
	}
	if (post && *upload_size) {
		if (rt_sb_add(&r->body, upload, *upload_size))
			r->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	int prc;
	if (ss_persona_kind() != SS_PERSONA_NONE && ss_persona_route(c, url, method, &prc))
		return (enum MHD_Result)prc; /* its own /health, /v1/models, /version ... */
	bool chat = !strcmp(url, "/v1/chat/completions");
	if (chat || !strcmp(url, "/v1/completions")) {
		if (!post)
			return reply_error(c, 405, "invalid_request_error", "use POST");
		if (r->too_big)
			return reply_error(c, 413, "invalid_request_error", "request body over 16 MiB");
		return start_completion(c, r, chat);
	}
	if (!strcmp(url, "/health")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply_error(c, 405, "invalid_request_error", "use GET");
		return reply(c, 200, "{\"status\":\"ok\"}", "application/json");
	}
	if (!strcmp(url, "/v1/models")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return reply_error(c, 405, "invalid_request_error", "use GET");
		return reply(c, 200, H.models_body, "application/json");
	}
	return reply_error(c, 404, "not_found_error", "no such endpoint");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct ss_req *r = *con_cls;
	if (!r)
		return;
	pthread_mutex_lock(&ss_lock);
	r->cancelled = true;
	ss_req_unref_locked(r);
	pthread_mutex_unlock(&ss_lock);
	*con_cls = NULL;
}

int ss_http_start(const struct ss_config *cfg, int *port, struct rt_sb *err)
{
	H.cfg = cfg;
	for (size_t i = 1; i < RT_ARRAY_SIZE(mal_names); i++)
		if (cfg->malformed && !strcmp(cfg->malformed, mal_names[i]))
			H.mal = (enum ss_malformed)i;
	if (cfg->malformed && *cfg->malformed && H.mal == SS_MAL_NONE) {
		const char *dym = rt_did_you_mean(cfg->malformed, mal_names + 1, RT_ARRAY_SIZE(mal_names) - 1);
		return rt_errf(err, RT_EUSAGE, "--malformed: unknown mode '%s'%s%s%s (one of badjson, nodone, 500mid, reset, bigchunk)",
			       cfg->malformed, dym ? " (did you mean '" : "", dym ? dym : "", dym ? "'?)" : "");
	}
	json_t *m = json_string(cfg->model);
	if (!m)
		return rt_errf(err, RT_EUSAGE, "--model: not valid UTF-8");
	H.model_json = json_dumps(m, JSON_ENCODE_ANY);
	json_decref(m);
	json_t *models = json_pack("{s:s,s:[{s:s,s:s,s:s,s:s}]}", "object", "list", "data", "id",
				   cfg->model, "object", "model", "owned_by", "simserve", "nonce",
				   cfg->nonce ? cfg->nonce : "");
	if (!models)
		return rt_errf(err, RT_EUSAGE, "--nonce: not valid UTF-8");
	H.models_body = json_dumps(models, JSON_COMPACT);
	json_decref(models);

	char portstr[16];
	snprintf(portstr, sizeof(portstr), "%ld", cfg->port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *ai = NULL;
	int gai = getaddrinfo(cfg->host, portstr, &hints, &ai);
	if (gai)
		return rt_errf(err, RT_EUSAGE, "--host %s: %s", cfg->host, gai_strerror(gai));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned pool = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (unsigned)ncpu;
	H.d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handler, NULL,
			       MHD_OPTION_SOCK_ADDR, ai->ai_addr,
			       MHD_OPTION_THREAD_POOL_SIZE, pool,
			       MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			       MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
			       MHD_OPTION_CONNECTION_LIMIT, (unsigned)10000,
			       MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
			       MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!H.d)
		return rt_errf(err, RT_EBUSY, "listen on %s:%ld: cannot start the HTTP server (port in use?)",
			       cfg->host, cfg->port);
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(H.d, MHD_DAEMON_INFO_BIND_PORT);
	*port = info ? info->port : (int)cfg->port;
	return 0;
}

void ss_http_stop(void)
{
	if (H.d) {
		MHD_stop_daemon(H.d);
		H.d = NULL;
	}
	free(H.model_json);
	free(H.models_body);
	H.model_json = H.models_body = NULL;
}
