/*
 * The campaign's side of strategy llm: what the model sees (the journal
 * from the store, the top findings, the space, the spec's variants as the
 * schema's examples, the kinds and files it may touch), the round of at
 * most two requests for one iteration, the answer read through the spec's
 * own variant parser (spec_variant_from_json, as a space point is), the
 * allowed kinds and files, the refusal of a change already measured (its
 * change fingerprint against the campaign's finished iterations), and every
 * exchange recorded in llm_exchanges with its verdict.
 *
 * A round: ask; a refused answer (invalid, disallowed, duplicate) is asked
 * again once, the follow-up naming the error; a second refusal records the
 * iteration as a failed proposal and the next round starts. The chat row of
 * the proposer table (propose.c): on a device pool, one round asks for up
 * to N distinct answers, each told the ones already taken for the round
 * (a repeat is refused as a duplicate); a refusal ends the batch (or, with
 * nothing taken, is the failed proposal); the round's winning trial is
 * confirmed by measuring its stored answer again (agent_round_confirm).
 * Each accepted answer is recorded in `proposals` too (target -1, point
 * {"answer": its exchange's id}), so that a worker, a confirmation and
 * --resume read the same stored answer. The budget
 * (llm.max_calls, llm.max_tokens from the responses' usage) ends the
 * search. An accepted answer whose change has not been measured to an end
 * (killed mid-iteration) is reused on --resume, never asked again. The key
 * is read from the environment at each request and reaches only libcurl.
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/llm.h"
#include "db/proposals.h"
#include "db/profiles.h"
#include "runner/base/rt_json.h"
#include "runner/spec/spec_space.h"

/* Findings shown to the model, best first. */
#define TOP_FINDINGS 10

/* What the rounds so far spent. */
struct spent {
	int calls;        /* requests made */
	uint64_t tokens;  /* prompt + completion tokens the server counted */
};

/* ---- what the model sees ---- */

/* Everything the prompt borrows, owned here. */
struct seen {
	const struct db_iteration *its; /* the campaign's iterations (the proposal's read of the store) */
	size_t n_its;                 /* entries in its */
	struct agent_llm_step *steps; /* the journal */
	char **findings;              /* one line each */
	size_t n_findings;            /* entries in findings */
	json_t *spec;                 /* the spec as JSON (space, variants), secrets redacted */
	struct agent_llm_allow allow; /* what an answer may touch */
	char *objective;              /* the objective, for people */
	struct rt_strv taken;         /* fingerprints of the answers taken for the round being asked */
	struct rt_strv held;          /* strings the journal's taken steps borrow */
	struct agent_llm_view view;   /* the prompt's input */
};

static void seen_release(struct seen *w)
{
	free(w->steps);
	for (size_t i = 0; i < w->n_findings; i++)
		free(w->findings[i]);
	free(w->findings);
	json_decref(w->spec);
	free(w->objective);
	rt_strv_release(&w->taken);
	rt_strv_release(&w->held);
	agent_llm_allow_release(&w->allow);
}

/* The campaign's findings, else every finding in the store (a profile
 * imported outside the campaign), best first. */
static int load_findings(struct camp *c, struct seen *w, struct rt_sb *err)
{
	struct db_finding *f = NULL;
	size_t n = 0;
	int rc = db_findings_list(c->db, c->cid, &f, &n, err);
	if (!rc && !n)
		rc = db_findings_list(c->db, 0, &f, &n, err);
	size_t k = rc ? 0 : (n < TOP_FINDINGS ? n : TOP_FINDINGS);
	w->findings = xcalloc(k + 1, sizeof(*w->findings));
	for (size_t i = 0; i < k; i++) {
		struct rt_sb l = RT_SB_INIT;
		rt_sb_addf(&l, "%s: %s", f[i].kind, f[i].detail ? f[i].detail : f[i].subject);
		if (isfinite(f[i].share))
			rt_sb_addf(&l, "; share %.1f%%", f[i].share * 100);
		if (isfinite(f[i].potential))
			rt_sb_addf(&l, "; bound %.1f%%", f[i].potential * 100);
		if (f[i].evidence)
			rt_sb_addf(&l, "; evidence: %s", f[i].evidence);
		if (f[i].variant)
			rt_sb_addf(&l, "; a variant for it: %s", f[i].variant);
		w->findings[i] = rt_sb_detach(&l, NULL);
	}
	w->n_findings = k;
	db_findings_free(f, n);
	return rc;
}

