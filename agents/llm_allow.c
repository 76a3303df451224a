/*
 * strategy: llm's containment model (docs/reliability.md, "What a model's
 * answer may do"): an answer is data, never a command. It proposes one
 * change of an allowed kind, with no build; flags only from a list, never
 * an option that a measured command carries a program with; environment
 * variables only from a list, never a loader's, a shell's or an
 * interpreter's; files as real paths (symbolic links followed) inside the
 * workdir, matching an allowed glob component by component, existing ones
 * regular and under a size cap; patches that touch only allowed files,
 * with no "..", no absolute path and no symbolic link. The lists come from
 * the spec (runner/spec/spec_llm.c, spec_llm_allow).
 */
#define _GNU_SOURCE /* memmem */
#include "agents/agent.h"
#include "variants/var.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- lists ---- */

static bool listed(const struct rt_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* RT_EINVAL: "WHAT 'name' is not allowed (allowed: a, b)". */
static int refuse(struct rt_sb *err, const char *what, const char *name, const struct rt_strv *allowed)
{
	rt_errf(err, RT_EINVAL, "%s '%s' is not allowed (allowed: ", what, name);
	for (size_t i = 0; i < allowed->n; i++)
		rt_sb_addf(err, "%s%s", i ? ", " : "", allowed->v[i]);
	rt_sb_adds(err, allowed->n ? ")" : "none)");
	return RT_EINVAL;
}

void agent_llm_allow_release(struct agent_llm_allow *a)
{
	rt_strv_release(&a->kinds);
	rt_strv_release(&a->files);
	rt_strv_release(&a->flags);
	rt_strv_release(&a->env);
	rt_strv_release(&a->script_opts);
	free(a->workdir);
	memset(a, 0, sizeof(*a));
}

/* ---- flags ---- */

/* Interpreters and the options with which their command line carries a
 * program (the shells' -c, python -c and -m, perl -e, node --eval, ...),
 * from each program's manual page. */
static const struct {
	const char *name;       /* the program's name, a version suffix allowed (python3.11) */
	const char *const *opt; /* NULL-terminated */
} interpreters[] = {
	{ "sh", (const char *const[]){ "-c", NULL } },
	{ "bash", (const char *const[]){ "-c", "--init-file", "--rcfile", NULL } },
	{ "dash", (const char *const[]){ "-c", NULL } },
	{ "zsh", (const char *const[]){ "-c", NULL } },
	{ "ksh", (const char *const[]){ "-c", NULL } },
	{ "mksh", (const char *const[]){ "-c", NULL } },
	{ "ash", (const char *const[]){ "-c", NULL } },
	{ "busybox", (const char *const[]){ "-c", NULL } },
	{ "fish", (const char *const[]){ "-c", "--command", "-C", "--init-command", NULL } },
	{ "csh", (const char *const[]){ "-c", NULL } },
	{ "tcsh", (const char *const[]){ "-c", NULL } },
	{ "python", (const char *const[]){ "-c", "-m", NULL } },
	{ "pypy", (const char *const[]){ "-c", "-m", NULL } },
	{ "perl", (const char *const[]){ "-e", "-E", "-M", "-m", "-I", NULL } },
	{ "ruby", (const char *const[]){ "-e", "-r", "-I", NULL } },
	{ "node", (const char *const[]){ "-e", "--eval", "-p", "--print", "-r", "--require", "--import",
					 "--loader", "--experimental-loader", NULL } },
	{ "nodejs", (const char *const[]){ "-e", "--eval", "-p", "--print", "-r", "--require", NULL } },
	{ "deno", (const char *const[]){ "--eval", "--import-map", NULL } },
	{ "bun", (const char *const[]){ "-e", "--eval", "-p", "--print", "-r", "--preload", NULL } },
	{ "php", (const char *const[]){ "-r", "-B", "-R", "-E", "-F", "-f", "-d", NULL } },
	{ "lua", (const char *const[]){ "-e", "-l", NULL } },
	{ "luajit", (const char *const[]){ "-e", "-l", NULL } },
	{ "Rscript", (const char *const[]){ "-e", NULL } },
	{ "awk", (const char *const[]){ "-f", "-e", "--source", NULL } },
	{ "gawk", (const char *const[]){ "-f", "-e", "--source", "-i", "--include", NULL } },
	{ "mawk", (const char *const[]){ "-f", NULL } },
	{ "env", (const char *const[]){ "-S", "--split-string", NULL } },
};

/* Options that carry a program whatever the command. */
static const char *const always_script_opts[] = { "--command", "--eval", "--exec", "--execute", "--script", NULL };

/* Is base (a program's file name) name, or name and a version (python3.11)? */
static bool is_program(const char *base, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(base, name, n))
		return false;
	for (const char *p = base + n; *p; p++)
		if (!strchr("0123456789.", *p))
			return false;
	return true;
}

