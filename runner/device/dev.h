/*
 * Device backends behind one ops table, and the registry that holds them.
 *
 * A backend (host, cuda, hip, ze) lists its devices with their identity, and
 * on an opened device loads modules, finds kernels, allocates and copies
 * memory, launches kernels with a grid, a block, dynamic shared memory and
 * arguments, and times launches with device events. Every backend is always
 * in the registry: one that was not built is a stub whose every call answers
 * RT_ENOTBUILT ("hip: not built"), and one with no driver or device answers
 * RT_ENODEV ("cuda: no device: ..."), so callers never #ifdef.
 *
 * Arguments follow the CUDA convention: args[i] points at the value of
 * argument i (for a buffer, at its dev_ptr). Device memory is named by a
 * dev_ptr, an address-sized integer (CUdeviceptr, a HIP or Level Zero
 * pointer, or a host pointer).
 *
 * Ownership: dev_open() returns a struct dev the caller frees with
 * dev_close(); modules belong to their device and are freed with
 * dev_module_free() (or by dev_close); kernels belong to their module.
 */
#ifndef RT_DEV_H
#define RT_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "runner/base/rt.h"

typedef uint64_t dev_ptr;

/* Identity of one device, as far as the backend can tell. */
struct dev_info {
	char backend[8];          /* host, cuda, hip, ze */
	int index;                /* index within the backend */
	char name[128];           /* marketing name, e.g. "NVIDIA H200" */
	char vendor[64];          /* e.g. "NVIDIA", "GenuineIntel" */
	char driver_version[64];  /* driver (kernel release for host) */
	char runtime_version[64]; /* runtime / API version (libc for host) */
	char arch[32];            /* sm_90, gfx942, x86_64, ... */
	uint64_t mem_bytes;       /* device memory (host: physical RAM) */
	uint64_t l2_bytes;        /* last-level cache size, 0 when unknown */
	int compute_units;        /* SMs, CUs, EUs or online CPUs */
	int clock_mhz;            /* core clock, 0 when unknown */
	int mem_clock_mhz;        /* memory clock, 0 when unknown */
	int mem_bus_bits;         /* memory bus width, 0 when unknown */
	char uuid[64];            /* device UUID (host: machine-id), "" when unknown */
	char pci_id[32];          /* PCI bus id, "" when unknown */
};

/* Why the device held its clocks down, as bits of dev_telemetry.throttle:
 * each backend maps its driver's reasons onto these (NVML's clocks event
 * reasons, Level Zero's zes_freq_throttle_reason_flags_t). name, bit, what. */
#define DEV_THROTTLE_REASONS(X)                                                          \
	X(DEV_THR_POWER, "power", 0x1)     /* power cap or power brake */                 \
	X(DEV_THR_THERMAL, "thermal", 0x2) /* software or hardware thermal slowdown */     \
	X(DEV_THR_HW, "hw-slowdown", 0x4)  /* hardware slowdown of another cause */        \
	X(DEV_THR_APP, "app-clocks", 0x8)  /* clocks held by a setting (application, sync boost) */ \
	X(DEV_THR_OTHER, "other", 0x10)    /* a reason the mapping does not know */
enum dev_throttle {
#define DEV_THR_ENUM(e, name, bit) e = bit,
	DEV_THROTTLE_REASONS(DEV_THR_ENUM)
#undef DEV_THR_ENUM
};
/* The reasons that mark a sample throttled: thermal or power. */
#define DEV_THR_MARKS ((uint64_t)(DEV_THR_POWER | DEV_THR_THERMAL))
/* The names of the bits set in mask, joined by ','; "none" for 0. */
void dev_throttle_names(uint64_t mask, char *out, size_t n);

/* Live readings of one device; fields are NAN when the backend cannot
 * tell, throttle_known false when it cannot tell the reasons. */
struct dev_telemetry {
	double temp_c;            /* temperature */
	double power_w;           /* board power */
	double clock_mhz;         /* current core (SM, graphics) clock */
	double mem_clock_mhz;     /* current memory clock */
	double max_clock_mhz;     /* nominal maximum core clock */
	double mem_used_bytes;    /* memory in use */
	uint64_t throttle;        /* DEV_THR_* bits of the reasons active now */
	bool throttle_known;      /* the backend can tell throttle reasons */
};
/* Every field unknown. */
void dev_telemetry_clear(struct dev_telemetry *t);

/* Launch geometry. */
struct dev_launch {
	unsigned grid[3];         /* blocks per dimension, each >= 1 */
	unsigned block[3];        /* threads per block per dimension, each >= 1 */
	unsigned shared_bytes;    /* dynamic shared memory per block */
	const size_t *arg_sizes;  /* bytes of each argument's value (ze needs them), or NULL */
};

