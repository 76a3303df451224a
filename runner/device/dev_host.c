/*
 * The host backend: the CPU as one device. Kernels are functions in a shared
 * object loaded with dlopen (ABI in dev_host_kernel.h); a module given as a
 * .c file is first compiled with the system compiler into a cache folder
 * keyed by the source's sha256, so a campaign can patch kernel source.
 * Launches run the kernel once per block, on RATCHET_HOST_THREADS threads
 * (default 1), and are timed with CLOCK_MONOTONIC. Always built; CI and the
 * CPU demo use it.
 */
#include "runner/device/dev.h"
#include "runner/base/proc.h"
#include "runner/device/dev_host_kernel.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct host_dev {
	int64_t t0;               /* timer_begin's clock */
	int threads;              /* worker threads per launch */
};

struct host_mod {
	void *dl;                 /* dlopen handle, NULL for the built-in FMA module */
	float *scratch;           /* built-in FMA module: its buffer */
	dev_ptr scratch_arg;      /* built-in FMA module: args[0] value */
	int iters;                /* built-in FMA module: args[1] value */
};

static int host_count(int *n, struct rt_sb *err)
{
	*n = 1;
	return 0;
}

/* "key : value" from /proc/cpuinfo's first processor. */
static void cpuinfo(const char *key, char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
			continue;
		char *c = strchr(line, ':');
		if (!c)
			continue;
		c++;
		while (*c == ' ')
			c++;
		c[strcspn(c, "\n")] = 0;
		DEV_FMT(out, n, "%s", c);
		break;
	}
	if (f)
		fclose(f);
}

static int host_info(int index, struct dev_info *o, struct rt_sb *err)
{
	memset(o, 0, sizeof(*o));
	DEV_FMT(o->backend, sizeof(o->backend), "host");
	o->index = index;
	cpuinfo("model name", o->name, sizeof(o->name));
	if (!o->name[0])
		DEV_FMT(o->name, sizeof(o->name), "cpu");
	cpuinfo("vendor_id", o->vendor, sizeof(o->vendor));
	char mhz[32] = "";
	cpuinfo("cpu MHz", mhz, sizeof(mhz));
	o->clock_mhz = (int)atof(mhz);
	struct utsname u;
	if (!uname(&u)) {
		DEV_FMT(o->driver_version, sizeof(o->driver_version), "linux %s", u.release);
		DEV_FMT(o->arch, sizeof(o->arch), "%s", u.machine);
	}
	DEV_FMT(o->runtime_version, sizeof(o->runtime_version), "glibc %s", gnu_get_libc_version());
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0)
		o->mem_bytes = (uint64_t)pages * (uint64_t)psz;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->compute_units = cpus > 0 ? (int)cpus : 1;
#ifdef _SC_LEVEL3_CACHE_SIZE
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (l3 > 0)
		o->l2_bytes = (uint64_t)l3;
#endif
	FILE *f = fopen("/etc/machine-id", "r");
	if (f) {
		char id[64] = "";
		if (fgets(id, sizeof(id), f)) {
			id[strcspn(id, "\n")] = 0;
			DEV_FMT(o->uuid, sizeof(o->uuid), "host-%s", id);
		}
		fclose(f);
	}
	return 0;
}

static int host_open(int index, void **d, struct rt_sb *err)
{
	struct host_dev *h = xcalloc(1, sizeof(*h));
	const char *t = getenv("RATCHET_HOST_THREADS");
	h->threads = t && atoi(t) > 0 ? atoi(t) : 1;
	*d = h;
	return 0;
}

