/*
 * The iterations table: one row per change tried (seq 0 is the baseline).
 * The names of iteration states and roles (db.h's X-macro lists, the one
 * place that maps the enums to the words stored in iterations.state and
 * iterations.role), creating an iteration and moving it through its states,
 * the final decision, the one reader of the row (struct db_iteration) behind
 * every look-up and list, and the parser of what users type to name one.
 */
#include "db/db_int.h"
#include "db/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state and role names ---- */

static const char *const state_names[] = {
#define XX(code, name) name,
	DB_ITER_STATE_MAP(XX)
#undef XX
};

static const char *const role_names[] = {
#define XX(code, name) name,
	DB_ITER_ROLE_MAP(XX)
#undef XX
};

/* The index of name in names[n], or -1. */
static int name_index(const char *const *names, unsigned n, const char *name)
{
	for (unsigned i = 0; name && i < n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	return -1;
}

const char *db_iter_state_name(enum db_iter_state s)
{
	return (unsigned)s < DB_ITER_N_STATES ? state_names[s] : "unknown";
}

int db_iter_state_parse(const char *name, enum db_iter_state *out)
{
	int i = name_index(state_names, DB_ITER_N_STATES, name);
	if (i < 0)
		return RT_EINVAL;
	*out = (enum db_iter_state)i;
	return 0;
}

bool db_iter_state_final(enum db_iter_state s)
{
	return s >= DB_ITER_BASELINE && s < DB_ITER_N_STATES;
}

const char *db_iter_role_name(enum db_iter_role r)
{
	return (unsigned)r < DB_N_ROLES ? role_names[r] : "unknown";
}

int db_iter_role_parse(const char *name, enum db_iter_role *out)
{
	int i = name_index(role_names, DB_N_ROLES, name);
	if (i < 0)
		return RT_EINVAL;
	*out = (enum db_iter_role)i;
	return 0;
}

enum db_iter_state db_col_state(sqlite3_stmt *st, int i)
{
	enum db_iter_state s = DB_ITER_PENDING;
	db_iter_state_parse((const char *)sqlite3_column_text(st, i), &s);
	return s;
}

/* ---- writes ---- */

int db_iteration_set_pool(struct db *db, int64_t id, int round, const char *device, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "UPDATE iterations SET round = ?2, device = ?3 WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, round);
	db_bind_text(st, 3, device);
	return db_step_done(db, st, err, "set an iteration's round and device");
}

int db_iteration_create(struct db *db, int64_t campaign_id, int seq, int64_t parent_id,
			const char *variant, const char *kind, const char *change_text,
			const char *change_sha256, const char *config_sha256,
			const char *strategy_note, enum db_iter_role role, int64_t *id,
			struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO iterations (campaign_id, seq, parent_id, variant, kind, change_text, "
		"change_sha256, config_sha256, strategy_note, started_at, role) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, campaign_id);
	sqlite3_bind_int(st, 2, seq);
	db_bind_id(st, 3, parent_id);
	db_bind_text(st, 4, variant);
	db_bind_text(st, 5, kind);
	db_bind_text(st, 6, change_text ? change_text : "");
	db_bind_text(st, 7, change_sha256);
	db_bind_text(st, 8, config_sha256);
	db_bind_text(st, 9, strategy_note);
	sqlite3_bind_int64(st, 10, rt_wall_ms());
	db_bind_text(st, 11, db_iter_role_name(role));
	char what[80];
	snprintf(what, sizeof(what), "insert into iterations (%lld:%d)", (long long)campaign_id,
		 seq);
	return db_step_insert(db, st, id, err, what);
}

/* After an UPDATE of iteration id: RT_ENOENT when it changed nothing. */
static int updated(struct db *db, int rc, int64_t id, struct rt_sb *err)
{
	if (!rc && db_changes(db) == 0)
		rc = rt_errf(err, RT_ENOENT, "db: no iteration %lld", (long long)id);
	return rc;
}

int db_iteration_set_state(struct db *db, int64_t id, enum db_iter_state state, const char *phase,
			   struct rt_sb *err)
{
	/* A NULL phase keeps the phase reached so far. */
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = ?2, phase = COALESCE(?3, phase) WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, db_iter_state_name(state));
	db_bind_text(st, 3, phase);
	return updated(db, db_step_done(db, st, err, "update iterations (state)"), id, err);
}

int db_iteration_finish(struct db *db, const struct db_iteration *it, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE iterations SET state = ?2, phase = COALESCE(?3, phase), decision = ?4, "
		"reason = ?5, objective = ?6, obj_best = ?7, obj_cand = ?8, obj_delta = ?9, "
		"obj_ci_lo = ?10, obj_ci_hi = ?11, confidence = ?12, test = ?13, p_value = ?14, "
		"n_cand = ?15, n_best = ?16, paired = ?17, gate_run_id = ?18, finished_at = ?19, "
		"passed = ?20 WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, it->id);
	db_bind_text(st, 2, db_iter_state_name(it->state));
	db_bind_text(st, 3, it->phase);
	db_bind_text(st, 4, it->decision);
	db_bind_text(st, 5, it->reason);
	db_bind_text(st, 6, it->objective);
	db_bind_real(st, 7, it->obj_best);
	db_bind_real(st, 8, it->obj_cand);
	db_bind_real(st, 9, it->obj_delta);
	db_bind_real(st, 10, it->obj_ci_lo);
	db_bind_real(st, 11, it->obj_ci_hi);
	db_bind_real(st, 12, it->confidence);
	db_bind_text(st, 13, it->test);
	db_bind_real(st, 14, it->p_value);
	sqlite3_bind_int(st, 15, it->n_cand);
	sqlite3_bind_int(st, 16, it->n_best);
	sqlite3_bind_int(st, 17, it->paired ? 1 : 0);
	db_bind_id(st, 18, it->gate_run_id);
	sqlite3_bind_int64(st, 19, rt_wall_ms());
	db_bind_count(st, 20, it->passed);
	return updated(db, db_step_done(db, st, err, "update iterations (finish)"), it->id, err);
}

/* ---- the row ---- */

void db_iteration_release(struct db_iteration *it)
{
	if (!it)
		return;
	free(it->variant);
	free(it->kind);
	free(it->change_text);
	free(it->change_sha256);
	free(it->config_sha256);
	free(it->device);
	free(it->phase);
	free(it->decision);
	free(it->reason);
	free(it->objective);
	free(it->test);
	free(it->strategy_note);
	memset(it, 0, sizeof(*it));
}

/* The columns every iteration query selects, in this order (read by
 * iteration_read); ?9 says whether change_text is wanted. */
#define ITER_COLS                                                                          \
	"i.id, i.campaign_id, i.seq, i.parent_id, i.variant, i.kind,"                      \
	" CASE WHEN ?9 THEN i.change_text END, i.state, i.phase, i.decision, i.reason,"    \
	" i.objective, i.obj_best, i.obj_cand, i.obj_delta, i.obj_ci_lo, i.obj_ci_hi,"     \
	" i.confidence, i.test, i.p_value, i.n_cand, i.n_best, i.paired, i.gate_run_id,"  \
	" g.accuracy, g.passed, i.strategy_note, i.started_at, i.finished_at,"             \
	" EXISTS (SELECT 1 FROM notes n WHERE n.iteration_id = i.id AND n.kind = 'invalidation'),"\
	" (SELECT n.by_iteration_id FROM notes n WHERE n.iteration_id = i.id"              \
	"   AND n.kind = 'correction' AND n.by_iteration_id IS NOT NULL ORDER BY n.id LIMIT 1),"\
	" i.change_sha256, i.config_sha256, i.role, i.passed, i.round, i.device"

static void iteration_read(sqlite3_stmt *st, void *row)
{
	struct db_iteration *it = row;
	it->id = sqlite3_column_int64(st, 0);
	it->campaign_id = sqlite3_column_int64(st, 1);
	it->seq = sqlite3_column_int(st, 2);
	it->parent_id = sqlite3_column_int64(st, 3);
	it->variant = db_col_text(st, 4);
	it->kind = db_col_text(st, 5);
	it->change_text = db_col_text(st, 6);
	it->state = db_col_state(st, 7);
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
	it->gate_passed = db_col_tri(st, 25);
	it->strategy_note = db_col_text(st, 26);
	it->started_at = sqlite3_column_int64(st, 27);
	it->finished_at = sqlite3_column_int64(st, 28);
	it->invalidated = sqlite3_column_int(st, 29) != 0;
	it->corrected_by = sqlite3_column_int64(st, 30);
	it->change_sha256 = db_col_text(st, 31);
	it->config_sha256 = db_col_text(st, 32);
	it->role = DB_ROLE_CHANGE;
	db_iter_role_parse((const char *)sqlite3_column_text(st, 33), &it->role);
	it->passed = db_col_tri(st, 34);
	it->round = sqlite3_column_type(st, 35) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 35);
	it->device = db_col_text(st, 36);
}

