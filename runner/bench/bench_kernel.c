/*
 * The `kernel:` benchmark (see bench_kernel.h): buffers and scalars from
 * the spec, launch geometry (explicit, from items, or from a launch-table
 * entry), the poison and reference checks, and the NVBench-style timing
 * loop. Dtype conversions are in bench_kernel_dtype.c; random inputs come
 * from runner/base/rand.h.
 */
#include "runner/bench/bench_kernel.h"

#include "db/devices.h"
#include "runner/base/rand.h"
#include "runner/stats/stats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seed of an argument: its name and position, so reordering others keeps it. */
static uint64_t arg_seed(const struct spec_karg *a, size_t index)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = a->name ? a->name : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h ^ (index + 1) * RT_SPLITMIX64_GAMMA;
}

/* Expand placeholders, then make relative paths relative to the workdir. */
static char *expand_path(const char *s, const struct spec_vars *v)
{
	if (!s)
		return NULL;
	struct rt_sb sb = RT_SB_INIT;
	for (const char *p = s; *p;) {
		if (*p == '{') {
			const char *e = strchr(p, '}');
			size_t n = e ? (size_t)(e - p + 1) : 0;
			if (n == 9 && !strncmp(p, "{workdir}", n) && v && v->workdir) {
				rt_sb_adds(&sb, v->workdir);
				p += n;
				continue;
			}
			if (n == 6 && !strncmp(p, "{port}", n) && v) {
				rt_sb_addf(&sb, "%d", v->port);
				p += n;
				continue;
			}
			if (n == 7 && !strncmp(p, "{nonce}", n) && v && v->nonce) {
				rt_sb_adds(&sb, v->nonce);
				p += n;
				continue;
			}
			if (n == 11 && !strncmp(p, "{iteration}", n) && v) {
				rt_sb_addf(&sb, "%ld", v->iteration);
				p += n;
				continue;
			}
		}
		rt_sb_addc(&sb, *p++);
	}
	char *out = rt_sb_detach(&sb, NULL);
	if (out[0] != '/' && v && v->workdir && *v->workdir) {
		char *j = xasprintf("%s/%s", v->workdir, out);
		free(out);
		out = j;
	}
	return out;
}

/* One argument's state during a run. */
struct barg {
	const struct spec_karg *spec;  /* from the spec */
	size_t bytes;                  /* buffer size */
	dev_ptr *copies;               /* buffer: rotation copies (1 unless rotated input) */
	int ncopies;                   /* how many */
	dev_ptr ref_out;               /* output: the reference kernel's buffer */
	dev_ptr cur;                   /* the value passed (a copy, or ref_out) */
	unsigned char scalar[8];       /* scalar value */
};

struct brun {
	const struct spec_kernel *k;   /* the spec */
	const struct spec_vars *vars;  /* placeholder values */
	struct dev *dev;               /* the device */
	struct dev_module *mod, *ref_mod; /* modules (ref_mod may equal mod: then not owned) */
	struct dev_kernel *kern, *ref_kern; /* kernels */
	struct barg *args;             /* one per spec argument */
	void **argv;                   /* launch argument pointers */
	size_t *arg_sizes;             /* bytes of each value */
	dev_ptr flush;                 /* L2 flush buffer, 0 when off */
	size_t flush_bytes;            /* its size */
	const char *name;              /* kernel name for messages */
};

static const char *kname(const struct spec_kernel *k)
{
	return k->name ? k->name : "?";
}

/* Reads the launch-table entry: grid, block, shared_bytes, and optionally
 * kernel (the function to run instead of k->name; *kernel is owned by the
 * caller). */
