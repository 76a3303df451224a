/* Process and HTTP helpers for the simserve tests (see ss_client.h). */
#include "ss_client.h"
#include "runner/base/proc.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

double ssc_now(void)
{
	return rt_now_s();
}

int ssc_start(struct ssc_srv *s, const char *const *args, const char *const *env,
	      double timeout_s, int *exit_status)
{
	const char *build = getenv("RATCHET_BUILD");
	char bin[4096];
	snprintf(bin, sizeof(bin), "%s/simserve", build ? build : ".");
	const char *argv[64];
	int n = 0;
	argv[n++] = bin;
	argv[n++] = "--port";
	argv[n++] = "0";
	for (; args && *args && n < 62; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	int out[2], err[2];
	if (pipe(out) || pipe(err))
		return -1;
	memset(s, 0, sizeof(*s));
	double t0 = ssc_now();
	s->pid = fork();
	if (s->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		for (; env && *env; env++)
			putenv((char *)*env);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	s->err_fd = err[0];
	fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
	char line[256];
	int rc = -1;
	if (rt_read_line_timeout(out[0], line, sizeof(line), timeout_s) >= 0) {
		const char *colon = strrchr(line, ':');
		if (!strncmp(line, "simserve: listening on ", 23) && colon)
			s->port = atoi(colon + 1);
		rc = s->port > 0 ? 0 : -1;
	}
	s->start_s = ssc_now() - t0;
	close(out[0]);
	if (rc && exit_status)
		*exit_status = ssc_wait_exit(s, 2);
	return rc;
}

int ssc_wait_exit(struct ssc_srv *s, double timeout_s)
{
	double t0 = ssc_now();
	int st;
	while (ssc_now() - t0 < timeout_s) {
		pid_t p = waitpid(s->pid, &st, WNOHANG);
		if (p == s->pid)
			return st;
		usleep(2000);
	}
	return -1;
}

int ssc_stop(struct ssc_srv *s, double *secs)
{
	double t0 = ssc_now();
	kill(s->pid, SIGTERM);
	int st = ssc_wait_exit(s, 5);
	if (st == -1) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
		st = -1;
	}
	if (secs)
		*secs = ssc_now() - t0;
	return st;
}

char *ssc_stderr(struct ssc_srv *s)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (len + 1024 > cap)
			buf = realloc(buf, cap *= 2);
		ssize_t k = read(s->err_fd, buf + len, cap - len - 1);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	return buf;
}

struct acc {
	char *p;    /* bytes */
	size_t len; /* used */
	size_t cap; /* allocated */
};

static size_t on_data(char *d, size_t sz, size_t n, void *u)
{
	struct acc *a = u;
	if (a->len + sz * n + 1 > a->cap) {
		a->cap = (a->len + sz * n + 1) * 2;
		a->p = realloc(a->p, a->cap);
	}
	memcpy(a->p + a->len, d, sz * n);
	a->len += sz * n;
	a->p[a->len] = '\0';
	return sz * n;
}

struct slot {
	CURL *h;            /* easy handle */
	struct acc body;    /* response body */
	struct acc head;    /* response headers */
	struct curl_slist *hdrs; /* request headers */
	struct ssc_resp *out;    /* where the result goes */
};

static void slot_init(struct slot *sl, int port, const char *path, const char *body,
		      double timeout_s, struct ssc_resp *out)
{
	char url[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	memset(sl, 0, sizeof(*sl));
	sl->out = out;
	memset(out, 0, sizeof(*out));
	sl->h = curl_easy_init();
	curl_easy_setopt(sl->h, CURLOPT_URL, url);
	curl_easy_setopt(sl->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(sl->h, CURLOPT_WRITEDATA, &sl->body);
	curl_easy_setopt(sl->h, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(sl->h, CURLOPT_HEADERDATA, &sl->head);
	curl_easy_setopt(sl->h, CURLOPT_TIMEOUT_MS, (long)((timeout_s > 0 ? timeout_s : 30) * 1000));
	curl_easy_setopt(sl->h, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		sl->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
		curl_easy_setopt(sl->h, CURLOPT_HTTPHEADER, sl->hdrs);
		curl_easy_setopt(sl->h, CURLOPT_POSTFIELDS, body);
	}
	out->t_start = ssc_now();
}

static void slot_finish(struct slot *sl, int rc)
{
	struct ssc_resp *o = sl->out;
	o->t_end = ssc_now();
	o->curl_rc = rc;
	curl_easy_getinfo(sl->h, CURLINFO_RESPONSE_CODE, &o->status);
	o->body = sl->body.p ? sl->body.p : calloc(1, 1);
	o->len = sl->body.len;
	o->headers = sl->head.p ? sl->head.p : calloc(1, 1);
	curl_slist_free_all(sl->hdrs);
	curl_easy_cleanup(sl->h);
}

void ssc_request(int port, const char *path, const char *body, double timeout_s,
		 struct ssc_resp *r)
{
	struct slot sl;
	slot_init(&sl, port, path, body, timeout_s, r);
	int rc = curl_easy_perform(sl.h);
	slot_finish(&sl, rc);
}

void ssc_request_many(int port, const char *path, const char *const *bodies, size_t n,
		      size_t concurrency, double timeout_s, struct ssc_resp *out)
{
	CURLM *m = curl_multi_init();
	struct slot *slots = calloc(n ? n : 1, sizeof(*slots));
	size_t next = 0, active = 0;
	if (!concurrency)
		concurrency = n;
	while (next < n || active) {
		while (next < n && active < concurrency) {
			slot_init(&slots[next], port, path, bodies[next], timeout_s, &out[next]);
			curl_easy_setopt(slots[next].h, CURLOPT_PRIVATE, &slots[next]);
			curl_multi_add_handle(m, slots[next].h);
			next++;
			active++;
		}
		int running;
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct slot *sl;
			CURL *h = msg->easy_handle;
			int rc = msg->data.result;
			curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&sl);
			curl_multi_remove_handle(m, h);
			slot_finish(sl, rc);
			active--;
		}
		if (active)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	free(slots);
	curl_multi_cleanup(m);
}

void ssc_resp_release(struct ssc_resp *r)
{
	free(r->body);
	free(r->headers);
	memset(r, 0, sizeof(*r));
}
