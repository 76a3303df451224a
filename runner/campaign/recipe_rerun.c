/*
 * The parts of a recipe (recipe.h) that re-measure or replay it, rather
 * than reproduce it by hand:
 *   spec.yaml      the campaign's spec on its best configuration: the kept
 *                  flags in the command lines, the kept env in engine.env,
 *                  no variants, workdir "." (apply.sh installs it in the
 *                  workdir as ratchet-recipe.yaml), every path under the
 *                  campaign's workdir made relative or {workdir}
 *   variants.yaml  the kept changes as spec variants, with their lineage
 *                  and gain then: `ratchet replay --from` reads it
 *   Dockerfile     when the engine ran from a container image (the first
 *                  launch's provenance): FROM the image by digest, files/
 *                  and patches/ copied in, the environment, the command
 */
#include "runner/campaign/recipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/launches.h"
#include "runner/base/rt_yaml.h"

/* Every string under v that names the workdir: in a list (a command line)
 * "{workdir}/rest", elsewhere (a path) "rest", the workdir itself ".". */
static void relativize(json_t *v, const char *wd)
{
	size_t n = strlen(wd), i;
	const char *k;
	json_t *x;
	if (json_is_object(v)) {
		void *tmp;
		json_object_foreach_safe(v, tmp, k, x) {
			const char *s = json_string_value(x);
			if (s && !strcmp(s, wd))
				json_object_set_new(v, k, json_string("."));
			else if (s && !strncmp(s, wd, n) && s[n] == '/')
				json_object_set_new(v, k, json_string(s + n + 1));
			else
				relativize(x, wd);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			const char *s = json_string_value(x);
			if (s && !strncmp(s, wd, n) && (s[n] == '/' || !s[n])) {
				char *t = xasprintf("{workdir}%s", s + n);
				json_array_set_new(v, i, json_string(t));
				free(t);
			} else {
				relativize(x, wd);
			}
		}
	}
}

static json_t *argv_json(char **argv)
{
	json_t *a = json_array();
	for (size_t i = 0; argv[i]; i++)
		json_array_append_new(a, json_string(argv[i]));
	return a;
}

/* Write j as YAML under rel, after a comment header (control bytes made '?'). */
static int write_yaml(struct recipe *r, const char *rel, const char *head, const json_t *j, struct rt_sb *err)
{
	struct rt_sb t = RT_SB_INIT;
	for (const char *p = head; *p;) {
		size_t k = strcspn(p, "\n");
		char *line = xasprintf("%.*s", (int)k, p);
		rt_sb_adds(&t, "# ");
		recipe_comment_text(&t, line);
		rt_sb_addc(&t, '\n');
		free(line);
		p += k + (p[k] == '\n');
	}
	int rc = rt_yaml_from_json(j, &t, err);
	if (!rc)
		rc = recipe_write(r, rel, t.buf, t.len, 0644, err);
	rt_sb_release(&t);
	return rc;
}