static void add_once(struct rt_strv *v, const char *s)
{
	if (listed(v, s))
		return;
	v->v = xrealloc(v->v, (v->n + 2) * sizeof(*v->v));
	v->v[v->n++] = xstrdup(s);
	v->v[v->n] = NULL;
}

void agent_llm_script_opts(char *const *argv, struct rt_strv *out)
{
	for (size_t k = 0; always_script_opts[k]; k++)
		add_once(out, always_script_opts[k]);
	for (size_t i = 0; argv && argv[i]; i++) {
		const char *slash = strrchr(argv[i], '/');
		const char *base = slash ? slash + 1 : argv[i];
		for (size_t k = 0; k < RT_ARRAY_SIZE(interpreters); k++)
			if (is_program(base, interpreters[k].name))
				for (size_t j = 0; interpreters[k].opt[j]; j++)
					add_once(out, interpreters[k].opt[j]);
	}
}

/* The option name of an argument: "--x" of "--x=v". New string. */
static char *opt_name(const char *arg)
{
	const char *eq = strchr(arg, '=');
	return eq ? xstrndup(arg, (size_t)(eq - arg)) : xstrdup(arg);
}

int agent_llm_flag_ok(const char *name, const struct agent_llm_allow *a, struct rt_sb *err)
{
	if (listed(&a->script_opts, name))
		return rt_errf(err, RT_EINVAL, "flag '%s' carries a program in the measured command: an answer "
			       "never sets it", name);
	if (!listed(&a->flags, name))
		return refuse(err, "flag", name, &a->flags);
	return 0;
}

/* Every option of a flag answer listed, no script option, no positional
 * argument (a value follows its option). */
