/*
 * The telemetry sampler: a background thread that, from start to stop,
 * reads one device's live readings (its backend's telemetry op: clocks,
 * power, temperature, memory used, throttle reasons) and the host's (mean
 * CPU frequency from cpufreq, the RSS of a set of processes) at a fixed
 * period, and summarises them as medians and a throttle flag. A device
 * whose library or driver is missing is read once, its reason kept, and
 * only host readings are taken from then on.
 *
 * Ownership: dev_sampler_start returns a sampler the caller stops with
 * dev_sampler_stop (which joins the thread and fills the summary) and frees
 * with dev_sampler_free.
 */
#ifndef RT_DEV_SAMPLER_H
#define RT_DEV_SAMPLER_H

#include "runner/device/dev.h"

/* What to sample. */
struct dev_sampler_cfg {
	const char *backend;       /* device backend, NULL: host readings only */
	int index;                 /* device index within it */
	int64_t period_ns;         /* time between ticks, > 0 */
	const pid_t *pids;         /* processes whose RSS is summed (copied), or NULL */
	size_t npids;              /* how many */
	const char *cpufreq_glob;  /* NULL: /sys/devices/system/cpu/cpu*\/cpufreq/scaling_cur_freq */
};

/* One tick's readings. */
struct dev_tick {
	int64_t t_ns;              /* CLOCK_MONOTONIC when taken */
	struct dev_telemetry dev;  /* the device's, cleared when it has none */
	double cpu_mhz;            /* mean current CPU frequency, NAN without cpufreq */
	double rss_bytes;          /* RSS of the processes summed, NAN without any */
};

/* A sampler's summary: medians over its ticks (NAN where no tick had the
 * reading). */
struct dev_tel_summary {
	size_t ticks;              /* readings taken */
	double interval_s;         /* mean time between ticks, NAN with fewer than 2 */
	double sm_clock_mhz;       /* median current core clock */
	double mem_clock_mhz;      /* median memory clock */
	double max_clock_mhz;      /* nominal maximum core clock (median) */
	double power_w;            /* median board power */
	double temp_c;             /* median temperature */
	double mem_used_bytes;     /* median device memory used */
	double cpu_mhz;            /* median of the ticks' mean CPU frequency */
	double rss_bytes;          /* median RSS of the processes */
	bool throttle_known;       /* some tick told the throttle reasons */
	uint64_t throttle;         /* DEV_THR_* bits seen in any tick */
	double throttled_frac;     /* ticks throttled by power or heat / ticks telling reasons */
	bool throttled;            /* some tick was throttled by power or heat */
	char why[256];             /* why the device gave no readings, "" when it did */
};

struct dev_sampler;

/* Take a first tick now, then one every period on a thread. RT_EINVAL
 * (period <= 0), RT_ENOMEM (no thread). A device that cannot be read is no
 * error: see the summary's why. */
int dev_sampler_start(const struct dev_sampler_cfg *cfg, struct dev_sampler **out,
		      struct rt_sb *err);
/* Stop the thread and summarise; may be called once. */
void dev_sampler_stop(struct dev_sampler *s, struct dev_tel_summary *out);
/* The ticks taken (valid after stop). */
const struct dev_tick *dev_sampler_ticks(const struct dev_sampler *s, size_t *n);
void dev_sampler_free(struct dev_sampler *s);

/* Summarise ticks (what stop does; exposed for tests). */
void dev_tel_summarise(const struct dev_tick *t, size_t n, struct dev_tel_summary *out);
/* Mean current CPU frequency over the files glob matches (kHz, as cpufreq
 * writes them) in MHz; NAN when none could be read. */
double dev_cpu_mhz(const char *glob);

#endif
