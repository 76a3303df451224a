/*
 * Unit tests of strategy llm's parts in agents/ (agents/llm.c): the
 * answer's envelope (JSON, one variant object, a rationale, a ```json
 * fence allowed, nothing else), the containment model of agents/llm_allow.c
 * (kinds; files as real paths inside the workdir, globs per component;
 * flags and env from lists; patches; no build), and the prompt: built only from its input,
 * holding the journal, the findings, the space, the allowed lists and the
 * exact schema; the re-ask carries the error. The variant inside the
 * answer is read by the spec's parser (tests/agents/llm_e2e.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "variants/var.h"

/* agent_llm_answer on text: its return code, the error in err. */
static int read_answer(const char *text, struct rt_sb *err)
{
	json_t *v = NULL;
	char *why = NULL;
	rt_sb_reset(err);
	int rc = agent_llm_answer(text, &v, &why, err);
	assert_true(rc ? !v && !why : v && why);
	json_decref(v);
	free(why);
	return rc;
}

static void test_answer_envelope(void **state)
{
	(void)state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\", \"flag\": [\"--x\"]}, \"rationale\": \"r\"}", &err), 0);
	assert_int_equal(read_answer("```json\n{\"variant\": {\"name\": \"a\"}, \"rationale\": \"r\"}\n```\n", &err), 0);
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "not JSON"));
	assert_int_equal(read_answer("", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "empty"));
	assert_int_equal(read_answer("[1]", &err), RT_EPARSE);
	assert_int_equal(read_answer("{\"variants\": [], \"rationale\": \"r\"}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "name exactly one change"));
	assert_int_equal(read_answer("{\"variant\": [{\"name\": \"a\"}], \"rationale\": \"r\"}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "variant: expected one object"));
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"}}", &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "rationale"));
	assert_int_equal(read_answer("{\"variant\": {\"name\": \"a\"}, \"rationale\": \"r\", \"x\": 1}", &err),
			 RT_EPARSE);
	assert_non_null(strstr(err.buf, "unexpected key 'x'"));
	assert_int_equal(read_answer("{\"variant\": {}, \"variant\": {}, \"rationale\": \"r\"}", &err), RT_EPARSE);
	rt_sb_release(&err);
}

/* A scratch workdir for the containment tests: tiles.json, kern/a.csv,
 * kern/sub/b.csv, src/k.c, p.diff, a link inside (in.json -> tiles.json),
 * a link out (out -> /tmp) and a FIFO (fifo.json). */
static char *scratch(void)
{
	char tmpl[] = "/tmp/ratchet-llm-unit-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	char *w = realpath(tmpl, NULL);
	char *cmd = xasprintf("cd %s && mkdir -p kern/sub src && echo {} > tiles.json && echo a > kern/a.csv && "
			      "echo b > kern/sub/b.csv && echo x > src/k.c && ln -s tiles.json in.json && "
			      "ln -s /tmp out && mkfifo fifo.json && echo > p.diff", w);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return w;
}

static void drop(char *w)
{
	char *cmd = xasprintf("rm -rf %s", w);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(w);
}

static void strv_set(struct rt_strv *v, const char *const *items)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; items[i]; i++) {
		v->v = xrealloc(v->v, (v->n + 2) * sizeof(char *));
		v->v[v->n++] = xstrdup(items[i]);
		v->v[v->n] = NULL;
	}
}

static void allow_make(struct agent_llm_allow *a, char *w)
{
	memset(a, 0, sizeof(*a));
	strv_set(&a->kinds, (const char *const[]){ "table", "flag", "env", "patch", "file", NULL });
	strv_set(&a->files, (const char *const[]){ "tiles.json", "kern/*.csv", "*.json", "src", "p.diff", NULL });
	strv_set(&a->flags, (const char *const[]){ "-t", "--x", NULL });
	strv_set(&a->env, (const char *const[]){ "A", NULL });
	agent_llm_script_opts((char *[]){ "sh", "-c", "echo 1", NULL }, &a->script_opts);
	a->workdir = xstrdup(w);
}

/* The containment tests' fixture: a scratch workdir, its allow list and an
 * error buffer. */
