/*
 * The batch scheduler of simserve: one thread that runs steps like a
 * continuous-batching engine. Each step admits queued requests up to
 * --max-batch, prefills at most --chunked-prefill prompt tokens (long prompts
 * take several steps), and produces one token for every sequence whose
 * prompt is done. It sleeps until the step's end on an absolute
 * CLOCK_MONOTONIC deadline, then publishes the tokens: a streaming
 * connection is resumed for every token, a non-streaming one when its answer
 * is complete.
 *
 * Locking: one mutex (ss_lock) guards the queue, the running set and every
 * request's mutable fields. Lock order is ss_lock, then MHD's own locks.
 */
#include "simserve.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t ss_lock = PTHREAD_MUTEX_INITIALIZER;
bool ss_closing;

static struct {
	const struct ss_config *cfg; /* options */
	const struct ss_tiles *tiles;/* tile table in use */
	pthread_t thread;            /* the scheduler thread */
	bool started;                /* thread is running */
	bool stop;                   /* ask the thread to return */
	pthread_cond_t cv;           /* signalled on submit and stop */
	struct ss_req *q_head;       /* waiting requests, FIFO */
	struct ss_req *q_tail;
	struct ss_req **run;         /* running sequences, admission order */
	size_t n_run;
	struct ss_req *all;          /* every live request (for shutdown) */
	uint64_t next_id;            /* request ids */
	unsigned char *seen_bs;      /* --log-recompiles: batch sizes seen */
	struct ss_stats stats;       /* counters for /metrics (running, waiting unused) */
} S = { .cv = PTHREAD_COND_INITIALIZER };

struct ss_req *ss_req_new(struct MHD_Connection *conn)
{
	struct ss_req *r = xcalloc(1, sizeof(*r));
	r->conn = conn;
	r->refs = 1;
	rt_sb_init(&r->out, 0);
	rt_sb_init(&r->body, 16u << 20);
	pthread_mutex_lock(&ss_lock);
	r->id = ++S.next_id;
	r->all_next = S.all;
	if (S.all)
		S.all->all_prev = r;
	S.all = r;
	pthread_mutex_unlock(&ss_lock);
	return r;
}

void ss_req_unref_locked(struct ss_req *r)
{
	if (--r->refs > 0)
		return;
	if (r->all_prev)
		r->all_prev->all_next = r->all_next;
	else
		S.all = r->all_next;
	if (r->all_next)
		r->all_next->all_prev = r->all_prev;
	ss_plan_release(&r->plan);
	rt_sb_release(&r->out);
	rt_sb_release(&r->body);
	free(r);
}

void ss_sched_submit_locked(struct ss_req *r)
{
	r->refs++;
	r->prefill_left = r->plan.prompt_tokens > 0 ? r->plan.prompt_tokens : 1;
	r->q_next = NULL;
	if (S.q_tail)
		S.q_tail->q_next = r;
	else
		S.q_head = r;
	S.q_tail = r;
	pthread_cond_signal(&S.cv);
}

/* Wake the client of r if it waits for what just happened. */
static void wake_locked(struct ss_req *r)
{
	if (r->suspended && !r->cancelled && (r->stream || r->done)) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
	}
}

static void log_recompile(long bs)
{
	if (!S.cfg->log_recompiles || bs <= 0 || bs > S.cfg->max_batch || S.seen_bs[bs])
		return;
	S.seen_bs[bs] = 1;
	if (ss_persona_kind() != SS_PERSONA_NONE) {
		ss_persona_log_recompile(bs);
		return;
	}
	if (S.cfg->compile_ms > 0)
		fprintf(stderr, "Compiling kernel for batch size %ld (compiled in %g ms)\n", bs, S.cfg->compile_ms);
	else
		fprintf(stderr, "Compiling kernel for batch size %ld\n", bs);
	fflush(stderr);
}

