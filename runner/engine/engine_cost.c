/*
 * What an engine costs (see engine.h): the time from start to ready, and
 * the resident memory of its whole process tree (rt_proc_rss summed over the
 * tree's live members known so far) sampled every
 * SAMPLE_MS by a thread of its own, keeping the peak since the last reset
 * (one sample of a campaign). Device memory is not here: the engine module
 * sits below the device backends, so callers ask runner/device with
 * run_engine_pids().
 */
#define _GNU_SOURCE
#include "runner/engine/engine_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often the sampler reads the tree's memory. */
#define SAMPLE_MS 200

/* The tree's live members; scan: look for new ones first (a walk of /proc
 * without a cgroup, too dear for the sampler: the caller's
 * run_engine_alive scans at every sample's start and end). */
static size_t tree_pids(struct run_engine *e, bool scan, pid_t **out)
{
	pthread_mutex_lock(&e->tree_mu);
	if (scan && !e->reaped)
		rt_ptree_scan(&e->tree);
	size_t n = 0;
	*out = xcalloc(e->tree.n + 1, sizeof(pid_t));
	for (size_t i = 0; i < e->tree.n; i++) {
		struct rt_proc_stat ps;
		if (!rt_proc_stat(e->tree.m[i].pid, &ps) && ps.start == e->tree.m[i].start && ps.state != 'Z')
			(*out)[n++] = e->tree.m[i].pid;
	}
	pthread_mutex_unlock(&e->tree_mu);
	return n;
}

size_t run_engine_pids(struct run_engine *e, pid_t **out)
{
	return tree_pids(e, true, out);
}

/* One reading: the tree's RSS now, folded into the peak. */
static void sample_once(struct run_engine *e, bool scan)
{
	pid_t *pids;
	size_t n = tree_pids(e, scan, &pids);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += rt_proc_rss(pids[i]);
	free(pids);
	pthread_mutex_lock(&e->mu);
	if (sum > e->rss_peak)
		e->rss_peak = sum;
	pthread_mutex_unlock(&e->mu);
}

static void *sampler_main(void *arg)
{
	struct run_engine *e = arg;
	/* in steps of 10 ms, so that a stop never waits for a whole period */
	for (int step = 0;; step = (step + 1) % (SAMPLE_MS / 10)) {
		pthread_mutex_lock(&e->mu);
		bool quit = e->sampler_quit;
		pthread_mutex_unlock(&e->mu);
		if (quit)
			break;
		if (!step)
			sample_once(e, false);
		rt_sleep_ns(10000000);
	}
	return NULL;
}

void eng_sampler_start(struct run_engine *e)
{
	if (pthread_create(&e->sampler, NULL, sampler_main, e) == 0)
		e->sampler_started = true;
}

void eng_sampler_join(struct run_engine *e)
{
	if (!e->sampler_started)
		return;
	pthread_mutex_lock(&e->mu);
	e->sampler_quit = true;
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->sampler, NULL);
	e->sampler_started = false;
}

double run_engine_ready_s(const struct run_engine *e)
{
	return e->ready_s;
}

void run_engine_rss_reset(struct run_engine *e)
{
	pthread_mutex_lock(&e->mu);
	e->rss_peak = 0;
	pthread_mutex_unlock(&e->mu);
	sample_once(e, true);
}

uint64_t run_engine_rss_peak(struct run_engine *e)
{
	sample_once(e, true);
	pthread_mutex_lock(&e->mu);
	uint64_t v = e->rss_peak;
	pthread_mutex_unlock(&e->mu);
	return v;
}