static int geometry_from_table(const struct spec_kernel *k, const struct spec_vars *vars,
			       struct dev_launch *l, char **kernel, struct rt_sb *err)
{
	char *path = expand_path(k->launch_table, vars);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	int rc = 0;
	if (!root) {
		rc = rt_errf(err, RT_EPARSE, "%s:%d:%d: kernel '%s': launch_table: %s", path, je.line,
			     je.column, kname(k), je.text);
		goto out;
	}
	json_t *e = k->launch_key ? json_object_get(root, k->launch_key) : NULL;
	if (!json_is_object(e)) {
		rc = rt_errf(err, RT_ENOENT, "%s: kernel '%s': launch_table has no entry '%s'", path,
			     kname(k), k->launch_key ? k->launch_key : "(launch_key not set)");
		goto out;
	}
	static const char *const fields[] = { "grid", "block" };
	unsigned *dst[] = { l->grid, l->block };
	for (int f = 0; f < 2; f++) {
		json_t *v = json_object_get(e, fields[f]);
		if (!v)
			continue;
		if (json_is_integer(v) && json_integer_value(v) > 0) {
			dst[f][0] = (unsigned)json_integer_value(v);
			dst[f][1] = dst[f][2] = 1;
		} else if (json_is_array(v) && json_array_size(v) >= 1 && json_array_size(v) <= 3) {
			for (size_t i = 0; i < 3; i++) {
				json_t *x = json_array_get(v, i);
				if (x && (!json_is_integer(x) || json_integer_value(x) < 0)) {
					rc = rt_errf(err, RT_EINVAL,
						     "%s: %s.%s: must be positive integers", path,
						     k->launch_key, fields[f]);
					goto out;
				}
				dst[f][i] = x ? (unsigned)json_integer_value(x) : 1;
			}
		} else {
			rc = rt_errf(err, RT_EINVAL, "%s: %s.%s: must be an integer or [x, y, z]",
				     path, k->launch_key, fields[f]);
			goto out;
		}
	}
	json_t *sh = json_object_get(e, "shared_bytes");
	if (!sh)
		sh = json_object_get(e, "shared");
	if (sh) {
		if (!json_is_integer(sh) || json_integer_value(sh) < 0) {
			rc = rt_errf(err, RT_EINVAL, "%s: %s.shared_bytes: must be a non-negative integer",
				     path, k->launch_key);
			goto out;
		}
		l->shared_bytes = (unsigned)json_integer_value(sh);
	}
	json_t *kn = json_object_get(e, "kernel");
	if (kn) {
		if (!json_is_string(kn) || !*json_string_value(kn)) {
			rc = rt_errf(err, RT_EINVAL, "%s: %s.kernel: must be a function name", path,
				     k->launch_key);
			goto out;
		}
		*kernel = xstrdup(json_string_value(kn));
	}
out:
	json_decref(root);
	free(path);
	return rc;
}

/* Fill block defaults and derive the grid from items where it is 0. */
static void geometry_finish(const struct spec_kernel *k, bool host, struct dev_launch *l)
{
	if (!l->block[0])
		l->block[0] = host ? 1 : 256;
	for (int i = 0; i < 3; i++) {
		if (!l->block[i])
			l->block[i] = 1;
		if (!l->grid[i]) {
			uint64_t it = k->items[i];
			l->grid[i] = it ? (unsigned)((it + l->block[i] - 1) / l->block[i]) : 1;
		}
	}
}

static void spec_geometry(const struct spec_kernel *k, struct dev_launch *l)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->grid, k->grid, sizeof(l->grid));
	memcpy(l->block, k->block, sizeof(l->block));
	l->shared_bytes = k->shared_bytes;
}

static int init_buffer(struct brun *r, size_t index, void *host, struct rt_sb *err)
{
	const struct spec_karg *a = r->args[index].spec;
	size_t n = (size_t)a->count, bytes = r->args[index].bytes;
	if (a->output) {
		memset(host, 0, bytes);
		return 0;
	}
	switch (a->init) {
	case SPEC_INIT_ZERO:
		memset(host, 0, bytes);
		break;
	case SPEC_INIT_VALUE:
		for (size_t i = 0; i < n; i++)
			run_bkernel_elem_set(host, a->dtype, i, a->value);
		break;
	case SPEC_INIT_RANDOM: {
		uint64_t s = arg_seed(a, index);
		for (size_t i = 0; i < n; i++) {
			uint64_t x = rt_splitmix64(&s);
			double v = run_bkernel_dtype_float(a->dtype)
					   ? rt_unit_double(x) * 2.0 - 1.0
					   : (double)(x % (a->dtype == SPEC_DT_U8 ? 256 : 200)) -
						     (a->dtype == SPEC_DT_U8 ? 0 : 100);
			run_bkernel_elem_set(host, a->dtype, i, v);
		}
		break;
	}
	case SPEC_INIT_FILE: {
		char *path = expand_path(a->init_file, r->vars), *data = NULL;
		size_t len = 0;
		int rc = rt_read_file(path, &data, &len, err);
		if (!rc && len != bytes)
			rc = rt_errf(err, RT_EINVAL,
				     "%s: kernel '%s': argument '%s': file has %zu bytes, buffer %zu",
				     path, r->name, a->name, len, bytes);
		if (!rc)
			memcpy(host, data, bytes);
		free(data);
		free(path);
		return rc;
	}
	}
	return 0;
}