static void iteration_release(void *row)
{
	db_iteration_release(row);
}

static const struct db_row_type iteration_rows = {
	sizeof(struct db_iteration), iteration_read, iteration_release, "read iterations",
};

void db_iterations_free(struct db_iteration *v, size_t n)
{
	db_rows_free(&iteration_rows, v, n);
}

/* ---- reads ---- */

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
	sqlite3_stmt *st = db_prepare(db, SQL_ITERS, err);
	if (st) {
		sqlite3_bind_int64(st, 1, f->campaign_id);
		db_bind_text(st, 2, f->state);
		sqlite3_bind_int64(st, 3, f->since_ms);
		sqlite3_bind_int64(st, 4, f->limit ? (int64_t)f->limit : -1);
		sqlite3_bind_int(st, 9, f->with_text);
	}
	void *rows;
	int rc = db_rows_list(db, st, &iteration_rows, &rows, n, err);
	struct db_iteration *v = rows;
	for (size_t i = 0; i < *n / 2; i++) {
		struct db_iteration t = v[i];
		v[i] = v[*n - 1 - i];
		v[*n - 1 - i] = t;
	}
	*out = v;
	return rc;
}

int db_iterations_list(struct db *db, int64_t campaign_id, struct db_iteration **out, size_t *n,
		       struct rt_sb *err)
{
	struct db_q_iter_filter f = { .campaign_id = campaign_id, .with_text = true };
	return db_q_iters(db, &f, out, n, err);
}

