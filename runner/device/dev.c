/*
 * The device registry and the thin layer over the ops table: opening a
 * device, module and kernel handles that remember their owner, identity
 * strings and facts, and the copy / compute ceilings of `devices --peak`.
 * Also what the backends share: loading a driver library at first use
 * (dev_driver), the start of an info op, and the GPU UUID form.
 */
#include "runner/device/dev.h"

#include <dlfcn.h>
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

int dev_dl_open(const char *const *libs, size_t nlibs, const struct dev_sym *syms, size_t nsyms,
		char *why, size_t why_n)
{
	void *dl = NULL;
	size_t i = 0;
	for (; !dl && i < nlibs; i++) {
		dl = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		/* Keep the first reason: the first name is what a driver installs. */
		if (!dl && i == 0)
			DEV_FMT(why, why_n, "%s", dlerror());
	}
	if (!dl)
		return RT_ENODEV;
	for (size_t k = 0; k < nsyms; k++) {
		*syms[k].slot = dlsym(dl, syms[k].name);
		if (!*syms[k].slot) {
			DEV_FMT(why, why_n, "%s has no %s (driver too old)", libs[i - 1],
				syms[k].name);
			return RT_ENODEV;
		}
	}
	why[0] = 0;
	return 0;
}

void dev_ids_cached(struct dev_id_cache *c, int (*info)(int index, struct dev_info *o, struct rt_sb *err), int index,
		    char uuid[64], char pci_id[32])
{
	uuid[0] = pci_id[0] = 0;
	if (index < 0 || index >= (int)RT_ARRAY_SIZE(c->asked))
		return;
	pthread_mutex_lock(&c->mu);
	if (!c->asked[index]) {
		c->asked[index] = true;
		struct dev_info o;
		struct rt_sb ignore = RT_SB_INIT;
		if (!info(index, &o, &ignore)) {
			memcpy(c->uuid[index], o.uuid, sizeof(c->uuid[index]));
			memcpy(c->pci_id[index], o.pci_id, sizeof(c->pci_id[index]));
		}
		rt_sb_release(&ignore);
	}
	memcpy(uuid, c->uuid[index], 64);
	memcpy(pci_id, c->pci_id[index], 32);
	pthread_mutex_unlock(&c->mu);
}

int dev_driver_count(struct dev_driver *drv, const char *backend, int *n, struct rt_sb *err)
{
	pthread_once(&drv->once, drv->load);
	*n = 0;
	if (drv->why[0])
		return rt_errf(err, RT_ENODEV, "%s: no device: %s", backend, drv->why);
	*n = drv->ndev;
	return 0;
}

int dev_proc_mem(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *why)
{
	size_t nb;
	const struct dev_ops *const *b = dev_backends(&nb);
	int answered = 0;
	*bytes = 0;
	for (size_t i = 0; i < nb; i++) {
		if (!strcmp(b[i]->name, "host"))
			continue; /* host memory is the engine's RSS, measured apart */
		struct rt_sb e = RT_SB_INIT;
		uint64_t v = 0;
		if (!b[i]->proc_mem)
			rt_sb_addf(&e, "%s: per-process memory not supported", b[i]->name);
		else if (!b[i]->proc_mem(pids, n, &v, &e))
			answered++, *bytes += v;
		if (e.len)
			rt_sb_addf(why, "%s%s", why->len ? "; " : "", e.buf);
		rt_sb_release(&e);
	}
	return answered;
}

int dev_driver_info_init(struct dev_driver *drv, const char *backend, int index,
			 struct dev_info *o, struct rt_sb *err)
{
	int n;
	int rc = dev_driver_count(drv, backend, &n, err);
	if (rc)
		return rc;
	if (index < 0 || index >= n)
		return rt_errf(err, RT_ENODEV, "%s: no device %d (%d found)", backend, index, n);
	memset(o, 0, sizeof(*o));
	DEV_FMT(o->backend, sizeof(o->backend), "%s", backend);
	o->index = index;
	return 0;
}