/*
 * The ops table one backend implements. `d` is the backend's private state
 * for an opened device; module and kernel handles are the backend's own.
 * Every function returns 0 or a negative RT_E* and appends "backend: what:
 * detail" to err; the codes each may return are listed with it. Any driver
 * call that fails gives RT_EIO, or RT_ENOMEM when the device is out of
 * memory. A stub (backend not built) has count alone.
 */
struct dev_ops {
	const char *name;                                     /* registry name */
	bool built;                                           /* false for a stub */
	/* Number of devices. RT_ENOTBUILT (stub), RT_ENODEV (no driver or GPU). */
	int (*count)(int *n, struct rt_sb *err);
	/* Identity of device index. RT_ENODEV, RT_EIO. */
	int (*info)(int index, struct dev_info *out, struct rt_sb *err);
	/* RT_EIO, RT_ENOMEM. */
	int (*open)(int index, void **d, struct rt_sb *err);
	void (*close)(void *d);
	/* The file exists (dev_module_load checked). RT_EIO (driver or dlopen
	 * refused it), RT_EPROC (host: a .c module did not compile), RT_ENOMEM. */
	int (*module_load)(void *d, const char *path, void **mod, struct rt_sb *err);
	void (*module_free)(void *d, void *mod);
	/* RT_ENOENT (host: no such function), RT_EIO. */
	int (*kernel_get)(void *d, void *mod, const char *name, void **kern, struct rt_sb *err);
	/* RT_ENOMEM, RT_EIO. */
	int (*alloc)(void *d, size_t n, dev_ptr *out, struct rt_sb *err);
	void (*free)(void *d, dev_ptr p);
	/* Copies and fill (n > 0): RT_EIO. */
	int (*h2d)(void *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err);
	int (*d2h)(void *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err);
	int (*d2d)(void *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err);
	int (*fill)(void *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err);
	/* Grid and block are >= 1 (dev_launch checked). RT_EIO; ze: RT_EINVAL
	 * (no arg_sizes), RT_ENOTSUP (dynamic shared memory). */
	int (*launch)(void *d, void *kern, const struct dev_launch *l, void **args, size_t nargs,
		      struct rt_sb *err);
	/* RT_EIO. */
	int (*sync)(void *d, struct rt_sb *err);
	/* Device-event timing: begin records a start event, end records a stop
	 * event, waits for it and returns the seconds between them. RT_EIO. */
	int (*timer_begin)(void *d, struct rt_sb *err);
	int (*timer_end)(void *d, double *seconds, struct rt_sb *err);
	/* Optional (NULL: dev_telemetry answers RT_ENOTSUP): live readings of
	 * device index, which need no opened device (a management library:
	 * NVML, amdsmi, Sysman), so a sampler may read a device an engine
	 * holds. out is cleared; fills what it can. RT_ENODEV (library or
	 * device missing, with why), RT_EIO (it refused every reading). */
	int (*telemetry)(int index, struct dev_telemetry *out, struct rt_sb *err);
	/* Optional: module and kernel of a built-in FMA loop for `devices
	 * --peak`, with the FLOPs one launch of `l` does. RT_ENOTSUP, RT_EIO,
	 * RT_ENOMEM. */
	int (*fma_kernel)(void *d, void **mod, void **kern, struct dev_launch *l, void **args,
			  size_t *nargs, double *flops, struct rt_sb *err);
	/* Optional (NULL: "not supported"): the memory that the processes pids
	 * hold on every device of the backend, summed into *bytes. Needs no
	 * opened device. RT_ENODEV (driver library or device missing), RT_EIO
	 * (the driver refused, or cannot tell per process). */
	int (*proc_mem)(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *err);
};

extern const struct dev_ops dev_host_ops;
extern const struct dev_ops dev_cuda_ops;
extern const struct dev_ops dev_hip_ops;
extern const struct dev_ops dev_ze_ops;

/* ---- registry ---- */
/* Every backend, built or not, in a fixed order (host, cuda, hip, ze). */
const struct dev_ops *const *dev_backends(size_t *n);
/* By name; NULL (with "unknown backend 'x' (did you mean ...)" in err) if none. */
const struct dev_ops *dev_backend_find(const char *name, struct rt_sb *err);

/* Device memory held by the processes pids (an engine's tree), summed
 * over the GPU backends that can tell (cuda: NVML); the host backend's
 * answer (their RSS) is not counted. Returns how many backends answered;
 * why gets "backend: reason" for each that could not ("cuda: no device:
 * libnvidia-ml.so.1: cannot open shared object file"). */
int dev_proc_mem(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *why);
/* NVML's per-process memory (dev_nvml.c), the cuda backend's proc_mem,
 * built or not: the library is dlopen'ed. */
int dev_nvml_proc_mem(const pid_t *pids, size_t n, uint64_t *bytes, struct rt_sb *err);

