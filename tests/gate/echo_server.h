/*
 * A server that echoes what it should keep to itself (libmicrohttpd, in
 * process, loopback, port 0), for the redaction tests of the gate and the
 * load generator: every answer quotes the request's Authorization header
 * and its api_key query parameter, as a careless or hostile server might.
 */
#ifndef ECHO_SERVER_H
#define ECHO_SERVER_H

#include <stdbool.h>

enum echo_mode {
	ECHO_401,       /* HTTP 401, the error message quoting the credentials */
	ECHO_TEXT,      /* HTTP 200, a completion whose text quotes them */
	ECHO_SSE_ERROR, /* HTTP 200, an SSE stream whose one event is an error quoting them */
};

struct echo_server;

/* Start on 127.0.0.1, a free port; NULL on failure. */
struct echo_server *echo_start(enum echo_mode mode, int *port);
void echo_stop(struct echo_server *s);
/* Requests answered. */
long echo_requests(struct echo_server *s);
/* Whether the bytes of the SQLite file at path, or of its -wal file, hold
 * secret anywhere: the database as an attacker who copies it sees it. */
bool echo_file_holds(const char *path, const char *secret);

#endif