/* What the model sees, with room in the journal for the max answers a round takes. */
static int load_seen(struct camp *c, const struct camp_rows *r, struct seen *w, size_t max, struct rt_sb *err)
{
	const struct spec *s = c->s;
	w->its = r->its;
	w->n_its = r->ni;
	w->steps = xcalloc(w->n_its + max + 1, sizeof(*w->steps));
	for (size_t i = 0; i < w->n_its; i++) {
		const struct db_iteration *it = &w->its[i];
		w->steps[i] = (struct agent_llm_step){ .seq = it->seq, .variant = it->variant, .kind = it->kind,
						       .state = db_iter_state_name(it->state),
						       .effect = it->obj_delta, .reason = it->reason,
						       .change = it->change_text };
	}
	int rc = load_findings(c, w, err);
	w->spec = spec_to_json(s);
	rt_json_redact(w->spec); /* the prompt carries no secret of the spec (HF_TOKEN: ...) */
	if (!rc)
		rc = spec_llm_allow(s, &w->allow, err);
	const struct spec_objective *ob = &s->objective;
	w->objective = xasprintf("%s.%s, %s is better, min gain %g%%", ob->bench, ob->metric,
				 ob->goal == SPEC_GOAL_MIN ? "lower" : "higher", ob->min_gain * 100);
	w->view = (struct agent_llm_view){ .objective = w->objective, .journal = w->steps, .n_journal = w->n_its,
					   .findings = (const char *const *)w->findings, .n_findings = w->n_findings,
					   .space = json_object_get(w->spec, "space"),
					   .examples = json_object_get(w->spec, "variants"), .kinds = &w->allow.kinds,
					   .files = &w->allow.files, .flags = &w->allow.flags, .env = &w->allow.env };
	return rc;
}

/* ---- one answer ---- */

/* Was a change with fingerprint fp taken for the round being asked? */
static bool taken(const struct seen *w, const char *fp)
{
	for (size_t i = 0; i < w->taken.n; i++)
		if (!strcmp(w->taken.v[i], fp))
			return true;
	return false;
}

/* Was a change with fingerprint fp measured to an end in this campaign? */
static bool measured(const struct seen *w, const char *fp)
{
	for (size_t i = 0; i < w->n_its; i++) {
		const struct db_iteration *it = &w->its[i];
		if (it->change_sha256 && !strcmp(it->change_sha256, fp) && db_iter_state_final(it->state) &&
		    it->state != DB_ITER_INTERRUPTED)
			return true;
	}
	return false;
}

/* The change fingerprint of d, as the iteration's plan will store it. */
static int change_fp(struct camp *c, const struct var_def *d, char fp[65], struct rt_sb *err)
{
	struct var_ctx x;
	camp_var_ctx(c, &c->cfg, &x);
	return var_ops_for(d->kind)->fingerprint(d, &x, fp, err);
}

/* The generated variant of the accepted answer of exchange id. */
static struct camp_gen *gen_new(struct var_def *d, json_t *variant, int64_t id, const char *rationale, const char *fp,
				int round)
{
	struct camp_gen *g = xcalloc(1, sizeof(*g));
	g->def = *d;
	memset(d, 0, sizeof(*d));
	g->variant = json_incref(variant);
	g->point = json_pack("{s:I,s:s}", "answer", (json_int_t)id, "rationale", rationale ? rationale : "");
	snprintf(g->fp, sizeof(g->fp), "%s", fp);
	g->target = -1;
	g->round = round;
	return g;
}

/* *s through the one redaction, in place. */
static void redact(char **s)
{
	char *r = rt_redacted(*s);
	free(*s);
	*s = r;
}

/* Judge an answer: the verdict. x gets what is stored (variant,
 * fingerprint, rationale, error). */