struct fx {
	char *w;
	struct agent_llm_allow a;
	struct rt_sb err;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	f->w = scratch();
	allow_make(&f->a, f->w);
	f->err = (struct rt_sb)RT_SB_INIT;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	agent_llm_allow_release(&f->a);
	rt_sb_release(&f->err);
	drop(f->w);
	free(f);
	return 0;
}

/* agent_llm_allowed on a table change of path (w/rel when rel is relative). */
static int table_at(const struct agent_llm_allow *a, const char *rel, struct rt_sb *err)
{
	struct var_def v;
	memset(&v, 0, sizeof(v));
	v.kind = VAR_KIND_TABLE;
	char *p = rel[0] == '/' || rel[0] == '{' ? xstrdup(rel) : xasprintf("%s/%s", a->workdir, rel);
	v.table.file = p;
	rt_sb_reset(err);
	int rc = agent_llm_allowed(&v, a, err);
	free(p);
	return rc;
}

/* Files: real paths inside the workdir, globs matched per component. */
static void test_allowed_files(void **state)
{
	struct fx *f = *state;
	assert_int_equal(table_at(&f->a, "tiles.json", &f->err), 0);
	assert_int_equal(table_at(&f->a, "kern/a.csv", &f->err), 0);
	assert_int_equal(table_at(&f->a, "in.json", &f->err), 0); /* a link inside, to an allowed file */
	assert_int_equal(table_at(&f->a, "new.json", &f->err), 0); /* a new file in the workdir */
	assert_int_equal(table_at(&f->a, "kern/sub/b.csv", &f->err), RT_EINVAL); /* '*' never crosses '/' */
	assert_non_null(strstr(f->err.buf, "file 'kern/sub/b.csv' is not allowed (allowed: tiles.json, kern/*.csv"));
	assert_int_equal(table_at(&f->a, "kern/a.txt", &f->err), RT_EINVAL);
	char *up = xasprintf("%s/../outside.json", f->w); /* as the spec normalises it */
	char *norm = xstrndup(f->w, (size_t)(strrchr(f->w, '/') - f->w));
	char *outside = xasprintf("%s/outside.json", norm);
	assert_int_equal(table_at(&f->a, outside, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "outside the workdir"));
	assert_int_equal(table_at(&f->a, up, &f->err), RT_EINVAL);
	assert_int_equal(table_at(&f->a, "/tmp/x/outside.json", &f->err), RT_EINVAL);
	assert_int_equal(table_at(&f->a, "out/x.json", &f->err), RT_EINVAL); /* through a link out */
	assert_non_null(strstr(f->err.buf, "outside the workdir"));
	assert_int_equal(table_at(&f->a, "fifo.json", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "not a regular file"));
	assert_int_equal(table_at(&f->a, "{workdir}/tiles.json", &f->err), RT_EINVAL);
	/* file: the source obeys the same rule, and no /proc or FIFO */
	struct var_def v;
	memset(&v, 0, sizeof(v));
	v.kind = VAR_KIND_FILE;
	char *tgt = xasprintf("%s/tiles.json", f->w), *fifo = xasprintf("%s/fifo.json", f->w);
	v.file.target = tgt;
	v.file.source = "/proc/self/environ";
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "source '/proc/self/environ' is outside the workdir"));
	v.file.source = fifo;
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "not a regular file"));
	v.file.source = tgt;
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), 0);
	/* no build, ever */
	v.build = (struct rt_strv){ (char *[]){ "sh", "-c", "id", NULL }, 3 };
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "never runs a command"));
	free(tgt);
	free(fifo);
	free(up);
	free(norm);
	free(outside);
}