static void host_close(void *d)
{
	free(d);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Compile a .c kernel source into a cached shared object; *so is owned by the caller. */
static int compile_source(const char *src, char **so, struct rt_sb *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = rt_read_file(src, &text, &len, err);
	if (rc)
		return rt_errf(err, rc, "host: module %s: cannot read", src);
	const char *cc = getenv("CC");
	if (!cc || !*cc)
		cc = "cc";
	const char *flags = getenv("RATCHET_HOST_CFLAGS");
	if (!flags || !*flags)
		flags = "-O3 -march=native";
	/* The key covers the source, the compiler, the flags and the source's
	 * folder (relative #includes). */
	struct rt_sb key = RT_SB_INIT;
	rt_sb_add(&key, text, len);
	rt_sb_addf(&key, "\n%s\n%s\n%s", cc, flags, src);
	char hex[65];
	rt_sha256_hex(key.buf, key.len, hex);
	rt_sb_release(&key);
	char *text_libs = text;

	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/ratchet-host-%d", tmp && *tmp ? tmp : "/tmp", (int)getuid());
	rc = rt_mkdirs(dir, err);
	if (rc) {
		free(dir);
		free(text);
		return rc;
	}
	char *out = xasprintf("%s/%.24s.so", dir, hex);
	if (rt_file_exists(out)) {
		free(dir);
		free(text);
		*so = out;
		return 0;
	}
	char *part = xasprintf("%s/%.24s.%d.so", dir, hex, (int)getpid());
	char *log = xasprintf("%s/%.24s.%d.log", dir, hex, (int)getpid());
	free(dir);
	/* argv: cc FLAGS... -std=gnu11 -shared -fPIC -o part src -lm */
	char *fl = xstrdup(flags);
	char *argv[72];
	int ac = 0;
	argv[ac++] = (char *)cc;
	for (char *save = NULL, *t = strtok_r(fl, " \t", &save); t && ac < 50;
	     t = strtok_r(NULL, " \t", &save))
		argv[ac++] = t;
	argv[ac++] = "-std=gnu11";
	argv[ac++] = "-shared";
	argv[ac++] = "-fPIC";
	argv[ac++] = "-o";
	argv[ac++] = part;
	argv[ac++] = (char *)src;
	/* Libraries the source asks for in a "ratchet-host-libs: -lfoo" line. */
	char *libs = NULL;
	const char *tag = strstr(text_libs, "ratchet-host-libs:");
	if (tag) {
		tag += strlen("ratchet-host-libs:");
		libs = xstrndup(tag, strcspn(tag, "\n"));
		for (char *save = NULL, *t = strtok_r(libs, " \t", &save); t && ac < 60;
		     t = strtok_r(NULL, " \t", &save))
			if (!strncmp(t, "-l", 2))
				argv[ac++] = t;
	}
	argv[ac++] = "-lm";
	argv[ac] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int st = 0;
	int sp = posix_spawnp(&pid, cc, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (sp) {
		rc = rt_errf(err, RT_EPROC, "host: module %s: cannot run %s: %s", src, cc, strerror(sp));
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			char *msg = NULL;
			size_t ml = 0;
			rt_read_file(log, &msg, &ml, NULL);
			if (msg && ml > 2000)
				msg[2000] = 0;
			rc = rt_errf(err, RT_EPROC, "host: module %s: %s failed: %s", src, cc,
				     msg ? msg : "");
			free(msg);
		} else if (rename(part, out)) {
			rc = rt_errf(err, RT_EIO, "host: module %s: rename %s: %s", src, out,
				     strerror(errno));
		}
	}
	unlink(log);
	unlink(part);
	free(libs);
	free(text_libs);
	free(fl);
	free(part);
	free(log);
	if (rc) {
		free(out);
		return rc;
	}
	*so = out;
	return 0;
}

static int host_module_load(void *d, const char *path, void **mod, struct rt_sb *err)
{
	char *so = NULL;
	int rc;
	if (ends_with(path, ".c")) {
		rc = compile_source(path, &so, err);
		if (rc)
			return rc;
	} else {
		/* dlopen searches the library path unless the name has a slash. */
		so = strchr(path, '/') ? xstrdup(path) : xasprintf("./%s", path);
	}
	void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	free(so);
	if (!dl)
		return rt_errf(err, RT_EIO, "host: module %s: %s", path, dlerror());
	dev_host_init_fn init;
	*(void **)&init = dlsym(dl, "ratchet_host_init");
	if (init && init(path)) {
		dlclose(dl);
		return rt_errf(err, RT_EIO, "host: module %s: ratchet_host_init failed", path);
	}
	struct host_mod *m = xcalloc(1, sizeof(*m));
	m->dl = dl;
	*mod = m;
	return 0;
}

static void host_module_free(void *d, void *mod)
{
	struct host_mod *m = mod;
	if (!m)
		return;
	if (m->dl)
		dlclose(m->dl);
	free(m->scratch);
	free(m);
}

static int host_kernel_get(void *d, void *mod, const char *name, void **kern, struct rt_sb *err)
{
	struct host_mod *m = mod;
	void *f = m->dl ? dlsym(m->dl, name) : NULL;
	if (!f)
		return rt_errf(err, RT_ENOENT, "host: kernel '%s' not found in module", name);
	*kern = f;
	return 0;
}

static int host_alloc(void *d, size_t n, dev_ptr *out, struct rt_sb *err)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, n))
		return rt_errf(err, RT_ENOMEM, "host: cannot allocate %zu bytes", n);
	*out = (dev_ptr)(uintptr_t)p;
	return 0;
}