void dev_fmt_gpu_uuid(char *out, size_t n, const unsigned char b[16])
{
	DEV_FMT(out, n,
		"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		b[14], b[15]);
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
	if (!rt_file_exists(path))
		return rt_errf(err, RT_ENOENT, "%s: module %s: no such file", d->ops->name, path);
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

/* One repetition of what `devices --peak` times: a copy or an FMA launch. */
struct peak_op {
	dev_ptr dst, src;           /* copy: the buffers */
	size_t bytes;               /* copy: their size; 0 for a launch */
	void *kern;                 /* launch: the backend's kernel handle */
	const struct dev_launch *l; /* launch: its geometry */
	void **args;                /* launch: its arguments */
	size_t nargs;               /* launch: how many */
};

static int peak_run(struct dev *d, const struct peak_op *op, struct rt_sb *err)
{
	if (op->bytes)
		return dev_d2d(d, op->dst, op->src, op->bytes, err);
	return d->ops->launch(d->priv, op->kern, op->l, op->args, op->nargs, err);
}

/* Run op warmup times, then time it reps times (reps <= 15) with device
 * events; *median is the median in seconds. */
static int peak_median(struct dev *d, const struct peak_op *op, int warmup, int reps,
		       double *median, struct rt_sb *err)
{
	double t[15];
	int rc = 0;
	for (int i = 0; !rc && i < warmup; i++)
		rc = peak_run(d, op, err);
	if (!rc)
		rc = dev_sync(d, err);
	for (int i = 0; !rc && i < reps; i++) {
		rc = dev_timer_begin(d, err);
		if (!rc)
			rc = peak_run(d, op, err);
		if (!rc)
			rc = dev_timer_end(d, &t[i], err);
	}
	if (rc)
		return rc;
	qsort(t, (size_t)reps, sizeof(double), rt_cmp_double);
	*median = t[reps / 2];
	return 0;
}

/* The compute ceiling from the backend's built-in FMA kernel; *gflops stays
 * NAN when the backend has none. */
static int peak_fma(struct dev *d, double *gflops, struct rt_sb *err)
{
	if (!d->ops->fma_kernel)
		return 0;
	void *mod = NULL, *args[8];
	struct peak_op op = { .args = args };
	double flops = 0, t = 0;
	struct dev_launch l;
	struct rt_sb ferr = RT_SB_INIT;
	int rc = d->ops->fma_kernel(d->priv, &mod, &op.kern, &l, args, &op.nargs, &flops, &ferr);
	if (rc && rc != RT_ENOTSUP)
		rt_errf(err, rc, "%s", ferr.buf);
	rt_sb_release(&ferr);
	if (rc)
		return rc == RT_ENOTSUP ? 0 : rc;
	op.l = &l;
	rc = peak_median(d, &op, 2, 7, &t, err);
	/* The FMA kernel's scratch (args[0]) is owned by the backend's module
	 * state and freed with it. */
	d->ops->module_free(d->priv, mod);
	if (!rc)
		*gflops = flops / t / 1e9;
	return rc;
}

int dev_peak_measure(struct dev *d, size_t bytes, struct dev_peak *out, struct rt_sb *err)
{
	out->copy_gbps = NAN;
	out->gflops = NAN;
	if (!bytes)
		bytes = strcmp(d->ops->name, "host") ? (size_t)1 << 30 : (size_t)64 << 20;
	out->copy_bytes = (double)bytes;
	struct peak_op op = { .bytes = bytes };
	double t = 0;
	int rc = dev_alloc(d, bytes, &op.src, err);
	if (!rc)
		rc = dev_alloc(d, bytes, &op.dst, err);
	if (!rc)
		rc = dev_fill(d, op.src, 1, bytes, err);
	if (!rc)
		rc = dev_fill(d, op.dst, 2, bytes, err);
	if (!rc)
		rc = peak_median(d, &op, 3, 15, &t, err);
	dev_free(d, op.src);
	dev_free(d, op.dst);
	if (rc)
		return rc;
	out->copy_gbps = 2.0 * (double)bytes / t / 1e9;
	return peak_fma(d, &out->gflops, err);
}
