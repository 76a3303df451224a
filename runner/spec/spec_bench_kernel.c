/*
 * Kernel benchmarks: backend, module and kernel name, arguments (buffers
 * and scalars, in launch order), launch geometry, reference kernel and the
 * sampling settings, with their defaults and cross checks.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

const struct spec_field spec_karg_buf_fields[] = {
	{ "buffer", SF_STR, SPEC_OFF(struct spec_karg, name), 0, FL_REQ, .help = "argument name" },
	{ "dtype", SF_ENUM, SPEC_OFF(struct spec_karg, dtype), .names = spec_dtype_names, .help = "element type" },
	{ "count", SF_U64, SPEC_OFF(struct spec_karg, count), 0, FL_REQ | FL_LO, 1, .help = "elements" },
	{ "output", SF_BOOL, SPEC_OFF(struct spec_karg, output), .help = "written by the kernel and checked" },
	{ "init", SF_ENUM, SPEC_OFF(struct spec_karg, init), .names = spec_init_names,
	  .help = "random, zero, value or file" },
	{ "value", SF_DBL, SPEC_OFF(struct spec_karg, value), 0, FL_OMIT0, .help = "fill value (init: value)" },
	{ "file", SF_STR, SPEC_OFF(struct spec_karg, init_file), 0, FL_PATH | FL_OMIT0,
	  .help = "initial bytes (init: file)" },
	{ "reference", SF_STR, SPEC_OFF(struct spec_karg, reference_file), 0, FL_PATH | FL_OMIT0,
	  .help = "expected output bytes" },
	{ 0 }
};

const struct spec_field spec_karg_scalar_fields[] = {
	{ "scalar", SF_STR, SPEC_OFF(struct spec_karg, name), 0, FL_REQ, .help = "argument name" },
	{ "dtype", SF_ENUM, SPEC_OFF(struct spec_karg, dtype), 0, FL_REQ, .names = spec_dtype_names,
	  .help = "scalar type" },
	{ "value", SF_DBL, SPEC_OFF(struct spec_karg, value), 0, FL_REQ, .help = "the value" },
	{ 0 }
};

/* One kernel argument: a buffer or a scalar, its name unique. */
static void parse_one_karg(struct spec_ld *ld, yaml_node_t *it, const char *ip, void *arg)
{
	struct spec_kernel *k = arg;
	struct spec_karg *a = &k->args[k->n_args++];
	yaml_node_t *bn = spec_map_get(ld, it, "buffer"), *sn = spec_map_get(ld, it, "scalar");
	if (bn && sn) {
		spec_lerr(ld, it, ip, "an argument is a buffer or a scalar, not both");
	} else if (!bn && !sn) {
		spec_lerr(ld, it, ip, "missing key 'buffer' or 'scalar'");
	} else if (bn) {
		a->kind = SPEC_KARG_BUFFER;
		a->dtype = SPEC_DT_F32;
		spec_parse_fields(ld, it, ip, a, spec_karg_buf_fields, NULL);
		if (!spec_map_get(ld, it, "init"))
			a->init = a->init_file ? SPEC_INIT_FILE
				  : spec_map_get(ld, it, "value") ? SPEC_INIT_VALUE
								  : SPEC_INIT_RANDOM;
		if (a->init == SPEC_INIT_FILE && !a->init_file)
			spec_lerr(ld, it, ip, "init: file needs key 'file'");
		else if (a->init != SPEC_INIT_FILE && a->init_file)
			spec_lerr(ld, it, ip, "'file' needs init: file");
	} else {
		a->kind = SPEC_KARG_SCALAR;
		spec_parse_fields(ld, it, ip, a, spec_karg_scalar_fields, NULL);
	}
	for (size_t j = 0; a->name && j + 1 < k->n_args; j++)
		if (k->args[j].name && !strcmp(k->args[j].name, a->name))
			spec_lerr(ld, it, ip, "duplicate argument name '%s'", a->name);
}

static void parse_kargs(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	struct spec_kernel *k = base;
	if (!spec_want_seq(ld, v, path))
		return;
	k->args = xcalloc(spec_seq_len(v) + 1, sizeof(*k->args));
	spec_seq_each(ld, v, path, parse_one_karg, k);
}

static json_t *dump_kargs(const void *base, const struct spec_field *f)
{
	const struct spec_kernel *k = base;
	json_t *a = json_array();
	for (size_t i = 0; i < k->n_args; i++)
		json_array_append_new(a, spec_fields_json(&k->args[i], k->args[i].kind == SPEC_KARG_BUFFER
									    ? spec_karg_buf_fields
									    : spec_karg_scalar_fields));
	return a;
}

static const struct spec_field launch_table_fields[] = {
	{ "file", SF_STR, SPEC_OFF(struct spec_kernel, launch_table), 0, FL_PATH | FL_OMIT0,
	  .help = "JSON file of launch entries" },
	{ "key", SF_STR, SPEC_OFF(struct spec_kernel, launch_key), 0, FL_OMIT0, .help = "entry key" },
	{ 0 }
};

