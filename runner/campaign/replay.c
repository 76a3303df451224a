/*
 * `ratchet replay` (campaign.h, run_replay): a campaign's kept changes
 * carried to a new base. The kept changes of the source campaign become an
 * ordered list of variants ("levers"), each with its lineage; the new base's
 * spec is rewritten with those variants and strategy list, and run as any
 * campaign (the same decision rule, gate, journal and --resume). Once the
 * run ends, every lever's verdict is derived from the store alone (its
 * iteration's state and interval, the variant's kind and the phase it
 * failed in), so a resumed replay gives the verdicts of an uninterrupted one.
 *
 * --onto REV first checks out REV (detached, the tree must be clean) in the
 * git repository of every patch lever's dir: the replay's baseline is then
 * the new revision alone, each patch's iteration the new revision plus the
 * patch. A patch lever that no longer helps there is superseded when the
 * new revision alone is as good as the old one with the patch was, or when
 * the new revision already contains it (git apply --reverse --check).
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/llm.h"
#include "db/proposals.h"
#include "db/replay.h"
#include "runner/base/rt_yaml.h"
#include "runner/bench/bench_cmd.h"

/* One lever being prepared: its variant as the spec writes it, and its row. */
struct lever {
	json_t *variant;    /* the variant (owned) */
	struct db_lever row; /* lineage and gain then (strings owned) */
};

/* The source campaign, read once. */
struct source {
	struct db_campaign cp;     /* the campaign */
	struct spec *s;            /* its spec (owned) */
	struct db_iteration *its;  /* its iterations (owned) */
	size_t n;                  /* how many */
	json_t *spec_json;         /* s as JSON (owned): its variants' definitions */
};

static void source_release(struct source *src)
{
	json_decref(src->spec_json);
	db_iterations_free(src->its, src->n);
	spec_free(src->s);
	db_campaign_release(&src->cp);
}

static void levers_free(struct lever *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_decref(l[i].variant);
		free(l[i].row.variant);
		free(l[i].row.kind);
		free(l[i].row.objective);
		free(l[i].row.reason);
	}
	free(l);
}

/* The best iteration's seq (a kept change after it does not count). */
static int best_seq(const struct source *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (src->cp.best_iteration && src->its[i].id == src->cp.best_iteration)
			return src->its[i].seq;
	return 0;
}

json_t *camp_kept_variant(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			  const struct db_iteration *it, struct rt_sb *err)
{
	return camp_proposer_of(s)->stored(db, s, spec_json, cid, it, err);
}

void camp_place_paths(json_t *v, const char *src_wd, const char *bytes_dir)
{
	static const char *const land[][2] = { { "table", "file" }, { "patch", "dir" }, { "file", "target" } };
	static const char *const bytes[][2] = { { "patch", "file" }, { "file", "source" } };
	size_t n = src_wd ? strlen(src_wd) : 0;
	for (size_t i = 0; src_wd && i < RT_ARRAY_SIZE(land); i++) {
		json_t *o = json_object_get(v, land[i][0]);
		const char *p = json_string_value(json_object_get(o, land[i][1]));
		if (p && !strncmp(p, src_wd, n) && p[n] == '/')
			json_object_set_new(o, land[i][1], json_string(p + n + 1));
		else if (p && !strcmp(p, src_wd))
			json_object_set_new(o, land[i][1], json_string("."));
	}
	for (size_t i = 0; i < RT_ARRAY_SIZE(bytes); i++) {
		json_t *o = json_object_get(v, bytes[i][0]);
		const char *p = json_string_value(json_object_get(o, bytes[i][1]));
		if (p && p[0] != '/') {
			char *abs = xasprintf("%s/%s", bytes_dir, p);
			json_object_set_new(o, bytes[i][1], json_string(abs));
			free(abs);
		}
	}
}

