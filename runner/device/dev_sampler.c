/*
 * The telemetry sampler (sampler.h): a thread that ticks at a fixed period
 * on CLOCK_MONOTONIC deadlines (a late tick does not shift the later ones)
 * until stopped, and the summary of its ticks. The first tick is taken on
 * the caller's thread, so a backend's driver is loaded (pthread_once, and
 * ze's setenv) there and never on the sampler's thread, which calls
 * neither getenv nor setenv.
 */
#include "runner/device/sampler.h"
#include "runner/base/proc.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CPUFREQ_GLOB "/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq"

struct dev_sampler {
	struct dev_sampler_cfg cfg;  /* what to sample; pids and glob owned copies */
	pthread_t th;                /* the ticking thread */
	bool started;                /* th was created */
	pthread_mutex_t mu;          /* guards stop */
	pthread_cond_t cv;           /* signalled by stop */
	bool stop;                   /* the thread should end */
	bool dev_ok;                 /* the device still answers */
	char *fake;                  /* host: RATCHET_TELEMETRY_FAKE as it was at start, or NULL */
	char why[256];               /* why it does not */
	struct dev_tick *ticks;      /* readings so far (the thread's until joined) */
	size_t n, cap;               /* used and allocated */
};

double dev_cpu_mhz(const char *pattern)
{
	glob_t g;
	if (glob(pattern ? pattern : CPUFREQ_GLOB, 0, NULL, &g))
		return NAN;
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		double khz;
		if (f && fscanf(f, "%lf", &khz) == 1 && khz > 0)
			sum += khz / 1000.0, n++;
		if (f)
			fclose(f);
	}
	globfree(&g);
	return n ? sum / (double)n : NAN;
}

static void tick(struct dev_sampler *s)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->ticks = xrealloc(s->ticks, s->cap * sizeof(*s->ticks));
	}
	struct dev_tick *t = &s->ticks[s->n++];
	t->t_ns = rt_now_ns();
	dev_telemetry_clear(&t->dev);
	if (s->dev_ok) {
		struct rt_sb err = RT_SB_INIT;
		int rc = s->fake ? dev_telemetry_fake(s->fake, &t->dev, &err)
				 : dev_telemetry_read(s->cfg.backend, s->cfg.index, &t->dev, &err);
		if (rc) {
			/* Said once; later ticks take host readings only. */
			s->dev_ok = false;
			DEV_FMT(s->why, sizeof(s->why), "%s", err.buf);
			dev_telemetry_clear(&t->dev);
		}
		rt_sb_release(&err);
	}
	t->cpu_mhz = dev_cpu_mhz(s->cfg.cpufreq_glob);
	t->rss_bytes = NAN;
	if (s->cfg.npids) {
		uint64_t rss = 0;
		for (size_t i = 0; i < s->cfg.npids; i++)
			rss += rt_proc_rss(s->cfg.pids[i]);
		t->rss_bytes = (double)rss;
	}
}

static void *run(void *arg)
{
	struct dev_sampler *s = arg;
	int64_t next = s->ticks[0].t_ns;
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		next += s->cfg.period_ns;
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000000),
				       .tv_nsec = (long)(next % 1000000000) };
		int r = 0;
		while (!s->stop && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->mu);
		tick(s);
		pthread_mutex_lock(&s->mu);
		int64_t now = rt_now_ns();
		if (now > next + s->cfg.period_ns) /* a stalled tick: skip the missed ones */
			next = now - (now - next) % s->cfg.period_ns;
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int dev_sampler_start(const struct dev_sampler_cfg *cfg, struct dev_sampler **out,
		      struct rt_sb *err)
{
	*out = NULL;
	if (cfg->period_ns <= 0)
		return rt_errf(err, RT_EINVAL, "telemetry: the period must be above 0");
	struct dev_sampler *s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->cfg.backend = cfg->backend ? xstrdup(cfg->backend) : NULL;
	s->cfg.cpufreq_glob = cfg->cpufreq_glob ? xstrdup(cfg->cpufreq_glob) : NULL;
	if (cfg->npids) {
		pid_t *p = xcalloc(cfg->npids, sizeof(pid_t));
		memcpy(p, cfg->pids, cfg->npids * sizeof(pid_t));
		s->cfg.pids = p;
	}
	s->dev_ok = cfg->backend != NULL;
	/* Read here, on the caller's thread: the kernel benchmark sets and
	 * unsets variables while the sampler's thread runs, and getenv may
	 * not race with setenv. */
	const char *fake = getenv("RATCHET_TELEMETRY_FAKE");
	if (s->dev_ok && !strcmp(cfg->backend, "host") && fake && *fake)
		s->fake = xstrdup(fake);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	tick(s);
	if (pthread_create(&s->th, NULL, run, s)) {
		dev_sampler_free(s);
		return rt_errf(err, RT_ENOMEM, "telemetry: cannot start the sampler thread");
	}
	s->started = true;
	*out = s;
	return 0;
}

void dev_sampler_stop(struct dev_sampler *s, struct dev_tel_summary *out)
{
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
		s->started = false;
	}
	dev_tel_summarise(s->ticks, s->n, out);
	DEV_FMT(out->why, sizeof(out->why), "%s", s->why);
}

const struct dev_tick *dev_sampler_ticks(const struct dev_sampler *s, size_t *n)
{
	*n = s->n;
	return s->ticks;
}

void dev_sampler_free(struct dev_sampler *s)
{
	if (!s)
		return;
	if (s->started) {
		struct dev_tel_summary ignore;
		dev_sampler_stop(s, &ignore);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free((char *)s->cfg.backend);
	free((char *)s->cfg.cpufreq_glob);
	free(s->fake);
	free((pid_t *)s->cfg.pids);
	free(s->ticks);
	free(s);
}

/* ---- the summary ---- */

/* The median of the finite values at byte offset off of each tick. */
static double median_at(const struct dev_tick *t, size_t n, size_t off)
{
	double *v = xcalloc(n + 1, sizeof(double));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		double x = *(const double *)((const char *)&t[i] + off);
		if (isfinite(x))
			v[k++] = x;
	}
	double m = NAN;
	if (k) {
		qsort(v, k, sizeof(double), rt_cmp_double);
		m = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	}
	free(v);
	return m;
}

void dev_tel_summarise(const struct dev_tick *t, size_t n, struct dev_tel_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->ticks = n;
	out->interval_s = n > 1 ? (double)(t[n - 1].t_ns - t[0].t_ns) / 1e9 / (double)(n - 1) : NAN;
#define MED(field, member) out->field = median_at(t, n, offsetof(struct dev_tick, member))
	MED(sm_clock_mhz, dev.clock_mhz);
	MED(mem_clock_mhz, dev.mem_clock_mhz);
	MED(max_clock_mhz, dev.max_clock_mhz);
	MED(power_w, dev.power_w);
	MED(temp_c, dev.temp_c);
	MED(mem_used_bytes, dev.mem_used_bytes);
	MED(cpu_mhz, cpu_mhz);
	MED(rss_bytes, rss_bytes);
#undef MED
	size_t known = 0, marked = 0;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].dev.throttle_known)
			continue;
		known++;
		out->throttle |= t[i].dev.throttle;
		marked += (t[i].dev.throttle & DEV_THR_MARKS) != 0;
	}
	out->throttle_known = known > 0;
	out->throttled = marked > 0;
	out->throttled_frac = known ? (double)marked / (double)known : NAN;
}
