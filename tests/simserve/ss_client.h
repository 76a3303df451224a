/*
 * Helpers for the simserve tests and the simserve load benchmark: start the
 * real simserve binary as a child on an ephemeral port, stop it with a real
 * signal, and talk to it over loopback with libcurl (easy for one request,
 * multi for many at once).
 */
#ifndef SS_CLIENT_H
#define SS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A running simserve child. */
struct ssc_srv {
	pid_t pid;        /* child process */
	int port;         /* port it printed */
	int err_fd;       /* read end of its stderr */
	double start_s;   /* seconds from spawn to the listening line */
};

/* Start $RATCHET_BUILD/simserve --port 0 ARGS... (args NULL-terminated);
 * env is an optional NULL-terminated list of NAME=VALUE added to the
 * environment. Returns 0, or -1 if it never printed its listening line
 * within timeout_s (then *exit_status holds its status if it exited). */
int ssc_start(struct ssc_srv *s, const char *const *args, const char *const *env,
	      double timeout_s, int *exit_status);
/* SIGTERM and wait; returns the wait status; *secs gets the time it took. */
int ssc_stop(struct ssc_srv *s, double *secs);
/* Wait up to timeout_s for the child to exit by itself; -1 if it did not. */
int ssc_wait_exit(struct ssc_srv *s, double timeout_s);
/* Everything the child wrote to stderr so far (caller frees). */
char *ssc_stderr(struct ssc_srv *s);

/* One HTTP exchange. */
struct ssc_resp {
	long status;       /* HTTP status, 0 if none */
	int curl_rc;       /* CURLcode */
	char *body;        /* response body (NUL-terminated) */
	size_t len;        /* body length */
	char *headers;     /* raw response headers */
	double t_start;    /* CLOCK_MONOTONIC seconds at send */
	double t_end;      /* at completion */
};

/* path like "/health"; body NULL for GET. timeout_s 0: 30 s. */
void ssc_request(int port, const char *path, const char *body, double timeout_s,
		 struct ssc_resp *r);
/* n POSTs to path at once (all in flight together). */
void ssc_request_many(int port, const char *path, const char *const *bodies, size_t n,
		      size_t concurrency, double timeout_s, struct ssc_resp *out);
void ssc_resp_release(struct ssc_resp *r);
double ssc_now(void);

#endif