/* The lever of kept iteration it: its variant and its row. */
static int make_lever(struct db *db, const struct source *src, const struct db_iteration *it, struct lever *l,
		      struct rt_sb *err)
{
	json_t *v = camp_kept_variant(db, src->s, src->spec_json, src->cp.id, it, err);
	if (!v)
		return err->len ? RT_ENOENT : RT_EDB;
	camp_place_paths(v, src->cp.workdir, src->cp.workdir);
	json_object_set_new(v, "name", json_string(it->variant));
	l->variant = v;
	l->row.variant = xstrdup(it->variant);
	l->row.kind = xstrdup(it->kind);
	l->row.from_campaign = src->cp.id;
	l->row.from_iteration = it->id;
	l->row.from_seq = it->seq;
	l->row.objective = it->objective ? xstrdup(it->objective) : NULL;
	l->row.then_delta = it->obj_delta;
	l->row.then_lo = it->obj_ci_lo;
	l->row.then_hi = it->obj_ci_hi;
	l->row.then_cand = it->obj_cand;
	l->row.now_delta = l->row.now_lo = l->row.now_hi = NAN;
	return 0;
}

static int by_gain(const void *a, const void *b)
{
	const struct lever *x = a, *y = b;
	double gx = isnan(x->row.then_delta) ? -INFINITY : x->row.then_delta;
	double gy = isnan(y->row.then_delta) ? -INFINITY : y->row.then_delta;
	if (gx != gy)
		return gx < gy ? 1 : -1;
	return x->row.from_seq - y->row.from_seq;
}