int recipe_write_spec(struct recipe *r, struct rt_sb *err)
{
	const struct spec *s = r->s;
	json_t *j = json_deep_copy(r->spec_json);
	char *name = xasprintf("%s-recipe", r->cp.name);
	json_object_set_new(j, "name", json_string(name));
	free(name);
	json_object_set_new(j, "workdir", json_string("."));
	json_object_set_new(j, "variants", json_array());
	json_object_set_new(j, "strategy", json_string("list"));
	json_object_set_new(j, "max_iterations", json_integer(0));
	json_object_del(j, "space");
	json_object_del(j, "llm");
	json_t *eng = json_object_get(j, "engine");
	if (s->engine.present && eng) {
		struct camp_cmdline cl; /* the engine's command and env, the kept changes applied */
		camp_cmdline(&r->c, &r->c.cfg, &cl);
		json_object_set_new(eng, "command", argv_json(cl.argv));
		json_object_set_new(eng, "env", spec_envv_json(&cl.env));
		camp_cmdline_release(&cl);
	}
	json_t *benches = json_object_get(j, "benchmarks");
	for (size_t b = 0; !s->engine.present && b < s->n_benches && b < json_array_size(benches); b++)
		if (s->benches[b].kind == SPEC_BENCH_COMMAND) {
			char **argv = recipe_final_argv(r, s->benches[b].cmd.command.v);
			json_object_set_new(json_array_get(benches, b), "command", argv_json(argv));
			rt_argv_free(argv);
		}
	relativize(j, r->cp.workdir);
	char *head = xasprintf("The benchmarks and gate of ratchet campaign %lld '%s' on its best configuration\n"
			       "(iteration %lld:%d): apply.sh installs this file in a workdir as\n"
			       "ratchet-recipe.yaml; `ratchet run WORKDIR/ratchet-recipe.yaml` measures it again.",
			       (long long)r->cp.id, r->cp.name, (long long)r->cp.id, r->best->seq);
	int rc = write_yaml(r, "spec.yaml", head, j, err);
	free(head);
	json_decref(j);
	return rc;
}

/* A lineage number, left out when unknown. */
static void lin_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

/* A file change's source (a space template's rendered copy lives in the
 * workdir's .ratchet/space/) copied into sources/, so the recipe holds it. */
static int copy_source(struct recipe *r, json_t *v, struct rt_sb *err)
{
	json_t *f = json_object_get(v, "file");
	const char *src = json_string_value(json_object_get(f, "source"));
	if (!src)
		return 0;
	char *data = NULL;
	size_t len = 0;
	const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	char *rel = xasprintf("sources/%02d-%s", ++r->sources, base);
	int rc = rt_read_file(src, &data, &len, err);
	if (rc)
		rt_errf(err, 0, " (the source of kept change %s)", json_string_value(json_object_get(v, "name")));
	else if (!(rc = recipe_write(r, rel, data, len, 0644, err)))
		json_object_set_new(f, "source", json_string(rel));
	free(data);
	free(rel);
	return rc;
}

int recipe_write_variants(struct recipe *r, struct rt_sb *err)
{
	json_t *root = json_object(), *vs = json_array(), *lin = json_object();
	json_object_set_new(root, "from", json_pack("{s:I, s:s}", "campaign", (json_int_t)r->cp.id, "name",
						    r->cp.name));
	int rc = 0;
	for (size_t i = 0; i < r->n && !rc; i++) {
		const struct db_iteration *it = &r->its[i];
		if (!recipe_kept(r, it))
			continue;
		json_t *v = camp_kept_variant(r->db, r->s, r->spec_json, r->cp.id, it, err);
		if (!v) {
			rc = RT_ENOENT;
			break;
		}
		camp_place_paths(v, r->cp.workdir, r->cp.workdir);
		if (r->patch_names[i]) /* its bytes are in the recipe */
			json_object_set_new(json_object_get(v, "patch"), "file", json_string(r->patch_names[i]));
		rc = copy_source(r, v, err);
		json_array_append_new(vs, v);
		json_t *l = json_pack("{s:I, s:I, s:i}", "campaign", (json_int_t)r->cp.id, "iteration",
				      (json_int_t)it->id, "seq", it->seq);
		if (it->objective)
			json_object_set_new(l, "objective", json_string(it->objective));
		lin_num(l, "gain", it->obj_delta);
		lin_num(l, "lo", it->obj_ci_lo);
		lin_num(l, "hi", it->obj_ci_hi);
		lin_num(l, "median", it->obj_cand);
		json_object_set_new(lin, it->variant, l);
	}
	json_object_set_new(root, "variants", vs);
	json_object_set_new(root, "lineage", lin);
	char *head = xasprintf("The kept changes of ratchet campaign %lld '%s', in the order they were kept,\n"
			       "as spec variants (paths relative to a workdir; patch files and file sources\n"
			       "relative to this folder), and their lineage: the iteration that kept each and its gain then (+ is\n"
			       "better, lo..hi its interval, median the objective with it). Replay them on a new\n"
			       "base with `ratchet replay --from variants.yaml SPEC`.",
			       (long long)r->cp.id, r->cp.name);
	if (!rc)
		rc = write_yaml(r, "variants.yaml", head, root, err);
	free(head);
	json_decref(root);
	return rc;
}