static enum db_llm_verdict judge(struct camp *c, const struct seen *w, const char *text, struct db_llm_exchange *x)
{
	struct rt_sb why = RT_SB_INIT;
	json_t *vj = NULL;
	struct var_def d;
	memset(&d, 0, sizeof(d));
	char fp[65] = "";
	enum db_llm_verdict v = DB_LLM_INVALID;
	int rc = spec_llm_read(c->s, &w->allow, text, &vj, &d, &x->rationale, &why);
	redact(&x->rationale); /* it becomes the iteration's note */
	if (rc)
		v = rc == RT_EINVAL ? DB_LLM_DISALLOWED : DB_LLM_INVALID;
	else if (change_fp(c, &d, fp, &why))
		v = DB_LLM_INVALID;
	else if (measured(w, fp) && rt_errf(&why, RT_EINVAL, "this change (%s) was already measured in this "
					    "campaign: propose a different one", d.name))
		v = DB_LLM_DUPLICATE;
	else if (taken(w, fp) && rt_errf(&why, RT_EINVAL, "this change (%s) is already being measured in this "
					 "round: propose a different one", d.name))
		v = DB_LLM_DUPLICATE;
	else
		v = DB_LLM_ACCEPTED;
	if (v == DB_LLM_ACCEPTED) {
		x->variant = json_dumps(vj, JSON_COMPACT | JSON_SORT_KEYS);
		x->fingerprint = xstrdup(fp);
	} else {
		rt_sb_trim(&why);
		rt_redact_secrets(&why);
		x->error = rt_sb_detach(&why, NULL);
	}
	spec_variant_release(&d);
	json_decref(vj);
	rt_sb_release(&why);
	return v;
}

/* ---- the budget and the rounds so far ---- */

/* The tokens a response's usage counted (-1: not said). */
static uint64_t tokens_of(int prompt, int completion)
{
	return (uint64_t)(prompt > 0 ? prompt : 0) + (uint64_t)(completion > 0 ? completion : 0);
}

/* Did the iteration an answer was tried in end (kept, reverted, failed,
 * ...; not interrupted)? A change that could not even be planned or
 * applied has no change fingerprint, yet it was tried. */
static bool tried(const struct seen *w, int64_t iter)
{
	for (size_t i = 0; iter && i < w->n_its; i++)
		if (w->its[i].id == iter)
			return db_iter_state_final(w->its[i].state) && w->its[i].state != DB_ITER_INTERRUPTED;
	return false;
}

/* The calls and tokens spent so far. */
static void tally(const struct db_llm_exchange *x, size_t n, struct spent *sp)
{
	memset(sp, 0, sizeof(*sp));
	for (size_t i = 0; i < n; i++) {
		sp->calls++;
		sp->tokens += tokens_of(x[i].prompt_tokens, x[i].completion_tokens);
	}
}

/* An accepted answer not measured to an end (killed mid-iteration, or a
 * pool round's trial that never ran): measured again, never asked again. */
static bool pending(const struct db_llm_exchange *x, const struct seen *w)
{
	return x->verdict == DB_LLM_ACCEPTED && x->fingerprint && !measured(w, x->fingerprint) &&
	       !taken(w, x->fingerprint) && !tried(w, x->iteration_id);
}

/* Is the budget spent? note says so. */
static bool spent_out(const struct agent_llm_cfg *l, const struct spent *sp, struct agent_proposal *p)
{
	if (sp->calls >= l->max_calls) {
		snprintf(p->note, sizeof(p->note), "llm: the budget of %d calls is spent (llm.max_calls)", l->max_calls);
		return true;
	}
	if (l->max_tokens && sp->tokens >= l->max_tokens) {
		snprintf(p->note, sizeof(p->note), "llm: the budget of %llu tokens is spent (%llu used; llm.max_tokens)",
			 (unsigned long long)l->max_tokens, (unsigned long long)sp->tokens);
		return true;
	}
	return false;
}

/* ---- a round ---- */

/* One request and its record. *id is the exchange's when accepted (else
 * 0). Returns the verdict (>= 0), or an error: the request failed
 * (recorded) or a write did. */