/* A number of a lineage object, NAN when absent. */
static double lin_num(const json_t *lin, const char *key)
{
	json_t *v = json_object_get(lin, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The levers of a variants.yaml (`ratchet recipe` writes one): variants:,
 * a list of spec variants, and lineage:, by variant name. Relative
 * patch.file and file.source are the file's folder's. */
static int levers_from_file(const char *path, int64_t *from, struct lever **out, size_t *n, struct rt_sb *err)
{
	char *text = NULL, *dir = xstrdup(path), *slash = strrchr(dir, '/');
	size_t len = 0;
	if (slash)
		*slash = 0;
	char *abs_dir = slash ? realpath(dir, NULL) : realpath(".", NULL);
	int rc = rt_read_file(path, &text, &len, err);
	if (rc) /* a file named on the command line that cannot be read: usage */
		rc = rt_errf(err, RT_EUSAGE, " (--from: a campaign id or a recipe's variants.yaml)");
	json_t *root = rc ? NULL : rt_yaml_text_json(path, text, len, err);
	if (!rc && !root)
		rc = RT_EUSAGE;
	json_t *vs = json_object_get(root, "variants"), *lin = json_object_get(root, "lineage");
	if (!rc && (!json_is_array(vs) || !json_array_size(vs)))
		rc = rt_errf(err, RT_EUSAGE, "%s: expected variants: with at least one change", path);
	*from = (int64_t)json_integer_value(json_object_get(json_object_get(root, "from"), "campaign"));
	struct lever *l = xcalloc(json_array_size(vs) + 1, sizeof(*l));
	size_t k = 0;
	for (size_t i = 0; !rc && i < json_array_size(vs); i++) {
		json_t *v = json_deep_copy(json_array_get(vs, i));
		const char *name = json_string_value(json_object_get(v, "name"));
		json_t *li = json_object_get(lin, name ? name : "");
		camp_place_paths(v, NULL, abs_dir ? abs_dir : ".");
		l[k].variant = v;
		l[k].row.variant = xstrdup(name ? name : "");
		l[k].row.kind = xstrdup(json_object_get(v, "patch") ? "patch" : json_object_get(v, "table") ? "table"
					: json_object_get(v, "flag") ? "flag" : json_object_get(v, "env") ? "env" : "file");
		l[k].row.from_campaign = json_is_integer(json_object_get(li, "campaign"))
						 ? (int64_t)json_integer_value(json_object_get(li, "campaign")) : *from;
		l[k].row.from_iteration = (int64_t)json_integer_value(json_object_get(li, "iteration"));
		l[k].row.from_seq = json_is_integer(json_object_get(li, "seq"))
					    ? (int)json_integer_value(json_object_get(li, "seq")) : -1;
		const char *obj = json_string_value(json_object_get(li, "objective"));
		l[k].row.objective = obj ? xstrdup(obj) : NULL;
		l[k].row.then_delta = lin_num(li, "gain");
		l[k].row.then_lo = lin_num(li, "lo");
		l[k].row.then_hi = lin_num(li, "hi");
		l[k].row.then_cand = lin_num(li, "median");
		k++;
	}
	if (!rc && *from <= 0)
		rc = rt_errf(err, RT_EUSAGE, "%s: expected from: {campaign: ID}", path);
	json_decref(root);
	free(text);
	free(dir);
	free(abs_dir);
	*out = l;
	*n = k;
	return rc;
}

/* The source's kept changes as levers, in the order asked for. */
static int load_levers(struct db *db, int64_t from, struct source *src, struct lever **out, size_t *n,
		       struct rt_sb *err)
{
	int rc = db_campaign_get(db, from, &src->cp, err);
	if (rc == RT_ENOENT) {
		rt_sb_reset(err);
		return rt_errf(err, RT_EUSAGE, "--from %lld: no such campaign in %s", (long long)from, db_path(db));
	}
	if (!rc)
		rc = camp_stored_spec(&src->cp, &src->s, err);
	if (!rc)
		rc = db_iterations_list(db, src->cp.id, &src->its, &src->n, err);
	if (rc)
		return rc;
	src->spec_json = spec_to_json(src->s);
	int last = best_seq(src);
	struct lever *l = xcalloc(src->n + 1, sizeof(*l));
	size_t k = 0;
	for (size_t i = 0; i < src->n && !rc; i++) {
		const struct db_iteration *it = &src->its[i];
		if (it->state != DB_ITER_KEPT || it->invalidated || it->seq > last)
			continue;
		rc = make_lever(db, src, it, &l[k], err);
		k += !rc;
	}
	if (!rc && !k)
		rc = rt_errf(err, RT_EUSAGE, "campaign %lld '%s' kept no change: nothing to replay",
			     (long long)src->cp.id, src->cp.name);
	*out = l;
	*n = k;
	return rc;
}

/* The levers in the order asked for, numbered. */
static void put_in_order(struct lever *l, size_t n, enum run_replay_order order)
{
	if (order == RUN_REPLAY_BEST_FIRST)
		qsort(l, n, sizeof(*l), by_gain);
	for (size_t i = 0; i < n; i++)
		l[i].row.ord = (int)i + 1;
}

char *run_replay_name(const char *base, int64_t from)
{
	return xasprintf("%s-replay-%lld", base, (long long)from);
}

/* The new base's spec with the levers as its variants, strategy list. */
static int derive_spec(const struct spec *base, int64_t from, const struct lever *l, size_t n,
		       struct spec **out, struct rt_sb *err)
{
	json_t *j = spec_to_json(base), *vs = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(vs, l[i].variant);
	char *name = run_replay_name(base->name, from);
	json_object_set_new(j, "name", json_string(name));
	json_object_set_new(j, "variants", vs);
	json_object_set_new(j, "strategy", json_string("list"));
	json_object_set_new(j, "max_iterations", json_integer(0));
	json_object_del(j, "space");
	json_object_del(j, "llm");
	struct rt_sb text = RT_SB_INIT;
	rt_sb_addf(&text, "# ratchet replay: the kept changes of campaign %lld on %s\n", (long long)from,
		   base->path);
	int rc = rt_yaml_from_json(j, &text, err);
	if (!rc) {
		struct rt_sb why = RT_SB_INIT;
		rc = spec_load_text(base->path, text.buf, text.len, out, &why);
		if (rc)
			rt_errf(err, rc, "the replay's spec does not load: %s", why.buf);
		rt_sb_release(&why);
	}
	rt_sb_release(&text);
	free(name);
	json_decref(j);
	return rc;
}

/* git in dir; its output in out; 0 only when it exits 0. */
static int git(const char *dir, const char *const *args, struct rt_sb *out, struct rt_sb *err)
{
	int status = 0;
	int rc = run_bcmd_exec_simple((char *const *)args, dir, 600, out, &status, err);
	rt_sb_trim(out);
	return rc ? rc : status ? RT_EPROC : 0;
}

/* --onto REV: every patch lever's repository checked out at REV. */
static int checkout_onto(const struct spec *s, const char *rev, struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < s->n_variants && !rc; i++) {
		const struct var_def *v = &s->variants[i];
		if (v->kind != VAR_KIND_PATCH)
			continue;
		char *dir = v->patch.dir[0] == '/' ? xstrdup(v->patch.dir) : xasprintf("%s/%s", s->workdir, v->patch.dir);
		struct rt_sb o = RT_SB_INIT;
		const char *st[] = { "git", "status", "--porcelain", "--untracked-files=no", NULL };
		const char *co[] = { "git", "checkout", "-q", "--detach", rev, "--", NULL }; /* rev, not a path */
		if ((rc = git(dir, st, &o, err)))
			rt_errf(err, RT_EUSAGE, "--onto %s: %s is not a git repository: %s", rev, dir, o.buf);
		else if (o.len)
			rc = rt_errf(err, RT_EUSAGE, "--onto %s: %s has uncommitted changes (commit or stash "
				     "them first):\n%s", rev, dir, o.buf);
		rt_sb_reset(&o);
		if (!rc && (rc = git(dir, co, &o, err)))
			rc = rt_errf(err, RT_EUSAGE, "--onto %s: git checkout in %s failed: %s", rev, dir, o.buf);
		rt_sb_release(&o);
		free(dir);
	}
	return rc;
}

/* ---- verdicts ---- */

/* The replay's iteration that decided variant (the last final one), or NULL. */
static const struct db_iteration *deciding(const struct db_iteration *its, size_t n, const char *variant)
{
	const struct db_iteration *d = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(its[i].kind, "baseline") ? false
		    : !strcmp(its[i].variant, variant) && db_iter_state_final(its[i].state) &&
		      its[i].state != DB_ITER_INTERRUPTED)
			d = &its[i];
	return d;
}