static void *sched_main(void *arg)
{
	(void)arg;
	int64_t prev_end = 0;
	pthread_mutex_lock(&ss_lock);
	for (;;) {
		while (!S.stop && !S.q_head && !S.n_run) {
			pthread_cond_wait(&S.cv, &ss_lock);
			prev_end = 0;
		}
		if (S.stop)
			break;
		/* drop sequences whose client went away */
		size_t k = 0;
		for (size_t i = 0; i < S.n_run; i++) {
			if (S.run[i]->cancelled)
				ss_req_unref_locked(S.run[i]);
			else
				S.run[k++] = S.run[i];
		}
		S.n_run = k;
		/* admit */
		while (S.q_head && S.n_run < (size_t)S.cfg->max_batch) {
			struct ss_req *r = S.q_head;
			S.q_head = r->q_next;
			if (!S.q_head)
				S.q_tail = NULL;
			if (r->cancelled) {
				ss_req_unref_locked(r);
				continue;
			}
			S.run[S.n_run++] = r;
		}
		/* plan the step: chunked prefill, then one token per decoding sequence */
		long budget = S.cfg->chunked_prefill, prefill = 0, batch = 0;
		for (size_t i = 0; i < S.n_run; i++) {
			struct ss_req *r = S.run[i];
			r->emit = false;
			if (r->prefill_left > 0) {
				if (budget <= 0)
					continue;
				long take = r->prefill_left < budget ? r->prefill_left : budget;
				r->prefill_left -= take;
				S.stats.prompt_tokens += take;
				budget -= take;
				prefill += take;
				if (r->prefill_left > 0)
					continue;
			}
			r->emit = true;
			batch++;
		}
		pthread_mutex_unlock(&ss_lock);

		log_recompile(batch);
		int64_t now = rt_now_ns();
		/* back-to-back steps chain on the previous deadline, so a late
		 * wake-up (a busy machine) is caught up instead of drifting the
		 * whole schedule; only a long stall resets the chain */
		int64_t start = prev_end && now - prev_end < 20000000 ? prev_end : now;
		int64_t cost = ss_step_ns(S.cfg, S.tiles, prefill, batch);
		ss_trace_step(S.cfg, S.tiles, start, prefill, batch);
		if (cost > 0)
			rt_sleep_until_ns(start + cost);
		prev_end = cost > 0 ? start + cost : 0;

		pthread_mutex_lock(&ss_lock);
		int64_t end = rt_now_ns();
		k = 0;
		for (size_t i = 0; i < S.n_run; i++) {
			struct ss_req *r = S.run[i];
			if (r->emit) {
				if (r->produced < r->plan.n_tok) {
					r->produced++;
					S.stats.gen_tokens++;
				}
				if (r->produced >= r->plan.n_tok) {
					r->done = true;
					if (!strcmp(r->plan.finish_reason, "length"))
						S.stats.done_length++;
					else
						S.stats.done_stop++;
					r->done_ns = end;
				}
				wake_locked(r);
			}
			if (r->done)
				ss_req_unref_locked(r);
			else
				S.run[k++] = r;
		}
		S.n_run = k;
	}
	pthread_mutex_unlock(&ss_lock);
	return NULL;
}

int ss_sched_start(const struct ss_config *cfg, const struct ss_tiles *t, struct rt_sb *err)
{
	S.cfg = cfg;
	S.tiles = t;
	S.run = xcalloc((size_t)cfg->max_batch, sizeof(*S.run));
	S.seen_bs = xcalloc((size_t)cfg->max_batch + 1, 1);
	int rc = pthread_create(&S.thread, NULL, sched_main, NULL);
	if (rc)
		return rt_errf(err, RT_EIO, "scheduler thread: %s", strerror(rc));
	S.started = true;
	return 0;
}

void ss_sched_stop(void)
{
	if (S.started) {
		pthread_mutex_lock(&ss_lock);
		S.stop = true;
		pthread_cond_signal(&S.cv);
		pthread_mutex_unlock(&ss_lock);
		pthread_join(S.thread, NULL);
		S.started = false;
	}
	pthread_mutex_lock(&ss_lock);
	for (size_t i = 0; i < S.n_run; i++)
		ss_req_unref_locked(S.run[i]);
	S.n_run = 0;
	while (S.q_head) {
		struct ss_req *r = S.q_head;
		S.q_head = r->q_next;
		ss_req_unref_locked(r);
	}
	S.q_tail = NULL;
	pthread_mutex_unlock(&ss_lock);
	free(S.run);
	free(S.seen_bs);
	S.run = NULL;
	S.seen_bs = NULL;
}

void ss_sched_stats(struct ss_stats *out)
{
	pthread_mutex_lock(&ss_lock);
	*out = S.stats;
	out->running = (long)S.n_run;
	out->waiting = 0;
	for (struct ss_req *r = S.q_head; r; r = r->q_next)
		out->waiting++;
	pthread_mutex_unlock(&ss_lock);
}

void ss_close_all(void)
{
	pthread_mutex_lock(&ss_lock);
	ss_closing = true;
	for (struct ss_req *r = S.all; r; r = r->all_next) {
		if (r->suspended) {
			r->suspended = false;
			MHD_resume_connection(r->conn);
		}
	}
	pthread_mutex_unlock(&ss_lock);
}