static void host_free(void *d, dev_ptr p)
{
	free((void *)(uintptr_t)p);
}

static int host_h2d(void *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err)
{
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

static int host_d2h(void *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}

static int host_d2d(void *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err)
{
	memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return 0;
}

static int host_fill(void *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err)
{
	memset((void *)(uintptr_t)dst, byte, n);
	return 0;
}

struct host_run {
	dev_host_kernel_fn fn;           /* the kernel */
	const struct dev_launch *l;      /* geometry */
	void **args;                     /* its arguments */
	atomic_ulong next;               /* next block to run */
	unsigned long nblocks;           /* grid volume */
};

struct host_worker {
	struct host_run *run;            /* shared state */
	int index;                       /* worker number */
};

static void *host_work(void *arg)
{
	struct host_worker *w = arg;
	struct host_run *r = w->run;
	struct dev_host_launch hl;
	memset(&hl, 0, sizeof(hl));
	memcpy(hl.grid, r->l->grid, sizeof(hl.grid));
	memcpy(hl.block, r->l->block, sizeof(hl.block));
	hl.shared_bytes = r->l->shared_bytes;
	hl.shared = hl.shared_bytes ? xcalloc(1, hl.shared_bytes) : NULL;
	hl.worker = w->index;
	for (;;) {
		unsigned long b = atomic_fetch_add(&r->next, 1);
		if (b >= r->nblocks)
			break;
		hl.block_idx[0] = (unsigned)(b % hl.grid[0]);
		hl.block_idx[1] = (unsigned)(b / hl.grid[0] % hl.grid[1]);
		hl.block_idx[2] = (unsigned)(b / hl.grid[0] / hl.grid[1]);
		r->fn(&hl, r->args);
	}
	free(hl.shared);
	return NULL;
}

static int host_launch(void *d, void *kern, const struct dev_launch *l, void **args, size_t nargs,
		       struct rt_sb *err)
{
	struct host_dev *h = d;
	struct host_run r;
	*(void **)&r.fn = kern;
	r.l = l;
	r.args = args;
	atomic_init(&r.next, 0);
	r.nblocks = (unsigned long)l->grid[0] * l->grid[1] * l->grid[2];
	int nt = h->threads;
	if ((unsigned long)nt > r.nblocks)
		nt = (int)r.nblocks;
	if (nt <= 1) {
		struct host_worker w = { &r, 0 };
		host_work(&w);
		return 0;
	}
	pthread_t *th = xcalloc((size_t)nt, sizeof(*th));
	struct host_worker *ws = xcalloc((size_t)nt, sizeof(*ws));
	int started = 0;
	for (int i = 1; i < nt; i++) {
		ws[i].run = &r;
		ws[i].index = i;
		if (pthread_create(&th[i], NULL, host_work, &ws[i]))
			break;
		started = i;
	}
	ws[0].run = &r;
	host_work(&ws[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	free(th);
	free(ws);
	return 0;
}

static int host_sync(void *d, struct rt_sb *err)
{
	return 0;
}

static int host_timer_begin(void *d, struct rt_sb *err)
{
	((struct host_dev *)d)->t0 = rt_now_ns();
	return 0;
}

static int host_timer_end(void *d, double *seconds, struct rt_sb *err)
{
	*seconds = (double)(rt_now_ns() - ((struct host_dev *)d)->t0) / 1e9;
	return 0;
}

/* The CPU's clock and the first thermal zone; under RATCHET_TELEMETRY_FAKE
 * the readings of that file instead (dev_telemetry_fake.c, for tests). */
static int host_telemetry(int index, struct dev_telemetry *out, struct rt_sb *err)
{
	const char *fake = getenv("RATCHET_TELEMETRY_FAKE");
	if (fake && *fake)
		return dev_telemetry_fake(fake, out, err);
	if (index != 0)
		return rt_errf(err, RT_ENODEV, "host: no device %d (1 found)", index);
	char mhz[32] = "";
	cpuinfo("cpu MHz", mhz, sizeof(mhz));
	if (mhz[0])
		out->clock_mhz = atof(mhz);
	FILE *f = fopen("/sys/class/thermal/thermal_zone0/temp", "r");
	if (f) {
		long mc;
		if (fscanf(f, "%ld", &mc) == 1)
			out->temp_c = (double)mc / 1000.0;
		fclose(f);
	}
	return 0;
}

/* The host's memory is RAM: what the processes hold resident. */
static int host_proc_mem(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *err)
{
	(void)err;
	*bytes = 0;
	for (size_t i = 0; i < n; i++)
		*bytes += rt_proc_rss(pids[i]);
	return 0;
}

/* The built-in FMA loop: 8 independent chains of 16 lanes per element so the
 * compiler can keep several vector FMAs in flight. FLOPs: 2 per FMA. */
#define HOST_FMA_LANES 128
static void host_fma_kernel(const struct dev_host_launch *l, void **args)
{
	float *x = *(float **)args[0];
	int iters = *(int *)args[1];
	float *p = x + (size_t)l->block_idx[0] * HOST_FMA_LANES;
	float v[HOST_FMA_LANES];
	for (int j = 0; j < HOST_FMA_LANES; j++)
		v[j] = p[j];
	for (int i = 0; i < iters; i++)
		for (int j = 0; j < HOST_FMA_LANES; j++)
			v[j] = v[j] * 0.999999f + 0.000001f;
	for (int j = 0; j < HOST_FMA_LANES; j++)
		p[j] = v[j];
}

static int host_fma(void *d, void **mod, void **kern, struct dev_launch *l, void **args,
		    size_t *nargs, double *flops, struct rt_sb *err)
{
	struct host_dev *h = d;
	struct host_mod *m = xcalloc(1, sizeof(*m));
	unsigned blocks = (unsigned)h->threads;
	m->scratch = xcalloc((size_t)blocks * HOST_FMA_LANES, sizeof(float));
	m->scratch_arg = (dev_ptr)(uintptr_t)m->scratch;
	m->iters = 200000;
	*mod = m;
	*kern = *(void **)&(dev_host_kernel_fn){ host_fma_kernel };
	memset(l, 0, sizeof(*l));
	l->grid[0] = blocks;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = l->block[1] = l->block[2] = 1;
	args[0] = &m->scratch_arg;
	args[1] = &m->iters;
	*nargs = 2;
	*flops = 2.0 * HOST_FMA_LANES * (double)m->iters * blocks;
	return 0;
}

const struct dev_ops dev_host_ops = {
	.name = "host",
	.built = true,
	.count = host_count,
	.info = host_info,
	.open = host_open,
	.close = host_close,
	.module_load = host_module_load,
	.module_free = host_module_free,
	.kernel_get = host_kernel_get,
	.alloc = host_alloc,
	.free = host_free,
	.h2d = host_h2d,
	.d2h = host_d2h,
	.d2d = host_d2d,
	.fill = host_fill,
	.launch = host_launch,
	.sync = host_sync,
	.timer_begin = host_timer_begin,
	.timer_end = host_timer_end,
	.telemetry = host_telemetry,
	.fma_kernel = host_fma,
	.proc_mem = host_proc_mem,
};