/* NVML's readings (dev_nvml.c), the cuda backend's telemetry, built or
 * not: device uuid ("GPU-...", as the cuda backend writes it) or, when uuid
 * is NULL or "", NVML's index. */
int dev_nvml_telemetry(const char *uuid, int index, struct dev_telemetry *out, struct rt_sb *err);
/* amdsmi's readings (dev_amdsmi.c), the hip backend's telemetry, built or
 * not: libamd_smi.so is dlopen'ed. The GPU at PCI bus id pci_id
 * ("0000:c1:00.0", as hipDeviceGetPCIBusId writes it) or, when pci_id is
 * NULL or "", amdsmi's index: amdsmi lists every GPU in its own order and
 * ignores ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, so only the bus id
 * finds the GPU that HIP's index means in a pinned pool worker. */
int dev_amdsmi_telemetry(const char *pci_id, int index, struct dev_telemetry *out, struct rt_sb *err);

/* A device's ids (UUID, PCI bus id) by index, asked of the backend's info
 * op once per index: a sampler reads telemetry every period, and the
 * management libraries (NVML, amdsmi) find the device by these ids, not by
 * the runtime's index. */
struct dev_id_cache {
	pthread_mutex_t mu;
	bool asked[64];       /* info was asked for this index */
	char uuid[64][64];    /* its answer, "" when unknown */
	char pci_id[64][32];
};
#define DEV_ID_CACHE_INIT { .mu = PTHREAD_MUTEX_INITIALIZER }
/* Copies index's ids into uuid and pci_id ("" when unknown or index is out
 * of the cache's range). */
void dev_ids_cached(struct dev_id_cache *c, int (*info)(int index, struct dev_info *o, struct rt_sb *err), int index,
		    char uuid[64], char pci_id[32]);
/* Power from an energy counter (amdsmi, Sysman): the last reading of one
 * device, and the watts between it and a new one (NAN for the first, or
 * when the counter went back); safe from any thread. */
struct dev_energy {
	double joules;            /* the last reading */
	double seconds;           /* its timestamp */
	bool have;                /* there is a last reading */
};
double dev_energy_watts(struct dev_energy *last, double joules, double seconds);
/* A stand-in for a driver, for tests: the host backend's telemetry reads
 * the file RATCHET_TELEMETRY_FAKE names, at every call, when it is set.
 * One reading of whitespace-separated key=value words mirroring struct
 * dev_telemetry: sm_clock_mhz, mem_clock_mhz, max_clock_mhz, power_w,
 * temp_c, mem_used_bytes, throttle=thermal,power (names of
 * DEV_THROTTLE_REASONS, or none). RT_EIO (unreadable), RT_EINVAL (a bad
 * word, named in err). */
int dev_telemetry_fake(const char *path, struct dev_telemetry *out, struct rt_sb *err);
/* Readings of device index of backend (by name) without opening it. */
int dev_telemetry_read(const char *backend, int index, struct dev_telemetry *out,
		       struct rt_sb *err);

/* ---- an opened device ---- */
struct dev {
	const struct dev_ops *ops; /* its backend */
	void *priv;                /* the backend's state */
	struct dev_info info;      /* identity, filled at open */
};

struct dev_module {
	struct dev *dev;           /* owner */
	void *h;                   /* the backend's handle */
	char *path;                /* as loaded */
};

struct dev_kernel {
	struct dev_module *mod;    /* owner */
	void *h;                   /* the backend's handle */
	char *name;                /* function name */
};

/* Open device `index` of backend `backend`. *out is freed with dev_close. */
int dev_open(const char *backend, int index, struct dev **out, struct rt_sb *err);
void dev_close(struct dev *d);

/* Load a module file (.so or .c for host; .cubin/.ptx/.fatbin for cuda; a
 * code object for hip; .spv for ze); RT_ENOENT when there is no such file.
 * *out is freed with dev_module_free. */
int dev_module_load(struct dev *d, const char *path, struct dev_module **out, struct rt_sb *err);
void dev_module_free(struct dev_module *m);
/* Find a kernel; *out is freed with dev_kernel_free (before its module). */
int dev_kernel_get(struct dev_module *m, const char *name, struct dev_kernel **out,
		   struct rt_sb *err);
void dev_kernel_free(struct dev_kernel *k);

int dev_alloc(struct dev *d, size_t n, dev_ptr *out, struct rt_sb *err);
void dev_free(struct dev *d, dev_ptr p);
int dev_h2d(struct dev *d, dev_ptr dst, const void *src, size_t n, struct rt_sb *err);
int dev_d2h(struct dev *d, void *dst, dev_ptr src, size_t n, struct rt_sb *err);
int dev_d2d(struct dev *d, dev_ptr dst, dev_ptr src, size_t n, struct rt_sb *err);
int dev_fill(struct dev *d, dev_ptr dst, uint8_t byte, size_t n, struct rt_sb *err);
int dev_launch(struct dev *d, struct dev_kernel *k, const struct dev_launch *l, void **args,
	       size_t nargs, struct rt_sb *err);
