/*
 * devices: the local device pool. `devices: [cuda:0, cuda:1]` (or
 * `ratchet run --devices cuda:0,cuda:1`, which replaces it) names the
 * devices a campaign measures on at once, one worker each; every device is
 * KIND:INDEX with KIND one of cuda, hip, ze (the vendors' runtimes) and host
 * (no accelerator: tests, CPU kernels). A pool holds devices of one kind,
 * each once. runner/campaign/round.c runs the rounds; docs/scale.md.
 */
#include "runner/spec/spec_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const spec_device_kind_names[] = { "cuda", "hip", "ze", "host", NULL };

int spec_device_parse(const char *text, struct spec_device *d, struct rt_sb *err)
{
	const char *colon = strchr(text, ':');
	size_t kl = colon ? (size_t)(colon - text) : 0;
	int kind = -1;
	for (int k = 0; colon && spec_device_kind_names[k]; k++)
		if (strlen(spec_device_kind_names[k]) == kl && !strncmp(text, spec_device_kind_names[k], kl))
			kind = k;
	char *end = NULL;
	errno = 0;
	long idx = colon && colon[1] >= '0' && colon[1] <= '9' ? strtol(colon + 1, &end, 10) : -1;
	if (kind < 0 || idx < 0 || idx > 4095 || errno || !end || *end)
		return rt_errf(err, RT_EINVAL, "'%s' is not a device: expected KIND:INDEX with KIND cuda, hip, ze "
			       "or host and INDEX 0 to 4095 (cuda:0)", text);
	d->kind = (enum spec_device_kind)kind;
	d->index = (int)idx;
	return 0;
}

void spec_device_name(const struct spec_device *d, char *buf, size_t n)
{
	snprintf(buf, n, "%s:%d", spec_device_kind_names[d->kind], d->index);
}

/* One kind, each device once; why not appended to err. */
static int check_pool(const struct spec_device *v, size_t n, struct rt_sb *err)
{
	for (size_t i = 1; i < n; i++) {
		char a[32], b[32];
		spec_device_name(&v[0], a, sizeof(a));
		spec_device_name(&v[i], b, sizeof(b));
		if (v[i].kind != v[0].kind)
			return rt_errf(err, RT_EINVAL, "a pool holds devices of one kind: '%s' and '%s'", a, b);
		for (size_t j = 0; j < i; j++)
			if (v[j].index == v[i].index)
				return rt_errf(err, RT_EINVAL, "device '%s' is named twice", b);
	}
	return 0;
}

int spec_devices_parse_list(const char *text, struct spec_device **out, size_t *n, struct rt_sb *err)
{
	char *copy = xstrdup(text), *save = NULL;
	size_t cap = strlen(text) + 1, k = 0;
	struct spec_device *v = xcalloc(cap, sizeof(*v));
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
		rc = spec_device_parse(t, &v[k++], err);
	if (!rc && !k)
		rc = rt_errf(err, RT_EINVAL, "no devices in '%s': expected cuda:0,cuda:1", text);
	if (!rc)
		rc = check_pool(v, k, err);
	free(copy);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*n = k;
	return 0;
}

void spec_parse_devices(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	struct spec *s = base;
	(void)f;
	if (spec_is_null(v) || !spec_want_seq(ld, v, path))
		return;
	size_t n = spec_seq_len(v);
	if (!n) {
		spec_lerr(ld, v, path, "expected at least one device (cuda:0)");
		return;
	}
	s->devices = xcalloc(n, sizeof(*s->devices));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = spec_seq_item(ld, v, i);
		char *ip = xasprintf("%s[%zu]", path, i);
		const char *t = spec_want_scalar(ld, it, ip, "a device (cuda:0)");
		struct rt_sb why = RT_SB_INIT;
		if (t && spec_device_parse(t, &s->devices[s->n_devices], &why))
			spec_lerr(ld, it, ip, "%s", why.buf);
		else if (t && check_pool(s->devices, s->n_devices + 1, &why))
			spec_lerr(ld, it, ip, "%s", why.buf);
		else if (t)
			s->n_devices++;
		rt_sb_release(&why);
		free(ip);
	}
}

json_t *spec_dump_devices(const void *base, const struct spec_field *f)
{
	const struct spec *s = base;
	(void)f;
	if (!s->n_devices)
		return NULL; /* no pool: older specs dump as they did */
	json_t *a = json_array();
	for (size_t i = 0; i < s->n_devices; i++) {
		char b[32];
		spec_device_name(&s->devices[i], b, sizeof(b));
		json_array_append_new(a, json_string(b));
	}
	return a;
}
