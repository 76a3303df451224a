/*
 * A launch's provenance (see engine.h): what ran, as far as this machine
 * can tell without trusting the engine.
 *   - the executable: argv[0] resolved on the engine's PATH, and the sha256
 *     of its bytes (for a script, of the script: its interpreter and the
 *     packages behind it are what engine.provenance is for);
 *   - a container: for `docker run` / `podman run` the image reference (the
 *     first argument after run's options; the options that take no value
 *     follow the Docker 27 CLI reference of `docker run` and podman 5's,
 *     every other option takes one unless written --opt=value) and its
 *     digest from `<tool> image inspect` (the first RepoDigests entry, else
 *     the local image Id), or the reference alone with the reason;
 *   - every repository the campaign touches (the workdir, patch folders):
 *     git HEAD and whether the tracked files differ from it;
 *   - the output of engine.provenance (pip freeze, say), secrets redacted;
 *   - the sha256 of every shared object the engine's processes map
 *     executable (/proc/PID/maps): the code of llama-server is in
 *     libllama.so and libggml*.so beside an 18 KB executable, so a rebuilt
 *     or patched library is a different engine even when the executable
 *     and the self-reported version are the same.
 * Commands run through the caller's exec function (the command benchmark's
 * runner) with a timeout, never through a shell.
 */
#define _GNU_SOURCE
#include "runner/engine/engine.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Options of `docker run` / `podman run` that take no value. */
static const char *const run_bool_opts[] = {
	"-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "--init",
	"-P", "--publish-all", "--read-only", "--sig-proxy", "--no-healthcheck", "--oom-kill-disable",
	"--disable-content-trust", "--replace", "--rmi", "--quiet", "-q", "--tls-verify",
	"--no-hosts", "--read-only-tmpfs", "--env-host", "--http-proxy",
};

static bool bool_opt(const char *a)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(run_bool_opts); i++)
		if (!strcmp(a, run_bool_opts[i]))
			return true;
	/* -it, -dit: short booleans run together */
	if (a[0] == '-' && a[1] && a[1] != '-' && strlen(a) > 2) {
		for (const char *p = a + 1; *p; p++)
			if (!strchr("dit", *p) && *p != 'P' && *p != 'q')
				return false;
		return true;
	}
	return false;
}

const char *run_engine_container_image(char *const *argv, const char **tool)
{
	if (!argv[0] || !argv[1] || strcmp(argv[1], "run"))
		return NULL;
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (strcmp(base, "docker") && strcmp(base, "podman"))
		return NULL;
	*tool = argv[0];
	for (size_t i = 2; argv[i]; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			return argv[i + 1];
		if (a[0] != '-')
			return a;
		if (!strchr(a, '=') && !bool_opt(a) && argv[i + 1])
			i++; /* its value */
	}
	return NULL;
}

/* Run argv; its trimmed stdout in out, or a note saying why not. */
static bool run_one(run_engine_exec_fn exec, char *const *argv, const char *cwd, struct rt_sb *out,
		    struct rt_sb *note)
{
	struct rt_sb why = RT_SB_INIT;
	int status = 0;
	rt_sb_reset(out);
	int rc = exec(argv, cwd, 30, out, &status, &why);
	bool ok = !rc && status == 0;
	if (!ok && rc)
		rt_sb_addf(note, "%s`%s %s` could not run: %s", note->len ? "; " : "", argv[0],
			   argv[1] ? argv[1] : "", why.buf);
	else if (!ok)
		rt_sb_addf(note, "%s`%s %s` exited with status %d: %.*s", note->len ? "; " : "", argv[0],
			   argv[1] ? argv[1] : "", status, (int)strcspn(out->buf, "\n"), out->buf);
	while (out->len && (out->buf[out->len - 1] == '\n' || out->buf[out->len - 1] == ' '))
		out->buf[--out->len] = 0;
	rt_sb_release(&why);
	return ok;
}