/* What a failed lever's kind says it could not do. A change that could not
 * be planned on the new base has no fingerprint (change_sha256 NULL): the
 * patch does not apply, the table's entry or file is missing. One that was
 * made failed later: its build, or the engine or benchmark with it. */
static const char *not_applicable_what(const struct db_lever *l, const struct db_iteration *it)
{
	bool made = it->change_sha256 != NULL;
	if (!strcmp(l->kind, "patch"))
		return made ? "the patched tree failed to build or run" : "the patch does not apply";
	if (!strcmp(l->kind, "table"))
		return made ? "the engine failed with the table entry" : "the table entry cannot be set (key or file missing)";
	if (!strcmp(l->kind, "flag"))
		return made ? "the flag was refused (the engine or benchmark failed with it)" : "the flag cannot be set";
	if (!strcmp(l->kind, "env"))
		return made ? "the environment change was refused (the engine or benchmark failed with it)"
			    : "the environment change cannot be set";
	return made ? "the changed engine failed" : "the change cannot be made";
}

/* Is the objective's value a at least as good as b, within the rule's min_gain? */
static bool as_good(const struct spec *s, double a, double b)
{
	double tol = fabs(b) * (s->objective.min_gain > 0 ? s->objective.min_gain : 0);
	return s->objective.goal == SPEC_GOAL_MAX ? a >= b - tol : a <= b + tol;
}

/* --onto: does REV already contain the patch (it applies reversed)? */
static bool contained(const struct spec *s, const char *variant)
{
	for (size_t i = 0; i < s->n_variants; i++) {
		const struct var_def *v = &s->variants[i];
		if (v->kind != VAR_KIND_PATCH || strcmp(v->name, variant))
			continue;
		char *dir = v->patch.dir[0] == '/' ? xstrdup(v->patch.dir) : xasprintf("%s/%s", s->workdir, v->patch.dir);
		const char *args[] = { "git", "apply", "--reverse", "--check", v->patch.file, NULL };
		struct rt_sb o = RT_SB_INIT, e = RT_SB_INIT;
		bool yes = !git(dir, args, &o, &e);
		rt_sb_release(&o);
		rt_sb_release(&e);
		free(dir);
		return yes;
	}
	return false;
}