static const char SQL_ITER[] =
	"SELECT " ITER_COLS " FROM iterations i LEFT JOIN gate_runs g ON g.id = i.gate_run_id"
	" WHERE (?1 > 0 AND i.id = ?1) OR (?1 = 0 AND i.campaign_id = ?2 AND i.seq = ?3)";

/* One iteration by id, or by (campaign, seq) when id is 0. */
static int iteration_find(struct db *db, int64_t id, int64_t campaign_id, int seq,
			  struct db_iteration *out, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, SQL_ITER, err);
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, campaign_id);
		sqlite3_bind_int(st, 3, seq);
		sqlite3_bind_int(st, 9, 1);
	}
	int rc = db_row_get(db, st, &iteration_rows, out, err);
	if (rc == RT_ENOENT && id)
		return rt_errf(err, RT_ENOENT, "iteration %lld: no such iteration", (long long)id);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "iteration %lld:%d: no such iteration",
			       (long long)campaign_id, seq);
	return rc;
}

int db_iteration_get(struct db *db, int64_t id, struct db_iteration *out, struct rt_sb *err)
{
	if (id <= 0) {
		memset(out, 0, sizeof(*out));
		return rt_errf(err, RT_ENOENT, "iteration %lld: no such iteration", (long long)id);
	}
	return iteration_find(db, id, 0, 0, out, err);
}

int db_iteration_get_seq(struct db *db, int64_t campaign_id, int seq, struct db_iteration *out,
			 struct rt_sb *err)
{
	return iteration_find(db, 0, campaign_id, seq, out, err);
}

int db_iteration_exists(struct db *db, int64_t id, struct rt_sb *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT 1 FROM iterations WHERE id = ?1", err);
	if (!st)
		return RT_EDB;
	sqlite3_bind_int64(st, 1, id);
	int rc = db_step_row(db, st, err, "read iterations");
	if (!rc)
		sqlite3_reset(st);
	return rc;
}

/* ---- references users type ---- */

/* A non-negative decimal integer filling [s, end); false otherwise. */
static bool parse_num(const char *s, const char *end, long long *out)
{
	if (s == end || *s < '0' || *s > '9')
		return false;
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (errno || e != end)
		return false;
	*out = v;
	return true;
}

int db_iteration_ref(struct db *db, const char *ref, int64_t *id, struct rt_sb *err)
{
	const char *s = ref ? ref : "";
	const char *colon = strchr(s, ':');
	long long a, b;
	if (colon) {
		if (!parse_num(s, colon, &a) || !parse_num(colon + 1, colon + strlen(colon), &b) ||
		    b > 2147483647LL)
			goto bad;
		struct db_iteration it;
		int rc = db_iteration_get_seq(db, a, (int)b, &it, err);
		if (!rc)
			*id = it.id;
		db_iteration_release(&it);
		return rc;
	}
	if (!parse_num(s, s + strlen(s), &a) || a == 0)
		goto bad;
	int rc = db_iteration_exists(db, a, err);
	if (rc == RT_ENOENT)
		return rt_errf(err, RT_ENOENT, "db: no iteration %lld", a);
	if (!rc)
		*id = a;
	return rc;
bad:
	return rt_errf(err, RT_EUSAGE, "'%s' is not an iteration (use ID as `ratchet log` shows "
		       "it, or CAMPAIGN:SEQ)", s);
}
