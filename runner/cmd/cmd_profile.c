/*
 * `ratchet profile import FILE`: read a profiler's output (PyTorch/Kineto
 * Chrome trace, Nsight Systems SQLite export, rocprofv3 kernel trace CSV,
 * unitrace device timing), classify its kernels into ops, store it with its
 * per-op and per-kernel sums, and record what it suggests as findings.
 * Also the helpers the research commands share (cmd_profile.h).
 */
#include "runner/cmd/cmd_profile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/profiles.h"
#include "variants/var.h"

int cmd_research_exit(int rc)
{
	return rc == RT_EUSAGE || rc == RT_EINVAL || rc == RT_EPARSE || rc == RT_ENOENT ||
			       rc == RT_EIO ?
		       RT_EXIT_USAGE :
		       RT_EXIT_RUNTIME;
}

int cmd_research_env_load(const struct rt_ctx *ctx, const char *cmd, int64_t campaign_id,
			  const char *spec_path, struct cmd_research_env *env)
{
	memset(env, 0, sizeof(*env));
	struct rt_sb err = RT_SB_INIT;
	int rc = 0;
	if (campaign_id) {
		struct db_campaign c = { 0 };
		rc = db_campaign_get(ctx->db, campaign_id, &c, &err);
		/* The spec as it was run, read from its folder, not from here: a
		 * relative spec_path names it from where `ratchet run` was started,
		 * and the campaign's workdir is that folder, absolute. */
		char *at = NULL;
		if (!rc) {
			const char *base = strrchr(c.spec_path, '/') ? strrchr(c.spec_path, '/') + 1 : c.spec_path;
			at = c.spec_path[0] == '/' || !c.workdir ? xstrdup(c.spec_path)
								 : xasprintf("%s/%s", c.workdir, base);
			rc = spec_load_text(at, c.spec_text, strlen(c.spec_text), &env->spec, &err);
			/* a spec with its own relative workdir: as it was read then */
			if (!rc && c.workdir && strcmp(env->spec->workdir, c.workdir)) {
				spec_free(env->spec);
				env->spec = NULL;
				rc = spec_load_text(c.spec_path, c.spec_text, strlen(c.spec_text), &env->spec, &err);
			}
		}
		free(at);
		db_campaign_release(&c);
	} else if (spec_path) {
		rc = spec_load(spec_path, &env->spec, &err);
	}
	struct research_opmap_def def;
	spec_profile_def(env->spec, &def);
	if (!rc)
		rc = research_opmap_new(&def, &env->map, &err);
	if (!rc && env->spec)
		env->n_tables = spec_research_tables(env->spec, &env->tables, &env->paths);
	if (rc) {
		cmd_error(ctx, "%s: %s", cmd, cmd_plain(&err));
		cmd_research_env_release(env);
	}
	rt_sb_release(&err);
	return rc ? cmd_research_exit(rc) : 0;
}

void cmd_research_env_release(struct cmd_research_env *env)
{
	for (size_t i = 0; i < env->n_tables; i++)
		free(env->paths[i]);
	free(env->paths);
	free(env->tables);
	research_opmap_free(env->map);
	spec_free(env->spec);
	memset(env, 0, sizeof(*env));
}

void cmd_print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2));
	printf("%s\n", s ? s : "null");
	free(s);
	json_decref(v);
}

static json_t *finding_json(const struct db_finding *f)
{
	json_t *v = f->variant ? json_loads(f->variant, 0, NULL) : NULL;
	json_t *o = json_pack("{s:I, s:s, s:s, s:s?, s:s?}", "id", (json_int_t)f->id, "kind", f->kind,
			      "subject", f->subject, "detail", f->detail, "evidence", f->evidence);
	json_object_set_new(o, "share", isnan(f->share) ? json_null() : json_real(f->share));
	json_object_set_new(o, "speedup", isnan(f->speedup) ? json_null() : json_real(f->speedup));
	json_object_set_new(o, "bound", isnan(f->potential) ? json_null() : json_real(f->potential));
	json_object_set_new(o, "profile_id", f->profile_id ? json_integer(f->profile_id) : json_null());
	json_object_set_new(o, "iteration_id", f->iteration_id ? json_integer(f->iteration_id) : json_null());
	json_object_set_new(o, "variant", v ? v : json_null());
	return o;
}

