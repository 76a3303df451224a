/*
 * The echoing server of echo_server.h: one handler, a reply per mode.
 */
#define _GNU_SOURCE /* memmem */
#include "echo_server.h"
#include "runner/base/rt.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct echo_server {
	struct MHD_Daemon *d; /* the daemon */
	enum echo_mode mode;  /* how to answer */
	atomic_long requests; /* answered */
};

/* A JSON string's inside for s (quotes and backslashes escaped). */
static void json_inner(struct rt_sb *sb, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			rt_sb_addc(sb, '\\');
		rt_sb_addc(sb, *s);
	}
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct echo_server *s = cls;
	(void)url, (void)method, (void)version, (void)upload;
	if (!*con_cls) {
		*con_cls = s; /* headers seen: wait for the body */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* the body does not matter */
		return MHD_YES;
	}
	atomic_fetch_add(&s->requests, 1);
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *qk = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "api_key");
	struct rt_sb said = RT_SB_INIT, body = RT_SB_INIT;
	rt_sb_adds(&said, "you sent ");
	json_inner(&said, auth ? auth : "no header");
	rt_sb_adds(&said, " and ");
	json_inner(&said, qk ? qk : "no query key");
	unsigned code = 200;
	const char *type = "application/json";
	switch (s->mode) {
	case ECHO_401:
		code = 401;
		rt_sb_addf(&body, "{\"error\":{\"message\":\"%s\"}}", said.buf);
		break;
	case ECHO_TEXT:
		rt_sb_addf(&body, "{\"choices\":[{\"index\":0,\"text\":\"%s\",\"message\":{\"role\":"
				  "\"assistant\",\"content\":\"%s\"},\"finish_reason\":\"stop\"}],"
				  "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}}",
			   said.buf, said.buf);
		break;
	case ECHO_SSE_ERROR:
		type = "text/event-stream";
		rt_sb_addf(&body, "data: {\"error\":{\"message\":\"%s\"}}\n\ndata: [DONE]\n\n", said.buf);
		break;
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(body.len, body.buf,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", type);
	enum MHD_Result rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	rt_sb_release(&said);
	rt_sb_release(&body);
	return rc;
}

struct echo_server *echo_start(enum echo_mode mode, int *port)
{
	struct echo_server *s = xcalloc(1, sizeof(*s));
	s->mode = mode;
	struct sockaddr_in sa = { 0 };
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(0x7f000001);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
				NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
	if (!s->d) {
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : 0;
	return s;
}

void echo_stop(struct echo_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}

long echo_requests(struct echo_server *s)
{
	return atomic_load(&s->requests);
}

bool echo_file_holds(const char *path, const char *secret)
{
	bool found = false;
	for (int k = 0; k < 2 && !found; k++) {
		char *p = k ? xasprintf("%s-wal", path) : xstrdup(path);
		char *data;
		size_t len;
		if (!rt_read_file(p, &data, &len, NULL)) {
			found = memmem(data, len, secret, strlen(secret)) != NULL;
			free(data);
		}
		free(p);
	}
	return found;
}