static int ask(struct camp *c, const struct seen *w, json_t *msgs, int seq, int attempt, struct spent *sp,
	       int64_t *id, char **answer, char **error, struct rt_sb *err)
{
	const struct agent_llm_cfg *l = &c->s->llm;
	const char *key = l->api_key_env ? getenv(l->api_key_env) : NULL;
	struct camp_llm_reply r;
	struct rt_sb why = RT_SB_INIT;
	json_t *fmt = agent_llm_response_format((enum agent_llm_format)l->response_format, &w->allow.kinds);
	rt_json_redact(msgs); /* no secret goes to the server: the spec's, or one an answer echoed */
	int hrc = camp_llm_chat(l, key, msgs, fmt, &r, &why);
	json_decref(fmt);
	rt_redact_secrets(&why); /* a 401 body may echo the key */
	char *req = json_dumps(msgs, JSON_COMPACT);
	char *resp = rt_redacted(r.body);
	struct db_llm_exchange x = { .seq = seq, .attempt = attempt, .request = req, .response = resp,
				     .prompt_tokens = r.prompt_tokens, .completion_tokens = r.completion_tokens,
				     .latency_ms = r.latency_ms, .verdict = DB_LLM_FAILED };
	int v = hrc;
	*id = 0;
	if (hrc)
		x.error = xstrdup(why.buf);
	else
		v = (int)(x.verdict = judge(c, w, r.content, &x));
	sp->calls++;
	sp->tokens += tokens_of(r.prompt_tokens, r.completion_tokens);
	int rc = db_llm_add(c->db, c->cid, &x, err);
	if (rc)
		v = camp_fatal(c, rc);
	else if (hrc)
		v = rt_errf(err, hrc, "llm: %s", why.buf);
	else if (x.verdict == DB_LLM_ACCEPTED)
		*id = x.id;
	*answer = r.content ? xstrdup(r.content) : NULL;
	*error = x.error ? xstrdup(x.error) : NULL;
	free(req);
	free(resp);
	free(x.error);
	free(x.variant);
	free(x.fingerprint);
	free(x.rationale);
	camp_llm_reply_release(&r);
	rt_sb_release(&why);
	return v;
}

/* Two refused answers: the iteration is a failed proposal, recorded as such. */
static int failed_proposal(struct camp *c, const char *error, struct rt_sb *err)
{
	struct db_iteration it;
	memset(&it, 0, sizeof(it));
	int64_t id;
	rep_progress_phase(&c->prog, c->seq, "llm-refused", "propose"); /* its own line, not the last one's */
	char *note = xasprintf("llm: no acceptable answer in two attempts");
	int rc = db_iteration_create(c->db, c->cid, c->seq, c->best_iter, "llm-refused", "llm", "", NULL, NULL, note,
				     DB_ROLE_CHANGE, &id, err);
	if (!rc)
		rc = db_iteration_get(c->db, id, &it, err);
	if (!rc)
		rc = db_llm_link(c->db, c->cid, c->seq, id, err);
	free(note);
	if (rc) {
		db_iteration_release(&it);
		return camp_fatal(c, rc);
	}
	camp_reason(&it, "failed proposal: the model's second answer was refused too: %s", error ? error : "");
	rc = camp_record(c, &it, DB_ITER_FAILED, NULL, 0, false, err);
	rep_progress_done(&c->prog, c->seq, it.state, it.reason);
	db_iteration_release(&it);
	c->seq++;
	return rc;
}

/* One round of at most two requests for iteration number seq: 1 with *id
 * the accepted exchange, 0 when both answers were refused (*error: the
 * last refusal's) or the budget ran out before the re-ask, or an error. */
static int round_of(struct camp *c, struct seen *w, struct spent *sp, int seq, struct agent_proposal *p,
		    int64_t *id, char **error, struct rt_sb *err)
{
	json_t *msgs = agent_llm_messages(&w->view);
	char *answer = NULL;
	int v = DB_LLM_INVALID;
	*id = 0;
	for (int attempt = 1; attempt <= 2 && !*id && v >= 0; attempt++) {
		if (attempt == 2) {
			if (spent_out(&c->s->llm, sp, p))
				break; /* the refusal stands: a failed proposal, then the search ends */
			agent_llm_reask(msgs, answer, *error);
		}
		char *a = NULL, *e = NULL;
		v = ask(c, w, msgs, seq, attempt, sp, id, &a, &e, err);
		free(answer);
		free(*error);
		answer = a;
		*error = e;
	}
	json_decref(msgs);
	free(answer);
	return v < 0 ? v : *id ? 1 : 0;
}