/* The program the launch ran: found as rt_spawn finds it. */
static void prov_exe(struct run_engine_prov *p, const struct run_engine_prov_in *in)
{
	char *exe = rt_find_program_env(in->argv[0], in->env, in->n_env, in->cwd);
	if (!exe) {
		rt_sb_addf(&p->note, "%s%s: not found on PATH", p->note.len ? "; " : "", in->argv[0]);
		return;
	}
	p->exe_path = exe;
	struct rt_sb err = RT_SB_INIT;
	if (rt_sha256_file(exe, p->exe_sha256, &err))
		rt_sb_addf(&p->note, "%s%s", p->note.len ? "; " : "", err.buf);
	rt_sb_release(&err);
}

static void prov_image(struct run_engine_prov *p, char *const *argv, run_engine_exec_fn exec)
{
	const char *tool = NULL;
	const char *img = run_engine_container_image(argv, &tool);
	if (!img)
		return;
	if (p->exe_path)
		tool = p->exe_path; /* the one the engine's PATH gave */
	p->image_ref = xstrdup(img);
	char *const inspect[] = { (char *)tool, "image", "inspect", "--format",
				  "{{if .RepoDigests}}{{index .RepoDigests 0}}{{else}}{{.Id}}{{end}}",
				  (char *)img, NULL };
	struct rt_sb out = RT_SB_INIT, note = RT_SB_INIT;
	if (run_one(exec, inspect, NULL, &out, &note) && out.len)
		p->image_digest = xstrdup(out.buf);
	else
		rt_sb_addf(&p->note, "%simage digest not recorded, the reference only (%s)",
			   p->note.len ? "; " : "", note.len ? note.buf : "empty answer");
	rt_sb_release(&out);
	rt_sb_release(&note);
}

static void prov_repos(struct run_engine_prov *p, const char *const *repos, size_t n, run_engine_exec_fn exec)
{
	json_t *a = json_array();
	struct rt_sb out = RT_SB_INIT, note = RT_SB_INIT;
	for (size_t i = 0; i < n; i++) {
		char *const head[] = { "git", "-C", (char *)repos[i], "rev-parse", "HEAD", NULL };
		char *const st[] = { "git", "-C", (char *)repos[i], "status", "--porcelain",
				     "--untracked-files=no", NULL };
		rt_sb_reset(&note);
		if (!run_one(exec, head, NULL, &out, &note))
			continue; /* not a repository */
		json_t *r = json_pack("{s:s, s:s}", "path", repos[i], "head", out.buf);
		if (run_one(exec, st, NULL, &out, &note))
			json_object_set_new(r, "dirty", json_boolean(out.len > 0));
		json_array_append_new(a, r);
	}
	p->repos = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	rt_sb_release(&out);
	rt_sb_release(&note);
}

/* Every library the engine's processes map, hashed: {path: sha256}. */
static void prov_libs(struct run_engine_prov *p, const pid_t *pids, size_t n)
{
	struct rt_strv libs = { NULL, 0 };
	for (size_t i = 0; i < n; i++)
		rt_proc_exec_libs(pids[i], &libs);
	if (!libs.n)
		return;
	json_t *o = json_object();
	struct rt_sb err = RT_SB_INIT;
	for (size_t i = 0; i < libs.n; i++) {
		char sha[65];
		rt_sb_reset(&err);
		if (rt_sha256_file(libs.v[i], sha, &err))
			rt_sb_addf(&p->note, "%s%s", p->note.len ? "; " : "", err.buf);
		else
			json_object_set_new(o, libs.v[i], json_string(sha));
	}
	p->libs = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	rt_sb_release(&err);
	rt_strv_release(&libs);
}

void run_engine_prov_collect(const struct run_engine_prov_in *in, struct run_engine_prov *p)
{
	memset(p, 0, sizeof(*p));
	rt_sb_init(&p->note, 4096);
	prov_exe(p, in);
	prov_image(p, in->argv, in->exec);
	prov_repos(p, in->repos, in->n_repos, in->exec);
	prov_libs(p, in->pids, in->n_pids);
	if (in->command && in->command[0]) {
		struct rt_sb out = RT_SB_INIT;
		out.cap = 1 << 20;
		if (run_one(in->exec, in->command, in->cwd, &out, &p->note)) {
			rt_redact_secrets(&out);
			p->extra = rt_sb_detach(&out, NULL);
		}
		rt_sb_release(&out);
	}
}