static int setup_args(struct brun *r, struct rt_sb *err)
{
	const struct spec_kernel *k = r->k;
	r->args = xcalloc(k->n_args ? k->n_args : 1, sizeof(*r->args));
	r->argv = xcalloc(k->n_args ? k->n_args : 1, sizeof(*r->argv));
	r->arg_sizes = xcalloc(k->n_args ? k->n_args : 1, sizeof(*r->arg_sizes));
	int rc = 0;
	for (size_t i = 0; !rc && i < k->n_args; i++) {
		const struct spec_karg *a = &k->args[i];
		struct barg *b = &r->args[i];
		b->spec = a;
		if (a->kind == SPEC_KARG_SCALAR) {
			run_bkernel_elem_set(b->scalar, a->dtype, 0, a->value);
			r->argv[i] = b->scalar;
			r->arg_sizes[i] = run_bkernel_dtype_size(a->dtype);
			continue;
		}
		if (!a->count)
			return rt_errf(err, RT_EINVAL, "kernel '%s': argument '%s': count must be > 0",
				       r->name, a->name ? a->name : "?");
		b->bytes = (size_t)a->count * run_bkernel_dtype_size(a->dtype);
		b->ncopies = (!a->output && k->rotate > 1) ? k->rotate : 1;
		b->copies = xcalloc((size_t)b->ncopies, sizeof(dev_ptr));
		void *host = malloc(b->bytes);
		if (!host)
			return rt_errf(err, RT_ENOMEM, "kernel '%s': argument '%s': %zu bytes",
				       r->name, a->name, b->bytes);
		rc = init_buffer(r, i, host, err);
		for (int c = 0; !rc && c < b->ncopies; c++) {
			rc = dev_alloc(r->dev, b->bytes, &b->copies[c], err);
			if (!rc)
				rc = dev_h2d(r->dev, b->copies[c], host, b->bytes, err);
		}
		free(host);
		b->cur = b->copies[0];
		r->argv[i] = &b->cur;
		r->arg_sizes[i] = sizeof(dev_ptr);
	}
	return rc;
}

static void use_copy(struct brun *r, long launch)
{
	for (size_t i = 0; i < r->k->n_args; i++) {
		struct barg *b = &r->args[i];
		if (b->ncopies > 1)
			b->cur = b->copies[launch % b->ncopies];
	}
}

static void brun_release(struct brun *r)
{
	for (size_t i = 0; r->args && i < r->k->n_args; i++) {
		for (int c = 0; c < r->args[i].ncopies; c++)
			dev_free(r->dev, r->args[i].copies[c]);
		free(r->args[i].copies);
		dev_free(r->dev, r->args[i].ref_out);
	}
	free(r->args);
	free(r->argv);
	free(r->arg_sizes);
	if (r->flush)
		dev_free(r->dev, r->flush);
	dev_kernel_free(r->ref_kern);
	dev_kernel_free(r->kern);
	if (r->ref_mod && r->ref_mod != r->mod)
		dev_module_free(r->ref_mod);
	dev_module_free(r->mod);
	dev_close(r->dev);
}

static bool is_output(const struct barg *b)
{
	return b->spec->kind == SPEC_KARG_BUFFER && b->spec->output;
}

/* Fill every output with 0xff bytes (the poison), launch the kernel once and
 * wait. *any_out: the kernel has outputs; *need_ref: some output is checked
 * against the reference kernel. */
static int poison_launch(struct brun *r, const struct dev_launch *l, bool *any_out,
			 bool *need_ref, struct rt_sb *err)
{
	const struct spec_kernel *k = r->k;
	int rc = 0;
	*any_out = *need_ref = false;
	for (size_t i = 0; !rc && i < k->n_args; i++) {
		struct barg *b = &r->args[i];
		if (!is_output(b))
			continue;
		*any_out = true;
		rc = dev_fill(r->dev, b->copies[0], 0xff, b->bytes, err);
		if (!b->spec->reference_file && k->ref_name)
			*need_ref = true;
	}
	if (!*any_out || rc)
		return rc;
	use_copy(r, 0);
	rc = dev_launch(r->dev, r->kern, l, r->argv, k->n_args, err);
	return rc ? rc : dev_sync(r->dev, err);
}

/* The reference kernel: same inputs, its own output buffers (ref_out), the
 * spec's geometry. */