void cmd_findings_print(const struct rt_ctx *ctx, const struct db_finding *f, size_t n, long top)
{
	size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n;
	if (ctx->json) {
		json_t *a = json_array();
		for (size_t i = 0; i < shown; i++)
			json_array_append_new(a, finding_json(&f[i]));
		cmd_print_json(a);
		return;
	}
	/* the id is what `ratchet propose FINDING` takes; the rank is the order */
	printf("  %-4s %-5s %7s  %-22s %-16s %s\n", "rank", "id", "bound", "share x speedup", "kind",
	       "finding");
	for (size_t i = 0; i < shown; i++) {
		char sk[32] = "-";
		if (!isnan(f[i].share) && !isnan(f[i].speedup))
			snprintf(sk, sizeof(sk), "%.1f%% x %.2g", f[i].share * 100, f[i].speedup);
		printf("  %-4zu %-5lld %6.1f%%  %-22s %-16s %s%s%s\n", i + 1, (long long)f[i].id,
		       isnan(f[i].potential) ? 0 : f[i].potential * 100, sk, f[i].kind,
		       f[i].detail ? f[i].detail : f[i].subject, f[i].variant ? "  [variant]" : "",
		       "");
		if (f[i].evidence)
			printf("             %s%s%s\n", cmd_color(ctx, "dim"), f[i].evidence, cmd_color(ctx, "reset"));
	}
	if (shown < n)
		printf("  ... %zu more (--top %zu)\n", n - shown, n);
}

static const struct rt_cmd_help help = {
	"ratchet profile import FILE... [--format F] [--steps N] [--campaign ID | --spec SPEC] [--json]",
	"Import a profile: a PyTorch profiler Chrome trace (vLLM's --profile), an Nsight Systems\n"
	"SQLite export, a rocprofv3 kernel-trace CSV, a unitrace device-timing report or an Nsight\n"
	"Compute CSV export (several files of one format, one per rank or process, make one\n"
	"profile). Kernels are\n"
	"classified into ops (attention, gemm, norm, activation, quantize, communication, other) by the\n"
	"spec's profile: map over the built-in one, summed per op and per kernel and shape, and stored;\n"
	"each op's share is of kernel time (share) and, where the trace is timed, of wall time (wall);\n"
	"what the profile suggests is recorded as findings (see `ratchet findings`).",
	"The format is detected from the file unless --format names it (chrome, nsys, rocprof,\n"
	"unitrace, ncu). Steps come from the trace's step annotations (ProfilerStep#N, NVTX ranges) or\n"
	"--steps N; calls per step need them. A trace is streamed: a 1 GB file imports in constant\n"
	"memory. Exit codes: 0 imported, 2 usage or an unreadable profile, 3 runtime error.",
};

void cmd_profile_print(const struct rt_ctx *ctx, struct db *db, int64_t id, size_t nfind)
{
	struct db_profile p = { 0 };
	struct db_profile_op *ops = NULL;
	struct db_profile_kernel *k = NULL;
	size_t nops = 0, nk = 0;
	if (db_profile_get(db, id, &p, NULL) || db_profile_ops_list(db, id, &ops, &nops, NULL) ||
	    db_profile_kernels_list(db, id, &k, &nk, NULL))
		goto out;
	if (ctx->json) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:f, s:I, s:I, s:[], s:[]}", "profile_id",
				      (json_int_t)id, "path", p.path, "format", p.format, "total_us",
				      p.total_us, "launches", (json_int_t)p.launches, "findings",
				      (json_int_t)nfind, "ops", "kernels");
		json_object_set_new(o, "steps", p.steps >= 0 ? json_integer(p.steps) : json_null());
		json_object_set_new(o, "wall_us", isnan(p.wall_us) ? json_null() : json_real(p.wall_us));
		json_object_set_new(o, "wall_from", p.wall_from ? json_string(p.wall_from) : json_null());
		json_object_set_new(o, "host_launches", p.host_launches >= 0 ? json_integer(p.host_launches) : json_null());
		json_object_set_new(o, "graph_launches", p.graph_launches >= 0 ? json_integer(p.graph_launches) : json_null());
		json_object_set_new(o, "short_kernels", p.short_kernels >= 0 ? json_integer(p.short_kernels) : json_null());
		for (size_t i = 0; i < nops; i++)
			json_array_append_new(json_object_get(o, "ops"),
					      json_pack("{s:s, s:f, s:f, s:o, s:I, s:o}", "op", ops[i].op, "us", ops[i].us,
							"share", ops[i].share, "wall_share", isnan(ops[i].wall_share) ?
							json_null() : json_real(ops[i].wall_share),
							"calls", (json_int_t)ops[i].calls,
							"calls_per_step", isnan(ops[i].calls_per_step) ? json_null() :
							json_real(ops[i].calls_per_step)));
		for (size_t i = 0; i < nk; i++)
			json_array_append_new(json_object_get(o, "kernels"),
					      json_pack("{s:s, s:s, s:s?, s:b, s:f, s:f, s:I}", "name", k[i].name,
							"op", k[i].op, "shape", k[i].shape, "fallback", k[i].fallback,
							"us", k[i].us, "share", k[i].share, "calls", (json_int_t)k[i].calls));
		cmd_print_json(o);
		goto out;
	}
	printf("profile %lld: %s (%s): %.0f us of kernels, %ld launches", (long long)id, p.path, p.format,
	       p.total_us, p.launches);
	if (p.steps >= 0)
		printf(", %ld steps (%s)", p.steps, p.steps_from);
	if (!isnan(p.wall_us))
		printf("\n  wall time %.0f us (%s): the GPU idle %.1f%% of it; %ld kernels launched one at a "
		       "time, %ld graph launches, %ld kernels under %.0f us", p.wall_us,
		       p.wall_from ? p.wall_from : "?",
		       p.total_us < p.wall_us ? 100 * (1 - p.total_us / p.wall_us) : 0.0, p.host_launches,
		       p.graph_launches, p.short_kernels, RESEARCH_SHORT_US);
	printf("\n\n  %-14s %7s %7s %14s %10s %10s\n", "op", "share", "wall", "time (us)", "calls",
	       "per step");
	for (size_t i = 0; i < nops; i++) {
		if (!ops[i].calls)
			continue;
		printf("  %-14s %6.1f%% ", ops[i].op, ops[i].share * 100);
		if (isnan(ops[i].wall_share))
			printf("%7s", "-");
		else
			printf("%6.1f%%", ops[i].wall_share * 100);
		printf(" %14.0f %10ld", ops[i].us, ops[i].calls);
		if (!isnan(ops[i].calls_per_step))
			printf(" %10.1f", ops[i].calls_per_step);
		printf("\n");
	}
	printf("\n  hottest kernels:\n");
	for (size_t i = 0; i < nk && i < 10; i++)
		printf("  %6.1f%% %-13s %s%s%s%s\n", k[i].share * 100, k[i].op, k[i].name,
		       k[i].shape ? "  shape " : "", k[i].shape ? k[i].shape : "",
		       k[i].fallback ? "  (default kernel)" : "");
	printf("\n%zu finding%s recorded: `ratchet findings` ranks them\n", nfind, nfind == 1 ? "" : "s");