int dev_sync(struct dev *d, struct rt_sb *err);
int dev_timer_begin(struct dev *d, struct rt_sb *err);
int dev_timer_end(struct dev *d, double *seconds, struct rt_sb *err);
/* RT_ENOTSUP when the backend has no telemetry. */
int dev_telemetry(struct dev *d, struct dev_telemetry *out, struct rt_sb *err);

/* ---- identity ---- */
/* One line that names the device exactly: backend, name, UUID or PCI id,
 * driver. Two measurements may be compared only when these are equal. */
void dev_identity(const struct dev_info *in, char *out, size_t n);
/* Key used for device_peaks: UUID, else PCI id, else backend:index:name. */
void dev_peak_key(const struct dev_info *in, char *out, size_t n);

/* One identity fact (key/value), for an iteration's environment facts. */
struct dev_fact {
	char key[32];             /* e.g. "device.name" */
	char value[160];          /* its value as text */
};
/* Fill up to max facts; returns how many. */
size_t dev_facts(const struct dev_info *in, struct dev_fact *out, size_t max);

/* ---- ceilings (`ratchet devices --peak`) ---- */
struct dev_peak {
	double copy_gbps;         /* device-to-device copy, (read + written) bytes / s / 1e9 */
	double gflops;            /* FMA loop, NAN when the backend has none */
	double copy_bytes;        /* bytes of the buffer copied */
};
/* Measure copy bandwidth (median of a few d2d copies of `bytes`) and, where
 * the backend has an FMA kernel, a compute ceiling. bytes 0: a default. */
int dev_peak_measure(struct dev *d, size_t bytes, struct dev_peak *out, struct rt_sb *err);

/* ---- vendor peaks per datatype (dev_peaks.c) ---- */
enum dev_dtype { DEV_DT_FP8, DEV_DT_BF16, DEV_DT_FP16, DEV_DT_FP32, DEV_DT_MXFP4, DEV_DT_N };
/* One device's datasheet figures. */
struct dev_peak_row {
	const char *match;          /* substring of dev_info.name that selects the row */
	const char *device;         /* the product the figures are for */
	double tflops[DEV_DT_N];    /* dense TFLOP/s per datatype, NAN: no such datapath */
	const char *source;         /* the vendor document: title, URL */
};
/* fp8, bf16, fp16, fp32, mxfp4. */
const char *dev_dtype_name(enum dev_dtype t);
/* The whole table. */
const struct dev_peak_row *dev_peak_rows(size_t *n);
/* The row for a device name, or NULL. */
const struct dev_peak_row *dev_peak_lookup(const char *name);

/* ---- helpers for the backends (dev_*.c) ---- */
/* snprintf into a fixed field that truncates on purpose (identity strings
 * from drivers); never warns about truncation. */
void dev_fmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define DEV_FMT dev_fmt

/* One driver entry point a backend resolves with dlsym. */
struct dev_sym {
	const char *name; /* symbol name */
	void **slot;      /* where its address goes */
};

/* A driver library that a backend opens at first use, so the binary starts
 * on machines without it. */
struct dev_driver {
	pthread_once_t once; /* runs load once */
	void (*load)(void);  /* opens the library (dev_dl_open), initialises the
				driver and counts devices into ndev, or says why not */
	char why[512];       /* why the driver is unusable, "" when usable */
	int ndev;            /* devices found */
};

/* Open the first of libs that dlopen accepts (it stays open for the life of
 * the process) and resolve every sym. Returns 0, or RT_ENODEV with the
 * reason in why: the first library's dlopen error, or "LIB has no SYM". */
int dev_dl_open(const char *const *libs, size_t nlibs, const struct dev_sym *syms, size_t nsyms,
		char *why, size_t why_n);
/* The count op of such a backend: loads the driver once, then *n devices,
 * or RT_ENODEV "<backend>: no device: <why>". */
int dev_driver_count(struct dev_driver *drv, const char *backend, int *n, struct rt_sb *err);
/* Start of the info op of such a backend: the driver is usable and has
 * device index (else RT_ENODEV), and *o is zeroed with backend and index. */
int dev_driver_info_init(struct dev_driver *drv, const char *backend, int index,
			 struct dev_info *o, struct rt_sb *err);
/* A 16-byte GPU UUID in nvidia-smi's form,
 * GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (the cuda and hip backends). */
void dev_fmt_gpu_uuid(char *out, size_t n, const unsigned char b[16]);

#endif
