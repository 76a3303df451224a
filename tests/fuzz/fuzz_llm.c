/*
 * Fuzz harness: strategy llm's answer reader (spec_llm_read: the envelope,
 * the spec's variant parser, the containment model of agents/llm_allow.c),
 * as the campaign calls it, on a spec with one variant of each kind, a
 * command benchmark [sh, -c, ...] and llm.flags and llm.env lists, in a
 * workdir holding a link out, a FIFO and a folder of kernels.
 *
 * The input is the model's reply, then optionally "\n====\n" and the bytes
 * of fz.diff (a diff an answer may name as its patch; empty without). Whatever it holds,
 * reading never crashes, refuses with RT_EPARSE or RT_EINVAL and a message,
 * and answers the same twice. An accepted answer keeps the containment
 * model, checked here independently of the code under test:
 *   - no command: no build;
 *   - its kind is listed;
 *   - every option it sets is listed and none carries a program (sh's -c);
 *     every element is an option or the value after one;
 *   - every variable it sets is listed, none is a loader's or a shell's;
 *   - every file it names is, resolved with realpath (a new one through its
 *     folder), inside the workdir, and matches a glob with FNM_PATHNAME;
 *   - a patch's diff names no symbolic link (mode 120000) and its rename,
 *     copy and diff --git names hold no ".." and no absolute path;
 *   - every name git apply itself reads in that diff (--numstat, outside
 *     any repository) holds no "..", is not absolute, and lies inside the
 *     workdir under an allowed glob;
 *   - the variant quotes no secret.
 */
#include "tests/fuzz/fuzz.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agents/agent.h"
#include "runner/spec/spec.h"
#include "runner/spec/spec_space.h"
#include "variants/var.h"

static struct spec *spec;
static struct agent_llm_allow allow;

static void setup(void)
{
	const char *w = fuzz_dir();
	char *cmd = xasprintf("cd '%s' && mkdir -p kernels/sub src && echo '{\"k\": {\"v\": 1}}' > tiles.json && "
			      "cp tiles.json kernels/a.json && cp tiles.json kernels/sub/b.json && cp tiles.json "
			      "alt.json && echo x > src/k.c && ln -s /tmp out && ln -s tiles.json in.json && "
			      "mkfifo pipe.json && printf -- '--- a/k.c\\n+++ b/k.c\\n@@ -1 +1 @@\\n-x\\n+y\\n' > p.diff",
			      w);
	if (system(cmd))
		abort();
	free(cmd);
	static const char text[] =
		"name: fuzz-llm\n"
		"benchmarks:\n"
		"  - name: b\n"
		"    command: [sh, -c, \"echo 1\"]\n"
		"    metrics: {x: {regex: \"([0-9]+)\", better: higher}}\n"
		"objective: {metric: b.x, goal: max}\n"
		"variants:\n"
		"  - name: t1\n"
		"    table: {file: tiles.json, set: {k: {v: 2}}}\n"
		"  - name: f1\n"
		"    flag: [-t, \"1\"]\n"
		"  - name: e1\n"
		"    env: {A: \"1\"}\n"
		"  - name: p1\n"
		"    patch: {file: p.diff, dir: src}\n"
		"  - name: s1\n"
		"    file: {target: tiles.json, source: alt.json}\n"
		"strategy: llm\n"
		"llm:\n"
		"  endpoint: http://127.0.0.1:9/v1\n"
		"  model: m\n"
		"  files: [tiles.json, \"kernels/*.json\", \"*.json\", \"*.diff\", src, \"out/*\"]\n"
		"  flags: [-t, --x, -b]\n"
		"  env: [A, B, HF_TOKEN]\n";
	char *path = xasprintf("%s/spec.yaml", w);
	struct rt_sb err = RT_SB_INIT;
	if (spec_load_text(path, text, sizeof(text) - 1, &spec, &err) || spec_llm_allow(spec, &allow, &err)) {
		fprintf(stderr, "fuzz_llm: %s\n", err.buf);
		abort();
	}
	rt_sb_release(&err);
	free(path);
}

