/*
 * Pre-flight (campaign.h): what must hold on this machine before anything
 * is measured, checked by `ratchet check --preflight` and by `ratchet run`
 * before it opens a campaign. A spec that loads may still fail hours later,
 * after the baseline, on a file that is not there; each check here finds
 * such a problem up front. Every problem is listed (not only the first),
 * one line each: "file:line:col: key.path: problem; fix", the position of
 * the key that names the thing (spec_pos_of). The checks, in order:
 *
 *   strategy   the strategy is one the loop implements
 *   programs   engine, benchmark and build commands resolve (PATH, or the
 *              path as written), and a script an interpreter runs exists
 *   files      load datasets, kernel modules and their input files
 *   variants   table files, patch files and folders, file sources; then
 *              the kind's own plan on the current tree, so a patch must
 *              pass `git apply --check` and a table entry must fit
 *   space      what a space binds: each table target's file, and its entry
 *              planned as a written variant's; each template and the
 *              program of its build
 *   gate       the GSM8K data is found (gsm8k_find's search)
 *   port       a fixed engine port is free
 *   devices    kernel benchmarks' backend and device index are visible;
 *              an engine's CUDA/HIP/ROCR_VISIBLE_DEVICES or
 *              ZE_AFFINITY_MASK indices exist when ratchet's backend for
 *              it sees devices (a backend not built, or no driver, says
 *              nothing about the engine's devices: not checked)
 *
 * On --resume the port is not checked (an orphaned engine of the killed
 * run may hold it until the resume stops it) and patches are not planned
 * (a kept one is applied already); their files must still exist.
 */
#include "runner/campaign/campaign_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/proc.h"
#include "runner/bench/bench_cmd.h"
#include "runner/device/dev.h"
#include "runner/gate/gsm8k.h"
#include "runner/spec/spec_space.h"

/* One pre-flight run. */
struct pf {
	const struct spec *s;                 /* the spec */
	const struct run_preflight_opts *o;   /* options */
	struct rt_sb *out;                    /* the problems, one per line */
	int n;                                /* problems so far */
};

