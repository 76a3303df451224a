/*
 * The engine supervisor (see engine.h): launch, log capture, readiness and
 * stop (identity is engine_ident.c's, cost engine_cost.c's). Every process
 * the engine starts is tracked (struct rt_ptree: its cgroup, or /proc with
 * this process as their subreaper) and killed at stop, even one in a new
 * session; the log reader never blocks without a deadline, so a descendant
 * that still holds the output pipe cannot hold up a stop.
 */
#define _GNU_SOURCE
#include "runner/engine/engine_int.h"
#include "runner/oai/oai.h"
#include "runner/base/cancel.h"
#include "runner/base/rand.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* Whether port is free on a (bound, then closed at once). */
static int try_port(struct sockaddr_in a, int port, int *got)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	a.sin_port = htons((uint16_t)port);
	socklen_t len = sizeof(a);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len) ? -errno : 0;
	if (!rc)
		*got = ntohs(a.sin_port);
	close(fd);
	return rc;
}

int run_engine_ephemeral_low(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	int lo = 0, hi = 0;
	if (!f || fscanf(f, "%d %d", &lo, &hi) != 2 || lo < 1 || lo > 65535)
		lo = 32768; /* Linux's default range starts there */
	if (f)
		fclose(f);
	return lo;
}

int run_engine_pick_port(const char *host, int *port, struct rt_sb *err)
{
	struct sockaddr_in a = { 0 };
	a.sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Below the ephemeral range, where no client socket's automatic port can
	 * take it between this check and the engine's bind: a load generator, or
	 * the tests beside it, open thousands of connections on the same host. */
	int lo = run_engine_ephemeral_low();
	if (lo > RUN_ENGINE_PORT_FLOOR + 1000) {
		static _Atomic uint64_t calls;
		struct rt_rand r;
		rt_rand_seed(&r, (uint64_t)getpid() * RT_SPLITMIX64_GAMMA ^ (uint64_t)time(NULL) ^ ++calls << 20);
		for (int i = 0; i < 64; i++) {
			int p = RUN_ENGINE_PORT_FLOOR + (int)rt_rand_below(&r, (uint64_t)(lo - RUN_ENGINE_PORT_FLOOR));
			if (!try_port(a, p, port))
				return 0;
		}
	}
	int rc = try_port(a, 0, port);
	return rc ? rt_errf(err, RT_EIO, "cannot find a free port on %s: %s", host, strerror(-rc)) : 0;
}

/* A log event's duration: its named group seconds, s, ms or us (the
 * spec's "compiled in (?<ms>[0-9.]+) ms"), in seconds; 0 when it has none. */
static double line_seconds(pcre2_match_data *md)
{
	static const struct {
		const char *name;
		double s;
	} groups[] = { { "seconds", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 } };
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		PCRE2_UCHAR *v = NULL;
		PCRE2_SIZE n;
		if (pcre2_substring_get_byname(md, (PCRE2_SPTR)groups[g].name, &v, &n))
			continue;
		double x = strtod((const char *)v, NULL);
		pcre2_substring_free(v);
		return x > 0 ? x * groups[g].s : 0;
	}
	return 0;
}

static void count_line(struct run_engine *e, const char *line, size_t len, pcre2_match_data *md)
{
	for (size_t i = 0; i < e->cfg.n_events; i++)
		if (e->re[i] && pcre2_match(e->re[i], (PCRE2_SPTR)line, len, 0, 0, md, NULL) >= 0) {
			e->counts[i]++;
			e->seconds[i] += line_seconds(md);
		}
}

/* Whether the reader must give up: stop asked it to drain the pipe until a
 * deadline, and the deadline passed (a process that escaped the stop may
 * still hold the pipe's write end: EOF would never come). */
static bool reader_expired(struct run_engine *e)
{
	pthread_mutex_lock(&e->mu);
	bool done = e->drain_until && rt_now_ns() >= e->drain_until;
	pthread_mutex_unlock(&e->mu);
	return done;
}

