/*
 * Ranking upstream refs by the hot time their diffs touch (see upstream.h).
 */
#include "agents/research/upstream.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most of git's output read per ref. */
#define DIFF_CAP (64u << 20)

/* The identifier of a kernel name, as source code spells it:
 * "void vllm::paged_attention_v2_kernel<...>(...)" -> "paged_attention_v2_kernel". */
static char *kernel_ident(const char *name)
{
	if (!strncmp(name, "void ", 5))
		name += 5;
	size_t n = strcspn(name, "(<[ ");
	char *s = xstrndup(name, n);
	char *last = s;
	for (char *p = strstr(s, "::"); p; p = strstr(p + 2, "::"))
		last = p + 2;
	memmove(s, last, strlen(last) + 1);
	return s;
}

/* Is ident on a changed line of the diff (a '+' or '-' line, not a header)? */
static bool on_changed_line(const char *diff, const char *ident)
{
	size_t len = strlen(ident);
	for (const char *p = strstr(diff, ident); p; p = strstr(p + len, ident)) {
		const char *bol = p;
		while (bol > diff && bol[-1] != '\n')
			bol--;
		if ((*bol == '+' || *bol == '-') && strncmp(bol, "+++", 3) && strncmp(bol, "---", 3))
			return true;
	}
	return false;
}

static int git(const struct research_upstream *u, const char *ref, const char *what,
	       struct rt_sb *out, struct rt_sb *err)
{
	char *range = xasprintf("%s...%s", u->base ? u->base : "HEAD", ref);
	char *argv[] = { "git", "-C", (char *)u->repo, "diff", (char *)what, range, NULL };
	if (!what[0]) /* the diff itself */
		argv[4] = "--no-color", argv[5] = range;
	int status = 0;
	struct rt_sb e = RT_SB_INIT;
	int rc = u->exec(argv, NULL, 600, out, &status, &e);
	if (!rc && status)
		rc = rt_errf(err, RT_EINVAL, "research: %s: git diff %s failed (status %d): %.300s", ref, range,
			     status, out->buf);
	else if (rc)
		rt_errf(err, rc, "research: %s: %s", ref, e.buf);
	free(range);
	rt_sb_release(&e);
	return rc;
}

/* What one ref's diff touches. */
struct touch {
	bool op[RESEARCH_N_OPS];     /* ops touched */
	struct rt_sb kernels;        /* kernels named */
	struct rt_sb stat;           /* diffstat */
	long lines;                  /* added + removed */
	int files;                   /* files changed */
};

static void numstat(struct research_opmap *map, const char *text, struct touch *t)
{
	struct rt_sb files = RT_SB_INIT;
	long add_all = 0, del_all = 0;
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char *l = xstrndup(line, len);
		/* "added<TAB>removed<TAB>path"; a binary file has "-" for both. */
		char *t1 = strchr(l, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (t2 && t2[1]) {
			long a = strtol(l, NULL, 10), d = strtol(t1 + 1, NULL, 10);
			const char *path = t2 + 1;
			t->op[research_opmap_classify(map, path)] = true;
			t->files++;
			add_all += a;
			del_all += d;
			if (t->files <= 8)
				rt_sb_addf(&files, "%s%s (+%ld -%ld)", t->files > 1 ? ", " : "", path, a, d);
		}
		free(l);
		line = eol ? eol + 1 : line + len;
	}
	rt_sb_addf(&t->stat, "%d file%s, +%ld -%ld: %s%s", t->files, t->files == 1 ? "" : "s", add_all,
		   del_all, files.buf, t->files > 8 ? ", ..." : "");
	t->lines = add_all + del_all;
	rt_sb_release(&files);
}

/* The kernels of the profile the changed lines name. */
static void kernel_hits(struct research_opmap *map, const struct db_profile_kernel *k, size_t nk,
			const char *diff, struct touch *t)
{
	int hits = 0;
	for (size_t i = 0; i < nk; i++) {
		char *id = kernel_ident(k[i].name);
		bool dup = strstr(t->kernels.buf, id) != NULL;
		if (strlen(id) >= 5 && !dup && on_changed_line(diff, id)) {
			enum research_op op;
			if (!research_op_parse(k[i].op, &op))
				t->op[op] = true;
			if (hits++ < 8)
				rt_sb_addf(&t->kernels, "%s%s", hits > 1 ? ", " : "", id);
		}
		free(id);
	}
	(void)map;
}

static int by_share(const void *x, const void *y)
{
	const struct research_ref *a = x, *b = y;
	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return (a->lines > b->lines) - (a->lines < b->lines);
}

/* The patch variant of a ref whose diff was written to path (JSON). */
static char *patch_variant(const char *ref, const char *path, const char *repo)
{
	char name[96];
	research_variant_name("upstream", ref, name, sizeof(name));
	char *desc = xasprintf("apply upstream %s", ref);
	json_t *v = json_pack("{s:s, s:s, s:{s:s, s:s}}", "name", name, "description", desc, "patch",
			      "file", path, "dir", repo);
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(v);
	free(desc);
	return s;
}

