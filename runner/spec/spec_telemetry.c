/*
 * telemetry: the sampler that runs during every benchmark of a sample
 * (runner/device/sampler.h, started in runner/campaign/measure.c):
 *   telemetry: {enabled: true, period: 100ms, device: cuda:0}
 * enabled defaults to true and period to 100 ms; device (BACKEND[:INDEX],
 * or none for host readings only) defaults to the first kernel
 * benchmark's device, else the first GPU backend that has one. The
 * medians it stores per sample are metrics of benchmark "telemetry"
 * (SPEC_TELEMETRY_METRICS), usable in constraints.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const backends[] = { "host", "cuda", "hip", "ze", "none" };

static const struct spec_field tel_fields[] = {
	{ "enabled", SF_BOOL, SPEC_OFF(struct spec_telemetry, enabled), .help = "sample during benchmarks" },
	{ "period", SF_DUR, SPEC_OFF(struct spec_telemetry, period_s), 0, FL_LO | FL_HI, 0.001, 60,
	  .help = "time between readings, 1ms to 60s" },
	{ "device", SF_STR, SPEC_OFF(struct spec_telemetry, device), 0, FL_OMIT0,
	  .help = "BACKEND[:INDEX] to read, or none; default: the kernel benchmarks' device" },
	{ 0 }
};

static const struct {
	const char *name;        /* metric */
	const char *unit;        /* its unit */
	enum spec_better better; /* which way is better */
} metrics[] = {
#define TM(e, name, unit, better) { name, unit, SPEC_BETTER_##better },
	SPEC_TELEMETRY_METRICS(TM)
#undef TM
};

enum spec_better spec_telemetry_metric_better(enum spec_telemetry_metric m)
{
	return metrics[m].better;
}

const char *spec_telemetry_metric_name(enum spec_telemetry_metric m)
{
	return metrics[m].name;
}

const char *spec_telemetry_metric_unit(enum spec_telemetry_metric m)
{
	return metrics[m].unit;
}

int spec_telemetry_metric_find(const char *name)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(metrics); i++)
		if (!strcmp(metrics[i].name, name))
			return (int)i;
	return -1;
}

void spec_telemetry_defaults(struct spec_telemetry *t)
{
	t->enabled = true;
	t->period_s = 0.1;
	t->index = -1;
}

/* device: BACKEND or BACKEND:INDEX. */
static void parse_device(struct spec_ld *ld, yaml_node_t *m, const char *path, struct spec_telemetry *t)
{
	char *colon = strchr(t->device, ':');
	size_t bl = colon ? (size_t)(colon - t->device) : strlen(t->device);
	for (size_t i = 0; i < RT_ARRAY_SIZE(backends); i++)
		if (strlen(backends[i]) == bl && !strncmp(t->device, backends[i], bl))
			t->backend = xstrndup(t->device, bl);
	char *end = NULL;
	long idx = colon ? strtol(colon + 1, &end, 10) : 0;
	bool bad_idx = colon && (end == colon + 1 || *end || idx < 0 || idx > 4096);
	if (!t->backend || bad_idx || (colon && !strcmp(t->backend, "none"))) {
		char *kp = spec_path_join(path, "device");
		spec_lerr(ld, spec_map_get(ld, m, "device"), kp,
			  "expected BACKEND[:INDEX] with a backend of host, cuda, hip, ze (or none), got '%s'",
			  t->device);
		free(kp);
		free(t->backend);
		t->backend = NULL;
		return;
	}
	t->index = (int)idx;
}

void spec_parse_telemetry(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			  const struct spec_field *f)
{
	struct spec_telemetry *t = &((struct spec *)base)->telemetry;
	(void)f;
	if (spec_is_null(v) || !spec_want_map(ld, v, path))
		return;
	spec_parse_fields(ld, v, path, t, tel_fields, NULL);
	if (t->device)
		parse_device(ld, v, path, t);
}

json_t *spec_dump_telemetry(const void *base, const struct spec_field *f)
{
	const struct spec_telemetry *t = &((const struct spec *)base)->telemetry;
	(void)f;
	if (t->enabled && t->period_s == 0.1 && !t->device)
		return NULL; /* the defaults: older specs dump as they did */
	return spec_fields_json(t, tel_fields);
}

void spec_telemetry_release(struct spec_telemetry *t)
{
	free(t->device);
	free(t->backend);
}