/* The proposal of accepted exchange x (its answer, by id). */
static void answer_proposal(const struct db_llm_exchange *x, enum db_iter_role role, bool reused,
			    struct agent_proposal *p)
{
	memset(p, 0, sizeof(*p));
	p->point = true; /* a generated variant, never an index into the spec's */
	p->code = (uint64_t)x->id;
	p->role = role;
	p->fidelity = 1;
	snprintf(p->state, sizeof(p->state), "{}");
	if (reused)
		snprintf(p->note, sizeof(p->note), "llm (the answer recorded for iteration %d): %s", x->seq,
			 x->rationale ? x->rationale : "");
	else
		snprintf(p->note, sizeof(p->note), "llm: %s", x->rationale ? x->rationale : "");
}

/* An answer taken for the round: the next request sees it in the journal,
 * and an answer repeating it is refused as a duplicate. */
static void take(struct seen *w, const struct db_llm_exchange *x)
{
	rt_strv_push(&w->taken, x->fingerprint);
	json_t *vj = x->variant ? json_loads(x->variant, 0, NULL) : NULL;
	const char *name = json_string_value(json_object_get(vj, "name"));
	w->steps[w->view.n_journal++] = (struct agent_llm_step){
		.seq = x->seq, .variant = rt_strv_push(&w->held, name ? name : "?"), .kind = "llm",
		.state = "taken for this round (being measured)", .effect = NAN,
		.reason = x->rationale ? rt_strv_push(&w->held, x->rationale) : NULL };
	json_decref(vj);
}

/* The answers of a round: those recorded and not measured first, then new
 * ones, up to max. */
static int ask_batch(struct camp *c, struct seen *w, bool rounds, size_t max, struct agent_proposal *out,
		     size_t *n, struct rt_sb *err)
{
	enum db_iter_role role = rounds ? DB_ROLE_TRIAL : DB_ROLE_CHANGE;
	struct db_llm_exchange *xs = NULL;
	size_t nx = 0;
	struct spent sp;
	int rc = db_llm_list(c->db, c->cid, &xs, &nx, err);
	tally(xs, rc ? 0 : nx, &sp);
	for (size_t i = 0; !rc && i < nx && *n < max; i++)
		if (pending(&xs[i], w)) {
			answer_proposal(&xs[i], role, true, &out[*n]);
			take(w, &xs[i]);
			++*n;
		}
	while (!rc && *n < max) {
		int64_t id = 0;
		char *error = NULL;
		if (spent_out(&c->s->llm, &sp, &out[*n])) {
			if (*n)
				out[*n].note[0] = 0;
			break;
		}
		rc = round_of(c, w, &sp, c->seq + (int)*n, &out[*n], &id, &error, err);
		bool stop = rc != 1; /* an error, or a refusal: the round holds what it took */
		if (rc == 1) {
			struct db_llm_exchange *x = NULL;
			size_t n1 = 0;
			rc = db_llm_get(c->db, c->cid, id, &x, &n1, err);
			if (n1) {
				answer_proposal(x, role, false, &out[*n]);
				take(w, x);
				++*n;
			}
			db_llm_free(x, n1);
		} else if (rc == 0 && !*n) {
			/* recorded: nothing to run; the next round within the budget, or
			 * (the budget ran out before the re-ask: out[0].note) the end */
			bool done = out[0].note[0];
			rc = failed_proposal(c, error, err);
			rc = rc ? rc : done ? 0 : 2;
		}
		free(error);
		if (stop || rc)
			break;
	}
	db_llm_free(xs, nx);
	if (rc < 0 || rc == 2)
		return rc;
	return *n ? 1 : 0;
}

static int chat_next(struct camp *c, const struct camp_rows *r, struct agent_ctx *x, size_t max,
		     struct agent_proposal *out, size_t *n, struct rt_sb *err)
{
	*n = 0;
	if (x->rounds && agent_round_confirm(x, out)) {
		*n = 1;
		return 1;
	}
	struct seen w;
	memset(&w, 0, sizeof(w));
	int rc = load_seen(c, r, &w, max, err);
	if (!rc)
		rc = ask_batch(c, &w, x->rounds, max, out, n, err);
	seen_release(&w);
	return rc;
}