static bool listed(const struct rt_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* Where path leads (realpath; a new path through its longest existing
 * folder), written independently of rt_path_within. */
static char *real_of(const char *path)
{
	char *p = xstrdup(path), *tail = xstrdup("");
	for (;;) {
		char *r = realpath(p, NULL);
		if (r) {
			char *out = xasprintf("%s%s", r, tail);
			free(r);
			free(p);
			free(tail);
			return out;
		}
		char *sl = strrchr(p, '/');
		FUZZ_CHECK(sl && sl != p, "%s: no folder of it resolves", path);
		FUZZ_CHECK(strcmp(sl, "/..") && strcmp(sl, "/."), "%s: a new name '%s'", path, sl + 1);
		char *t = xasprintf("%s%s", sl, tail);
		free(tail);
		tail = t;
		*sl = 0;
	}
}

/* Does rel match an allowed glob (FNM_PATHNAME), or with leading a folder
 * above it ("a", "a/b", ...: a patch's files, where a folder may be allowed
 * whole)? */
static bool glob_allowed(const char *rel, bool leading)
{
	for (size_t from = 0;;) {
		const char *sl = leading ? strchr(rel + from, '/') : NULL;
		size_t len = sl ? (size_t)(sl - rel) : strlen(rel);
		char *up = xstrndup(rel, len);
		bool m = false;
		for (size_t i = 0; i < allow.files.n && !m; i++)
			m = !fnmatch(allow.files.v[i], up, FNM_PATHNAME);
		free(up);
		if (m || !sl)
			return m;
		from = len + 1;
	}
}

static void check_path(const char *path, bool glob)
{
	FUZZ_CHECK(path && path[0] == '/', "a path that is not absolute: %s", path ? path : "(null)");
	char *r = real_of(path);
	size_t n = strlen(allow.workdir);
	FUZZ_CHECK(!strncmp(r, allow.workdir, n) && (r[n] == '/' || !r[n]), "%s leads to %s, outside %s", path, r,
		   allow.workdir);
	const char *rel = r[n] ? r + n + 1 : ".";
	FUZZ_CHECK(!glob || glob_allowed(rel, false), "%s (%s) matches no allowed glob", path, rel);
	free(r);
}

/* A name git apply reads (where: its line): relative, with no ".."
 * component ("k../x" is a folder named "k..": only a whole ".." climbs).
 * Whether it has a "." or an empty component, which git's own path check
 * (verify_path) refuses before applying. */
static bool check_relative(const char *name, const char *where)
{
	FUZZ_CHECK(*name != '/', "an absolute name '%s' in '%s'", name, where);
	bool odd = false;
	for (const char *c = name; *c;) {
		size_t k = strcspn(c, "/");
		FUZZ_CHECK(!(k == 2 && !strncmp(c, "..", 2)), "a '..' component in '%s' ('%s')", where, name);
		odd |= k == 0 || (k == 1 && *c == '.');
		c += k + (c[k] == '/');
	}
	return odd;
}

/* The name git apply reads after a "rename"/"copy" header's start: the rest
 * of the line up to a CR (a tab, a space, a VT and an FF belong to it: git's
 * isspace is false for the last two; apply --numstat -z reads 'rename to
 * d<FF>e/../../z' as "d\fe/../../z"), or a
 * C-quoted name up to its closing quote, whatever follows it (git 2.39,
 * apply.c find_name_gnu: unquote_c_style with no end check; name_terminate
 * with no TERM_TAB; checked with git 2.39.5 apply --summary: 'rename to
 * "dir": junk ../x' renames to dir, 'rename to k<TAB>d/../x' to "k\td/../x").
 * NULL for a quoted name git cannot read. */
static char *git_name(const char *n)
{
	if (*n != '"')
		return xstrndup(n, strcspn(n, "\r"));
	char *out = xcalloc(strlen(n) + 1, 1), *o = out;
	for (const char *c = n + 1; *c; c++) {
		if (*c == '"')
			return out;
		if (*c != '\\') {
			*o++ = *c;
			continue;
		}
		c++;
		const char *esc = strchr("abtnvfr\\\"", *c);
		if (*c && esc) {
			*o++ = "\a\b\t\n\v\f\r\\\""[esc - "abtnvfr\\\""];
		} else if (*c >= '0' && *c <= '3' && c[1] >= '0' && c[1] <= '7' && c[2] >= '0' && c[2] <= '7') {
			*o++ = (char)((*c - '0') * 64 + (c[1] - '0') * 8 + (c[2] - '0'));
			c += 2;
		} else {
			break;
		}
	}
	free(out);
	return NULL;
}

static void check_name(const char *line, const char *start)
{
	if (strncmp(line, start, strlen(start)))
		return;
	char *n = git_name(line + strlen(start));
	if (!n)
		return; /* git apply refuses the patch */
	check_relative(n, line);
	free(n);
}

static void check_diff(const char *file)
{
	char *text = NULL;
	size_t len = 0;
	FUZZ_CHECK(!rt_read_file(file, &text, &len, NULL), "the accepted diff %s cannot be read", file);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		FUZZ_CHECK(strncmp(line, "new file mode 120000", 20) && strncmp(line, "new mode 120000", 15),
			   "an accepted diff creates a link: %s", line);
		check_name(line, "rename to ");
		check_name(line, "rename from ");
		check_name(line, "copy to ");
		check_name(line, "copy from ");
	}
	free(text);
}