/* Kinds, flags and env from the lists; never a script option or a loader's variable. */
static void test_allowed_flags_env(void **state)
{
	struct fx *f = *state;
	struct var_def v;
	memset(&v, 0, sizeof(v));
	v.kind = VAR_KIND_FLAG;
	v.flag = (struct rt_strv){ (char *[]){ "-t", "4", "--x=2", NULL }, 3 };
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), 0);
	v.flag = (struct rt_strv){ (char *[]){ "-c", "id > FILE; echo 5", NULL }, 2 };
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "flag '-c' carries a program"));
	v.flag = (struct rt_strv){ (char *[]){ "--eval=x", NULL }, 1 };
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	v.flag = (struct rt_strv){ (char *[]){ "-z", "1", NULL }, 2 };
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "flag '-z' is not allowed (allowed: -t, --x)"));
	v.flag = (struct rt_strv){ (char *[]){ "script.py", NULL }, 1 };
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "no option's value"));
	v.kind = VAR_KIND_ENV;
	struct rt_env e[] = { { "A", "2" } };
	v.env = (struct rt_envv){ e, 1 };
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), 0);
	const char *bad[] = { "LD_PRELOAD", "PATH", "PYTHONPATH", "BASH_ENV", "IFS", "PERL5OPT", "NODE_OPTIONS" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		e[0].name = (char *)bad[i];
		rt_sb_reset(&f->err);
		assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
		assert_non_null(strstr(f->err.buf, "never sets it"));
	}
	e[0].name = "B";
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "env 'B' is not allowed (allowed: A)"));
	rt_strv_release(&f->a.kinds);
	strv_set(&f->a.kinds, (const char *const[]){ "table", NULL });
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_allowed(&v, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "kind 'env' is not allowed"));
	struct rt_strv so = { 0 };
	agent_llm_script_opts((char *[]){ "/usr/bin/python3.11", "-m", "x", NULL }, &so);
	bool m = false;
	for (size_t i = 0; i < so.n; i++)
		m |= !strcmp(so.v[i], "-m");
	assert_true(m);
	rt_strv_release(&so);
}

/* agent_llm_patch_ok on diff, the patch's dir the workdir. */
static int diff_ok(const struct agent_llm_allow *a, const char *diff, struct rt_sb *err)
{
	struct var_def v;
	memset(&v, 0, sizeof(v));
	v.kind = VAR_KIND_PATCH;
	v.patch.dir = a->workdir;
	rt_sb_reset(err);
	return agent_llm_patch_ok(&v, diff, a, err);
}

/* A plan's files as git apply names them (agent_llm_plan_ok): each
 * inside the workdir and allowed; a patch's under an allowed folder. */
static void test_allowed_plan(void **state)
{
	struct fx *f = *state;
	struct var_def v;
	memset(&v, 0, sizeof(v));
	v.kind = VAR_KIND_PATCH;
	struct var_file vf[2];
	memset(vf, 0, sizeof(vf));
	struct var_plan pl = { vf, 2 };
	vf[0].path = xasprintf("%s/src/k.c", f->w);
	vf[1].path = xasprintf("%s/src/new.c", f->w); /* created by the patch */
	assert_int_equal(agent_llm_plan_ok(&v, &pl, &f->a, &f->err), 0);
	free(vf[1].path);
	vf[1].path = xasprintf("%s/run.sh", f->w);
	assert_int_equal(agent_llm_plan_ok(&v, &pl, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "file git apply touches 'run.sh' is not allowed"));
	free(vf[1].path);
	vf[1].path = xasprintf("%s/out/x.c", f->w); /* out is a link to /tmp */
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_plan_ok(&v, &pl, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "outside the workdir"));
	v.kind = VAR_KIND_TABLE; /* a table's file: its own glob, no folder above */
	free(vf[1].path);
	vf[1].path = xasprintf("%s/kern/sub/b.csv", f->w);
	pl.n = 1;
	free(vf[0].path);
	vf[0].path = xasprintf("%s/kern/a.csv", f->w);
	assert_int_equal(agent_llm_plan_ok(&v, &pl, &f->a, &f->err), 0);
	pl.n = 2;
	rt_sb_reset(&f->err);
	assert_int_equal(agent_llm_plan_ok(&v, &pl, &f->a, &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "file 'kern/sub/b.csv' is not allowed"));
	free(vf[0].path);
	free(vf[1].path);
}

