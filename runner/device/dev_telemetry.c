/*
 * Live readings of a device without opening it (dev_telemetry_read: the
 * backend's telemetry op), the throttle reasons' names, and the test
 * stand-in for a driver (RATCHET_TELEMETRY_FAKE) that the host backend
 * reads: a file of one reading with the same fields as struct
 * dev_telemetry, re-read at every call so a test can throttle a device
 * while a benchmark runs.
 */
#include "runner/device/dev.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DEV_THROTTLE_REASONS as a table. */
static const struct {
	uint64_t bit;     /* DEV_THR_* */
	const char *name; /* its name */
} thr_names[] = {
#define DEV_THR_NAME(e, name, bit) { bit, name },
	DEV_THROTTLE_REASONS(DEV_THR_NAME)
#undef DEV_THR_NAME
};

void dev_telemetry_clear(struct dev_telemetry *t)
{
	t->temp_c = t->power_w = t->clock_mhz = t->mem_clock_mhz = t->max_clock_mhz = NAN;
	t->mem_used_bytes = NAN;
	t->throttle = 0;
	t->throttle_known = false;
}

void dev_throttle_names(uint64_t mask, char *out, size_t n)
{
	struct rt_sb sb = RT_SB_INIT;
	for (size_t i = 0; i < RT_ARRAY_SIZE(thr_names); i++)
		if (mask & thr_names[i].bit)
			rt_sb_addf(&sb, "%s%s", sb.len ? "," : "", thr_names[i].name);
	DEV_FMT(out, n, "%s", sb.len ? sb.buf : "none");
	rt_sb_release(&sb);
}

int dev_telemetry_read(const char *backend, int index, struct dev_telemetry *out,
		       struct rt_sb *err)
{
	dev_telemetry_clear(out);
	const struct dev_ops *ops = dev_backend_find(backend, err);
	if (!ops)
		return RT_EINVAL;
	if (!ops->telemetry)
		return rt_errf(err, RT_ENOTSUP, "%s: no telemetry", ops->name);
	return ops->telemetry(index, out, err);
}

int dev_telemetry(struct dev *d, struct dev_telemetry *out, struct rt_sb *err)
{
	return dev_telemetry_read(d->ops->name, d->info.index, out, err);
}

double dev_energy_watts(struct dev_energy *last, double joules, double seconds)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	double w = NAN;
	if (last->have && seconds > last->seconds && joules >= last->joules)
		w = (joules - last->joules) / (seconds - last->seconds);
	last->joules = joules;
	last->seconds = seconds;
	last->have = true;
	pthread_mutex_unlock(&mu);
	return w;
}

/* ---- the stand-in ---- */

/* throttle=a,b: the bits of the names; false on an unknown name. */
static bool fake_throttle(const char *v, uint64_t *mask)
{
	*mask = 0;
	if (!strcmp(v, "none"))
		return true;
	char *dup = xstrdup(v), *save = NULL;
	bool ok = true;
	for (char *w = strtok_r(dup, ",", &save); w && ok; w = strtok_r(NULL, ",", &save)) {
		ok = false;
		for (size_t i = 0; i < RT_ARRAY_SIZE(thr_names) && !ok; i++)
			if (!strcmp(w, thr_names[i].name))
				*mask |= thr_names[i].bit, ok = true;
	}
	free(dup);
	return ok;
}

/* One key=value word into out; false when the key or value is bad. */
static bool fake_word(const char *w, struct dev_telemetry *out)
{
	static const struct {
		const char *key;                    /* the word's key */
		size_t off;                         /* the double it sets */
	} keys[] = {
		{ "sm_clock_mhz", offsetof(struct dev_telemetry, clock_mhz) },
		{ "mem_clock_mhz", offsetof(struct dev_telemetry, mem_clock_mhz) },
		{ "max_clock_mhz", offsetof(struct dev_telemetry, max_clock_mhz) },
		{ "power_w", offsetof(struct dev_telemetry, power_w) },
		{ "temp_c", offsetof(struct dev_telemetry, temp_c) },
		{ "mem_used_bytes", offsetof(struct dev_telemetry, mem_used_bytes) },
	};
	const char *eq = strchr(w, '=');
	if (!eq)
		return false;
	size_t kl = (size_t)(eq - w);
	if (kl == 8 && !strncmp(w, "throttle", 8)) {
		out->throttle_known = fake_throttle(eq + 1, &out->throttle);
		return out->throttle_known;
	}
	for (size_t i = 0; i < RT_ARRAY_SIZE(keys); i++) {
		if (strlen(keys[i].key) != kl || strncmp(w, keys[i].key, kl))
			continue;
		char *end;
		double v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end)
			return false;
		*(double *)((char *)out + keys[i].off) = v;
		return true;
	}
	return false;
}

int dev_telemetry_fake(const char *path, struct dev_telemetry *out, struct rt_sb *err)
{
	dev_telemetry_clear(out);
	char *text = NULL;
	size_t len;
	int rc = rt_read_file(path, &text, &len, err);
	if (rc)
		return rt_errf(err, RT_EIO, " (the telemetry stand-in RATCHET_TELEMETRY_FAKE)");
	char *save = NULL;
	for (char *w = strtok_r(text, " \t\r\n", &save); w && !rc; w = strtok_r(NULL, " \t\r\n", &save))
		if (!fake_word(w, out))
			rc = rt_errf(err, RT_EINVAL, "host: telemetry stand-in %s: bad word '%s'", path, w);
	free(text);
	return rc;
}