/* Does the real path of path lie inside the workdir, with its path there
 * or a folder above it matching an allowed glob? */
static bool allowed_under(const char *path)
{
	char *r = real_of(path);
	size_t n = strlen(allow.workdir);
	bool ok = !strncmp(r, allow.workdir, n) && r[n] == '/' && glob_allowed(r + n + 1, true);
	free(r);
	return ok;
}

/* git apply's own reading of an accepted diff, the oracle behind the
 * campaign's second check (agent_llm_plan_ok): every name that
 * `git -C DIR apply --numstat -z` gives, run in the patch's folder outside any
 * repository (GIT_CEILING_DIRECTORIES), has no ".." component and lies
 * inside the workdir under an allowed glob. Nothing to check where git
 * refuses the diff (it applies nothing) or cannot run. */
static void check_git(const struct var_def *d)
{
	int fd[2];
	if (pipe(fd))
		return;
	/* posix_spawn, not fork: fork copies ASan's address space for each
	 * answer (FUZZ_TIME=100: 257 inputs a second with fork, 1,513 with
	 * posix_spawn, 2,106 without this oracle). The ceiling is the workdir's
	 * parent: git may not look above the workdir for a repository (fuzz.sh
	 * keeps its workdirs inside this one). */
	char *parent = xstrndup(allow.workdir, (size_t)(strrchr(allow.workdir, '/') - allow.workdir));
	char *ceil = xasprintf("GIT_CEILING_DIRECTORIES=%s", *parent ? parent : "/");
	char *const argv[] = { "git", "-C", d->patch.dir, "apply", "--numstat", "-z", d->patch.file, NULL };
	char *const envp[] = { ceil, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	pid_t pid = -1;
	if (posix_spawnp(&pid, "git", &fa, NULL, argv, envp))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	free(ceil);
	free(parent);
	close(fd[1]);
	struct rt_sb o = RT_SB_INIT;
	char buf[4096];
	ssize_t k;
	while (pid > 0 && (k = read(fd[0], buf, sizeof(buf))) > 0)
		rt_sb_add(&o, buf, (size_t)k);
	close(fd[0]);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		rt_sb_release(&o);
		return;
	}
	for (const char *p = o.buf, *end = o.buf + o.len; p && p < end;) {
		const char *t = memchr(p, '\t', (size_t)(end - p));
		t = t ? memchr(t + 1, '\t', (size_t)(end - t - 1)) : NULL;
		if (!t)
			break;
		const char *names[2] = { t + 1, NULL };
		if (!*names[0]) { /* a rename or copy: "\0old\0new\0" */
			names[0] = t + 2;
			names[1] = names[0] + strlen(names[0]) + 1;
		}
		for (size_t i = 0; i < 2 && names[i] && names[i] < end; i++) {
			const char *nm = names[i];
			if (check_relative(nm, "git apply --numstat of an accepted diff"))
				continue;
			char *abs = xasprintf("%s/%s", d->patch.dir, nm);
			FUZZ_CHECK(allowed_under(abs), "git apply reads '%s', not allowed, in an accepted diff", nm);
			free(abs);
		}
		const char *last = names[1] ? names[1] : names[0];
		p = last + strlen(last) + 1;
	}
	rt_sb_release(&o);
}

