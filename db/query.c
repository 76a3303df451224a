/*
 * Read-side SQL for the reports (see db/query.h). Each function prepares one
 * cached statement, binds, and copies the rows out, so the reports never see
 * SQLite. The statements are written to use the schema's indexes: pages of
 * iterations walk iterations_campaign backwards; the per-iteration look-ups
 * go through notes_iteration, measurements_iteration, metric_stats_iteration
 * and requests_iteration.
 */
#include "db/query.h"
#include "db/db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int col_tri(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i) != 0;
}

/* ---- campaigns ---- */

static const char SQL_CAMPAIGN[] =
	"SELECT c.id, c.name, c.spec_path, c.state, c.best_iteration, c.created_at, c.finished_at,"
	" (SELECT count(*) FROM iterations i WHERE i.campaign_id = c.id)"
	" FROM campaigns c WHERE (?1 = 0 OR c.id = ?1) ORDER BY c.id DESC LIMIT 1";

int db_q_campaign_get(struct db *db, int64_t id, struct db_campaign *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_CAMPAIGN, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		if (id)
			return rt_errf(err, RT_ENOENT, "campaign %lld: no such campaign", (long long)id);
		return rt_errf(err, RT_ENOENT, "%s: no campaign recorded yet", db_path(db));
	}
	if (rc != SQLITE_ROW)
		return db_fail(db, err, "read campaign");
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->name = db_col_text(st, 1);
	out->spec_path = db_col_text(st, 2);
	out->state = db_col_text(st, 3);
	out->best_iteration = sqlite3_column_int64(st, 4);
	out->created_at = sqlite3_column_int64(st, 5);
	out->finished_at = sqlite3_column_int64(st, 6);
	out->n_iterations = sqlite3_column_int64(st, 7);
	sqlite3_reset(st);
	return 0;
}

/* ---- iterations ---- */

/* The columns every iteration query selects, in this order (read by iter_row). */
#define ITER_COLS                                                                          \
	"i.id, i.campaign_id, i.seq, i.parent_id, i.variant, i.kind,"                      \
	" CASE WHEN ?9 THEN i.change_text END, i.state, i.phase, i.decision, i.reason,"    \
	" i.objective, i.obj_best, i.obj_cand, i.obj_delta, i.obj_ci_lo, i.obj_ci_hi,"     \
	" i.confidence, i.test, i.p_value, i.n_cand, i.n_best, i.paired, i.gate_run_id,"  \
	" g.accuracy, g.passed, i.strategy_note, i.started_at, i.finished_at,"             \
	" EXISTS (SELECT 1 FROM notes n WHERE n.iteration_id = i.id AND n.kind = 'invalidation'),"\
	" (SELECT n.by_iteration_id FROM notes n WHERE n.iteration_id = i.id"              \
	"   AND n.kind = 'correction' AND n.by_iteration_id IS NOT NULL ORDER BY n.id LIMIT 1),"\
	" i.change_sha256, i.config_sha256, i.role, i.passed"

/* A text column holding one of an enum's names; an unknown word (a newer
 * ratchet's) reads as the first value rather than failing the whole page. */
static void col_state(sqlite3_stmt *st, int i, enum db_iter_state *out)
{
	*out = DB_ITER_PENDING;
	db_iter_state_parse((const char *)sqlite3_column_text(st, i), out);
}

static void iter_row(sqlite3_stmt *st, struct db_iteration *it)
{
	memset(it, 0, sizeof(*it));
	it->id = sqlite3_column_int64(st, 0);
	it->campaign_id = sqlite3_column_int64(st, 1);
	it->seq = sqlite3_column_int(st, 2);
	it->parent_id = sqlite3_column_int64(st, 3);
	it->variant = db_col_text(st, 4);
	it->kind = db_col_text(st, 5);
	it->change_text = db_col_text(st, 6);
	col_state(st, 7, &it->state);
	it->phase = db_col_text(st, 8);
	it->decision = db_col_text(st, 9);
	it->reason = db_col_text(st, 10);
	it->objective = db_col_text(st, 11);
	it->obj_best = db_col_real(st, 12);
	it->obj_cand = db_col_real(st, 13);
	it->obj_delta = db_col_real(st, 14);
	it->obj_ci_lo = db_col_real(st, 15);
	it->obj_ci_hi = db_col_real(st, 16);
	it->confidence = db_col_real(st, 17);
	it->test = db_col_text(st, 18);
	it->p_value = db_col_real(st, 19);
	it->n_cand = sqlite3_column_int(st, 20);
	it->n_best = sqlite3_column_int(st, 21);
	it->paired = sqlite3_column_int(st, 22) != 0;
	it->gate_run_id = sqlite3_column_int64(st, 23);
	it->gate_accuracy = db_col_real(st, 24);
	it->gate_passed = col_tri(st, 25);
	it->strategy_note = db_col_text(st, 26);
	it->started_at = sqlite3_column_int64(st, 27);
	it->finished_at = sqlite3_column_int64(st, 28);
	it->invalidated = sqlite3_column_int(st, 29) != 0;
	it->corrected_by = sqlite3_column_int64(st, 30);
	it->change_sha256 = db_col_text(st, 31);
	it->config_sha256 = db_col_text(st, 32);
	it->role = DB_ROLE_CHANGE;
	db_iter_role_parse((const char *)sqlite3_column_text(st, 33), &it->role);
	it->passed = col_tri(st, 34);
}