/* Patches: allowed files only, no '..', no absolute path, no link. */
static void test_allowed_patch(void **state)
{
	struct fx *f = *state;
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/k.c\nindex 1..2 100644\n--- a/src/k.c\n+++ b/src/k.c\n"
				     "@@ -1,2 +1,2 @@\n--- a/../../etc/passwd\n+y\n x\n", &f->err), 0);
	assert_int_equal(diff_ok(&f->a, "--- a/src/new/f.c\n+++ b/src/new/f.c\n@@ -0,0 +1 @@\n+x\n", &f->err), 0);
	assert_int_equal(diff_ok(&f->a, "--- a/../x.c\n+++ b/../x.c\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "--- /etc/passwd\n+++ /etc/passwd\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "--- a/run.sh\n+++ b/run.sh\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "patched file 'run.sh' is not allowed"));
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/l b/src/l\nnew file mode 120000\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "symbolic link"));
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/k.c\nindex 1..2 120000\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/k.c\nrename from src/k.c\nrename to run.sh\n", &f->err),
			 RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git \"a/src/\\056\\056/x\" \"b/src/\\056\\056/x\"\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "+++ b/out/x.c\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename from src/k.c\nrename to src/j.c\n", &f->err), 0);
	/* every name git apply reads (its header table, git 2.39 apply.c), not only the common
	 * ones: "rename old"/"rename new" rename as "rename from"/"rename to" do (issue 22) */
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename old src/k.c\nrename new run.sh\n", &f->err),
			 RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'run.sh' is not allowed"));
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nsimilarity index 90%\nrename old src/k.c\n"
				     "rename new ../../outside.json\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename from src/k.c\nrename to ../outside.c\n",
				 &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\ncopy from src/k.c\ncopy to /tmp/outside.c\n", &f->err),
			 RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename old src/k.c\nrename new src/j.c\n", &f->err), 0);
	/* on a rename line a tab belongs to the name (git 2.39.5 reads 'src/k<TAB>d/../../run.sh' whole);
	 * on "+++" it ends the name, as in GNU diff's "+++ b/f<TAB>date" (CI's fuzz found the first) */
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename from src/k.c\n"
				     "rename to src/k\td/../../run.sh\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\ncopy from src/k.c\ncopy to src/j\r/../../x\n", &f->err),
			 0); /* a CR ends it: git reads "src/j" */
	/* a VT or an FF does not end a name on any line: git's isspace is false for them (git 2.39.5
	 * reads "src/k\fd/../../run.sh" and "src/k.c\v/../../x"; CI's fuzz found the first) */
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/j.c\nrename from src/k.c\n"
				     "rename to src/k\fd/../../run.sh\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "--- a/src/k.c\n+++ b/src/k.c\v/../../x\n@@ -1 +1 @@\n-a\n+b\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "--- a/src/k.c\t2026-12-05 10:00:00.000000000 +0000\n+++ b/src/k.c\t\n", &f->err), 0);
	/* ...but a diff without "diff --git" whose line ends in a date has git read the name up to
	 * the date, the tab and what follows it included (git 2.39.5: "src/k.c\t../../x") */
	assert_int_equal(diff_ok(&f->a, "--- a/src/k.c\t../../x 2026-12-05 10:00:00.000000000 +0000\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	/* a name git reads inside an allowed folder, but not the one the line seems to name */
	assert_int_equal(diff_ok(&f->a, "+++ b/src/k.c\tz/e.sh 2026-12-05 10:00:00 +0000\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "more than a date after the tab"));
	assert_int_equal(diff_ok(&f->a, "+++ \"b/src/\\q\"\t../x\n", &f->err), RT_EINVAL); /* a quoted name git cannot read */
	assert_non_null(strstr(f->err.buf, "cannot read the name"));
	/* a diff without "diff --git" whose first file's names have no '/': git guesses -p0 for the
	 * whole patch (git 2.39.5 patches sub/k.json here, not k.json); only when a hunk follows */
	assert_int_equal(diff_ok(&f->a, "--- k.json\n+++ k.json\n@@ -1 +1 @@\n-a\n+b\n--- sub/k.json\n+++ sub/k.json\n"
				     "@@ -1 +1 @@\n-a\n+b\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'sub/k.json' is not allowed"));
	assert_int_equal(diff_ok(&f->a, "--- /dev/null\n+++ new.json\n@@ -0,0 +1 @@\n+x\n--- sub/x.json\n+++ sub/x.json\n"
				     "@@ -1 +1 @@\n-a\n+b\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "--- k.json\n+++ k.json\nxx\n--- a/tiles.json\n+++ b/tiles.json\n@@ -1 +1 @@\n-a\n+b\n",
				 &f->err), 0); /* no hunk after the first pair: git guesses nothing, -p1 */
	assert_int_equal(diff_ok(&f->a, "--- a/k.json\n+++ b/k.json\n@@ -1 +1 @@\n-a\n+b\n--- a/sub/k.json\n+++ b/sub/k.json\n"
				     "@@ -1 +1 @@\n-a\n+b\n", &f->err), RT_EINVAL); /* -p1 throughout: sub/k.json */
	/* a date after spaces: git cuts the name there and reads a CR as part of it */
	assert_int_equal(diff_ok(&f->a, "--- /dev/null\n+++ b/src/n.c  2026-12-05 10:00:00.000000000 +0000\n", &f->err), 0);
	assert_int_equal(diff_ok(&f->a, "+++ b/src/k\r/../../run.sh 26-12-05\n", &f->err), RT_EINVAL);
	assert_non_null(strstr(f->err.buf, "'..'"));
	assert_int_equal(diff_ok(&f->a, "+++ b/src/k\r/../../run.sh 2026-12-05 10:00:00 +05:30\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "+++ b/src/k\r/../../run.sh\t10:00:00\n", &f->err), 0); /* no date: git reads src/k */
	/* a binary patch names its file on the diff --git line only; its data lines are no header */
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/src/k.c\nindex 1..2 100644\nGIT binary patch\nliteral 5\n"
				     "McmZ?b1cpxB00KDy=l}o!\n\nliteral 0\nHcmV?d00001\n\n", &f->err), 0);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/run.sh\nindex 1..2 100644\nGIT binary patch\nliteral 5\n"
				     "McmZ?b1cpxB00KDy=l}o!\n\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k.c b/run.sh\n", &f->err), RT_EINVAL);
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/k b/c b/src/k b/c\n", &f->err), 0); /* a space in the name */
	assert_int_equal(diff_ok(&f->a, "diff --git a/src/x b/y b/src/z\n", &f->err), RT_EINVAL); /* cannot tell */
	assert_non_null(strstr(f->err.buf, "cannot read the names"));
}

/* The content of message i. */
static const char *content(json_t *m, size_t i)
{
	return json_string_value(json_object_get(json_array_get(m, i), "content"));
}

static void test_prompt(void **state)
{
	(void)state;
	struct agent_llm_step j[] = {
		{ 0, "baseline", "baseline", "baseline", NAN, "baseline: median 10", NULL },
		{ 1, "graphs-16", "flag", "reverted", 0.004, "no gain", "flag --max-graph-bs 16" },
	};
	const char *fnd[] = { "hole: tiles.json has no entry for prefill.T_LE_512; bound 26.0%" };
	char *k[] = { "table", NULL }, *f[] = { "tiles.json", NULL };
	struct rt_strv kinds = { k, 1 }, files = { f, 1 };
	json_t *space = json_pack("{s:[s]}", "parameters", "BLOCK_M");
	struct agent_llm_view v = { .objective = "serve.tput, higher is better", .journal = j, .n_journal = 2,
				    .findings = fnd, .n_findings = 1, .space = space, .kinds = &kinds, .files = &files };
	json_t *a = agent_llm_messages(&v), *b = agent_llm_messages(&v);
	assert_true(json_equal(a, b)); /* the same input asks the same question */
	assert_int_equal(json_array_size(a), 2);
	assert_non_null(strstr(content(a, 0), "\"required\":[\"variant\",\"rationale\"]"));
	assert_non_null(strstr(content(a, 0), "\"additionalProperties\":false"));
	const char *u = content(a, 1);
	assert_non_null(strstr(u, "1. graphs-16 (flag): reverted, effect +0.40%; reason: no gain; change: flag"));
	assert_non_null(strstr(u, "1. hole: tiles.json has no entry for prefill.T_LE_512"));
	assert_non_null(strstr(u, "Kinds you may propose: table\n"));
	assert_non_null(strstr(u, "Files you may touch (globs, relative to the workdir): tiles.json\n"));
	assert_non_null(strstr(u, "BLOCK_M"));
	agent_llm_reask(a, "{bad", "the answer is not JSON");
	assert_int_equal(json_array_size(a), 4);
	assert_string_equal(content(a, 2), "{bad");
	assert_non_null(strstr(content(a, 3), "refused: the answer is not JSON"));
	json_decref(a);
	json_decref(b);
	json_decref(space);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_envelope),
		cmocka_unit_test_setup_teardown(test_allowed_files, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_allowed_flags_env, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_allowed_plan, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_allowed_patch, fx_setup, fx_teardown),
		cmocka_unit_test(test_prompt),
	};
	return cmocka_run_group_tests_name("llm", tests, NULL, NULL);
}