/* One problem at the key path (the deepest written part of it). */
static void problem(struct pf *p, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The one writer of a problem line: FILE:LINE:COL: PATH: message. */
static void vproblem_at(struct pf *p, struct rt_pos pos, const char *path, const char *fmt, va_list ap)
{
	rt_sb_addf(p->out, "%s:%d:%d: %s: ", p->s->path, pos.line, pos.col, path);
	rt_sb_vaddf(p->out, fmt, ap);
	rt_sb_addc(p->out, '\n');
	p->n++;
}

static void problem(struct pf *p, const char *path, const char *fmt, ...)
{
	struct rt_pos pos;
	spec_pos_of(p->s, path, &pos);
	va_list ap;
	va_start(ap, fmt);
	vproblem_at(p, pos, path, fmt, ap);
	va_end(ap);
}

/* One problem at a position the spec gave (a space's target: the first of
 * its parameters), with the key path to name. */
static void problem_at(struct pf *p, struct rt_pos pos, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem_at(struct pf *p, struct rt_pos pos, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem_at(p, pos, path, fmt, ap);
	va_end(ap);
}

/* A template expanded as at a launch (port and nonce not known yet). */
static char *expand(const struct pf *p, const char *t)
{
	struct spec_vars v = { .port = 0, .workdir = p->s->workdir, .nonce = "", .iteration = 0 };
	return spec_expand(t, &v);
}

/* ---- programs ---- */

/* Interpreters whose first operand is a script file. */
static bool interpreter(const char *prog)
{
	static const char *const names[] = { "sh", "bash", "dash", "zsh", "python", "perl", "node", "ruby" };
	const char *b = strrchr(prog, '/');
	b = b ? b + 1 : prog;
	size_t len = strcspn(b, "0123456789."); /* python3.11 is python */
	for (size_t i = 0; i < RT_ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && !strncmp(b, names[i], len))
			return true;
	return false;
}

/* argv[0] must resolve; an interpreter's script (its first operand, unless
 * -c or -m gives the code) must exist. */
static void check_argv(struct pf *p, const char *path, char *const *argv, const struct rt_envv *env,
		       const char *cwd)
{
	if (!argv || !argv[0])
		return;
	struct rt_envmod *mods = xcalloc(env ? env->n + 1 : 1, sizeof(*mods));
	for (size_t i = 0; env && i < env->n; i++)
		mods[i] = (struct rt_envmod){ env->v[i].name, env->v[i].value };
	char *prog = expand(p, argv[0]);
	char *found = rt_find_program_env(prog, mods, env ? env->n : 0, cwd);
	char *at = xasprintf("%s[0]", path);
	if (!found && strchr(prog, '/'))
		problem(p, at, "program %s does not exist or is not executable; fix: build or install it, "
			"or correct the path (relative to %s)", prog, cwd);
	else if (!found)
		problem(p, at, "program '%s' not found on PATH; fix: install it, add its folder to PATH, "
			"or write its full path", prog);
	free(at);
	for (size_t i = 1; found && interpreter(found) && argv[i]; i++) {
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-m"))
			break;
		if (argv[i][0] == '-')
			continue;
		char *script = expand(p, argv[i]);
		char *abs = script[0] == '/' ? xstrdup(script) : xasprintf("%s/%s", cwd, script);
		if (!rt_file_exists(abs)) {
			char *sp = xasprintf("%s[%zu]", path, i);
			problem(p, sp, "script %s does not exist; fix: create it or correct the path "
				"(relative to %s)", abs, cwd);
			free(sp);
		}
		free(abs);
		free(script);
		break;
	}
	free(found);
	free(prog);
	free(mods);
}

static void check_programs(struct pf *p)
{
	const struct spec *s = p->s;
	if (s->engine.present)
		check_argv(p, "engine.command", s->engine.command.v, &s->engine.env, s->workdir);
	for (size_t b = 0; b < s->n_benches; b++) {
		if (s->benches[b].kind != SPEC_BENCH_COMMAND)
			continue;
		char *path = xasprintf("benchmarks[%zu].command", b);
		check_argv(p, path, s->benches[b].cmd.command.v, &s->benches[b].cmd.env, s->workdir);
		free(path);
	}
	for (size_t j = 0; j < s->n_variants; j++) {
		const struct var_def *v = &s->variants[j];
		if (!v->build.n)
			continue;
		char *path = xasprintf("variants[%zu].build", j);
		bool in_dir = v->kind == VAR_KIND_PATCH && v->patch.dir;
		check_argv(p, path, v->build.v, NULL, in_dir ? v->patch.dir : s->workdir);
		free(path);
	}
}

/* ---- files ---- */

/* The file named at path must exist (NULL: not given). */
static bool need_file(struct pf *p, const char *path, const char *file, const char *what)
{
	if (!file)
		return true;
	char *f = expand(p, file);
	bool ok = rt_file_exists(f);
	if (!ok)
		problem(p, path, "%s %s does not exist; fix: create it or correct the path (relative "
			"paths are relative to workdir %s)", what, f, p->s->workdir);
	free(f);
	return ok;
}

static void check_files(struct pf *p)
{
	const struct spec *s = p->s;
	char path[160];
	for (size_t b = 0; b < s->n_benches; b++) {
		const struct spec_bench *sb = &s->benches[b];
		if (sb->kind == SPEC_BENCH_LOAD) {
			snprintf(path, sizeof(path), "benchmarks[%zu].load.dataset", b);
			need_file(p, path, sb->load.dataset, "dataset");
		}
		if (sb->kind != SPEC_BENCH_KERNEL)
			continue;
		const struct spec_kernel *k = &sb->kernel;
		snprintf(path, sizeof(path), "benchmarks[%zu].kernel.module", b);
		need_file(p, path, k->module, "kernel module");
		snprintf(path, sizeof(path), "benchmarks[%zu].kernel.reference.module", b);
		need_file(p, path, k->ref_module, "reference kernel module");
		snprintf(path, sizeof(path), "benchmarks[%zu].kernel.launch.table.file", b);
		need_file(p, path, k->launch_table, "launch table");
		for (size_t a = 0; a < k->n_args; a++) {
			snprintf(path, sizeof(path), "benchmarks[%zu].kernel.args[%zu].file", b, a);
			need_file(p, path, k->args[a].init_file, "input file");
			snprintf(path, sizeof(path), "benchmarks[%zu].kernel.args[%zu].reference", b, a);
			need_file(p, path, k->args[a].reference_file, "reference file");
		}
	}
}

/* ---- variants ---- */

/* The kind's plan on the current tree: the change can be made. */
static void plan_variant(struct pf *p, size_t j, const char *path)
{
	struct camp c = { .s = p->s };
	struct var_config cfg;
	var_config_init(&cfg);
	struct var_ctx x;
	camp_var_ctx(&c, &cfg, &x);
	struct var_plan pl = { 0 };
	struct rt_sb why = RT_SB_INIT;
	const struct var_def *v = &p->s->variants[j];
	if (var_ops_for(v->kind)->plan(v, &x, &pl, &why)) {
		rt_sb_trim(&why);
		problem(p, path, "%s; fix: %s", why.buf,
			v->kind == VAR_KIND_PATCH ? "rebase the patch on the folder's current tree "
						    "(`git apply --check` must pass there)"
						  : "make the change fit the file as it is now");
	}
	rt_sb_release(&why);
	var_plan_release(&pl);
	var_config_release(&cfg);
}

static void check_variants(struct pf *p)
{
	char path[160];
	for (size_t j = 0; j < p->s->n_variants; j++) {
		const struct var_def *v = &p->s->variants[j];
		bool ok = true;
		switch (v->kind) {
		case VAR_KIND_TABLE:
			snprintf(path, sizeof(path), "variants[%zu].table.file", j);
			ok = need_file(p, path, v->table.file, "table file");
			break;
		case VAR_KIND_PATCH:
			snprintf(path, sizeof(path), "variants[%zu].patch.file", j);
			ok = need_file(p, path, v->patch.file, "patch file");
			snprintf(path, sizeof(path), "variants[%zu].patch.dir", j);
			ok = need_file(p, path, v->patch.dir, "folder") && ok;
			snprintf(path, sizeof(path), "variants[%zu].patch", j);
			ok = ok && !p->o->resume; /* a kept patch is applied already */
			break;
		case VAR_KIND_FILE:
			snprintf(path, sizeof(path), "variants[%zu].file.source", j);
			ok = need_file(p, path, v->file.source, "source file");
			break;
		case VAR_KIND_FLAG:
		case VAR_KIND_ENV:
			ok = false; /* nothing on disk to plan against */
			break;
		}
		if (ok && !p->o->no_plans) {
			snprintf(path, sizeof(path), "variants[%zu].%s", j, var_kind_name(v->kind));
			plan_variant(p, j, path);
		}
	}
}

/* ---- a space's bindings ---- */

/* A table target: its file exists and the entry of its first valid point
 * fits the file as it is now (the kind's own plan, as for a written
 * variant). */
static void check_space_table(struct pf *p, size_t t, const char *label)
{
	const struct spec_target *g = &p->s->space->targets[t];
	size_t nv;
	uint64_t *valid = agent_space_valid(&g->space, &nv);
	json_t *vj = NULL;
	struct var_def def;
	memset(&def, 0, sizeof(def));
	struct rt_sb why = RT_SB_INIT;
	if (nv && !spec_space_variant(p->s, t, valid[0], &vj, &why) &&
	    !spec_variant_from_json(p->s, vj, &def, &why) && def.kind == VAR_KIND_TABLE) {
		char *f = expand(p, def.table.file);
		char *abs = f[0] == '/' ? xstrdup(f) : xasprintf("%s/%s", p->s->workdir, f);
		if (!rt_file_exists(abs)) {
			problem_at(p, g->pos, label, "table file %s does not exist; fix: create it or correct "
				   "the path (relative paths are relative to workdir %s)", f, p->s->workdir);
		} else {
			struct camp c = { .s = p->s };
			struct var_config cfg;
			var_config_init(&cfg);
			struct var_ctx x;
			camp_var_ctx(&c, &cfg, &x);
			struct var_plan pl = { 0 };
			rt_sb_reset(&why);
			if (var_ops_for(def.kind)->plan(&def, &x, &pl, &why)) {
				rt_sb_trim(&why);
				problem_at(p, g->pos, label, "%s; fix: make the entry fit the file as it is now",
					   why.buf);
			}
			var_plan_release(&pl);
			var_config_release(&cfg);
		}
		free(abs);
		free(f);
	}
	spec_variant_release(&def);
	json_decref(vj);
	rt_sb_release(&why);
	free(valid);
}

/* A template target: the template exists and its build's program resolves
 * (the target file it replaces need not exist yet). */
static void check_space_template(struct pf *p, const struct spec_target *g, const char *label)
{
	if (g->source && !rt_file_exists(g->source))
		problem_at(p, g->pos, label, "template %s does not exist; fix: create it or correct the path "
			   "(relative to workdir %s)", g->source, p->s->workdir);
	size_t n = json_array_size(g->build);
	if (!n)
		return;
	char **argv = xcalloc(n + 1, sizeof(*argv));
	for (size_t i = 0; i < n; i++)
		argv[i] = (char *)json_string_value(json_array_get(g->build, i));
	if (argv[0]) {
		struct rt_envmod none = { 0 };
		char *prog = expand(p, argv[0]);
		char *found = rt_find_program_env(prog, &none, 0, p->s->workdir);
		if (!found)
			problem_at(p, g->pos, label, "build program '%s' not found%s; fix: install it or "
				   "correct the path (relative to workdir %s)", prog,
				   strchr(prog, '/') ? "" : " on PATH", p->s->workdir);
		free(found);
		free(prog);
	}
	free(argv);
}

static void check_space(struct pf *p)
{
	const struct spec_space *sp = p->s->space;
	for (size_t t = 0; sp && t < sp->n_targets; t++) {
		const struct spec_target *g = &sp->targets[t];
		char *label = xasprintf("space (%s)", g->label);
		if (g->kind == SPEC_BIND_TABLE)
			check_space_table(p, t, label);
		else if (g->kind == SPEC_BIND_TEMPLATE)
			check_space_template(p, g, label);
		free(label);
	}
}

/* ---- gate, port, strategy ---- */

static void check_gate(struct pf *p)
{
	if (!p->s->gate.present)
		return;
	struct gsm8k_set set;
	memset(&set, 0, sizeof(set));
	struct rt_sb why = RT_SB_INIT;
	if (gsm8k_find("test", p->s->gate.dataset, &set, &why)) {
		rt_sb_trim(&why);
		problem(p, p->s->gate.dataset ? "gate.gsm8k.dataset" : "gate.gsm8k",
			"GSM8K test data not found: %s; fix: put test.jsonl there, or point "
			"gate.gsm8k.dataset or $RATCHET_GSM8K at it", why.buf);
	} else {
		gsm8k_set_release(&set);
	}
	rt_sb_release(&why);
}

static void check_port(struct pf *p)
{
	const struct spec_engine *en = &p->s->engine;
	if (!en->present || !en->port || p->o->resume)
		return;
	struct rt_sb why = RT_SB_INIT;
	if (run_engine_port_check(en->host, en->port, en->identity_http ? en->identity_http : en->ready_http,
				  &why)) {
		rt_sb_trim(&why);
		problem(p, "engine.port", "%s; fix: stop what holds it, or choose another engine.port "
			"(0 picks a free one per launch)", why.buf);
	}
	rt_sb_release(&why);
}

static void check_strategy(struct pf *p)
{
	const struct agent_ops *ops = agent_ops_for(p->s->strategy);
	if (!ops || (!ops->variants && !ops->search && ops->source != AGENT_FROM_CHAT)) {
		struct rt_sb names = RT_SB_INIT;
		agent_strategy_list(AGENT_SET_PROPOSE, &names);
		problem(p, "strategy", "strategy '%s' is not implemented yet; fix: use %s",
			agent_strategy_name(p->s->strategy), names.buf);
		rt_sb_release(&names);
	}
	const struct agent_llm_cfg *l = &p->s->llm;
	if (ops && ops->source == AGENT_FROM_CHAT && l->api_key_env && !getenv(l->api_key_env))
		problem(p, "llm.api_key_env", "the environment variable %s (the key of %s) is not set; fix: "
			"export %s, or leave api_key_env out for a server without a key", l->api_key_env,
			l->endpoint, l->api_key_env);
}

/* ---- devices ---- */

/* How many devices backend `name` sees: -1 when it cannot say (not built,
 * no driver). */
static int visible(const char *name, struct rt_sb *why)
{
	const struct dev_ops *ops = dev_backend_find(name, why);
	int n = 0;
	if (!ops || ops->count(&n, why))
		return -1;
	return n;
}

/* The engine's visible-devices variables, by the backend that reads them. */
static const struct {
	const char *var;     /* environment variable */
	const char *backend; /* ratchet's backend for the same devices */
} visible_vars[] = {
	{ "CUDA_VISIBLE_DEVICES", "cuda" },
	{ "HIP_VISIBLE_DEVICES", "hip" },
	{ "ROCR_VISIBLE_DEVICES", "hip" },
	{ "ZE_AFFINITY_MASK", "ze" },
};

static void check_engine_devices(struct pf *p)
{
	const struct spec_engine *en = &p->s->engine;
	for (size_t i = 0; en->present && i < en->env.n; i++) {
		const struct rt_env *e = &en->env.v[i];
		for (size_t k = 0; e->value && k < RT_ARRAY_SIZE(visible_vars); k++) {
			if (strcmp(e->name, visible_vars[k].var))
				continue;
			struct rt_sb why = RT_SB_INIT;
			int n = visible(visible_vars[k].backend, &why);
			rt_sb_release(&why);
			if (n < 0)
				continue;
			for (const char *s = e->value; *s; s += strspn(s, ",")) {
				char *end;
				long idx = strtol(s, &end, 10);
				if (end != s && (*end == ',' || *end == '.' || !*end) && (idx < 0 || idx >= n)) {
					char *path = xasprintf("engine.env.%s", e->name);
					problem(p, path, "device %ld is not visible: ratchet's %s backend sees "
						"%d; fix: name a device `ratchet devices` lists", idx,
						visible_vars[k].backend, n);
					free(path);
				}
				s += strcspn(s, ",");
			}
		}
	}
}

static void check_devices(struct pf *p)
{
	const struct spec *s = p->s;
	for (size_t b = 0; b < s->n_benches; b++) {
		const struct spec_kernel *k = &s->benches[b].kernel;
		if (s->benches[b].kind != SPEC_BENCH_KERNEL)
			continue;
		struct rt_sb why = RT_SB_INIT;
		int n = visible(k->backend, &why);
		char path[96];
		rt_sb_trim(&why);
		if (n < 0) {
			snprintf(path, sizeof(path), "benchmarks[%zu].kernel.backend", b);
			problem(p, path, "backend %s has no device: %s; fix: run on a machine with one, or "
				"build ratchet with it (`ratchet devices` lists what it sees)", k->backend,
				why.buf);
		} else if (k->device >= n) {
			snprintf(path, sizeof(path), "benchmarks[%zu].kernel.device", b);
			problem(p, path, "%s device %d is not visible (%d found); fix: name a device "
				"`ratchet devices` lists", k->backend, k->device, n);
		}
		rt_sb_release(&why);
	}
	check_engine_devices(p);
}

/* ---- the table of checks ---- */

static const struct {
	const char *name;          /* what it checks, for docs/campaign.md */
	void (*check)(struct pf *p); /* appends its problems */
} checks[] = {
	{ "strategy", check_strategy }, { "programs", check_programs }, { "files", check_files },
	{ "variants", check_variants }, { "space", check_space },       { "gate", check_gate },
	{ "port", check_port },
	{ "devices", check_devices },
};

int run_preflight(const struct spec *s, const struct run_preflight_opts *o, struct rt_sb *out)
{
	struct pf p = { .s = s, .o = o, .out = out };
	for (size_t i = 0; i < RT_ARRAY_SIZE(checks); i++)
		checks[i].check(&p);
	return p.n;
}