/* One lever's verdict from its iteration (and, --onto, the baseline). */
static void decide_lever(const struct spec *s, const char *onto, double base_now, struct db_lever *l,
			 const struct db_iteration *it)
{
	free(l->reason);
	l->reason = NULL;
	l->iteration_id = it ? it->id : 0;
	l->now_delta = it ? it->obj_delta : NAN;
	l->now_lo = it ? it->obj_ci_lo : NAN;
	l->now_hi = it ? it->obj_ci_hi : NAN;
	l->verdict = DB_VERDICT_NONE;
	if (!it)
		return;
	switch (it->state) {
	case DB_ITER_KEPT:
		l->verdict = DB_VERDICT_HELD;
		l->reason = xasprintf("kept again: %s", it->reason ? it->reason : "");
		break;
	case DB_ITER_REVERTED: {
		/* worse now, as the keep rule is better: by more than min_gain, and
		 * its interval below no change (when it has one) */
		bool worse = it->obj_delta < -s->objective.min_gain && !(it->obj_ci_hi >= 0);
		l->verdict = worse ? DB_VERDICT_REVERSED : DB_VERDICT_LOST;
		l->reason = xasprintf("%s: %s", worse ? "worse now" : "no gain now", it->reason ? it->reason : "");
		break;
	}
	case DB_ITER_GATED:
		l->verdict = DB_VERDICT_REVERSED;
		l->reason = xasprintf("the gate said no: %s", it->reason ? it->reason : "");
		break;
	case DB_ITER_INVALID:
		l->verdict = DB_VERDICT_NOT_APPLICABLE;
		l->reason = xasprintf("its measurements are invalid: %s", it->reason ? it->reason : "");
		break;
	default:
		l->verdict = DB_VERDICT_NOT_APPLICABLE;
		l->reason = xasprintf("%s: %s", not_applicable_what(l, it), it->reason ? it->reason : "");
		break;
	}
	if (!onto || strcmp(l->kind, "patch") || l->verdict == DB_VERDICT_HELD)
		return;
	if (l->verdict == DB_VERDICT_NOT_APPLICABLE && contained(s, l->variant)) {
		free(l->reason);
		l->reason = xasprintf("%s already contains it (git apply --reverse --check passes)", onto);
		l->verdict = DB_VERDICT_SUPERSEDED;
	} else if ((l->verdict == DB_VERDICT_LOST || l->verdict == DB_VERDICT_REVERSED) && !isnan(base_now) &&
		   !isnan(l->then_cand) && as_good(s, base_now, l->then_cand)) {
		free(l->reason);
		l->reason = xasprintf("%s alone gives %s %.4g, the old revision with it gave %.4g", onto,
				      l->objective ? l->objective : "the objective", base_now, l->then_cand);
		l->verdict = DB_VERDICT_SUPERSEDED;
	}
}

/* Every lever's verdict from the replay's iterations, stored. */
static int decide_all(struct db *db, const struct spec *s, int64_t cid, const char *onto, struct db_lever *l,
		      size_t n, struct rt_sb *err)
{
	struct db_iteration *its = NULL;
	size_t ni = 0;
	int rc = db_iterations_list(db, cid, &its, &ni, err);
	double base_now = NAN;
	for (size_t i = 0; i < ni && !rc; i++)
		if (!strcmp(its[i].kind, "baseline") && its[i].state == DB_ITER_BASELINE)
			base_now = !isnan(its[i].obj_best) ? its[i].obj_best : its[i].obj_cand;
	for (size_t i = 0; i < n && !rc; i++) {
		decide_lever(s, onto, base_now, &l[i], deciding(its, ni, l[i].variant));
		rc = db_lever_decide(db, cid, &l[i], err);
	}
	db_iterations_free(its, ni);
	return rc;
}

/* --resume: the order and revision the replay started with. */
static int resumed_choice(struct db *db, const char *name, enum run_replay_order *order, const char **onto,
			  struct db_replay *r)
{
	struct db_campaign cp;
	struct rt_sb e = RT_SB_INIT;
	int rc = db_campaign_latest(db, name, &cp, &e);
	if (!rc && !(rc = db_replay_get(db, cp.id, r, &e))) {
		*order = !strcmp(r->ord, "best-first") ? RUN_REPLAY_BEST_FIRST : RUN_REPLAY_ORIGINAL;
		*onto = r->onto;
	}
	if (!rc)
		db_campaign_release(&cp);
	rt_sb_release(&e);
	return rc;
}