/* Newest first, so that LIMIT takes the newest page off the index
 * (campaign_id, seq) walked backwards; the caller reverses. ?2 state,
 * ?3 since, ?4 limit (-1 for all). */
static const char SQL_ITERS[] =
	"SELECT " ITER_COLS " FROM iterations i LEFT JOIN gate_runs g ON g.id = i.gate_run_id"
	" WHERE i.campaign_id = ?1"
	" AND (?2 IS NULL OR i.state = ?2 OR (?2 = 'invalid' AND EXISTS (SELECT 1 FROM notes n"
	"      WHERE n.iteration_id = i.id AND n.kind = 'invalidation')))"
	" AND i.started_at >= ?3"
	" ORDER BY i.seq DESC LIMIT ?4";

int db_q_iters(struct db *db, const struct db_q_iter_filter *f, struct db_iteration **out,
	       size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_ITERS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, f->campaign_id);
	if (f->state)
		sqlite3_bind_text(st, 2, f->state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->since_ms);
	sqlite3_bind_int64(st, 4, f->limit ? (int64_t)f->limit : -1);
	sqlite3_bind_int(st, 9, f->with_text);
	struct db_iteration *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		iter_row(st, &v[len++]);
	}
	if (rc != SQLITE_DONE) {
		rc = db_fail(db, err, "list iterations");
		sqlite3_reset(st);
		db_iterations_free(v, len);
		return rc;
	}
	sqlite3_reset(st);
	for (size_t i = 0; i < len / 2; i++) {
		struct db_iteration t = v[i];
		v[i] = v[len - 1 - i];
		v[len - 1 - i] = t;
	}
	*out = v;
	*n = len;
	return 0;
}

static const char SQL_ITER[] =
	"SELECT " ITER_COLS " FROM iterations i LEFT JOIN gate_runs g ON g.id = i.gate_run_id"
	" WHERE (?1 > 0 AND i.id = ?1) OR (?1 = 0 AND i.campaign_id = ?2 AND i.seq = ?3)";

/* One iteration by id, or by (campaign, seq) when id is 0. */
static int iter_get(struct db *db, int64_t id, int64_t campaign_id, int seq,
		    struct db_iteration *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_ITER, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, campaign_id);
	sqlite3_bind_int(st, 3, seq);
	sqlite3_bind_int(st, 9, 1);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		iter_row(st, out);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, err, "read iteration");
	if (id)
		return rt_errf(err, RT_ENOENT, "iteration %lld: no such iteration", (long long)id);
	return rt_errf(err, RT_ENOENT, "iteration %lld:%d: no such iteration", (long long)campaign_id,
		       seq);
}

int db_iteration_get(struct db *db, int64_t id, struct db_iteration *out, struct rt_sb *err)
{
	if (id <= 0)
		return rt_errf(err, RT_ENOENT, "iteration %lld: no such iteration", (long long)id);
	return iter_get(db, id, 0, 0, out, err);
}

int db_iteration_get_seq(struct db *db, int64_t campaign_id, int seq, struct db_iteration *out,
			 struct rt_sb *err)
{
	return iter_get(db, 0, campaign_id, seq, out, err);
}

int db_iterations_list(struct db *db, int64_t campaign_id, struct db_iteration **out, size_t *n,
		       struct rt_sb *err)
{
	struct db_q_iter_filter f = { .campaign_id = campaign_id, .with_text = true };
	return db_q_iters(db, &f, out, n, err);
}

/* ---- measurements ---- */

void db_q_series_free(struct db_q_series *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].benchmark);
		free(v[i].metric);
		free(v[i].arm);
		free(v[i].unit);
		free(v[i].v);
	}
	free(v);
}