static void check_accepted(const struct var_def *d, json_t *vj)
{
	FUZZ_CHECK(d->build.n == 0, "an accepted answer runs a build (%s)", d->build.v[0]);
	FUZZ_CHECK(listed(&allow.kinds, var_kind_name(d->kind)), "kind %s is not listed", var_kind_name(d->kind));
	bool after_opt = false;
	for (size_t i = 0; d->kind == VAR_KIND_FLAG && i < d->flag.n; i++) {
		const char *a = d->flag.v[i];
		bool opt = var_argv_is_option(a);
		FUZZ_CHECK(opt || after_opt, "'%s' is neither an option nor its value", a);
		after_opt = opt && !strchr(a, '=');
		if (!opt)
			continue;
		char *name = xstrndup(a, strcspn(a, "="));
		FUZZ_CHECK(listed(&allow.flags, name) && strcmp(name, "-c"), "option %s is not allowed", name);
		free(name);
	}
	if (d->kind == VAR_KIND_FLAG && d->flag_key.name)
		FUZZ_CHECK(listed(&allow.flags, d->flag_key.name), "option %s is not allowed", d->flag_key.name);
	for (size_t i = 0; d->kind == VAR_KIND_ENV && i < d->env.n; i++) {
		const char *n = d->env.v[i].name;
		FUZZ_CHECK(listed(&allow.env, n) && strncmp(n, "LD_", 3) && strcmp(n, "PATH"), "variable %s", n);
	}
	const char *f[4];
	size_t n = agent_llm_files(d, f);
	for (size_t i = 0; i < n; i++)
		check_path(f[i], !(d->kind == VAR_KIND_PATCH && f[i] == d->patch.dir));
	if (d->kind == VAR_KIND_PATCH) {
		check_diff(d->patch.file);
		check_git(d);
	}
	char *t = json_dumps(vj, JSON_COMPACT | JSON_SORT_KEYS);
	char *r = rt_redacted(t);
	FUZZ_CHECK(!strcmp(t, r), "an accepted variant quotes a secret: %s", t);
	free(t);
	free(r);
}

/* Read text once: the return code, the error's text (new). */
static int read_once(const char *text, char **why_out, bool check)
{
	json_t *vj = NULL;
	struct var_def d;
	char *rat = NULL;
	struct rt_sb why = RT_SB_INIT;
	int rc = spec_llm_read(spec, &allow, text, &vj, &d, &rat, &why);
	FUZZ_CHECK(rc == 0 || rc == RT_EPARSE || rc == RT_EINVAL, "spec_llm_read returned %d", rc);
	FUZZ_CHECK(rc == 0 || why.len > 0, "a refusal without a message");
	if (rc == 0 && check)
		check_accepted(&d, vj);
	*why_out = rt_sb_detach(&why, NULL);
	spec_variant_release(&d);
	json_decref(vj);
	free(rat);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!spec)
		setup();
	struct fuzz_part parts[2];
	size_t np = fuzz_split(data, size, "\n====\n", parts, 2);
	char *text = fuzz_str(parts[0]);
	char *diff = fuzz_write("fz.diff", np > 1 ? parts[1].p : "", np > 1 ? parts[1].n : 0);
	char *w1 = NULL, *w2 = NULL;
	int r1 = read_once(text, &w1, true), r2 = read_once(text, &w2, false);
	FUZZ_CHECK(r1 == r2 && !strcmp(w1, w2), "two reads differ: %d '%s', %d '%s'", r1, w1, r2, w2);
	if (getenv("FUZZ_LLM_VERBOSE")) /* what each input of a corpus gives */
		fprintf(stderr, "fuzz_llm: %s\n", r1 ? w1 : "accepted");
	free(w1);
	free(w2);
	free(diff);
	free(text);
	return 0;
}
