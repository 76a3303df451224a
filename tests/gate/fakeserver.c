/* The gate tests' GSM8K server (see fakeserver.h). */
#include "fakeserver.h"

#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fake_server {
	struct fake_cfg cfg;          /* copy of the settings */
	struct MHD_Daemon *d;         /* the daemon */
	pthread_mutex_t mu;           /* guards the fields below */
	long requests;                /* requests served */
	char auth[256];               /* last Authorization header */
	int *attempts;                /* per question */
};

struct conn {
	struct rt_sb body; /* request body */
};

/* The question after the last "Question: " or "Q: ", up to "\nAnswer:" / "\nA:". */
static char *last_question(const char *p)
{
	const char *best = NULL;
	size_t skip = 0;
	for (const char *q = p; (q = strstr(q, "Question: ")); q++)
		best = q, skip = 10;
	for (const char *q = p; (q = strstr(q, "Q: ")); q++)
		if (!best || q > best)
			best = q, skip = 3;
	if (!best)
		return NULL;
	const char *s = best + skip;
	const char *e = strstr(s, skip == 10 ? "\nAnswer:" : "\nA:");
	return e ? xstrndup(s, (size_t)(e - s)) : xstrdup(s);
}

static enum MHD_Result reply(struct MHD_Connection *c, int status, const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								  MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Authorization is "Bearer <key>" (or no key is required). */
static bool bearer_ok(const char *key, const char *auth)
{
	return !key || (auth && !strncmp(auth, "Bearer ", 7) && !strcmp(auth + 7, key));
}

/* GET /v1/models: one model, as vLLM lists it. */
static enum MHD_Result models(struct MHD_Connection *c, const char *id)
{
	if (!id)
		return reply(c, 404, "{\"error\":\"not found\"}");
	json_t *o = json_pack("{s:s,s:[{s:s,s:s,s:s}]}", "object", "list", "data", "id", id,
			      "object", "model", "owned_by", "fakeserver");
	char *body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	enum MHD_Result r = reply(c, 200, body);
	free(body);
	return r;
}

/* Append one request body as a line of the record file. */
static void record(struct fake_server *s, const char *body)
{
	pthread_mutex_lock(&s->mu);
	FILE *f = fopen(s->cfg.record, "a");
	if (f) {
		fprintf(f, "%s\n", body);
		fclose(f);
	}
	pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *size, void **ptr)
{
	struct fake_server *s = cls;
	struct conn *cn = *ptr;
	if (!cn) {
		cn = xcalloc(1, sizeof(*cn));
		*ptr = cn;
		return MHD_YES;
	}
	if (*size) {
		rt_sb_add(&cn->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&s->mu);
	s->requests++;
	snprintf(s->auth, sizeof(s->auth), "%s", auth ? auth : "");
	pthread_mutex_unlock(&s->mu);
	if (!bearer_ok(s->cfg.require_key, auth))
		return reply(c, 401, "{\"error\":{\"message\":\"invalid api key\"}}");
	if (!strcmp(method, "GET"))
		return models(c, s->cfg.model_id);
	if (s->cfg.record)
		record(s, cn->body.buf);
	if (s->cfg.delay_ms)
		usleep((useconds_t)s->cfg.delay_ms * 1000);
	bool chat = strstr(url, "chat") != NULL;
	json_error_t je;
	json_t *req = json_loads(cn->body.buf, 0, &je);
	const char *prompt = NULL;
	if (chat) {
		json_t *msgs = json_object_get(req, "messages");
		size_t n = json_array_size(msgs);
		for (size_t i = n; i-- > 0;) {
			json_t *m = json_array_get(msgs, i);
			const char *role = json_string_value(json_object_get(m, "role"));
			if (role && !strcmp(role, "user")) {
				prompt = json_string_value(json_object_get(m, "content"));
				break;
			}
		}
	} else {
		prompt = json_string_value(json_object_get(req, "prompt"));
	}
	char *q = prompt ? last_question(prompt) : NULL;
	long idx = -1;
	for (size_t i = 0; q && i < s->cfg.test->n; i++)
		if (!strcmp(s->cfg.test->v[i].question, q)) {
			idx = (long)i;
			break;
		}
	bool qa = prompt && q && strstr(prompt, "Question: ") == NULL;
	free(q);
	json_decref(req);
	if (idx < 0 || strcmp(method, "POST"))
		return reply(c, 400, "{\"error\":\"unknown question\"}");
	if (s->cfg.fail_every > 0 && idx % s->cfg.fail_every == 0)
		return reply(c, 500, "{\"error\":\"injected failure\"}");
	if (s->cfg.flaky_every > 0 && idx % s->cfg.flaky_every == 0) {
		pthread_mutex_lock(&s->mu);
		int a = s->attempts[idx]++;
		pthread_mutex_unlock(&s->mu);
		if (!a)
			return reply(c, 503, "{\"error\":\"busy\"}");
	}
	double F = s->cfg.accuracy;
	bool ok = floor((double)(idx + 1) * F) > floor((double)idx * F);
	for (size_t k = 0; k < s->cfg.n_flip; k++)
		if (s->cfg.flip[k] == idx)
			ok = !ok;
	long long target = atoll(s->cfg.test->v[idx].target);
	long long ans = ok ? target : target + 1;
	char text[128];
	if (qa)
		snprintf(text, sizeof(text), "We work it out. The answer is %lld.", ans);
	else
		snprintf(text, sizeof(text), "We work it out.\n#### %lld", ans);
	json_t *o = json_object();
	json_t *ch = json_object();
	if (chat) {
		json_t *m = json_object();
		json_object_set_new(m, "role", json_string("assistant"));
		json_object_set_new(m, "content", json_string(text));
		json_object_set_new(ch, "message", m);
	} else {
		json_object_set_new(ch, "text", json_string(text));
	}
	json_object_set_new(ch, "finish_reason", json_string("stop"));
	json_t *arr = json_array();
	json_array_append_new(arr, ch);
	json_object_set_new(o, "choices", arr);
	json_t *u = json_object();
	json_object_set_new(u, "prompt_tokens", json_integer(100));
	json_object_set_new(u, "completion_tokens", json_integer(10));
	json_object_set_new(o, "usage", u);
	char *body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	enum MHD_Result r = reply(c, 200, body);
	free(body);
	return r;
}

static void done_cb(void *cls, struct MHD_Connection *c, void **ptr,
		    enum MHD_RequestTerminationCode tc)
{
	struct conn *cn = *ptr;
	if (cn) {
		rt_sb_release(&cn->body);
		free(cn);
	}
	*ptr = NULL;
}

struct fake_server *fake_start(const struct fake_cfg *cfg, int *port)
{
	struct fake_server *s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->attempts = xcalloc(cfg->test->n, sizeof(int));
	pthread_mutex_init(&s->mu, NULL);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				handle, s, MHD_OPTION_NOTIFY_COMPLETED, done_cb, s,
				MHD_OPTION_THREAD_POOL_SIZE, 4, MHD_OPTION_CONNECTION_LIMIT, 512,
				MHD_OPTION_END);
	if (!s->d) {
		free(s->attempts);
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : 0;
	return s;
}

void fake_stop(struct fake_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->mu);
	free(s->attempts);
	free(s);
}

long fake_requests(struct fake_server *s)
{
	pthread_mutex_lock(&s->mu);
	long n = s->requests;
	pthread_mutex_unlock(&s->mu);
	return n;
}

void fake_last_auth(struct fake_server *s, char *out, size_t n)
{
	pthread_mutex_lock(&s->mu);
	snprintf(out, n, "%s", s->auth);
	pthread_mutex_unlock(&s->mu);
}