static const char SQL_SAMPLES[] =
	"SELECT benchmark, metric, arm, unit, value, valid FROM measurements"
	" WHERE iteration_id = ?1 ORDER BY benchmark, metric, arm, valid DESC, value";

int db_q_series_list(struct db *db, int64_t iteration_id, struct db_q_series **out, size_t *n,
		     struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_SAMPLES, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	struct db_q_series *v = NULL;
	size_t len = 0, cap = 0, vcap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *b = (const char *)sqlite3_column_text(st, 0);
		const char *m = (const char *)sqlite3_column_text(st, 1);
		const char *a = (const char *)sqlite3_column_text(st, 2);
		struct db_q_series *s = len ? &v[len - 1] : NULL;
		if (!s || strcmp(s->benchmark, b) || strcmp(s->metric, m) || strcmp(s->arm, a)) {
			v = db_grow(v, len, &cap, sizeof(*v));
			s = &v[len++];
			memset(s, 0, sizeof(*s));
			s->benchmark = xstrdup(b);
			s->metric = xstrdup(m);
			s->arm = xstrdup(a);
			s->unit = db_col_text(st, 3);
			vcap = 0;
		}
		if (!sqlite3_column_int(st, 5)) {
			s->n_invalid++;
			continue;
		}
		s->v = db_grow(s->v, s->n, &vcap, sizeof(double));
		s->v[s->n++] = sqlite3_column_double(st, 4);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_series_free(v, len);
		return db_fail(db, err, "read measurements");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- metric_stats ---- */

void db_q_mstats_free(struct db_q_mstat *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].benchmark);
		free(v[i].metric);
		free(v[i].unit);
		free(v[i].better);
	}
	free(v);
}

static const char SQL_MSTATS[] =
	"SELECT benchmark, metric, unit, better, best_median, cand_median, best_mad, cand_mad,"
	" ratio, ci_lo, ci_hi, p_value, n_best, n_cand FROM metric_stats"
	" WHERE iteration_id = ?1 ORDER BY benchmark, metric, id";

int db_q_mstats(struct db *db, int64_t iteration_id, struct db_q_mstat **out, size_t *n,
		struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_MSTATS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	struct db_q_mstat *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_mstat *m = &v[len++];
		m->benchmark = db_col_text(st, 0);
		m->metric = db_col_text(st, 1);
		m->unit = db_col_text(st, 2);
		m->better = db_col_text(st, 3);
		m->best_median = db_col_real(st, 4);
		m->cand_median = db_col_real(st, 5);
		m->best_mad = db_col_real(st, 6);
		m->cand_mad = db_col_real(st, 7);
		m->ratio = db_col_real(st, 8);
		m->ci_lo = db_col_real(st, 9);
		m->ci_hi = db_col_real(st, 10);
		m->p_value = db_col_real(st, 11);
		m->n_best = sqlite3_column_int(st, 12);
		m->n_cand = sqlite3_column_int(st, 13);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_mstats_free(v, len);
		return db_fail(db, err, "read metric_stats");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- gate ---- */

void db_q_gate_release(struct db_q_gate *g)
{
	free(g->endpoint);
	free(g->model);
	free(g->format);
	free(g->extract);
	free(g->verdict);
	memset(g, 0, sizeof(*g));
}

static const char SQL_GATE[] =
	"SELECT id, endpoint, model, format, extract, n_planned, n_done, n_correct, n_failed,"
	" accuracy, wilson_lo, wilson_hi, baseline_run_id, diff, diff_lo, diff_hi, mcnemar_p,"
	" identical_rate, flips_to_wrong, flips_to_right, passed, verdict,"
	" CASE WHEN json_valid(params_json) THEN json_extract(params_json, '$.min_accuracy') END"
	" FROM gate_runs WHERE id = ?1";

int db_q_gate_get(struct db *db, int64_t run_id, struct db_q_gate *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_GATE, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, run_id);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			return rt_errf(err, RT_ENOENT, "gate run %lld: no such run", (long long)run_id);
		return db_fail(db, err, "read gate run");
	}
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->endpoint = db_col_text(st, 1);
	out->model = db_col_text(st, 2);
	out->format = db_col_text(st, 3);
	out->extract = db_col_text(st, 4);
	out->n_planned = sqlite3_column_int(st, 5);
	out->n_done = sqlite3_column_int(st, 6);
	out->n_correct = sqlite3_column_int(st, 7);
	out->n_failed = sqlite3_column_int(st, 8);
	out->accuracy = db_col_real(st, 9);
	out->wilson_lo = db_col_real(st, 10);
	out->wilson_hi = db_col_real(st, 11);
	out->baseline_run_id = sqlite3_column_int64(st, 12);
	out->diff = db_col_real(st, 13);
	out->diff_lo = db_col_real(st, 14);
	out->diff_hi = db_col_real(st, 15);
	out->mcnemar_p = db_col_real(st, 16);
	out->identical_rate = db_col_real(st, 17);
	out->flips_to_wrong = sqlite3_column_int(st, 18);
	out->flips_to_right = sqlite3_column_int(st, 19);
	out->passed = col_tri(st, 20);
	out->verdict = db_col_text(st, 21);
	out->min_accuracy = db_col_real(st, 22);
	sqlite3_reset(st);
	return 0;
}

