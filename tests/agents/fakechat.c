/*
 * A scripted fake of an OpenAI-compatible chat server, for strategy llm's
 * tests: POST /v1/chat/completions answers with the script's next answer,
 * in order, in the shape of the OpenAI chat completions API (choices[0].
 * message.content, usage with prompt and completion tokens), and appends
 * each request body as one line to the log file, with a line before it
 * saying whether an Authorization header came and whether it was "Bearer
 * " followed by --key. Past the script's end it answers HTTP 503.
 * A response_format is checked as vLLM's server validates it
 * (vllm/entrypoints/openai/protocol.py, ResponseFormat, v0.14.0): type one
 * of text, json_object, json_schema, and json_schema with a name and a
 * schema object; anything else is answered HTTP 400 and uses no answer.
 *
 *   fakechat --script FILE --log FILE [--key KEY] [--port N]
 *
 * The script holds answers separated by lines of exactly "----". An answer
 * whose first line is "@status N" is sent as it is, with HTTP status N and
 * the rest of the answer as the body (a server's error echoing what it was
 * sent); a body "@repeat N TEXT" is TEXT N times (a reply of any size).
 * Prints
 * "fakechat: listening on 127.0.0.1:PORT" and serves until SIGTERM.
 */
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/base/rt.h"

/* The server's state. */
struct fake {
	char **answers;        /* the script's answers, in order */
	size_t n;              /* entries in answers */
	size_t next;           /* the next one to give */
	const char *key;       /* the key expected, or NULL */
	FILE *log;             /* request bodies, one a line */
	pthread_mutex_t mu;    /* next and log */
};

/* One request's body as it arrives. */
struct upload {
	struct rt_sb body; /* bytes so far */
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void read_script(struct fake *f, const char *path)
{
	char *text;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	if (rt_read_file(path, &text, &len, &err)) {
		fprintf(stderr, "fakechat: %s\n", err.buf);
		exit(2);
	}
	struct rt_sb cur = RT_SB_INIT;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "----")) {
			f->answers = xrealloc(f->answers, (f->n + 1) * sizeof(*f->answers));
			f->answers[f->n++] = rt_sb_detach(&cur, NULL);
			continue;
		}
		rt_sb_addf(&cur, "%s%s", cur.len ? "\n" : "", line);
	}
	if (cur.len) {
		f->answers = xrealloc(f->answers, (f->n + 1) * sizeof(*f->answers));
		f->answers[f->n++] = rt_sb_detach(&cur, NULL);
	}
	rt_sb_release(&cur);
	free(text);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* NULL when the request's response_format is absent or well formed, else why not. */
static const char *bad_format(const struct rt_sb *body)
{
	json_t *req = json_loadb(body->buf, body->len, 0, NULL);
	json_t *rf = json_object_get(req, "response_format");
	const char *type = json_string_value(json_object_get(rf, "type"));
	json_t *js = json_object_get(rf, "json_schema");
	const char *why = NULL;
	if (!req)
		why = "the body is not JSON";
	else if (!rf)
		why = NULL;
	else if (!type || (strcmp(type, "text") && strcmp(type, "json_object") && strcmp(type, "json_schema")))
		why = "response_format.type must be text, json_object or json_schema";
	else if (!strcmp(type, "json_schema") &&
		 (!json_is_string(json_object_get(js, "name")) || !json_is_object(json_object_get(js, "schema"))))
		why = "response_format.json_schema needs a name and a schema object";
	json_decref(req);
	return why;
}

static enum MHD_Result answer(struct fake *f, struct MHD_Connection *c, const struct rt_sb *body)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&f->mu);
	char *want = f->key ? xasprintf("Bearer %s", f->key) : NULL;
	fprintf(f->log, "auth: %s\n", !auth ? "none" : want && !strcmp(auth, want) ? "key" : "other");
	fprintf(f->log, "%s\n", body->buf);
	fflush(f->log);
	free(want);
	const char *bad = bad_format(body);
	const char *a = !bad && f->next < f->n ? f->answers[f->next++] : NULL;
	pthread_mutex_unlock(&f->mu);
	if (bad) {
		char *e = xasprintf("{\"error\":{\"message\":\"%s\",\"type\":\"BadRequestError\",\"code\":400}}", bad);
		enum MHD_Result ret = reply(c, 400, e);
		free(e);
		return ret;
	}
	if (!a)
		return reply(c, 503, "{\"error\":{\"message\":\"the script is over\"}}");
	unsigned status = 0;
	int skip = 0;
	if (sscanf(a, "@status %u%n", &status, &skip) == 1) {
		const char *b = a + skip + (a[skip] == '\n');
		if (!strncmp(b, "@repeat ", 8)) { /* "@repeat N TEXT": TEXT N times */
			unsigned long n = strtoul(b + 8, (char **)&b, 10);
			b += *b == ' ';
			struct rt_sb big = RT_SB_INIT;
			for (unsigned long i = 0; i < n; i++)
				rt_sb_adds(&big, b);
			enum MHD_Result ret = reply(c, status, big.buf);
			rt_sb_release(&big);
			return ret;
		}
		return reply(c, status, b);
	}
	json_t *r = json_pack("{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:s}], s:{s:i, s:i, s:i}}", "id", "fake-1",
			      "object", "chat.completion", "model", "fake", "choices", "index", 0, "message", "role",
			      "assistant", "content", a, "finish_reason", "stop", "usage", "prompt_tokens",
			      (int)(body->len / 4), "completion_tokens", (int)(strlen(a) / 4), "total_tokens",
			      (int)(body->len / 4 + strlen(a) / 4));
	char *text = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	enum MHD_Result ret = reply(c, 200, text);
	free(text);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *data, size_t *size, void **ccls)
{
	struct fake *f = cls;
	(void)version;
	if (!*ccls) {
		struct upload *u = xcalloc(1, sizeof(*u));
		rt_sb_init(&u->body, 1u << 24);
		*ccls = u;
		return MHD_YES;
	}
	struct upload *u = *ccls;
	if (*size) {
		rt_sb_add(&u->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "POST") || !strstr(url, "/chat/completions"))
		return reply(c, 404, "{\"error\":{\"message\":\"not found\"}}");
	return answer(f, c, &u->body);
}

static void done(void *cls, struct MHD_Connection *c, void **ccls, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	struct upload *u = *ccls;
	if (u) {
		rt_sb_release(&u->body);
		free(u);
	}
	*ccls = NULL;
}

int main(int argc, char **argv)
{
	struct fake f = { .mu = PTHREAD_MUTEX_INITIALIZER };
	const char *script = NULL, *log = NULL;
	int port = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--script"))
			script = argv[i + 1];
		else if (!strcmp(argv[i], "--log"))
			log = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			f.key = argv[i + 1];
		else if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
	}
	if (!script || !log) {
		fprintf(stderr, "usage: fakechat --script FILE --log FILE [--key KEY] [--port N]\n");
		return 2;
	}
	read_script(&f, script);
	f.log = fopen(log, "a");
	if (!f.log) {
		perror(log);
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port,
						NULL, NULL, handle, &f, MHD_OPTION_NOTIFY_COMPLETED, done, &f,
						MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "fakechat: cannot listen\n");
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("fakechat: listening on 127.0.0.1:%d\n", di ? di->port : 0);
	fflush(stdout);
	while (!stop)
		pause();
	MHD_stop_daemon(d);
	fclose(f.log);
	for (size_t i = 0; i < f.n; i++)
		free(f.answers[i]);
	free(f.answers);
	return 0;
}