void run_engine_prov_release(struct run_engine_prov *p)
{
	free(p->exe_path);
	free(p->image_ref);
	free(p->image_digest);
	free(p->repos);
	free(p->extra);
	free(p->libs);
	rt_sb_release(&p->note);
	memset(p, 0, sizeof(*p));
}

/* The heads of a repos JSON array, by path, compared: a path whose head
 * differs, or that one side lacks. */
static void diff_heads(const char *a, const char *b, struct rt_sb *out)
{
	json_error_t je;
	json_t *ja = json_loads(a ? a : "[]", 0, &je), *jb = json_loads(b ? b : "[]", 0, &je);
	size_t i;
	json_t *rb;
	json_array_foreach(jb, i, rb) {
		const char *path = json_string_value(json_object_get(rb, "path"));
		const char *hb = json_string_value(json_object_get(rb, "head"));
		const char *ha = NULL;
		size_t k;
		json_t *ra;
		json_array_foreach(ja, k, ra)
			if (path && json_string_value(json_object_get(ra, "path")) &&
			    !strcmp(path, json_string_value(json_object_get(ra, "path"))))
				ha = json_string_value(json_object_get(ra, "head"));
		if (path && hb && (!ha || strcmp(ha, hb)))
			rt_sb_addf(out, "%sgit HEAD of %s %.12s -> %.12s", out->len ? "; " : "", path,
				   ha ? ha : "(none)", hb);
	}
	json_decref(ja);
	json_decref(jb);
}

/* The libraries of two {path: sha256} objects: one whose sha256 differs,
 * or that only the second maps. */
static void diff_libs(const char *a, const char *b, struct rt_sb *out)
{
	json_error_t je;
	json_t *ja = json_loads(a ? a : "{}", 0, &je), *jb = json_loads(b ? b : "{}", 0, &je);
	const char *path;
	json_t *vb;
	json_object_foreach(jb, path, vb) {
		const char *ha = json_string_value(json_object_get(ja, path)), *hb = json_string_value(vb);
		if (hb && (!ha || strcmp(ha, hb)))
			rt_sb_addf(out, "%slibrary %s sha256 %.12s -> %.12s", out->len ? "; " : "", path,
				   ha ? ha : "(not mapped)", hb);
	}
	json_decref(ja);
	json_decref(jb);
}

static void diff_field(const char *what, const char *a, const char *b, struct rt_sb *out)
{
	if (!a && !b)
		return;
	if (a && b && !strcmp(a, b))
		return;
	rt_sb_addf(out, "%s%s %.40s -> %.40s", out->len ? "; " : "", what, a ? a : "(none)", b ? b : "(none)");
}

/* Multi-line text (pip freeze): the first line that differs. */
static void diff_lines(const char *what, const char *a, const char *b, struct rt_sb *out)
{
	if ((!a && !b) || (a && b && !strcmp(a, b)))
		return;
	a = a ? a : "";
	b = b ? b : "";
	int line = 1;
	for (;;) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
		if (la != lb || memcmp(a, b, la) || !a[la] || !b[lb]) {
			rt_sb_addf(out, "%s%s, line %d: '%.*s' -> '%.*s'", out->len ? "; " : "", what, line,
				   (int)(la < 60 ? la : 60), a, (int)(lb < 60 ? lb : 60), b);
			return;
		}
		a += la + 1;
		b += lb + 1;
		line++;
	}
}

void run_engine_prov_diff(const struct run_engine_prov *first, const char *first_version,
			  const struct run_engine_prov *p, const char *version, bool built, struct rt_sb *out)
{
	diff_field("image", first->image_digest ? first->image_digest : first->image_ref,
		   p->image_digest ? p->image_digest : p->image_ref, out);
	diff_lines("provenance output", first->extra, p->extra, out);
	if (built)
		return; /* the change under test rebuilt the engine: its bytes and HEADs are the change */
	diff_field("engine version", first_version, version, out);
	diff_field("executable", first->exe_path, p->exe_path, out);
	diff_field("executable sha256", first->exe_sha256[0] ? first->exe_sha256 : NULL,
		   p->exe_sha256[0] ? p->exe_sha256 : NULL, out);
	diff_heads(first->repos, p->repos, out);
	if (first->libs)
		diff_libs(first->libs, p->libs, out);
}