void db_q_flips_free(struct db_q_flip *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
		free(v[i].before);
		free(v[i].after);
	}
	free(v);
}

/* Both runs' answers, matched on the UNIQUE (run_id, idx) index. */
static const char SQL_FLIPS[] =
	"SELECT a.idx, a.correct, a.target,"
	" CASE WHEN r.extract = 'strict' THEN b.extracted_strict ELSE b.extracted_flex END,"
	" CASE WHEN r.extract = 'strict' THEN a.extracted_strict ELSE a.extracted_flex END"
	" FROM gate_answers a JOIN gate_runs r ON r.id = a.run_id"
	" JOIN gate_answers b ON b.run_id = ?2 AND b.idx = a.idx"
	" WHERE a.run_id = ?1 AND a.correct IS NOT NULL AND b.correct IS NOT NULL"
	" AND a.correct <> b.correct ORDER BY a.idx";

int db_q_flips(struct db *db, int64_t run_id, int64_t baseline_run_id, struct db_q_flip **out,
	       size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_FLIPS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, baseline_run_id);
	struct db_q_flip *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_flip *f = &v[len++];
		f->idx = sqlite3_column_int(st, 0);
		f->now_correct = sqlite3_column_int(st, 1) != 0;
		f->target = db_col_text(st, 2);
		f->before = db_col_text(st, 3);
		f->after = db_col_text(st, 4);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_flips_free(v, len);
		return db_fail(db, err, "read gate flips");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- regressions ---- */

void db_q_regrs_free(struct db_q_regr *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].variant);
		free(v[i].benchmark);
		free(v[i].metric);
		free(v[i].unit);
	}
	free(v);
}

static const char SQL_REGRS[] =
	"SELECT r.id, r.iteration_id, i.seq, i.variant, i.state, r.benchmark, r.metric, r.unit,"
	" r.before, r.after, r.delta, r.ci_lo, r.ci_hi, r.kept"
	" FROM regressions r JOIN iterations i ON i.id = r.iteration_id"
	" WHERE (?2 <> 0 AND r.iteration_id = ?2) OR (?2 = 0 AND i.campaign_id = ?1)"
	" ORDER BY i.seq, r.id";

int db_q_regrs(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_regr **out,
	       size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_REGRS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_int64(st, 2, iteration_id);
	struct db_q_regr *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_regr *r = &v[len++];
		r->id = sqlite3_column_int64(st, 0);
		r->iteration_id = sqlite3_column_int64(st, 1);
		r->seq = sqlite3_column_int(st, 2);
		r->variant = db_col_text(st, 3);
		col_state(st, 4, &r->state);
		r->benchmark = db_col_text(st, 5);
		r->metric = db_col_text(st, 6);
		r->unit = db_col_text(st, 7);
		r->before = db_col_real(st, 8);
		r->after = db_col_real(st, 9);
		r->delta = db_col_real(st, 10);
		r->ci_lo = db_col_real(st, 11);
		r->ci_hi = db_col_real(st, 12);
		r->kept = sqlite3_column_int(st, 13) != 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_regrs_free(v, len);
		return db_fail(db, err, "read regressions");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- facts and artifacts ---- */

void db_q_kvs_free(struct db_q_kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
		free(v[i].sha256);
	}
	free(v);
}

/* The iteration's own facts, then campaign-wide facts whose key it did not
 * record; the latest value of each key wins. */