/* Captured output: kept up to the cap, every line counted. */
static void take_output(struct run_engine *e, const char *buf, size_t n, struct rt_sb *line,
			pcre2_match_data *md)
{
	pthread_mutex_lock(&e->mu);
	size_t room = e->log.cap > e->log.len ? e->log.cap - e->log.len : 0;
	if (n > room)
		e->truncated = true;
	rt_sb_add(&e->log, buf, n < room ? n : room);
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			count_line(e, line->buf, line->len, md);
			rt_sb_reset(line);
		} else {
			rt_sb_addc(line, buf[i]);
		}
	}
	pthread_mutex_unlock(&e->mu);
}

static void *reader_main(void *arg)
{
	struct run_engine *e = arg;
	pcre2_match_data *md = pcre2_match_data_create(8, NULL);
	struct rt_sb line = RT_SB_INIT;
	line.cap = 1 << 20; /* a longer line is counted by its first MiB */
	char buf[65536];
	while (!reader_expired(e)) {
		struct pollfd p = { e->log_fd, POLLIN, 0 };
		int pr = poll(&p, 1, 100);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t n = read(e->log_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		take_output(e, buf, (size_t)n, &line, md);
	}
	pthread_mutex_lock(&e->mu);
	if (line.len)
		count_line(e, line.buf, line.len, md);
	e->reader_eof = true;
	pthread_mutex_unlock(&e->mu);
	rt_sb_release(&line);
	pcre2_match_data_free(md);
	return NULL;
}

int run_engine_start(const struct run_engine_cfg *cfg, struct run_engine **out, struct rt_sb *err)
{
	struct run_engine *e = xcalloc(1, sizeof(*e));
	e->cfg = *cfg;
	e->url = xasprintf("http://%s:%d", cfg->host, cfg->port);
	pthread_mutex_init(&e->mu, NULL);
	pthread_mutex_init(&e->tree_mu, NULL);
	e->ready_s = NAN;
	e->t_start = rt_now_ns();
	rt_sb_init(&e->log, cfg->log_cap ? cfg->log_cap : (64u << 20));
	e->counts = xcalloc(cfg->n_events ? cfg->n_events : 1, sizeof(long));
	e->seconds = xcalloc(cfg->n_events ? cfg->n_events : 1, sizeof(double));
	e->re = xcalloc(cfg->n_events ? cfg->n_events : 1, sizeof(pcre2_code *));
	e->log_fd = -1;
	rt_ptree_init(&e->tree);
	for (size_t i = 0; i < cfg->n_events; i++) {
		int ec;
		PCRE2_SIZE off;
		e->re[i] = pcre2_compile((PCRE2_SPTR)cfg->event_regex[i], PCRE2_ZERO_TERMINATED, 0, &ec,
					 &off, NULL);
		if (!e->re[i]) {
			rt_errf(err, RT_EINVAL, "log_events.%s: bad regex at offset %zu",
				cfg->event_names[i], (size_t)off);
			run_engine_free(e);
			return RT_EINVAL;
		}
	}
	int pp[2];
	if (pipe2(pp, O_CLOEXEC)) {
		rt_errf(err, RT_EPROC, "pipe: %s", strerror(errno));
		run_engine_free(e);
		return RT_EPROC;
	}
	struct rt_spawn_opts so = { cfg->env, cfg->n_env, cfg->cwd, -1, pp[1], pp[1], &e->tree, .measured = true };
	int rc = rt_spawn(cfg->argv, &so, &e->pid, err);
	close(pp[1]);
	if (rc) {
		close(pp[0]);
		e->reaped = true;
		run_engine_free(e);
		return rc;
	}
	e->log_fd = pp[0];
	if (pthread_create(&e->reader, NULL, reader_main, e) == 0)
		e->reader_started = true;
	eng_sampler_start(e);
	*out = e;
	return 0;
}

bool run_engine_alive(struct run_engine *e)
{
	if (e->reaped)
		return false;
	int st;
	pid_t r = waitpid(e->pid, &st, WNOHANG);
	if (r == e->pid) {
		e->reaped = true;
		e->status = st;
		rt_describe_status(st, e->exit_text, sizeof(e->exit_text));
		pthread_mutex_lock(&e->tree_mu);
		rt_ptree_signal(&e->tree, SIGKILL); /* the rest of its tree */
		pthread_mutex_unlock(&e->tree_mu);
		return false;
	}
	pthread_mutex_lock(&e->tree_mu);
	rt_ptree_scan(&e->tree); /* its descendants, while their ancestry shows */
	pthread_mutex_unlock(&e->tree_mu);
	return true;
}

/* The lines of the log the engine wrote before it failed to start:
 * appended to err after a colon, each indented, the last `lines` of them
 * (the first part of a log that overflowed the cap, else). A dead engine's
 * last words may still be in the pipe: up to half a second for the reader
 * to see it close. */
void eng_log_tail(struct run_engine *e, int lines, struct rt_sb *err)
{
	if (!err)
		return;
	for (int i = 0; i < 50 && e->reader_started; i++) {
		pthread_mutex_lock(&e->mu);
		bool eof = e->reader_eof;
		pthread_mutex_unlock(&e->mu);
		if (eof || !e->reaped)
			break;
		rt_sleep_ns(10000000);
	}
	pthread_mutex_lock(&e->mu);
	const char *b = e->log.buf;
	size_t n = e->log.len;
	while (n && (b[n - 1] == '\n' || b[n - 1] == '\r'))
		n--;
	size_t start = n;
	int seen = 0;
	while (start > 0 && seen < lines)
		if (b[--start] == '\n' && ++seen == lines)
			start++;
	if (!n) {
		rt_errf(err, 0, "; it wrote nothing to its log");
	} else {
		if (start > 0)
			rt_errf(err, 0, "; the last %d lines of its log%s:", lines,
				e->truncated ? " (cut at log_cap)" : "");
		else
			rt_errf(err, 0, "; its log%s:", e->truncated ? " (cut at log_cap)" : "");
		for (size_t i = start; i < n;) {
			size_t j = i;
			while (j < n && b[j] != '\n')
				j++;
			rt_sb_adds(err, "\n    ");
			rt_sb_add(err, b + i, j - i);
			i = j + 1;
		}
	}
	pthread_mutex_unlock(&e->mu);
}

int run_engine_wait_ready(struct run_engine *e, struct rt_sb *err)
{
	char *url = xasprintf("%s%s", e->url, e->cfg.ready_path ? e->cfg.ready_path : "/health");
	int64_t deadline = rt_now_ns() + (int64_t)(e->cfg.ready_timeout_s * 1e9);
	struct oai_resp r;
	oai_resp_init(&r, 65536);
	int rc = RT_ETIMEDOUT;
	int64_t step = 5000000;
	for (;;) {
		if (!run_engine_alive(e)) {
			rc = rt_errf(err, RT_EPROC, "engine %s before it was ready", e->exit_text);
			break;
		}
		if (oai_get(url, 2, &r, NULL) == 0 && r.status == 200) {
			/* the answer proves nothing while another process holds
			 * the port: a server that took it before the engine could
			 * bind answers for an engine about to fail */
			if ((rc = eng_check_port_owner(e, err)))
				rt_errf(err, 0, " (it answered GET %s)", e->cfg.ready_path ? e->cfg.ready_path : "/health");
			else
				e->ready_s = (double)(rt_now_ns() - e->t_start) / 1e9;
			break;
		}
		if (rt_cancelled()) { /* the second Ctrl-C (runner/base/cancel.h) */
			rc = rt_errf(err, RT_EINTR, "stopped by a signal while the engine started");
			break;
		}
		if (rt_now_ns() >= deadline) {
			rt_errf(err, RT_ETIMEDOUT, "engine not ready: GET %s did not answer 200 within %.0fs",
				url, e->cfg.ready_timeout_s);
			break;
		}
		rt_sleep_ns(step);
		if (step < 200000000)
			step = step * 3 / 2;
	}
	if (rc)
		eng_log_tail(e, 20, err);
	oai_resp_release(&r);
	free(url);
	return rc;
}

int run_engine_probe(struct run_engine *e, double timeout_s, struct rt_sb *err)
{
	if (!run_engine_alive(e))
		return rt_errf(err, RT_EPROC, "engine %s", e->exit_text);
	char *url = xasprintf("%s%s", e->url, e->cfg.ready_path ? e->cfg.ready_path : "/health");
	struct oai_resp r;
	oai_resp_init(&r, 65536);
	struct rt_sb why = RT_SB_INIT;
	int rc = 0;
	if (oai_get(url, timeout_s, &r, &why))
		rc = rt_errf(err, RT_EPROC, "engine stopped answering (hung?): %s", why.buf);
	else if (r.status != 200)
		rc = rt_errf(err, RT_EPROC, "engine stopped answering: GET %s answered %ld", url, r.status);
	rt_sb_release(&why);
	oai_resp_release(&r);
	free(url);
	return rc;
}

/* How long the log reader may drain the pipe after the engine's tree was
 * stopped: the write ends close with the processes, so EOF comes at once
 * unless something escaped the stop. */
#define DRAIN_S 1.0

void run_engine_stop(struct run_engine *e)
{
	eng_sampler_join(e); /* the tree is this thread's alone from here */
	int st = rt_ptree_stop(&e->tree, e->reaped ? 0 : e->cfg.stop_grace_s > 0 ? e->cfg.stop_grace_s : 10,
			       e->reaped);
	if (!e->reaped) {
		e->reaped = true;
		e->status = st;
		if (!e->exit_text[0])
			rt_describe_status(st, e->exit_text, sizeof(e->exit_text));
	}
	if (e->reader_started) {
		pthread_mutex_lock(&e->mu);
		e->drain_until = rt_now_ns() + (int64_t)(DRAIN_S * 1e9);
		pthread_mutex_unlock(&e->mu);
		pthread_join(e->reader, NULL);
		e->reader_started = false;
	}
	if (e->log_fd >= 0) {
		close(e->log_fd);
		e->log_fd = -1;
	}
}

pid_t run_engine_pid(const struct run_engine *e)
{
	return e->pid;
}

const char *run_engine_url(const struct run_engine *e)
{
	return e->url;
}

const char *run_engine_model(const struct run_engine *e)
{
	return e->model;
}

const char *run_engine_log(struct run_engine *e, size_t *len, bool *truncated)
{
	pthread_mutex_lock(&e->mu);
	*len = e->log.len;
	*truncated = e->truncated;
	pthread_mutex_unlock(&e->mu);
	return e->log.buf;
}

long run_engine_event_count(struct run_engine *e, size_t i)
{
	pthread_mutex_lock(&e->mu);
	long c = i < e->cfg.n_events ? e->counts[i] : 0;
	pthread_mutex_unlock(&e->mu);
	return c;
}

double run_engine_event_seconds(struct run_engine *e, size_t i)
{
	pthread_mutex_lock(&e->mu);
	double s = i < e->cfg.n_events ? e->seconds[i] : 0;
	pthread_mutex_unlock(&e->mu);
	return s;
}

const char *run_engine_exit_text(struct run_engine *e)
{
	return e->exit_text;
}

void run_engine_free(struct run_engine *e)
{
	if (!e)
		return;
	if (e->pid && (!e->reaped || e->reader_started || e->sampler_started))
		run_engine_stop(e);
	rt_ptree_release(&e->tree);
	if (e->log_fd >= 0)
		close(e->log_fd);
	for (size_t i = 0; i < e->cfg.n_events; i++)
		if (e->re[i])
			pcre2_code_free(e->re[i]);
	free(e->re);
	free(e->counts);
	free(e->seconds);
	rt_sb_release(&e->log);
	pthread_mutex_destroy(&e->mu);
	pthread_mutex_destroy(&e->tree_mu);
	free(e->url);
	free(e->model);
	free(e->version);
	free(e);
}