static int run_reference(struct brun *r, struct rt_sb *err)
{
	const struct spec_kernel *k = r->k;
	struct dev_launch rl;
	spec_geometry(k, &rl);
	geometry_finish(k, !strcmp(r->dev->ops->name, "host"), &rl);
	rl.arg_sizes = r->arg_sizes;
	int rc = 0;
	for (size_t i = 0; !rc && i < k->n_args; i++) {
		struct barg *b = &r->args[i];
		if (!is_output(b))
			continue;
		rc = dev_alloc(r->dev, b->bytes, &b->ref_out, err);
		if (!rc)
			rc = dev_fill(r->dev, b->ref_out, 0, b->bytes, err);
		b->cur = b->ref_out;
	}
	if (!rc)
		rc = dev_launch(r->dev, r->ref_kern, &rl, r->argv, k->n_args, err);
	if (!rc)
		rc = dev_sync(r->dev, err);
	for (size_t i = 0; i < k->n_args; i++)
		r->args[i].cur = r->args[i].copies ? r->args[i].copies[0] : 0;
	return rc;
}

/* RT_ECHECK naming how many elements of got still hold the poison. */
static int check_written(const struct brun *r, const struct spec_karg *a,
			 const unsigned char *got, struct rt_sb *err)
{
	size_t n = (size_t)a->count, es = run_bkernel_dtype_size(a->dtype);
	size_t unwritten = 0, first = 0;
	for (size_t e = 0; e < n; e++) {
		const unsigned char *p = got + e * es;
		size_t j = 0;
		while (j < es && p[j] == 0xff)
			j++;
		if (j == es && !unwritten++)
			first = e;
	}
	if (!unwritten)
		return 0;
	return rt_errf(err, RT_ECHECK,
		       "kernel '%s': output '%s': %zu of %zu elements not written "
		       "(first at index %zu)",
		       r->name, a->name, unwritten, n, first);
}

/* The expected bytes of output b: its reference file (*refpath names it) or
 * the reference kernel's output; *ref stays NULL when it has neither. */
static int load_reference(const struct brun *r, const struct barg *b, unsigned char **ref,
			  char **refpath, struct rt_sb *err)
{
	const struct spec_karg *a = b->spec;
	*ref = NULL;
	*refpath = NULL;
	if (b->ref_out && !a->reference_file) {
		*ref = xmalloc(b->bytes);
		return dev_d2h(r->dev, *ref, b->ref_out, b->bytes, err);
	}
	if (!a->reference_file)
		return 0;
	size_t len = 0;
	char *data = NULL;
	*refpath = expand_path(a->reference_file, r->vars);
	int rc = rt_read_file(*refpath, &data, &len, err);
	*ref = (unsigned char *)data;
	if (!rc && len != b->bytes)
		rc = rt_errf(err, RT_EINVAL,
			     "%s: kernel '%s': output '%s': reference has %zu bytes, output %zu",
			     *refpath, r->name, a->name, len, b->bytes);
	return rc;
}

/* Relative L2 error of got against want (INFINITY when it is NAN);
 * *nonfinite counts the outputs that are not finite where want is. */