static int check_flags(const struct var_def *v, const struct agent_llm_allow *a, struct rt_sb *err)
{
	if (v->flag_key.name)
		return agent_llm_flag_ok(v->flag_key.name, a, err);
	bool after_opt = false;
	for (size_t i = 0; i < v->flag.n; i++) {
		const char *s = v->flag.v[i];
		bool opt = var_argv_is_option(s);
		if (!opt && !after_opt)
			return rt_errf(err, RT_EINVAL, "flag: '%s' is no option's value: an answer gives options "
				       "and their values only", s);
		after_opt = opt && !strchr(s, '=');
		if (!opt)
			continue;
		char *name = opt_name(s);
		int rc = agent_llm_flag_ok(name, a, err);
		free(name);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- environment ---- */

/* Variables that load code or change how a loader, a shell or an
 * interpreter finds it (ld.so(8), bash(1), python(1), perl(1), node(1), ...):
 * exact names, then prefixes. */
static const char *const env_names[] = {
	"PATH", "IFS", "ENV", "BASH_ENV", "CDPATH", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
	"GLOBIGNORE", "SHELL", "HOME", "TMPDIR", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT", "RUBYLIB", "PERLLIB",
	"PERLIO", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "GCONV_PATH",
	"LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "GLIBC_TUNABLES", "MALLOC_CHECK_",
	"LUA_INIT", "LUA_PATH", "LUA_CPATH", "EDITOR", "VISUAL", "PAGER", NULL,
};
static const char *const env_prefixes[] = { "LD_", "DYLD_", "PYTHON", "PERL5", "BASH_FUNC_", "GIT_",
					    "LUA_INIT", "NODE_", "RUBY", NULL };

bool agent_llm_env_forbidden(const char *name)
{
	for (size_t i = 0; env_names[i]; i++)
		if (!strcmp(name, env_names[i]))
			return true;
	for (size_t i = 0; env_prefixes[i]; i++)
		if (!strncmp(name, env_prefixes[i], strlen(env_prefixes[i])))
			return true;
	return false;
}

static int check_env(const struct var_def *v, const struct agent_llm_allow *a, struct rt_sb *err)
{
	for (size_t i = 0; i < v->env.n; i++) {
		const char *n = v->env.v[i].name;
		if (agent_llm_env_forbidden(n))
			return rt_errf(err, RT_EINVAL, "env '%s' changes how programs are loaded or run: an answer "
				       "never sets it", n);
		if (!listed(&a->env, n))
			return refuse(err, "env", n, &a->env);
	}
	return 0;
}

/* ---- files ---- */

/* Does rel match a glob, component by component ('*' never crosses a '/')?
 * With leading, a folder above rel may match instead (a patch's dir; "."
 * is the workdir). */
static bool matches(const struct rt_strv *globs, const char *rel, bool leading)
{
	for (size_t i = 0; i < globs->n; i++) {
		const char *g = globs->v[i];
		if (!strcmp(g, rel) || !fnmatch(g, rel, FNM_PATHNAME) || (leading && !strcmp(g, ".")))
			return true;
		for (const char *sl = strchr(rel, '/'); leading && sl; sl = strchr(sl + 1, '/')) {
			char *up = xstrndup(rel, (size_t)(sl - rel));
			bool m = !strcmp(g, up) || !fnmatch(g, up, FNM_PATHNAME);
			free(up);
			if (m)
				return true;
		}
	}
	return false;
}

/* Where an answer's path leads, relative to the workdir: inside it, an
 * existing one a regular file (a folder when dir) under the cap. *rel is
 * new. */
static int contain(const char *what, const char *path, bool dir, const struct agent_llm_allow *a, char **rel,
		   struct rt_sb *err)
{
	*rel = NULL;
	if (!path || path[0] != '/')
		return rt_errf(err, RT_EINVAL, "%s '%s': a path with a placeholder or not under the workdir", what,
			       path ? path : "");
	struct rt_sb why = RT_SB_INIT;
	if (rt_path_within(a->workdir, path, rel, &why)) {
		rt_errf(err, RT_EINVAL, "%s '%s' is outside the workdir (%s)", what, path, why.buf);
		rt_sb_release(&why);
		return RT_EINVAL;
	}
	rt_sb_release(&why);
	struct stat st;
	int rc = 0;
	if (stat(path, &st))
		return 0; /* new: its folder resolved inside */
	if (dir && !S_ISDIR(st.st_mode))
		rc = rt_errf(err, RT_EINVAL, "%s '%s' is not a folder", what, *rel);
	else if (!dir && !S_ISREG(st.st_mode))
		rc = rt_errf(err, RT_EINVAL, "%s '%s' is not a regular file", what, *rel);
	else if (!dir && (uint64_t)st.st_size > AGENT_LLM_FILE_MAX)
		rc = rt_errf(err, RT_EINVAL, "%s '%s' is %lld bytes, over the cap of %u", what, *rel,
			     (long long)st.st_size, AGENT_LLM_FILE_MAX);
	if (rc) {
		free(*rel);
		*rel = NULL;
	}
	return rc;
}

/* A file of the answer: contained and allowed. */
static int check_file(const char *what, const char *path, bool dir, bool leading, const struct agent_llm_allow *a,
		      struct rt_sb *err)
{
	char *rel = NULL;
	int rc = contain(what, path, dir, a, &rel, err);
	if (!rc && !matches(&a->files, rel, leading))
		rc = refuse(err, what, rel, &a->files);
	free(rel);
	return rc;
}

/* ---- patches ---- */

/* One name of a diff header, C-quoted by git when it holds odd bytes
 * ("a/x\tb"); NULL when it cannot be read. *end: after it. An unquoted
 * name ends where git apply's find_name ends it (git 2.39.5, apply.c
 * find_name_common and name_terminate, with git's own isspace, which is
 * false for VT and FF): at a newline or CR, and at a tab only on
 * "---"/"+++" lines (tab_ends; TERM_TAB). On "rename to"/"copy from" a tab
 * is part of the name: 'rename to k<TAB>d/../../x' makes git read
 * "k\td/../../x" (checked with git apply --summary), so its ".." counts;
 * so are a VT and an FF on every line: 'rename to d<FF>e/../../z' and
 * '+++ b/k<FF>e/../../z' make git read "d\fe/../../z" and "k\fe/../../z"
 * (git 2.39.5 apply --numstat -z; fuzz_llm found the first). */
static char *diff_name(const char *p, bool tab_ends, const char **end)
{
	if (*p != '"') {
		const char *e = p + strcspn(p, tab_ends ? "\t\n\r" : "\n\r");
		*end = e;
		return xstrndup(p, (size_t)(e - p));
	}
	struct rt_sb sb = RT_SB_INIT;
	for (p++; *p && *p != '"' && *p != '\n'; p++) {
		if (*p != '\\') {
			rt_sb_addc(&sb, *p);
			continue;
		}
		p++;
		static const char esc[] = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"";
		const char *e = *p ? strchr(esc, *p) : NULL;
		if (e && (e - esc) % 2 == 0) {
			rt_sb_addc(&sb, e[1]);
		} else if (p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7') {
			rt_sb_addc(&sb, (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0')));
			p += 2;
		} else {
			rt_sb_release(&sb);
			return NULL;
		}
	}
	if (*p != '"') {
		rt_sb_release(&sb);
		return NULL;
	}
	*end = p + 1;
	return rt_sb_detach(&sb, NULL);
}

/* The trailing timestamp of a "---"/"+++" line's text s (len bytes, no
 * newline) with the tab or the spaces before it, as git apply finds it in
 * a diff without "diff --git" (git 2.39.5, apply.c diff_timestamp_len):
 * a date yy-mm-dd (or yyyy-mm-dd), then optionally a time hh:mm:ss (with
 * a fraction .nnn) and a zone +hhmm or +hh:mm, each after one space. 0 when
 * there is none. The format is the one git's reader accepts (read in its
 * source, tried with git apply --numstat); the reader here is ratchet's own. */
static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static size_t time_len(const char *s, size_t e) /* " hh:mm:ss" ending at e */
{
	if (e < 9)
		return 0;
	const char *t = s + e - 9;
	return t[0] == ' ' && all_digits(t + 1, 2) && t[3] == ':' && all_digits(t + 4, 2) && t[6] == ':' &&
			       all_digits(t + 7, 2)
		       ? 9
		       : 0;
}

static size_t diff_date_len(const char *s, size_t len)
{
	size_t e = len;
	if (!e || !all_digits(s + e - 1, 1))
		return 0;
	if (e >= 6 && s[e - 6] == ' ' && (s[e - 5] == '+' || s[e - 5] == '-') && all_digits(s + e - 4, 4))
		e -= 6; /* " +0500" */
	else if (e >= 7 && s[e - 7] == ' ' && (s[e - 6] == '+' || s[e - 6] == '-') && all_digits(s + e - 5, 2) &&
		 s[e - 3] == ':' && all_digits(s + e - 2, 2))
		e -= 7; /* " +05:00" */
	size_t n = time_len(s, e);
	if (!n && e) { /* " hh:mm:ss.nnn" */
		size_t q = e - 1;
		while (q > 0 && all_digits(s + q, 1))
			q--;
		size_t t = s[q] == '.' ? time_len(s, q) : 0;
		n = t ? e - q + t : 0;
	}
	e -= n;
	if (e < 8 || !all_digits(s + e - 8, 2) || s[e - 6] != '-' || !all_digits(s + e - 5, 2) || s[e - 3] != '-' ||
	    !all_digits(s + e - 2, 2))
		return 0; /* no date */
	e -= 8;
	if (e >= 2 && all_digits(s + e - 2, 2))
		e -= 2; /* a four-digit year */
	if (!e || (s[e - 1] != '\t' && s[e - 1] != ' '))
		return 0; /* nothing before it, or no space */
	if (s[e - 1] == '\t')
		e--;
	else
		while (e && s[e - 1] == ' ')
			e--;
	return len - e;
}

/* The name git apply reads on a "---"/"+++" line of a diff without
 * "diff --git" (find_name_traditional): a C-quoted name; else, when the
 * line ends in a timestamp, everything before it (tab, CR and spaces
 * included); else up to a tab or CR. NULL when the quoted name
 * cannot be read. */
static char *traditional_name(const char *p)
{
	const char *e = NULL;
	if (*p == '"')
		return diff_name(p, true, &e);
	size_t len = strcspn(p, "\n"), d = diff_date_len(p, len);
	return d ? xstrndup(p, len - d) : diff_name(p, true, &e);
}

/* git apply's guess of -p from one name of a traditional pair (guess_p_value
 * with no work-tree prefix): 0 for a name without '/', else unknown (-1);
 * /dev/null and an empty name are unknown. Below the top of a work tree git
 * guesses from the prefix too; that case is left to the plan's check
 * (agent_llm_plan_ok), which reads git's own answer. */
static int guess_p(const char *p)
{
	if (!strncmp(p, "/dev/null", 9) && strchr(" \t\n\r", p[9]) && p[9]) /* git's isspace */
		return -1;
	char *n = traditional_name(p);
	int g = n && *n && !strchr(n, '/') ? 0 : -1;
	free(n);
	return g;
}

/* A path the diff touches, relative to the patch's dir (strip: the
 * a/ or b/ that git apply's -p1 takes off): no "..", not absolute, its
 * real path inside the workdir and allowed. */
static int diff_path(const char *name, bool strip, const struct var_def *v, const struct agent_llm_allow *a,
		     struct rt_sb *err)
{
	if (!strcmp(name, "/dev/null"))
		return 0;
	const char *p = name;
	if (strip) {
		const char *s = strchr(p, '/');
		p = s ? s + 1 : p;
	}
	if (!*p || *p == '/')
		return rt_errf(err, RT_EINVAL, "patch: '%s' is %s", name, *p ? "an absolute path" : "no file");
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && !strncmp(c, "..", 2))
			return rt_errf(err, RT_EINVAL, "patch: '%s' climbs out with '..'", name);
		c += n + (c[n] == '/');
	}
	char *abs = xasprintf("%s/%s", v->patch.dir, p);
	int rc = check_file("patched file", abs, false, true, a, err);
	free(abs);
	return rc;
}

/* "diff --git A B": both names, quoted or not; without quotes the two are
 * told apart as git does when they are equal ("a/x b/x"). */
static int diff_git_names(const char *line, bool strip, const struct var_def *v, const struct agent_llm_allow *a,
			  struct rt_sb *err)
{
	const char *p = line, *e = NULL;
	char *n1 = NULL, *n2 = NULL;
	if (*p == '"') {
		n1 = diff_name(p, false, &e); /* an unquoted second name: all the rest */
		if (n1 && *e == ' ')
			n2 = diff_name(e + 1, false, &e);
	} else {
		size_t len = strcspn(p, "\n");
		const char *q = memchr(p, '"', len);
		if (q && q > p && q[-1] == ' ') {
			n1 = xstrndup(p, (size_t)(q - p - 1));
			n2 = diff_name(q, false, &e);
		} else if (len % 2 == 1 && p[len / 2] == ' ' && !strncmp(p, "a/", 2) && !strncmp(p + len / 2 + 1, "b/", 2) &&
			   !strncmp(p + 2, p + len / 2 + 3, len / 2 - 2)) {
			n1 = xstrndup(p, len / 2); /* "a/x b/x" */
			n2 = xstrndup(p + len / 2 + 1, len / 2);
		} else {
			const char *b = NULL; /* "a/old b/new" (a rename): one " b/" only */
			for (const char *t = p; (t = memmem(t, len - (size_t)(t - p), " b/", 3)); t++)
				b = b ? p : t;
			if (b && b != p && !strncmp(p, "a/", 2)) {
				n1 = xstrndup(p, (size_t)(b - p));
				n2 = xstrndup(b + 1, len - (size_t)(b + 1 - p));
			}
		}
	}
	int rc = n1 && n2 ? diff_path(n1, strip, v, a, err) : rt_errf(err, RT_EINVAL, "patch: cannot read the names "
								      "of 'diff --git %.*s'", (int)strcspn(line, "\n"), line);
	if (!rc)
		rc = diff_path(n2, strip, v, a, err);
	free(n1);
	free(n2);
	return rc;
}

/* A hunk's line counts from "@@ -a,b +c,d @@" (b and d default to 1). */
static bool hunk_counts(const char *line, long *old, long *new)
{
	char *e;
	*old = *new = 1;
	if (strncmp(line, "@@ -", 4))
		return false;
	strtol(line + 4, &e, 10);
	if (*e == ',')
		*old = strtol(e + 1, &e, 10);
	if (strncmp(e, " +", 2))
		return false;
	strtol(e + 2, &e, 10);
	if (*e == ',')
		*new = strtol(e + 1, &e, 10);
	return !strncmp(e, " @@", 3) && *old >= 0 && *new >= 0;
}

/* One header line of the diff (p0: git has guessed -p0 for the patch). */
static int diff_header(const char *line, bool p0, const struct var_def *v, const struct agent_llm_allow *a,
		       struct rt_sb *err)
{
	static const struct {
		const char *start; /* the line's start */
		bool strip;        /* a/ or b/ comes first */
		bool tab_ends;     /* a tab ends an unquoted name (TERM_TAB) */
	} named[] = { /* every header of git apply's table that names a path (git 2.39, apply.c) */
		      { "--- ", true, true },		{ "+++ ", true, true },
		      { "rename from ", false, false }, { "rename to ", false, false },
		      { "rename old ", false, false },	{ "rename new ", false, false },
		      { "copy from ", false, false },	{ "copy to ", false, false } };
	if (!strncmp(line, "diff --git ", 11))
		return diff_git_names(line + 11, !p0, v, a, err);
	for (size_t i = 0; i < RT_ARRAY_SIZE(named); i++) {
		size_t n = strlen(named[i].start);
		if (strncmp(line, named[i].start, n))
			continue;
		const char *e = NULL;
		char *name = diff_name(line + n, named[i].tab_ends, &e);
		bool strip = named[i].strip && !p0;
		int rc = name ? diff_path(name, strip, v, a, err)
			      : rt_errf(err, RT_EINVAL, "patch: cannot read the name in '%.*s'",
					(int)strcspn(line, "\n"), line);
		/* In a diff without "diff --git", git cuts a trailing date off
		 * the line instead (after spaces too): that name is checked as
		 * well ("+++ b/src/x 2026-12-05 10:00:00" patches src/x). */
		char *trad = !rc && named[i].tab_ends ? traditional_name(line + n) : NULL;
		if (trad && strcmp(trad, name))
			rc = diff_path(trad, strip, v, a, err);
		free(trad);
		/* After the tab only a date: a diff without "diff --git" whose
		 * line ends in one has git read the name up to the date, tab and
		 * all (git 2.39.5, apply.c find_name_traditional; checked:
		 * "+++ b/f<TAB>z/e.sh 2026-12-05 10:00:00 +0000" patches
		 * "f<TAB>z/e.sh"). */
		if (!rc && named[i].tab_ends && *e == '\t' && strspn(e, "0123456789-:.+ \t\r") < strcspn(e, "\n"))
			rc = rt_errf(err, RT_EINVAL, "patch: '%.*s' has more than a date after the tab that ends "
				     "its name, and git apply can read that as part of the name", (int)strcspn(line, "\n"),
				     line);
		free(name);
		return rc;
	}
	size_t len = strcspn(line, "\n");
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	static const char *const mode_lines[] = { "new file mode ", "new mode ", "old mode ", "deleted file mode " };
	bool link = !strncmp(line, "index ", 6) && len > 7 && !memcmp(line + len - 7, " 120000", 7);
	for (size_t i = 0; i < RT_ARRAY_SIZE(mode_lines) && !link; i++) /* "120000x" too: refuse what is near */
		link = !strncmp(line, mode_lines[i], strlen(mode_lines[i])) &&
		       !strncmp(line + strlen(mode_lines[i]), "120000", 6);
	if (link)
		return rt_errf(err, RT_EINVAL, "patch: a symbolic link ('%.*s'): an answer never creates or "
			       "changes links", (int)len, line);
	return 0;
}

/* Does the traditional pair at line ("--- " then "+++ " then a hunk, which
 * is what git apply takes for one: apply.c find_header) have git guess -p0
 * for the rest of the patch (both guesses 0, or one unknown and the other
 * 0)? Checked with git 2.39.5: "--- k.c", "+++ k.c", a hunk, then
 * "--- sub/k.c" patches sub/k.c, not k.c. */
static bool guessed_p0(const char *line, const char *next)
{
	if (strncmp(line, "--- ", 4) || strncmp(next, "+++ ", 4))
		return false;
	const char *nl = strchr(next, '\n');
	if (!nl || strncmp(nl + 1, "@@ -", 4))
		return false;
	int p = guess_p(line + 4), q = guess_p(next + 4);
	if (p < 0)
		p = q;
	return p == 0 && q == 0;
}

int agent_llm_patch_ok(const struct var_def *v, const char *diff, const struct agent_llm_allow *a,
		       struct rt_sb *err)
{
	long old = 0, new = 0;
	bool hunk = false, in_git = false, p0 = false;
	for (const char *line = diff; *line;) {
		const char *nl = strchr(line, '\n');
		const char *next = nl ? nl + 1 : line + strlen(line);
		int rc = 0;
		if (hunk && (old > 0 || new > 0) && strchr(" -+\\\n", *line)) {
			if (*line == ' ' || *line == '\n') {
				old--;
				new--;
			} else if (*line == '-') {
				old--;
			} else if (*line == '+') {
				new--;
			}
		} else if (hunk_counts(line, &old, &new)) {
			hunk = true;
			in_git = false;
		} else {
			hunk = false;
			if (!strncmp(line, "diff --git ", 11))
				in_git = true;
			else if (!strncmp(line, "GIT binary patch", 16))
				in_git = false;
			else if (!in_git && !p0)
				p0 = guessed_p0(line, next);
			rc = diff_header(line, p0, v, a, err);
		}
		if (rc)
			return rc;
		line = next;
	}
	return 0;
}

static int check_patch(const struct var_def *v, const struct agent_llm_allow *a, struct rt_sb *err)
{
	int rc = check_file("patch file", v->patch.file, false, false, a, err);
	char *rel = NULL;
	if (!rc)
		rc = contain("patch dir", v->patch.dir, true, a, &rel, err);
	free(rel);
	char *text = NULL;
	size_t len = 0;
	if (!rc && rt_read_file(v->patch.file, &text, &len, NULL))
		rc = rt_errf(err, RT_EINVAL, "patch file '%s' cannot be read", v->patch.file);
	if (!rc && memchr(text, 0, len))
		rc = rt_errf(err, RT_EINVAL, "patch file '%s' holds a NUL byte: not a diff", v->patch.file);
	if (!rc)
		rc = agent_llm_patch_ok(v, text, a, err);
	free(text);
	return rc;
}

int agent_llm_plan_ok(const struct var_def *v, const struct var_plan *pl, const struct agent_llm_allow *a,
		      struct rt_sb *err)
{
	bool patch = v->kind == VAR_KIND_PATCH; /* a patch's dir: a folder above may match, as in diff_path */
	for (size_t k = 0; k < pl->n; k++) {
		int rc = check_file(patch ? "file git apply touches" : "file", pl->files[k].path, false, patch, a, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the answer ---- */

int agent_llm_allowed(const struct var_def *v, const struct agent_llm_allow *a, struct rt_sb *err)
{
	const char *kind = var_kind_name(v->kind);
	if (!listed(&a->kinds, kind))
		return refuse(err, "kind", kind, &a->kinds);
	if (v->build.n)
		return rt_errf(err, RT_EINVAL, "build: an answer never runs a command (a build is the spec's to "
			       "declare)");
	switch (v->kind) {
	case VAR_KIND_TABLE:
		return check_file("file", v->table.file, false, false, a, err);
	case VAR_KIND_FLAG:
		return check_flags(v, a, err);
	case VAR_KIND_ENV:
		return check_env(v, a, err);
	case VAR_KIND_PATCH:
		return check_patch(v, a, err);
	case VAR_KIND_FILE: {
		int rc = check_file("file", v->file.target, false, false, a, err);
		if (!rc)
			rc = check_file("source", v->file.source, false, false, a, err);
		struct stat st;
		if (!rc && stat(v->file.source, &st))
			rc = rt_errf(err, RT_EINVAL, "source '%s' does not exist", v->file.source);
		return rc;
	}
	}
	return rt_errf(err, RT_EINVAL, "kind '%s' is not allowed", kind);
}