static const struct spec_field launch_fields[] = {
	{ "grid", SF_DIM3U, SPEC_OFF(struct spec_kernel, grid), 0, FL_OMIT0, .help = "blocks; a number or [x, y, z]" },
	{ "block", SF_DIM3U, SPEC_OFF(struct spec_kernel, block), .help = "threads per block" },
	{ "items", SF_DIM3L, SPEC_OFF(struct spec_kernel, items), 0, FL_OMIT0,
	  .help = "work items; grid = ceil(items / block)" },
	{ "shared", SF_UINT, SPEC_OFF(struct spec_kernel, shared_bytes), .help = "dynamic shared memory (bytes)" },
	{ "table", SF_SUB, .sub = launch_table_fields, .help = "{file, key}: launch geometry from a table" },
	{ 0 }
};

static const struct spec_field reference_fields[] = {
	{ "module", SF_STR, SPEC_OFF(struct spec_kernel, ref_module), 0, FL_PATH | FL_OMIT0,
	  .help = "reference module; default the kernel's" },
	{ "name", SF_STR, SPEC_OFF(struct spec_kernel, ref_name), 0, FL_OMIT0, .help = "reference kernel name" },
	{ 0 }
};

const struct spec_field spec_kernel_fields[] = {
	{ "backend", SF_STR, SPEC_OFF(struct spec_kernel, backend), 0, FL_REQ, .help = "host, cuda, hip or ze" },
	{ "device", SF_INT, SPEC_OFF(struct spec_kernel, device), 0, FL_LO, 0, .help = "device index" },
	{ "module", SF_STR, SPEC_OFF(struct spec_kernel, module), 0, FL_REQ | FL_PATH,
	  .help = ".so, .cubin, .ptx, .fatbin, code object or .spv" },
	{ "name", SF_STR, SPEC_OFF(struct spec_kernel, name), 0, FL_REQ, .help = "kernel function name" },
	{ "args", SF_CUSTOM, 0, 0, 0, .parse = parse_kargs, .dump = dump_kargs,
	  .help = "arguments in launch order" },
	{ "launch", SF_SUB, .sub = launch_fields, .help = "launch geometry" },
	{ "bytes", SF_DBL, SPEC_OFF(struct spec_kernel, bytes), 0, FL_LO, 0, .help = "bytes moved per launch" },
	{ "flops", SF_DBL, SPEC_OFF(struct spec_kernel, flops), 0, FL_LO, 0, .help = "FLOPs per launch" },
	{ "reference", SF_SUB, .sub = reference_fields, .help = "reference kernel {module, name}" },
	{ "max_rel_l2", SF_DBL, SPEC_OFF(struct spec_kernel, max_rel_l2), 0, FL_LO, 0,
	  .help = "correctness bound on relative L2 error" },
	{ "warmup", SF_INT, SPEC_OFF(struct spec_kernel, warmup), 0, FL_LO, 0, .help = "warm-up launches" },
	{ "target_rsd", SF_FRAC, SPEC_OFF(struct spec_kernel, target_rsd), 0, FL_LOX, 0,
	  .help = "stop when the relative std dev is below this" },
	{ "max_time", SF_DUR, SPEC_OFF(struct spec_kernel, max_time_s), 0, FL_LOX, 0,
	  .help = "time budget per measurement (seconds)" },
	{ "min_samples", SF_INT, SPEC_OFF(struct spec_kernel, min_samples), 0, FL_LO, 1, .help = "samples at least" },
	{ "rotate", SF_INT, SPEC_OFF(struct spec_kernel, rotate), 0, FL_LO, 0, .help = "input copies to rotate" },
	{ "flush_l2", SF_BOOL, SPEC_OFF(struct spec_kernel, flush_l2), .help = "flush L2 between launches" },
	{ 0 }
};


void spec_kernel_defaults(struct spec_kernel *k)
{
	k->max_rel_l2 = 1e-5;
	k->warmup = 3;
	k->target_rsd = 0.005;
	k->max_time_s = 5;
	k->min_samples = 10;
}

void spec_kernel_post(struct spec_ld *ld, yaml_node_t *kv, const char *path, struct spec_kernel *k)
{
	if (k->backend) {
		char *bp = spec_path_join(path, "backend");
		spec_name_index(ld, spec_map_get(ld, kv, "backend"), bp, "backend", k->backend,
				spec_backend_names);
		free(bp);
	}
	yaml_node_t *lv = spec_map_get(ld, kv, "launch");
	if (!spec_map_get(ld, lv, "block")) {
		bool host = k->backend && !strcmp(k->backend, "host");
		k->block[0] = host ? 1 : 256;
		k->block[1] = k->block[2] = 1;
	}
	if (k->block[0] == 0 || k->block[1] == 0 || k->block[2] == 0)
		spec_lerr(ld, lv ? lv : kv, path, "launch.block cannot have a 0");
	if (!spec_map_get(ld, lv, "grid"))
		memset(k->grid, 0, sizeof(k->grid));
	if (!spec_map_get(ld, lv, "items"))
		memset(k->items, 0, sizeof(k->items));
	if (k->grid[0] == 0 && k->items[0] == 0 && !k->launch_table)
		spec_lerr(ld, lv ? lv : kv, path, "launch: give grid, items or table");
	if (k->launch_table && !k->launch_key)
		spec_lerr(ld, lv, path, "launch.table needs key");
	if (k->launch_key && !k->launch_table)
		spec_lerr(ld, lv, path, "launch.table.key needs file");
	if (k->ref_module && !k->ref_name)
		spec_lerr(ld, spec_map_get(ld, kv, "reference"), path, "reference needs name");
}

