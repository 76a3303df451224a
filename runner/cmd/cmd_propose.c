/*
 * `ratchet propose [FINDING...]`: the top findings that carry a variant (or
 * the findings named by the id `ratchet findings` prints), as entries of a
 * spec's variants: list (YAML to paste, or to feed a strategy), best bound
 * first, each under a comment naming its finding and its bound. A variant
 * the finding's campaign already measured (the same change fingerprint, as
 * the campaign stores it, or the same name) says so in its comment: "already
 * tried in iteration 1:3: reverted, -2.1%".
 */
#include "runner/cmd/cmd_profile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/profiles.h"
#include "runner/base/rt_yaml.h"
#include "runner/spec/spec_space.h"
#include "variants/var.h"

static const struct rt_cmd_help help = {
	"ratchet propose [FINDING...] [--campaign ID] [--top N] [--json]",
	"Turn the top findings into variants in the spec's schema: a hole becomes a table entry\n"
	"copied from the nearest existing one (shape columns compared numerically, measured columns\n"
	"never copied), an upstream ref a patch. Printed as YAML for the spec's variants: list, best\n"
	"Amdahl bound first; --json prints a JSON array of {finding, rank, kind, bound, variant,\n"
	"already_tried}, already_tried null or {campaign, seq, state, delta}.",
	"FINDING is a finding's id, the id column of `ratchet findings`: only those are proposed.\n"
	"A variant the finding's campaign already measured says so in its comment (\"already tried\n"
	"in iteration 1:3: reverted, -2.1%\"). Findings without a concrete change (hot ops, storms)\n"
	"are listed as comments. Measure before trusting: the bound is a ceiling. Exit codes: 0\n"
	"variants proposed, 1 none, 2 an unknown FINDING, 3 runtime error.",
};

/* One campaign's history, loaded once: its spec (to read a variant as the
 * campaign would) and its iterations. */
struct history {
	int64_t cid;                    /* the campaign */
	struct cmd_research_env env;    /* its spec, NULL when it could not be read */
	struct db_iteration *its;       /* its iterations, in seq order */
	size_t n;
};

struct histories {
	struct history *v;
	size_t n;
};

static struct history *history_of(const struct rt_ctx *ctx, struct histories *h, int64_t cid)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].cid == cid)
			return &h->v[i];
	h->v = xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
	struct history *y = &h->v[h->n++];
	memset(y, 0, sizeof(*y));
	y->cid = cid;
	/* a spec that no longer reads (said on stderr) loses only the fingerprint match */
	if (cmd_research_env_load(ctx, "propose", cid, NULL, &y->env))
		memset(&y->env, 0, sizeof(y->env));
	if (db_iterations_list(ctx->db, cid, &y->its, &y->n, NULL))
		y->n = 0;
	return y;
}

static void histories_release(struct histories *h)
{
	for (size_t i = 0; i < h->n; i++) {
		cmd_research_env_release(&h->v[i].env);
		db_iterations_free(h->v[i].its, h->v[i].n);
	}
	free(h->v);
}

/* The change fingerprint of variant v as the campaign of y stores it
 * (iterations.change_sha256); false when it cannot be computed. */
static bool change_fp(const struct history *y, json_t *v, char fp[65])
{
	if (!y->env.spec)
		return false;
	struct var_def d;
	struct rt_sb err = RT_SB_INIT;
	bool ok = !spec_variant_from_json(y->env.spec, v, &d, &err);
	if (ok) {
		struct var_ctx x = { .workdir = y->env.spec->workdir };
		ok = !var_ops_for(d.kind)->fingerprint(&d, &x, fp, &err);
		spec_variant_release(&d);
	}
	rt_sb_release(&err);
	return ok;
}

/* The latest iteration in which the campaign of y measured variant v to an
 * end (the same change fingerprint or the same name); NULL when none. */
static const struct db_iteration *tried_hit(const struct history *y, json_t *v)
{
	char fp[65];
	bool have_fp = change_fp(y, v, fp);
	const char *name = json_string_value(json_object_get(v, "name"));
	const struct db_iteration *hit = NULL;
	for (size_t i = 0; i < y->n; i++) {
		const struct db_iteration *it = &y->its[i];
		if (it->seq == 0 || !db_iter_state_final(it->state) || it->state == DB_ITER_INTERRUPTED ||
		    it->state == DB_ITER_OBSERVED)
			continue;
		if ((have_fp && it->change_sha256 && !strcmp(it->change_sha256, fp)) ||
		    (name && it->variant && !strcmp(it->variant, name)))
			hit = it;
	}
	return hit;
}

/* "# already tried in iteration 1:3: reverted, -2.1%" */
static void tried_note(const struct db_iteration *hit, struct rt_sb *out)
{
	rt_sb_addf(out, "# already tried in iteration %lld:%d: %s", (long long)hit->campaign_id, hit->seq,
		   db_iter_state_name(hit->state));
	if (!isnan(hit->obj_delta))
		rt_sb_addf(out, ", %+.1f%%", hit->obj_delta * 100);
	rt_sb_adds(out, hit->state == DB_ITER_KEPT ? " (kept: it is in the best already)\n" : "\n");
}

