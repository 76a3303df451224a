/*
 * executor: where the measurements' processes run. `executor: local` (the
 * default, today's behaviour) or `executor: slurm`, or the long form
 *   executor: {kind: slurm, slurm: {partition, account, gres: "gpu:1",
 *              time: 30m, sbatch: [extra options], srun: [extra options]}}
 * The runner uses these in runner/campaign/exec_slurm.c; see docs/scale.md.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

const char *const spec_exec_kind_names[] = { "local", "slurm", NULL };

static const struct spec_field slurm_fields[] = {
	{ "partition", SF_STR, SPEC_OFF(struct spec_slurm, partition), 0, FL_OMIT0, .help = "sbatch --partition" },
	{ "account", SF_STR, SPEC_OFF(struct spec_slurm, account), 0, FL_OMIT0, .help = "sbatch --account" },
	{ "gres", SF_STR, SPEC_OFF(struct spec_slurm, gres), 0, FL_OMIT0, .help = "sbatch --gres, e.g. gpu:1" },
	{ "time", SF_DUR, SPEC_OFF(struct spec_slurm, time_s), 0, FL_LO | FL_OMIT0, 0,
	  .help = "time limit of the holding job; 0: the partition's" },
	{ "sbatch", SF_STRV, SPEC_OFF(struct spec_slurm, sbatch), 0, FL_OMIT0, .help = "extra sbatch options" },
	{ "srun", SF_STRV, SPEC_OFF(struct spec_slurm, srun), 0, FL_OMIT0, .help = "extra srun options per step" },
	{ 0 }
};

static const struct spec_field exec_fields[] = {
	{ "kind", SF_ENUM, SPEC_OFF(struct spec_exec, kind), .names = spec_exec_kind_names,
	  .help = "local or slurm" },
	{ "slurm", SF_CUSTOM, 0, 0, 0, .help = "the Slurm job and steps" },
	{ 0 }
};

/* A value passed to sbatch as one word: no spaces or '=' tricks needed, but
 * an empty one or one with white space is a mistake worth naming. */
static void check_word(struct spec_ld *ld, yaml_node_t *m, const char *path, const char *key,
		       const char *v)
{
	if (!v)
		return;
	bool bad = !*v;
	for (const char *p = v; *p; p++)
		bad |= *p == ' ' || *p == '\t' || *p == '\n';
	if (bad) {
		char *kp = spec_path_join(path, key);
		spec_lerr(ld, spec_map_get(ld, m, key), kp, "expected one word, got '%s'", v);
		free(kp);
	}
}

/* gres is NAME[:TYPE][:COUNT] (sbatch(1) --gres), several joined by ','. */
static void check_gres(struct spec_ld *ld, yaml_node_t *m, const char *path, const char *g)
{
	if (!g)
		return;
	size_t n = strlen(g);
	bool ok = spec_ident_ok(g, ":,-.") && g[0] != ':' && g[n - 1] != ':' && !strstr(g, "::");
	if (!ok) {
		char *kp = spec_path_join(path, "gres");
		spec_lerr(ld, spec_map_get(ld, m, "gres"), kp,
			  "expected NAME[:TYPE][:COUNT] as sbatch --gres takes it (gpu:1), got '%s'", g);
		free(kp);
	}
}

static void parse_slurm(struct spec_ld *ld, yaml_node_t *v, const char *path, struct spec_slurm *sl)
{
	if (spec_is_null(v) || !spec_want_map(ld, v, path))
		return;
	spec_parse_fields(ld, v, path, sl, slurm_fields, NULL);
	check_word(ld, v, path, "partition", sl->partition);
	check_word(ld, v, path, "account", sl->account);
	check_gres(ld, v, path, sl->gres);
}

void spec_parse_exec(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		     const struct spec_field *f)
{
	struct spec_exec *x = &((struct spec *)base)->exec;
	(void)f;
	const char *s = spec_scalar(v);
	if (s) { /* executor: local | slurm */
		int k = spec_name_index(ld, v, path, "executor", s, spec_exec_kind_names);
		if (k >= 0)
			x->kind = (enum spec_exec_kind)k;
		return;
	}
	if (!spec_want_map(ld, v, path))
		return;
	spec_parse_fields(ld, v, path, x, exec_fields, NULL);
	yaml_node_t *sv = spec_map_get(ld, v, "slurm");
	if (!sv)
		return;
	char *sp = spec_path_join(path, "slurm");
	if (x->kind != SPEC_EXEC_SLURM && !spec_is_null(sv))
		spec_lerr(ld, sv, sp, "slurm settings with kind %s (set kind: slurm)",
			  spec_exec_kind_names[x->kind]);
	else
		parse_slurm(ld, sv, sp, &x->slurm);
	free(sp);
}

json_t *spec_dump_exec(const void *base, const struct spec_field *f)
{
	const struct spec_exec *x = &((const struct spec *)base)->exec;
	(void)f;
	if (x->kind == SPEC_EXEC_LOCAL)
		return NULL; /* the default: older specs dump as they did */
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(spec_exec_kind_names[x->kind]));
	json_object_set_new(o, "slurm", spec_fields_json(&x->slurm, slurm_fields));
	return o;
}

void spec_exec_release(struct spec_exec *x)
{
	free(x->slurm.partition);
	free(x->slurm.account);
	free(x->slurm.gres);
	rt_strv_release(&x->slurm.sbatch);
	rt_strv_release(&x->slurm.srun);
	memset(x, 0, sizeof(*x));
}
