/*
 * `ratchet devices [--json] [--peak] [--backend NAME] [--peak-bytes N]`:
 * every device of every backend with its identity, and for a backend that
 * was not built or has no device one line saying so (exit 0: that is an
 * answer, not an error). --peak measures each device's copy bandwidth and
 * compute ceiling and stores them in device_peaks, where the kernel
 * benchmark finds them for its percent-of-peak metrics. A device the
 * vendor table knows (dev_peaks.c) also shows its datasheet peaks per
 * datatype with their source; --datasheet prints the whole table.
 */
#include "runner/cmd/cmd.h"
#include "db/devices.h"
#include "runner/device/dev.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct rt_cmd_help help = {
	"ratchet devices [--json] [--peak] [--backend NAME] [--peak-bytes N]",
	"list devices of every backend; --peak measures ceilings",
	"Backends: host (always built), cuda, hip, ze. A backend that was not built\n"
	"prints \"NAME: not built (...)\"; one without a driver or GPU prints\n"
	"\"NAME: no device: REASON\". Both exit 0.\n"
	"--peak measures device-to-device copy bandwidth (bytes read + written per\n"
	"second) and an FMA-loop compute ceiling, and stores both in device_peaks.\n"
	"A device in the vendor table also shows its datasheet peaks (dense TFLOP/s\n"
	"of fp8, bf16, fp16, fp32, mxfp4) and their source; --datasheet prints the table.",
};

/* A datasheet row: one line of figures and one of its source. */
static void print_row(const struct dev_peak_row *r, const char *indent)
{
	printf("%sdatasheet peaks of %s (dense TFLOP/s):", indent, r->device);
	for (int t = 0; t < DEV_DT_N; t++)
		if (isnan(r->tflops[t]))
			printf(" %s -", dev_dtype_name(t));
		else
			printf(" %s %g", dev_dtype_name(t), r->tflops[t]);
	printf("\n%s  source: %s\n", indent, r->source);
}

static json_t *row_json(const struct dev_peak_row *r)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "match", r->match, "device", r->device, "source",
			      r->source);
	for (int t = 0; t < DEV_DT_N; t++)
		json_object_set_new(o, dev_dtype_name(t),
				    isnan(r->tflops[t]) ? json_null() : json_real(r->tflops[t]));
	return o;
}

/* `devices --datasheet`: every row of the vendor table. */
static int print_datasheet(const struct rt_ctx *ctx)
{
	size_t n;
	const struct dev_peak_row *r = dev_peak_rows(&n);
	json_t *a = ctx->json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++)
		if (a)
			json_array_append_new(a, row_json(&r[i]));
		else
			print_row(&r[i], "");
	if (a) {
		char *s = json_dumps(a, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(a);
	}
	return RT_EXIT_OK;
}

static json_t *info_json(const struct dev_info *in)
{
	char id[192];
	dev_identity(in, id, sizeof(id));
	return json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:i, s:i, s:s, s:s, s:s}",
			 "backend", in->backend, "index", in->index, "name", in->name, "vendor",
			 in->vendor, "driver_version", in->driver_version, "runtime_version",
			 in->runtime_version, "arch", in->arch, "memory_bytes",
			 (json_int_t)in->mem_bytes, "l2_bytes", (json_int_t)in->l2_bytes,
			 "compute_units", in->compute_units, "clock_mhz", in->clock_mhz,
			 "memory_clock_mhz", in->mem_clock_mhz, "memory_bus_bits", in->mem_bus_bits,
			 "uuid", in->uuid, "pci_id", in->pci_id, "identity", id);
}

static void print_info(const struct rt_ctx *ctx, const struct dev_info *in)
{
	printf("%s%s:%d%s %s", cmd_color(ctx, "bold"), in->backend, in->index,
	       cmd_color(ctx, "reset"), in->name);
	if (in->vendor[0])
		printf(" (%s)", in->vendor);
	printf(", %d compute units", in->compute_units);
	if (in->clock_mhz)
		printf(", %d MHz", in->clock_mhz);
	printf(", %.1f GiB", (double)in->mem_bytes / (1024.0 * 1024 * 1024));
	if (in->arch[0])
		printf(", %s", in->arch);
	printf("\n    driver %s, runtime %s", in->driver_version[0] ? in->driver_version : "?",
	       in->runtime_version[0] ? in->runtime_version : "?");
	if (in->uuid[0])
		printf(", uuid %s", in->uuid);
	if (in->pci_id[0])
		printf(", pci %s", in->pci_id);
	printf("\n");
}

