/*
 * The device registry and the thin layer over the ops table: opening a
 * device, module and kernel handles that remember their owner, identity
 * strings and facts, and the copy / compute ceilings of `devices --peak`.
 */
#include "runner/device/dev.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dev_fmt(char *dst, size_t n, const char *fmt, ...)
{
	if (!n)
		return;
	struct rt_sb sb = RT_SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	size_t k = sb.len < n - 1 ? sb.len : n - 1;
	memcpy(dst, sb.buf, k);
	dst[k] = 0;
	rt_sb_release(&sb);
}

static const struct dev_ops *const registry[] = {
	&dev_host_ops,
	&dev_cuda_ops,
	&dev_hip_ops,
	&dev_ze_ops,
};

const struct dev_ops *const *dev_backends(size_t *n)
{
	*n = RT_ARRAY_SIZE(registry);
	return registry;
}

const struct dev_ops *dev_backend_find(const char *name, struct rt_sb *err)
{
	const char *names[RT_ARRAY_SIZE(registry)];
	for (size_t i = 0; i < RT_ARRAY_SIZE(registry); i++) {
		if (name && !strcmp(registry[i]->name, name))
			return registry[i];
		names[i] = registry[i]->name;
	}
	const char *dym = name ? rt_did_you_mean(name, names, RT_ARRAY_SIZE(names)) : NULL;
	if (dym)
		rt_errf(err, RT_EINVAL, "unknown backend '%s' (did you mean '%s'?)", name ? name : "",
			dym);
	else
		rt_errf(err, RT_EINVAL, "unknown backend '%s' (known: host, cuda, hip, ze)",
			name ? name : "");
	return NULL;
}