static int chat_make(struct camp *c, const struct agent_proposal *p, struct camp_gen **gen, struct rt_sb *err)
{
	*gen = NULL;
	struct db_llm_exchange *xs = NULL;
	size_t nx = 0;
	int rc = db_llm_get(c->db, c->cid, (int64_t)p->code, &xs, &nx, err);
	const struct db_llm_exchange *x = nx ? xs : NULL;
	json_t *vj = x && x->verdict == DB_LLM_ACCEPTED && x->variant ? json_loads(x->variant, 0, NULL) : NULL;
	struct var_def d;
	memset(&d, 0, sizeof(d));
	if (!rc)
		rc = vj ? spec_variant_from_json(c->s, vj, &d, err)
			: rt_errf(err, RT_ENOENT, "llm answer %llu: no accepted answer with its variant is stored",
				  (unsigned long long)p->code);
	if (!rc)
		*gen = gen_new(&d, vj, x->id, x->rationale, x->fingerprint, x->seq);
	spec_variant_release(&d);
	json_decref(vj);
	db_llm_free(xs, nx);
	return rc;
}

static int chat_record(struct camp *c, int64_t iter, const struct agent_proposal *p, const struct camp_gen *g,
		       struct rt_sb *err)
{
	int rc = db_llm_link(c->db, c->cid, g->round, iter, err);
	return rc ? rc : camp_space_record(c, iter, p, g, err);
}

static int chat_history(struct camp *c, const struct camp_rows *r, struct agent_attempt **out, size_t *n,
			struct rt_sb *err)
{
	(void)c;
	(void)err;
	struct agent_attempt *h = xcalloc(r->np + 1, sizeof(*h));
	size_t m = 0, k;
	for (size_t i = 0; i < r->np; i++) {
		json_t *pj = r->ps[i].target == -1 ? json_loads(r->ps[i].point, 0, NULL) : NULL;
		json_int_t answer = json_integer_value(json_object_get(pj, "answer"));
		json_decref(pj);
		if (answer > 0 && camp_rows_find(r, r->ps[i].iteration_id, &k)) {
			const struct db_iteration *it = &r->its[k];
			h[m++] = (struct agent_attempt){ .state = it->state, .role = it->role, .effect = it->obj_delta,
							 .passed = it->passed == 1, .round = it->round > 0 ? it->round : 0,
							 .point = true, .code = (uint64_t)answer };
		}
	}
	*out = h;
	*n = m;
	return 0;
}

/* The stored variant of a kept llm iteration: its proposals row, else (a
 * store from before answers were recorded there) its accepted exchange. */
static char *stored_text(struct db *db, int64_t cid, int64_t iter, struct rt_sb *err)
{
	char *text = camp_proposal_variant(db, cid, iter, err);
	struct db_llm_exchange *x = NULL;
	size_t n = 0;
	if (!text && !err->len && !db_llm_of_iteration(db, iter, &x, &n, err))
		for (size_t i = 0; i < n && !text; i++)
			if (x[i].verdict == DB_LLM_ACCEPTED && x[i].variant)
				text = xstrdup(x[i].variant);
	db_llm_free(x, n);
	return text;
}

static int chat_rebuild(struct camp *c, const struct db_iteration *it, struct rt_sb *err)
{
	return camp_gen_rebuild(c, it, stored_text, err);
}

static json_t *chat_stored(struct db *db, const struct spec *s, const json_t *spec_json, int64_t cid,
			   const struct db_iteration *it, struct rt_sb *err)
{
	(void)s;
	(void)spec_json;
	return camp_stored_named(stored_text(db, cid, it->id, err), cid, it, err);
}

/* An answer's plan: every file git apply will touch is one the answer may
 * touch. The answer's text was checked when it was read (judge); this
 * checks git's own reading of it, on the tree it will be applied to. */
static int chat_contain(struct camp *c, const struct var_plan *plan, struct rt_sb *err)
{
	struct agent_llm_allow a;
	int rc = spec_llm_allow(c->s, &a, err);
	if (!rc && agent_llm_plan_ok(&c->gen->def, plan, &a, err))
		rc = RT_EINVAL;
	agent_llm_allow_release(&a);
	return rc;
}

/* The chat row of the proposer table (propose.c). */
const struct camp_proposer camp_proposer_chat = { "a chat model's answers", chat_history, chat_next, chat_make,
						  chat_record, chat_rebuild, chat_stored, chat_contain };