static double rel_l2(const struct spec_karg *a, const unsigned char *got,
		     const unsigned char *want, size_t *nonfinite)
{
	double num = 0, den = 0;
	*nonfinite = 0;
	for (size_t e = 0; e < (size_t)a->count; e++) {
		double g = run_bkernel_elem_get(got, a->dtype, e), w = run_bkernel_elem_get(want, a->dtype, e);
		if (!isfinite(g) && isfinite(w))
			(*nonfinite)++;
		num += (g - w) * (g - w);
		den += w * w;
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	return isnan(rel) ? INFINITY : rel;
}

/* Check one output: poison, then its reference. *rel is its error, NAN
 * when it has no reference. */
static int check_output(struct brun *r, const struct barg *b, double *rel, struct rt_sb *err)
{
	const struct spec_karg *a = b->spec;
	*rel = NAN;
	unsigned char *got = xmalloc(b->bytes), *ref = NULL;
	char *refpath = NULL;
	int rc = dev_d2h(r->dev, got, b->copies[0], b->bytes, err);
	if (!rc)
		rc = check_written(r, a, got, err);
	if (!rc)
		rc = load_reference(r, b, &ref, &refpath, err);
	if (!rc && ref) {
		size_t nonfinite;
		*rel = rel_l2(a, got, ref, &nonfinite);
		double thr = r->k->max_rel_l2 > 0 ? r->k->max_rel_l2 : 1e-5;
		if (!(*rel <= thr))
			rc = rt_errf(err, RT_ECHECK,
				     "kernel '%s': output '%s': relative L2 error %.3g > max %.3g "
				     "(vs %s%s)%s",
				     r->name, a->name, *rel, thr,
				     refpath ? "reference file " : "reference kernel ",
				     refpath ? refpath : r->k->ref_name,
				     nonfinite ? " (output has non-finite values)" : "");
	}
	free(ref);
	free(refpath);
	free(got);
	return rc;
}

/* The poison check, then the reference comparison. */
static int check_outputs(struct brun *r, const struct dev_launch *l,
			 struct run_bkernel_result *out, struct rt_sb *err)
{
	bool any_out, need_ref;
	int rc = poison_launch(r, l, &any_out, &need_ref, err);
	if (!any_out || rc)
		return rc;
	if (need_ref && (rc = run_reference(r, err)))
		return rc;
	double worst = 0;
	bool compared = false;
	for (size_t i = 0; !rc && i < r->k->n_args; i++) {
		double rel;
		if (!is_output(&r->args[i]))
			continue;
		rc = check_output(r, &r->args[i], &rel, err);
		if (isnan(rel))
			continue;
		compared = true;
		if (rel > worst)
			worst = rel;
	}
	out->checked = compared;
	out->rel_l2 = compared ? worst : NAN;
	return rc;
}

static int measure(struct brun *r, const struct dev_launch *l, struct run_bkernel_result *out,
		   struct rt_sb *err)
{
	const struct spec_kernel *k = r->k;
	double target = k->target_rsd > 0 ? k->target_rsd : 0.005;
	double budget = k->max_time_s > 0 ? k->max_time_s : 5.0;
	int min_samples = k->min_samples > 0 ? k->min_samples : 10;
	const long cap = 1000000;
	int rc = 0;
	for (int w = 0; !rc && w < k->warmup; w++) {
		use_copy(r, w);
		rc = dev_launch(r->dev, r->kern, l, r->argv, k->n_args, err);
	}
	if (!rc)
		rc = dev_sync(r->dev, err);
	size_t alloc = 64, n = 0;
	double *s = xmalloc(alloc * sizeof(double));
	double mean = 0, m2 = 0, t0 = rt_now_s(), rsd = INFINITY;
	while (!rc) {
		if (r->flush)
			rc = dev_fill(r->dev, r->flush, (uint8_t)n, r->flush_bytes, err);
		use_copy(r, (long)n);
		if (!rc)
			rc = dev_timer_begin(r->dev, err);
		if (!rc)
			rc = dev_launch(r->dev, r->kern, l, r->argv, k->n_args, err);
		double t = 0;
		if (!rc)
			rc = dev_timer_end(r->dev, &t, err);
		if (rc)
			break;
		if (n == alloc) {
			alloc *= 2;
			s = xrealloc(s, alloc * sizeof(double));
		}
		s[n++] = t;
		double d = t - mean;
		mean += d / (double)n;
		m2 += d * (t - mean);
		rsd = n > 1 && mean > 0 ? sqrt(m2 / (double)(n - 1)) / mean : INFINITY;
		if ((int)n >= min_samples && rsd < target) {
			out->converged = true;
			break;
		}
		if (rt_now_s() - t0 >= budget || (long)n >= cap)
			break;
	}
	if (rc) {
		free(s);
		return rc;
	}
	out->sample_s = s;
	out->samples = (int)n;
	out->rsd = n > 1 ? rsd : 0;
	out->time = run_stats_median(s, n);
	out->time_min = s[0];
	for (size_t i = 1; i < n; i++)
		out->time_min = fmin(out->time_min, s[i]);
	return 0;
}

static int open_device(const struct spec_kernel *k, struct dev **d, struct rt_sb *err)
{
	return dev_open(k->backend ? k->backend : "host", k->device, d, err);
}

int run_bkernel_device(const struct spec_kernel *k, struct dev_info *info, char *identity,
		       size_t n, struct rt_sb *err)
{
	struct dev *d = NULL;
	int rc = open_device(k, &d, err);
	if (rc)
		return rc;
	*info = d->info;
	dev_identity(&d->info, identity, n);
	dev_close(d);
	return 0;
}

void run_bkernel_result_release(struct run_bkernel_result *r)
{
	free(r->sample_s);
	memset(r, 0, sizeof(*r));
}

int run_bkernel_run(const struct spec_kernel *k, const struct spec_vars *vars, struct db *db,
		    struct run_bkernel_result *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	out->gbps = out->gflops = out->pct_peak_bw = out->pct_peak_flops = NAN;
	out->peak_gbps = out->peak_gflops = out->rel_l2 = NAN;
	struct brun r = { .k = k, .vars = vars, .name = kname(k) };
	if (!k->module || !k->name)
		return rt_errf(err, RT_EINVAL, "kernel benchmark: module and name are required");
	int rc = open_device(k, &r.dev, err);
	if (rc)
		return rc;
	out->info = r.dev->info;
	dev_identity(&r.dev->info, out->identity, sizeof(out->identity));
	out->n_facts = dev_facts(&r.dev->info, out->facts, RUN_BKERNEL_MAX_FACTS);

	struct dev_launch l;
	spec_geometry(k, &l);
	char *table_kernel = NULL;
	if (k->launch_table)
		rc = geometry_from_table(k, vars, &l, &table_kernel, err);
	if (table_kernel)
		r.name = table_kernel;
	char *path = expand_path(k->module, vars);
	if (!rc)
		rc = dev_module_load(r.dev, path, &r.mod, err);
	free(path);
	if (!rc)
		rc = dev_kernel_get(r.mod, r.name, &r.kern, err);
	if (!rc && k->ref_name) {
		if (k->ref_module) {
			path = expand_path(k->ref_module, vars);
			rc = dev_module_load(r.dev, path, &r.ref_mod, err);
			free(path);
		} else {
			r.ref_mod = r.mod;
		}
		if (!rc)
			rc = dev_kernel_get(r.ref_mod, k->ref_name, &r.ref_kern, err);
	}

	geometry_finish(k, !strcmp(r.dev->ops->name, "host"), &l);
	if (!rc)
		rc = setup_args(&r, err);
	l.arg_sizes = r.arg_sizes;
	out->launch = l;
	out->launch.arg_sizes = NULL;
	if (!rc)
		rc = check_outputs(&r, &l, out, err);
	if (!rc && k->flush_l2) {
		uint64_t l2 = r.dev->info.l2_bytes ? r.dev->info.l2_bytes : (uint64_t)32 << 20;
		r.flush_bytes = (size_t)(l2 * 2);
		rc = dev_alloc(r.dev, r.flush_bytes, &r.flush, err);
	}
	if (!rc)
		rc = measure(&r, &l, out, err);
	brun_release(&r);
	free(table_kernel);
	if (rc) {
		free(out->sample_s);
		out->sample_s = NULL;
		return rc;
	}
	if (k->bytes > 0 && out->time > 0)
		out->gbps = k->bytes / out->time / 1e9;
	if (k->flops > 0 && out->time > 0)
		out->gflops = k->flops / out->time / 1e9;
	if (db) {
		char key[128];
		dev_peak_key(&out->info, key, sizeof(key));
		struct rt_sb ignore = RT_SB_INIT;
		double v;
		if (!db_device_peak_get(db, out->info.backend, key, "copy_gbps", &v, &ignore) && v > 0)
			out->peak_gbps = v;
		if (!db_device_peak_get(db, out->info.backend, key, "gflops", &v, &ignore) && v > 0)
			out->peak_gflops = v;
		rt_sb_release(&ignore);
	}
	if (isfinite(out->gbps) && isfinite(out->peak_gbps))
		out->pct_peak_bw = 100.0 * out->gbps / out->peak_gbps;
	if (isfinite(out->gflops) && isfinite(out->peak_gflops))
		out->pct_peak_flops = 100.0 * out->gflops / out->peak_gflops;
	return 0;
}

size_t run_bkernel_metrics(const struct run_bkernel_result *r, struct run_bkernel_metric out[8])
{
	const struct run_bkernel_metric all[8] = {
		{ "time", r->time, "s" },
		{ "time_min", r->time_min, "s" },
		{ "gbps", r->gbps, "GB/s" },
		{ "gflops", r->gflops, "GFLOP/s" },
		{ "pct_peak_bw", r->pct_peak_bw, "%" },
		{ "pct_peak_flops", r->pct_peak_flops, "%" },
		{ "rsd", r->rsd, "fraction" },
		{ "samples", (double)r->samples, "count" },
	};
	size_t n = 0;
	for (size_t i = 0; i < 8; i++)
		if (isfinite(all[i].value))
			out[n++] = all[i];
	return n;
}