/* The same for --json: {"campaign", "seq", "state", "delta"}, or null. */
static json_t *tried_json(const struct db_iteration *hit)
{
	if (!hit)
		return json_null();
	return json_pack("{s:I, s:i, s:s, s:o}", "campaign", (json_int_t)hit->campaign_id, "seq", hit->seq,
			 "state", db_iter_state_name(hit->state), "delta",
			 isnan(hit->obj_delta) ? json_null() : json_real(hit->obj_delta));
}

/* Which of f[0..n) the command line names by id (*named, caller frees);
 * RT_ENOENT naming the first unknown id. */
static int pick_ids(char **ids, int nids, const struct db_finding *f, size_t n, bool **named,
		    struct rt_sb *err)
{
	*named = xcalloc(n + 1, sizeof(**named));
	for (int i = 0; i < nids; i++) {
		char *end;
		long long v = strtoll(ids[i], &end, 10);
		bool found = false;
		for (size_t j = 0; *end == 0 && v > 0 && j < n; j++)
			if (f[j].id == v)
				found = (*named)[j] = true;
		if (!found)
			return rt_errf(err, RT_ENOENT, "no finding %s (the id column of `ratchet findings`)",
				       ids[i]);
	}
	return 0;
}

/* One finding's variant: its comment, what the campaign did with it, the
 * YAML; and its entry of the --json array, appended to all. */
static void propose_one(const struct rt_ctx *ctx, struct histories *h, const struct db_finding *f,
			json_t *v, size_t rank, json_t *all, struct rt_sb *out, struct rt_sb *err)
{
	double bound = isnan(f->potential) ? 0 : f->potential * 100;
	rt_sb_addf(out, "# finding %lld (rank %zu, %s, bound %.1f%% = %.1f%% x (1 - 1/%.2g)): %s\n",
		   (long long)f->id, rank, f->kind, bound, f->share * 100, f->speedup,
		   f->detail ? f->detail : f->subject);
	const struct db_iteration *hit = f->campaign_id ? tried_hit(history_of(ctx, h, f->campaign_id), v) : NULL;
	if (hit)
		tried_note(hit, out);
	json_array_append_new(all, json_pack("{s:I, s:I, s:s, s:o, s:O, s:o}", "finding", (json_int_t)f->id,
					     "rank", (json_int_t)rank, "kind", f->kind, "bound",
					     isnan(f->potential) ? json_null() : json_real(f->potential),
					     "variant", v, "already_tried", tried_json(hit)));
	json_t *one = json_pack("[O]", v);
	if (rt_yaml_from_json(one, out, err))
		rt_sb_addf(out, "# %s\n", err->buf);
	json_decref(one);
}

int cmd_propose(int argc, char **argv, struct rt_ctx *ctx)
{
	long campaign = 0, top = 5;
	const struct rt_opt opts[] = {
		{ "campaign", 'c', RT_OPT_INT, &campaign, "ID", "only this campaign's findings" },
		{ "top", 'n', RT_OPT_INT, &top, "N", "propose for the N best findings with a variant (default 5)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	struct db_finding *f = NULL;
	size_t n = 0;
	struct rt_sb err = RT_SB_INIT;
	bool *named = NULL;
	int rc = db_findings_list(ctx->db, campaign, &f, &n, &err);
	if (!rc && npos)
		rc = pick_ids(argv + 1, npos, f, n, &named, &err);
	if (rc) {
		cmd_error(ctx, "propose: %s", cmd_plain(&err));
		rt_sb_release(&err);
		db_findings_free(f, n);
		free(named);
		return rc == RT_ENOENT ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	size_t want = npos ? n : top > 0 ? (size_t)top : n;
	json_t *all = json_array();
	struct rt_sb out = RT_SB_INIT;
	struct histories h = { 0 };
	size_t proposed = 0;
	for (size_t i = 0; i < n && proposed < want; i++) {
		if (named && !named[i])
			continue;
		json_t *v = f[i].variant ? json_loads(f[i].variant, 0, NULL) : NULL;
		if (!v) {
			if (!ctx->json && i < want)
				rt_sb_addf(&out, "# finding %lld (rank %zu, %s, bound %.1f%%): %s: no variant to propose\n",
					   (long long)f[i].id, i + 1, f[i].kind,
					   isnan(f[i].potential) ? 0 : f[i].potential * 100,
					   f[i].detail ? f[i].detail : f[i].subject);
			continue;
		}
		proposed++;
		propose_one(ctx, &h, &f[i], v, i + 1, all, &out, &err);
		json_decref(v);
	}
	if (ctx->json) {
		cmd_print_json(json_incref(all));
	} else if (proposed) {
		printf("# variants proposed by ratchet from its findings: paste under the spec's variants:\n%s",
		       out.buf);
	} else {
		printf("%sno finding carries a variant%s\n", out.buf, n ? "" : " (no findings)");
	}
	json_decref(all);
	histories_release(&h);
	free(named);
	rt_sb_release(&out);
	rt_sb_release(&err);
	db_findings_free(f, n);
	return proposed ? RT_EXIT_OK : RT_EXIT_NO;
}