/* Measure and store one device's peaks; fills j (may be NULL). */
static int do_peak(const struct rt_ctx *ctx, const struct dev_info *in, long bytes, json_t *j,
		   struct rt_sb *err)
{
	struct dev *d = NULL;
	int rc = dev_open(in->backend, in->index, &d, err);
	if (rc)
		return rc;
	struct dev_peak p;
	rc = dev_peak_measure(d, bytes > 0 ? (size_t)bytes : 0, &p, err);
	dev_close(d);
	if (rc)
		return rc;
	char key[128];
	dev_peak_key(in, key, sizeof(key));
	rc = db_device_peak_add(ctx->db, in->backend, key, in->name, "copy_gbps", p.copy_gbps, err);
	if (!rc && isfinite(p.gflops))
		rc = db_device_peak_add(ctx->db, in->backend, key, in->name, "gflops", p.gflops, err);
	if (rc)
		return rc;
	if (j) {
		json_object_set_new(j, "peak_copy_gbps", json_real(p.copy_gbps));
		json_object_set_new(j, "peak_gflops", isfinite(p.gflops) ? json_real(p.gflops) : json_null());
	} else {
		printf("    peak: copy %.1f GB/s (read + written, %.0f MiB buffer)", p.copy_gbps,
		       p.copy_bytes / (1024.0 * 1024));
		if (isfinite(p.gflops))
			printf(", compute %.1f GFLOP/s (fp32 FMA loop)", p.gflops);
		printf(", stored as %s\n", key);
	}
	return 0;
}

int cmd_devices(int argc, char **argv, struct rt_ctx *ctx)
{
	bool peak = false, datasheet = false;
	const char *only = NULL;
	long peak_bytes = 0;
	const struct rt_opt opts[] = {
		{ "peak", 0, RT_OPT_FLAG, &peak, NULL,
		  "measure copy bandwidth and compute ceiling, store them in device_peaks" },
		{ "backend", 'b', RT_OPT_STR, &only, "NAME", "only this backend (host, cuda, hip, ze)" },
		{ "datasheet", 0, RT_OPT_FLAG, &datasheet, NULL,
		  "print the vendor peaks per datatype with their sources" },
		{ "peak-bytes", 0, RT_OPT_INT, &peak_bytes, "N",
		  "buffer size of the copy measurement (default 64 MiB host, 1 GiB GPU)" },
		{ 0 },
	};
	int npos = 0, code = 0;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos) {
		cmd_error(ctx, "devices: unexpected argument '%s'", argv[1]);
		return RT_EXIT_USAGE;
	}
	if (datasheet)
		return print_datasheet(ctx);
	struct rt_sb err = RT_SB_INIT;
	if (only && !dev_backend_find(only, &err)) {
		cmd_error(ctx, "devices: %s", err.buf);
		rt_sb_release(&err);
		return RT_EXIT_USAGE;
	}
	size_t nb = 0;
	const struct dev_ops *const *all = dev_backends(&nb);
	json_t *root = ctx->json ? json_object() : NULL;
	json_t *jb = ctx->json ? json_array() : NULL;
	int exit_code = RT_EXIT_OK;
	for (size_t b = 0; b < nb; b++) {
		const struct dev_ops *ops = all[b];
		if (only && strcmp(only, ops->name))
			continue;
		rt_sb_reset(&err);
		int n = 0;
		int rc = ops->count(&n, &err);
		json_t *jo = NULL, *jd = NULL;
		if (root) {
			jo = json_pack("{s:s, s:b}", "backend", ops->name, "built", ops->built);
			jd = json_array();
			json_object_set_new(jo, "status",
					    json_string(rc == RT_ENOTBUILT ? "not built"
							: rc ? "no device" : "ok"));
			if (rc)
				json_object_set_new(jo, "message", json_string(err.buf));
			json_array_append_new(jb, jo);
			json_object_set_new(jo, "devices", jd);
		} else if (rc) {
			printf("%s%s%s\n", cmd_color(ctx, "dim"), err.buf, cmd_color(ctx, "reset"));
		}
		for (int i = 0; !rc && i < n; i++) {
			struct dev_info in;
			rt_sb_reset(&err);
			if (ops->info(i, &in, &err)) {
				if (!root)
					printf("%s:%d: %s\n", ops->name, i, err.buf);
				continue;
			}
			json_t *ji = root ? info_json(&in) : NULL;
			const struct dev_peak_row *row = dev_peak_lookup(in.name);
			if (ji) {
				json_array_append_new(jd, ji);
				if (row)
					json_object_set_new(ji, "datasheet_peaks", row_json(row));
			} else {
				print_info(ctx, &in);
				if (row)
					print_row(row, "    ");
			}
			if (peak) {
				rt_sb_reset(&err);
				if (!ctx->quiet && !root && isatty(2))
					fprintf(stderr, "    measuring peaks of %s:%d...\n", in.backend,
						in.index);
				if (do_peak(ctx, &in, peak_bytes, ji, &err)) {
					cmd_error(ctx, "devices: %s:%d: peak: %s", in.backend, in.index,
						  err.buf);
					exit_code = RT_EXIT_RUNTIME;
				}
			}
		}
	}
	if (root) {
		json_object_set_new(root, "backends", jb);
		char *s = json_dumps(root, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(root);
	}
	rt_sb_release(&err);
	return exit_code;
}