out:
	db_profile_release(&p);
	db_profile_ops_free(ops, nops);
	db_profile_kernels_free(k, nk);
}

int cmd_profile_import_as(struct rt_ctx *ctx, const char *cmd, const struct research_import *in,
			  const struct cmd_research_env *env, int64_t *profile_id, size_t *nfind)
{
	struct rt_sb err = RT_SB_INIT;
	const struct research_format *f = NULL;
	int rc = research_import_find(ctx->db, in, env->map, env->tables, env->n_tables, profile_id, &f,
				      nfind, &err);
	if (rc)
		cmd_error(ctx, "%s: %s", cmd, cmd_plain(&err));
	rt_sb_release(&err);
	return rc ? cmd_research_exit(rc) : 0;
}

int cmd_profile(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *format = NULL, *spec = NULL;
	long steps = 0, campaign = 0;
	const struct rt_opt opts[] = {
		{ "format", 'f', RT_OPT_STR, &format, "F", "chrome, nsys, rocprof, unitrace or ncu (default: detect)" },
		{ "steps", 0, RT_OPT_INT, &steps, "N", "steps the profile covers (default: its step annotations)" },
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "the campaign it belongs to (its spec's profile: map and tables)" },
		{ "spec", 's', RT_OPT_STR, &spec, "SPEC", "a spec whose profile: map and tables to use" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos < 2 || strcmp(argv[1], "import") || steps < 0) {
		cmd_error(ctx, "profile: expected `import FILE...`%s", steps < 0 ? " and --steps >= 0" : "");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	struct cmd_research_env env;
	if ((code = cmd_research_env_load(ctx, "profile", campaign, spec, &env)))
		return code;
	struct research_import in = { (const char *const *)argv + 2, (size_t)npos - 1, format, steps,
				      campaign, 0 };
	int64_t id = 0;
	size_t nfind = 0;
	/* the profile and its findings, or nothing */
	struct rt_sb err = RT_SB_INIT;
	if (db_begin(ctx->db, &err)) {
		cmd_error(ctx, "profile: %s", cmd_plain(&err));
		code = RT_EXIT_RUNTIME;
	} else if ((code = cmd_profile_import_as(ctx, "profile", &in, &env, &id, &nfind))) {
		db_rollback(ctx->db);
	} else if (db_commit(ctx->db, &err)) {
		cmd_error(ctx, "profile: %s", cmd_plain(&err));
		db_rollback(ctx->db);
		code = RT_EXIT_RUNTIME;
	}
	rt_sb_release(&err);
	if (!code)
		cmd_profile_print(ctx, ctx->db, id, nfind);
	cmd_research_env_release(&env);
	return code;
}