int dev_open(const char *backend, int index, struct dev **out, struct rt_sb *err)
{
	*out = NULL;
	const struct dev_ops *ops = dev_backend_find(backend, err);
	if (!ops)
		return RT_EINVAL;
	int n = 0;
	int rc = ops->count(&n, err);
	if (rc)
		return rc;
	if (index < 0 || index >= n)
		return rt_errf(err, RT_ENODEV, "%s: no device %d (%d found)", ops->name, index, n);
	struct dev *d = xcalloc(1, sizeof(*d));
	d->ops = ops;
	rc = ops->info(index, &d->info, err);
	if (!rc)
		rc = ops->open(index, &d->priv, err);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void dev_close(struct dev *d)
{
	if (!d)
		return;
	d->ops->close(d->priv);
	free(d);
}

int dev_module_load(struct dev *d, const char *path, struct dev_module **out, struct rt_sb *err)
{
	*out = NULL;
	void *h = NULL;
	int rc = d->ops->module_load(d->priv, path, &h, err);
	if (rc)
		return rc;
	struct dev_module *m = xcalloc(1, sizeof(*m));
	m->dev = d;
	m->h = h;
	m->path = xstrdup(path);
	*out = m;
	return 0;
}

void dev_module_free(struct dev_module *m)
{
	if (!m)
		return;
	m->dev->ops->module_free(m->dev->priv, m->h);
	free(m->path);
	free(m);
}

int dev_kernel_get(struct dev_module *m, const char *name, struct dev_kernel **out,
		   struct rt_sb *err)
{
	*out = NULL;
	void *h = NULL;
	int rc = m->dev->ops->kernel_get(m->dev->priv, m->h, name, &h, err);
	if (rc)
		return rc;
	struct dev_kernel *k = xcalloc(1, sizeof(*k));
	k->mod = m;
	k->h = h;
	k->name = xstrdup(name);
	*out = k;
	return 0;
}

void dev_kernel_free(struct dev_kernel *k)
{
	if (!k)
		return;
	free(k->name);
	free(k);
}

int dev_alloc(struct dev *d, size_t n, dev_ptr *out, struct rt_sb *err)
{
	return d->ops->alloc(d->priv, n ? n : 1, out, err);
}

void dev_free(struct dev *d, dev_ptr p)
{
	if (p)
		d->ops->free(d->priv, p);
}

int dev_h2d(struct dev *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err)
{
	return n ? d->ops->h2d(d->priv, dst, src, n, err) : 0;
}

int dev_d2h(struct dev *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	return n ? d->ops->d2h(d->priv, dst, src, n, err) : 0;
}

int dev_d2d(struct dev *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	return n ? d->ops->d2d(d->priv, dst, src, n, err) : 0;
}

int dev_fill(struct dev *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err)
{
	return n ? d->ops->fill(d->priv, dst, byte, n, err) : 0;
}

int dev_launch(struct dev *d, struct dev_kernel *k, const struct dev_launch *l, void **args,
	       size_t nargs, struct rt_sb *err)
{
	for (int i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return rt_errf(err, RT_EINVAL, "%s: launch of '%s': grid and block must be >= 1",
				       d->ops->name, k->name);
	return d->ops->launch(d->priv, k->h, l, args, nargs, err);
}

int dev_sync(struct dev *d, struct rt_sb *err)
{
	return d->ops->sync(d->priv, err);
}

int dev_timer_begin(struct dev *d, struct rt_sb *err)
{
	return d->ops->timer_begin(d->priv, err);
}

int dev_timer_end(struct dev *d, double *seconds, struct rt_sb *err)
{
	return d->ops->timer_end(d->priv, seconds, err);
}

int dev_telemetry(struct dev *d, struct dev_telemetry *out, struct rt_sb *err)
{
	out->temp_c = out->power_w = out->clock_mhz = out->mem_used_bytes = NAN;
	if (!d->ops->telemetry)
		return rt_errf(err, RT_ENOTSUP, "%s: no telemetry", d->ops->name);
	return d->ops->telemetry(d->priv, out, err);
}

void dev_identity(const struct dev_info *in, char *out, size_t n)
{
	const char *id = in->uuid[0] ? in->uuid : in->pci_id;
	DEV_FMT(out, n, "%s:%d %s [%s] driver %s", in->backend, in->index, in->name,
		 id[0] ? id : "no-id", in->driver_version);
}

void dev_peak_key(const struct dev_info *in, char *out, size_t n)
{
	if (in->uuid[0])
		DEV_FMT(out, n, "%s", in->uuid);
	else if (in->pci_id[0])
		DEV_FMT(out, n, "%s", in->pci_id);
	else
		DEV_FMT(out, n, "%s:%d:%s", in->backend, in->index, in->name);
}

size_t dev_facts(const struct dev_info *in, struct dev_fact *out, size_t max)
{
	size_t k = 0;
#define FACT(K, ...)                                                         \
	do {                                                                 \
		if (k < max) {                                               \
			snprintf(out[k].key, sizeof(out[k].key), "%s", K);   \
			DEV_FMT(out[k].value, sizeof(out[k].value), __VA_ARGS__); \
			k++;                                                 \
		}                                                            \
	} while (0)
	char id[160];
	dev_identity(in, id, sizeof(id));
	FACT("device.identity", "%s", id);
	FACT("device.backend", "%s", in->backend);
	FACT("device.index", "%d", in->index);
	FACT("device.name", "%s", in->name);
	FACT("device.vendor", "%s", in->vendor);
	FACT("device.driver", "%s", in->driver_version);
	FACT("device.runtime", "%s", in->runtime_version);
	FACT("device.arch", "%s", in->arch);
	FACT("device.memory_bytes", "%llu", (unsigned long long)in->mem_bytes);
	FACT("device.compute_units", "%d", in->compute_units);
	FACT("device.clock_mhz", "%d", in->clock_mhz);
	if (in->uuid[0])
		FACT("device.uuid", "%s", in->uuid);
	if (in->pci_id[0])
		FACT("device.pci_id", "%s", in->pci_id);
#undef FACT
	return k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int dev_peak_measure(struct dev *d, size_t bytes, struct dev_peak *out, struct rt_sb *err)
{
	out->copy_gbps = NAN;
	out->gflops = NAN;
	if (!bytes)
		bytes = strcmp(d->ops->name, "host") ? (size_t)1 << 30 : (size_t)64 << 20;
	out->copy_bytes = (double)bytes;
	dev_ptr a = 0, b = 0;
	int rc = dev_alloc(d, bytes, &a, err);
	if (!rc)
		rc = dev_alloc(d, bytes, &b, err);
	if (!rc)
		rc = dev_fill(d, a, 1, bytes, err);
	if (!rc)
		rc = dev_fill(d, b, 2, bytes, err);
	double t[15];
	int nt = 0;
	for (int i = 0; !rc && i < 3; i++) /* warm up */
		rc = dev_d2d(d, b, a, bytes, err);
	if (!rc)
		rc = dev_sync(d, err);
	for (; !rc && nt < (int)RT_ARRAY_SIZE(t); nt++) {
		rc = dev_timer_begin(d, err);
		if (!rc)
			rc = dev_d2d(d, b, a, bytes, err);
		if (!rc)
			rc = dev_timer_end(d, &t[nt], err);
		if (rc)
			break;
	}
	dev_free(d, a);
	dev_free(d, b);
	if (rc)
		return rc;
	qsort(t, (size_t)nt, sizeof(double), cmp_double);
	out->copy_gbps = 2.0 * (double)bytes / t[nt / 2] / 1e9;

	if (!d->ops->fma_kernel)
		return 0;
	void *mod = NULL, *kern = NULL, *args[8];
	size_t nargs = 0;
	double flops = 0;
	struct dev_launch l;
	struct rt_sb ferr = RT_SB_INIT;
	rc = d->ops->fma_kernel(d->priv, &mod, &kern, &l, args, &nargs, &flops, &ferr);
	if (rc == RT_ENOTSUP) {
		rt_sb_release(&ferr);
		return 0;
	}
	if (rc) {
		rt_errf(err, rc, "%s", ferr.buf);
		rt_sb_release(&ferr);
		return rc;
	}
	rt_sb_release(&ferr);
	nt = 0;
	for (int i = 0; !rc && i < 2; i++)
		rc = d->ops->launch(d->priv, kern, &l, args, nargs, err);
	for (; !rc && nt < 7; nt++) {
		rc = dev_timer_begin(d, err);
		if (!rc)
			rc = d->ops->launch(d->priv, kern, &l, args, nargs, err);
		if (!rc)
			rc = dev_timer_end(d, &t[nt], err);
		if (rc)
			break;
	}
	/* The FMA kernel's scratch (args[0]) is owned by the backend's module
	 * state and freed with it. */
	d->ops->module_free(d->priv, mod);
	if (rc)
		return rc;
	qsort(t, (size_t)nt, sizeof(double), cmp_double);
	out->gflops = flops / t[nt / 2] / 1e9;
	return 0;
}