/* A JSON string (Dockerfile ENV and CMD take JSON-style double quotes). */
static void add_jstr(struct rt_sb *sb, const char *s)
{
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	rt_sb_adds(sb, t ? t : "\"\"");
	free(t);
	json_decref(j);
}

int recipe_write_dockerfile(struct recipe *r, struct rt_sb *err)
{
	const struct spec *s = r->s;
	struct db_launch l;
	memset(&l, 0, sizeof(l));
	struct rt_sb e = RT_SB_INIT;
	int got = db_launch_first(r->db, r->cp.id, &l, &e);
	rt_sb_release(&e);
	char **argv = s->engine.present ? recipe_final_argv(r, s->engine.command.v) : NULL;
	const char *tool = NULL, *img = argv ? run_engine_container_image(argv, &tool) : NULL;
	if (got || !img || !l.image_ref) {
		if (!got)
			db_launch_release(&l);
		rt_argv_free(argv);
		return 0; /* no container image: nothing to write */
	}
	struct rt_sb d = RT_SB_INIT;
	rt_sb_addf(&d, "# The best configuration of ratchet campaign %lld '", (long long)r->cp.id);
	recipe_comment_text(&d, r->cp.name);
	rt_sb_adds(&d, "': the image the engine ran\n# (by digest when it was recorded), the tuned files and "
		   "patches, the environment and\n# the engine's command with the kept flags ({workdir} is "
		   "/ratchet/workdir, {port} and {nonce} as run.sh fills them).\nFROM ");
	const char *digest = l.image_digest;
	const char *at = digest ? strstr(digest, "@sha256:") : NULL;
	recipe_comment_text(&d, at ? digest : l.image_ref);
	rt_sb_addc(&d, '\n');
	if (r->res->files)
		rt_sb_adds(&d, "COPY files/ /ratchet/workdir/\n");
	if (r->res->patches)
		rt_sb_adds(&d, "COPY patches/ /ratchet/patches/\n");
	struct camp_cmdline cl;
	camp_cmdline(&r->c, &r->c.cfg, &cl);
	for (size_t i = 0; i < cl.env.n; i++)
		if (cl.env.v[i].value) {
			rt_sb_adds(&d, "ENV ");
			recipe_comment_text(&d, cl.env.v[i].name);
			rt_sb_addc(&d, '=');
			add_jstr(&d, cl.env.v[i].value);
			rt_sb_addc(&d, '\n');
		}
	camp_cmdline_release(&cl);
	rt_sb_adds(&d, "WORKDIR /ratchet/workdir\nCMD [");
	size_t k = 0;
	while (argv[k] && argv[k] != img)
		k++;
	struct spec_vars vars = { .port = s->engine.port ? s->engine.port : 8000, .workdir = "/ratchet/workdir",
				  .nonce = "recipe", .iteration = 0 };
	for (size_t i = k + (argv[k] != NULL), first = 1; argv[i]; i++, first = 0) {
		char *a = spec_expand(argv[i], &vars);
		rt_sb_adds(&d, first ? "" : ", ");
		add_jstr(&d, a);
		free(a);
	}
	rt_sb_adds(&d, "]\n");
	int rc = recipe_write(r, "Dockerfile", d.buf, d.len, 0644, err);
	r->res->dockerfile = rc == 0;
	rt_sb_release(&d);
	rt_argv_free(argv);
	db_launch_release(&l);
	return rc;
}