static const char SQL_FACTS[] =
	"SELECT key, value, iteration_id IS NULL FROM env_facts f"
	" WHERE (f.iteration_id = ?2 OR (f.iteration_id IS NULL AND f.campaign_id = ?1"
	"   AND NOT EXISTS (SELECT 1 FROM env_facts g WHERE g.iteration_id = ?2 AND g.key = f.key)))"
	" AND f.id = (SELECT max(h.id) FROM env_facts h WHERE h.key = f.key"
	"   AND h.iteration_id IS f.iteration_id AND h.campaign_id IS f.campaign_id)"
	" ORDER BY iteration_id IS NULL, key";

int db_q_facts(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_kv **out,
	       size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_FACTS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_int64(st, 2, iteration_id);
	struct db_q_kv *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_kv *k = &v[len++];
		memset(k, 0, sizeof(*k));
		k->key = db_col_text(st, 0);
		k->value = db_col_text(st, 1);
		k->campaign_wide = sqlite3_column_int(st, 2) != 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_kvs_free(v, len);
		return db_fail(db, err, "read env_facts");
	}
	*out = v;
	*n = len;
	return 0;
}

static const char SQL_ARTIFACTS[] =
	"SELECT name, kind, sha256, size, truncated FROM artifacts WHERE iteration_id = ?1"
	" ORDER BY id";

int db_q_artifacts(struct db *db, int64_t iteration_id, struct db_q_kv **out, size_t *n,
		   struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_ARTIFACTS, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	struct db_q_kv *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_kv *k = &v[len++];
		memset(k, 0, sizeof(*k));
		k->key = db_col_text(st, 0);
		k->value = db_col_text(st, 1);
		k->sha256 = db_col_text(st, 2);
		k->size = sqlite3_column_int64(st, 3);
		k->truncated = sqlite3_column_int(st, 4) != 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_kvs_free(v, len);
		return db_fail(db, err, "read artifacts");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- notes ---- */

void db_q_notes_free(struct db_q_note *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].text);
		free(v[i].author);
	}
	free(v);
}

/* ?2 <> 0: notes on that iteration plus the corrections it authored (the
 * by_iteration_id side has no index, but notes are few); ?2 = 0: every note
 * of campaign ?1. */
static const char SQL_NOTES[] =
	"SELECT n.id, n.iteration_id, i.seq, n.by_iteration_id, b.seq, n.kind, n.text, n.author,"
	" n.created_at FROM notes n JOIN iterations i ON i.id = n.iteration_id"
	" LEFT JOIN iterations b ON b.id = n.by_iteration_id"
	" WHERE (?2 <> 0 AND (n.iteration_id = ?2 OR n.by_iteration_id = ?2))"
	"    OR (?2 = 0 AND i.campaign_id = ?1)"
	" ORDER BY n.created_at, n.id";

int db_q_notes(struct db *db, int64_t campaign_id, int64_t iteration_id, struct db_q_note **out,
	       size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, SQL_NOTES, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_int64(st, 2, iteration_id);
	struct db_q_note *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		struct db_q_note *o = &v[len++];
		o->id = sqlite3_column_int64(st, 0);
		o->iteration_id = sqlite3_column_int64(st, 1);
		o->seq = sqlite3_column_int(st, 2);
		o->by_iteration_id = sqlite3_column_int64(st, 3);
		o->by_seq = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
		o->kind = db_col_text(st, 5);
		o->text = db_col_text(st, 6);
		o->author = db_col_text(st, 7);
		o->created_at = sqlite3_column_int64(st, 8);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		db_q_notes_free(v, len);
		return db_fail(db, err, "read notes");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- requests ---- */

static const char SQL_TTFT[] =
	"SELECT ttft_s FROM requests WHERE iteration_id = ?1 AND (?2 IS NULL OR arm = ?2)"
	" AND ok = 1 AND ttft_s IS NOT NULL ORDER BY ttft_s";
static const char SQL_E2EL[] =
	"SELECT e2el_s FROM requests WHERE iteration_id = ?1 AND (?2 IS NULL OR arm = ?2)"
	" AND ok = 1 AND e2el_s IS NOT NULL ORDER BY e2el_s";

int db_q_latencies(struct db *db, int64_t iteration_id, const char *arm, int which, double **out,
		   size_t *n, struct rt_sb *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db, which ? SQL_E2EL : SQL_TTFT, err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, iteration_id);
	if (arm)
		sqlite3_bind_text(st, 2, arm, -1, SQLITE_STATIC);
	double *v = NULL;
	size_t len = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = db_grow(v, len, &cap, sizeof(*v));
		v[len++] = sqlite3_column_double(st, 0);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return db_fail(db, err, "read requests");
	}
	*out = v;
	*n = len;
	return 0;
}