static int one_ref(const struct research_upstream *u, struct research_opmap *map,
		   const struct db_profile_op *ops, size_t nops, const struct db_profile_kernel *k,
		   size_t nk, const char *ref, struct research_ref *out, struct rt_sb *err)
{
	struct touch t = { .kernels = RT_SB_INIT, .stat = RT_SB_INIT };
	struct rt_sb ns = RT_SB_INIT, diff = RT_SB_INIT;
	rt_sb_init(&ns, DIFF_CAP);
	rt_sb_init(&diff, DIFF_CAP);
	int rc = git(u, ref, "--numstat", &ns, err);
	if (!rc)
		rc = git(u, ref, "", &diff, err);
	if (!rc) {
		numstat(map, ns.buf, &t);
		kernel_hits(map, k, nk, diff.buf, &t);
		struct rt_sb opl = RT_SB_INIT;
		out->ref = xstrdup(ref);
		for (size_t i = 0; i < nops; i++) {
			enum research_op op;
			if (research_op_parse(ops[i].op, &op) || op == RESEARCH_OP_OTHER || !t.op[op])
				continue;
			out->share += ops[i].share;
			rt_sb_addf(&opl, "%s%s %.1f%%", opl.len ? ", " : "", ops[i].op, ops[i].share * 100);
		}
		out->ops = rt_sb_detach(&opl, NULL);
		out->kernels = rt_sb_detach(&t.kernels, NULL);
		out->diffstat = rt_sb_detach(&t.stat, NULL);
		out->lines = t.lines;
	}
	if (!rc && u->patch_dir && diff.len) {
		char name[96];
		research_variant_name("upstream", ref, name, sizeof(name));
		out->patch = xasprintf("%s/%s.diff", u->patch_dir, name);
		if (!(rc = rt_mkdirs(u->patch_dir, err)))
			rc = rt_write_file_atomic(out->patch, diff.buf, diff.len, 0644, err);
	}
	rt_sb_release(&t.kernels);
	rt_sb_release(&t.stat);
	rt_sb_release(&ns);
	rt_sb_release(&diff);
	return rc;
}

static int record(struct db *db, int64_t profile_id, const struct research_upstream *u,
		  const struct research_ref *r, struct rt_sb *err)
{
	double k = research_finding_speedup(RESEARCH_FIND_UPSTREAM);
	char *detail = xasprintf("%s touches %s", r->ref, r->ops[0] ? r->ops : "no op the profile spends time in");
	char *ev = xasprintf("%s%s%s", r->diffstat, r->kernels[0] ? "; names the profile's kernels " : "",
			     r->kernels);
	char *variant = r->patch ? patch_variant(r->ref, r->patch, u->repo) : NULL;
	struct db_finding f = {
		.campaign_id = u->campaign_id, .profile_id = profile_id,
		.kind = (char *)research_finding_name(RESEARCH_FIND_UPSTREAM), .subject = r->ref,
		.detail = detail, .evidence = ev, .variant = variant, .share = r->share, .speedup = k,
		.potential = research_bound(r->share, k),
	};
	int64_t id;
	int rc = db_finding_put(db, &f, &id, err);
	free(detail);
	free(ev);
	free(variant);
	return rc;
}

int research_rank_refs(struct db *db, int64_t profile_id, struct research_opmap *map,
		       const struct research_upstream *u, struct research_refs *out, struct rt_sb *err)
{
	memset(out, 0, sizeof(*out));
	struct db_profile_op *ops = NULL;
	struct db_profile_kernel *k = NULL;
	size_t nops = 0, nk = 0;
	int rc = db_profile_ops_list(db, profile_id, &ops, &nops, err);
	if (!rc)
		rc = db_profile_kernels_list(db, profile_id, &k, &nk, err);
	out->v = xcalloc(u->n_refs + 1, sizeof(*out->v));
	for (size_t i = 0; i < u->n_refs && !rc; i++) {
		rc = one_ref(u, map, ops, nops, k, nk, u->refs[i], &out->v[out->n], err);
		if (out->v[out->n].ref)
			out->n++;
	}
	if (!rc)
		qsort(out->v, out->n, sizeof(*out->v), by_share);
	for (size_t i = 0; i < out->n && !rc; i++)
		rc = record(db, profile_id, u, &out->v[i], err);
	db_profile_ops_free(ops, nops);
	db_profile_kernels_free(k, nk);
	if (rc)
		research_refs_release(out);
	return rc;
}

void research_refs_release(struct research_refs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].ref);
		free(r->v[i].ops);
		free(r->v[i].kernels);
		free(r->v[i].diffstat);
		free(r->v[i].patch);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}