/* What the replay records when its campaign opens, and decides after. */
struct rec {
	int64_t from;                    /* the campaign replayed */
	enum run_replay_order order;     /* the order in use */
	const char *onto;                /* the revision in use, NULL: none */
	struct lever *l;                 /* the levers */
	size_t n;                        /* how many */
};

/* The replay's row and its levers' lineage, once the campaign exists (so a
 * kill -9 after it leaves what --resume reads). */
static int on_open(void *arg, struct db *db, int64_t cid, struct rt_sb *err)
{
	struct rec *r = arg;
	struct db_replay row = { .campaign_id = cid, .from_campaign = r->from,
				 .ord = (char *)(r->order == RUN_REPLAY_BEST_FIRST ? "best-first" : "original"),
				 .onto = (char *)r->onto };
	int rc = db_replay_put(db, &row, err);
	for (size_t i = 0; i < r->n && !rc; i++)
		rc = db_lever_put(db, cid, &r->l[i].row, err);
	return rc;
}

/* Every lever's verdict, stored and returned. */
static int record(struct db *db, const struct spec *s, const char *onto, struct run_replay_result *res,
		  struct rt_sb *err)
{
	int64_t cid = res->run.campaign_id;
	struct db_lever *rows = NULL;
	size_t nr = 0;
	int rc = db_levers_list(db, cid, &rows, &nr, err);
	if (!rc)
		rc = decide_all(db, s, cid, onto, rows, nr, err);
	for (size_t i = 0; i < nr && !rc; i++)
		res->reversed += rows[i].verdict == DB_VERDICT_REVERSED;
	res->levers = rows;
	res->n = nr;
	return rc;
}

int run_replay(struct db *db, const struct spec *base, const struct run_replay_opts *o,
	       struct run_replay_result *res, struct rt_sb *err)
{
	memset(res, 0, sizeof(*res));
	res->run.gain = NAN;
	if (o->onto && (o->onto[0] == '-' || !o->onto[0])) /* git would read it as an option */
		return rt_errf(err, RT_EUSAGE, "--onto '%s': not a revision (a revision never starts with '-')",
			       o->onto);
	struct source src;
	memset(&src, 0, sizeof(src));
	struct lever *l = NULL;
	size_t n = 0;
	struct spec *s = NULL;
	int64_t from = o->from;
	int rc = o->from_file ? levers_from_file(o->from_file, &from, &l, &n, err)
			      : load_levers(db, o->from, &src, &l, &n, err);
	enum run_replay_order order = o->order;
	const char *onto = o->onto;
	struct db_replay prev = { 0 };
	char *name = run_replay_name(base->name, from);
	if (!rc && o->run.resume && !resumed_choice(db, name, &order, &onto, &prev) && o->onto &&
	    (!onto || strcmp(onto, o->onto)))
		rt_errf(err, 0, "note: --onto %s ignored: the replay started with %s\n", o->onto,
			onto ? onto : "no --onto");
	free(name);
	put_in_order(l, n, order);
	if (!rc)
		rc = derive_spec(base, from, l, n, &s, err);
	if (!rc && onto && !o->run.resume)
		rc = checkout_onto(s, onto, err);
	struct rec r = { .from = from, .order = order, .onto = onto, .l = l, .n = n };
	struct run_campaign_opts ro = o->run;
	ro.replay = true;
	ro.on_open = on_open;
	ro.on_open_arg = &r;
	if (!rc) {
		rc = run_campaign(db, s, &ro, &res->run, err);
		if (res->run.campaign_id && !res->run.preflight) {
			struct rt_sb rerr = RT_SB_INIT;
			int rrc = record(db, s, onto, res, &rerr);
			if (rrc && !rc)
				rc = rt_errf(err, rrc, "%s", rerr.buf);
			rt_sb_release(&rerr);
		}
	}
	res->preflight = res->run.preflight;
	spec_free(s);
	levers_free(l, n);
	source_release(&src);
	db_replay_release(&prev);
	return rc;
}

void run_replay_result_release(struct run_replay_result *res)
{
	db_levers_free(res->levers, res->n);
	free(res->run.stopped);
	memset(res, 0, sizeof(*res));
}
