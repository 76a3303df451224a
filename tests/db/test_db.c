/*
 * Unit tests of the store (db/db.h): every function against a real SQLite
 * file in a fresh temporary folder. Round trips, INSERT OR IGNORE of
 * originals, the open-intents list, invalidation visibility, foreign key and
 * CHECK errors reported, a newer schema refused without touching the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_int.h"
#include "db/db_sql.h"
#include "db/devices.h"
#include "db/findings.h"
#include "db/gate.h"
#include "db/llm.h"
#include "db/proposals.h"
#include "db/query.h"
#include "db/requests.h"

struct fx {
	char dir[64];   /* temporary folder */
	char path[96];  /* dir/ratchet.db */
	struct db *db;  /* open store */
	int64_t camp;   /* a campaign */
	int64_t it0;    /* its baseline (seq 0) */
	int64_t it1;    /* seq 1 */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rt-test-db-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/ratchet.db", f->dir);
	struct rt_sb err = RT_SB_INIT;
	if (db_open(f->path, &f->db, &err))
		return -1;
	if (db_campaign_create(f->db, "c1", "/s.yaml", "name: c1\n", "abc", "/w", 7, &f->camp, &err) ||
	    db_iteration_create(f->db, f->camp, 0, 0, "baseline", "baseline", "", NULL, "cfg0", NULL,
				DB_ROLE_CHANGE,
				&f->it0, &err) ||
	    db_iteration_create(f->db, f->camp, 1, f->it0, "v1", "flag", "+ --x", "ch1", "cfg1",
				"why", DB_ROLE_CHANGE, &f->it1, &err))
		return -1;
	rt_sb_release(&err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* One integer from a query with no parameters (test-side checks only). */
static long long q_int(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK);
	long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -999;
	sqlite3_finalize(st);
	return v;
}

/* A note without an author (the tests' shorthand for db_note_add_as). */
static int note_add(struct db *db, int64_t it, const char *kind, int64_t by, const char *text,
		    struct rt_sb *err)
{
	return db_note_add_as(db, it, kind, by, text, NULL, NULL, err);
}

/* Whether the reader marks iteration id invalidated. */
static bool is_invalid(struct db *db, int64_t id)
{
	struct db_iteration it;
	assert_int_equal(db_iteration_get(db, id, &it, NULL), 0);
	bool v = it.invalidated;
	db_iteration_release(&it);
	return v;
}

static char *read_all(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *buf = malloc((size_t)len + 1);
	assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	*n = (size_t)len;
	return buf;
}

static void test_open_schema(void **state)
{
	struct fx *f = *state;
	assert_int_equal(q_int(f->db, "PRAGMA user_version"), db_schema_version);
	assert_int_equal(q_int(f->db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
			      "AND name = 'notes'"), 1);
	assert_string_equal(db_path(f->db), f->path);
	/* Reopening an up-to-date store migrates nothing and keeps the rows. */
	struct db *again;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_open(f->path, &again, &err), 0);
	assert_int_equal(q_int(again, "SELECT count(*) FROM iterations"), 2);
	db_close(again);
}

static void test_open_newer_schema(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	f->db = NULL;
	sqlite3 *h;
	assert_int_equal(sqlite3_open(f->path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	size_t n1, n2;
	char *before = read_all(f->path, &n1);
	struct rt_sb err = RT_SB_INIT;
	struct db *db = NULL;
	assert_int_equal(db_open(f->path, &db, &err), RT_ESCHEMA);
	assert_null(db);
	assert_non_null(strstr(err.buf, "schema version 99 is newer"));
	assert_non_null(strstr(err.buf, "nothing was changed"));
	char *after = read_all(f->path, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	free(before);
	free(after);
	rt_sb_release(&err);
	/* Put it back so teardown's store is valid. */
	assert_int_equal(sqlite3_open(f->path, &h), SQLITE_OK);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", db_schema_version);
	sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	assert_int_equal(db_open(f->path, &f->db, &err), 0);
}

static void test_campaign_roundtrip(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	int64_t c2;
	assert_int_equal(db_campaign_create(f->db, "c2", "/t.yaml", "x", "def", "/w2", 3, &c2, &err), 0);
	assert_true(c2 > f->camp);
	struct db_campaign c;
	assert_int_equal(db_campaign_get(f->db, f->camp, &c, &err), 0);
	assert_string_equal(c.name, "c1");
	assert_string_equal(c.spec_path, "/s.yaml");
	assert_string_equal(c.spec_text, "name: c1\n");
	assert_string_equal(c.spec_sha256, "abc");
	assert_string_equal(c.workdir, "/w");
	assert_int_equal(c.seed, 7);
	assert_string_equal(c.state, "running");
	assert_int_equal(c.best_iteration, 0);
	assert_true(c.created_at > 1700000000000LL);
	assert_int_equal(c.finished_at, 0);
	assert_int_equal(c.n_iterations, 2);
	db_campaign_release(&c);

	/* The reports' look-up reads the same row: 0 is the latest campaign. */
	assert_int_equal(db_q_campaign_get(f->db, 0, &c, &err), 0);
	assert_int_equal(c.id, c2);
	assert_string_equal(c.spec_text, "x");
	assert_int_equal(c.n_iterations, 0);
	db_campaign_release(&c);
	rt_sb_reset(&err);
	assert_int_equal(db_q_campaign_get(f->db, 999, &c, &err), RT_ENOENT);
	assert_string_equal(err.buf, "campaign 999: no such campaign");

	assert_int_equal(db_campaign_latest(f->db, NULL, &c, &err), 0);
	assert_int_equal(c.id, c2);
	db_campaign_release(&c);
	assert_int_equal(db_campaign_latest(f->db, "c1", &c, &err), 0);
	assert_int_equal(c.id, f->camp);
	db_campaign_release(&c);
	assert_int_equal(db_campaign_latest(f->db, "nope", &c, &err), RT_ENOENT);
	assert_int_equal(db_campaign_get(f->db, 999, &c, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "no campaign 999"));

	assert_int_equal(db_campaign_set_state(f->db, f->camp, "finished", &err), 0);
	assert_int_equal(db_campaign_get(f->db, f->camp, &c, &err), 0);
	assert_string_equal(c.state, "finished");
	assert_true(c.finished_at > 0);
	db_campaign_release(&c);
	assert_int_equal(db_campaign_set_state(f->db, f->camp, "running", &err), 0);
	assert_int_equal(db_campaign_get(f->db, f->camp, &c, &err), 0);
	assert_int_equal(c.finished_at, 0);
	db_campaign_release(&c);
	rt_sb_reset(&err);
	assert_int_equal(db_campaign_set_state(f->db, f->camp, "exploded", &err), RT_EDB);
	assert_non_null(strstr(err.buf, "CHECK constraint failed"));
	assert_int_equal(db_campaign_set_state(f->db, 999, "aborted", &err), RT_ENOENT);

	/* best_iteration must belong to the campaign. */
	int64_t other;
	assert_int_equal(db_iteration_create(f->db, c2, 0, 0, "baseline", "baseline", "", NULL, NULL,
					     NULL, DB_ROLE_CHANGE, &other, &err), 0);
	assert_int_equal(db_campaign_set_best(f->db, f->camp, other, &err), RT_ENOENT);
	assert_int_equal(db_campaign_set_best(f->db, f->camp, f->it1, &err), 0);
	assert_int_equal(db_campaign_get(f->db, f->camp, &c, &err), 0);
	assert_int_equal(c.best_iteration, f->it1);
	db_campaign_release(&c);
	rt_sb_release(&err);
}

static void test_iteration_roundtrip(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	struct db_iteration it;
	assert_int_equal(db_iteration_get(f->db, f->it1, &it, &err), 0);
	assert_int_equal(it.campaign_id, f->camp);
	assert_int_equal(it.seq, 1);
	assert_int_equal(it.parent_id, f->it0);
	assert_string_equal(it.variant, "v1");
	assert_string_equal(it.kind, "flag");
	assert_string_equal(it.change_text, "+ --x");
	assert_string_equal(it.change_sha256, "ch1");
	assert_string_equal(it.config_sha256, "cfg1");
	assert_string_equal(it.strategy_note, "why");
	assert_int_equal(it.state, DB_ITER_PENDING);
	assert_null(it.phase);
	assert_null(it.decision);
	assert_true(isnan(it.obj_best) && isnan(it.obj_cand) && isnan(it.obj_delta));
	assert_true(isnan(it.obj_ci_lo) && isnan(it.obj_ci_hi) && isnan(it.confidence));
	assert_true(isnan(it.p_value));
	assert_int_equal(it.gate_run_id, 0);
	assert_false(it.invalidated);
	assert_true(it.started_at > 0);
	assert_int_equal(it.finished_at, 0);
	db_iteration_release(&it);

	assert_int_equal(db_iteration_get(f->db, f->it0, &it, &err), 0);
	assert_int_equal(it.parent_id, 0);
	assert_null(it.change_sha256);
	db_iteration_release(&it);

	/* set_state: a NULL phase keeps the phase reached. */
	assert_int_equal(db_iteration_set_state(f->db, f->it1, DB_ITER_APPLYING, "apply", &err), 0);
	assert_int_equal(db_iteration_set_state(f->db, f->it1, DB_ITER_MEASURING, NULL, &err), 0);
	assert_int_equal(db_iteration_get_seq(f->db, f->camp, 1, &it, &err), 0);
	assert_int_equal(it.id, f->it1);
	assert_int_equal(it.state, DB_ITER_MEASURING);
	assert_string_equal(it.phase, "apply");
	db_iteration_release(&it);
	assert_int_equal(db_iteration_set_state(f->db, 999, DB_ITER_KEPT, NULL, &err), RT_ENOENT);
	assert_int_equal(db_iteration_get_seq(f->db, f->camp, 42, &it, &err), RT_ENOENT);

	/* finish writes every decision field. */
	struct db_iteration d = { 0 };
	d.id = f->it1;
	d.state = DB_ITER_KEPT;
	d.passed = 1;
	d.phase = "decide";
	d.decision = "keep";
	d.reason = "tok_s +6%";
	d.objective = "decode.tok_s";
	d.obj_best = 812.5;
	d.obj_cand = 862.1;
	d.obj_delta = 0.061;
	d.obj_ci_lo = 0.04;
	d.obj_ci_hi = NAN;
	d.confidence = 0.95;
	d.test = "bootstrap";
	d.p_value = 0.002;
	d.n_cand = 6;
	d.n_best = 5;
	d.paired = true;
	assert_int_equal(db_iteration_finish(f->db, &d, &err), 0);
	assert_int_equal(db_iteration_get(f->db, f->it1, &it, &err), 0);
	assert_int_equal(it.state, DB_ITER_KEPT);
	assert_string_equal(it.phase, "decide");
	assert_string_equal(it.decision, "keep");
	assert_string_equal(it.reason, "tok_s +6%");
	assert_string_equal(it.objective, "decode.tok_s");
	assert_true(it.obj_best == 812.5 && it.obj_cand == 862.1 && it.obj_delta == 0.061);
	assert_true(it.obj_ci_lo == 0.04 && isnan(it.obj_ci_hi) && it.confidence == 0.95);
	assert_string_equal(it.test, "bootstrap");
	assert_true(it.p_value == 0.002);
	assert_int_equal(it.n_cand, 6);
	assert_int_equal(it.n_best, 5);
	assert_true(it.paired);
	assert_true(it.finished_at >= it.started_at);
	db_iteration_release(&it);
	/* A gate run that does not exist is a foreign key error, reported. */
	d.gate_run_id = 77;
	rt_sb_reset(&err);
	assert_int_equal(db_iteration_finish(f->db, &d, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "FOREIGN KEY constraint failed"));
	d.id = 999;
	d.gate_run_id = 0;
	assert_int_equal(db_iteration_finish(f->db, &d, &err), RT_ENOENT);

	/* list is in seq order, whatever the insert order. */
	int64_t i3, i2;
	assert_int_equal(db_iteration_create(f->db, f->camp, 3, f->it1, "v3", "env", NULL, NULL, NULL,
					     NULL, DB_ROLE_CHANGE, &i3, &err), 0);
	assert_int_equal(db_iteration_create(f->db, f->camp, 2, f->it1, "v2", "env", NULL, NULL, NULL,
					     NULL, DB_ROLE_CHANGE, &i2, &err), 0);
	struct db_iteration *v;
	size_t n;
	assert_int_equal(db_iterations_list(f->db, f->camp, &v, &n, &err), 0);
	assert_int_equal(n, 4);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(v[k].seq, (int)k);
	assert_int_equal(v[2].id, i2);
	assert_string_equal(v[3].change_text, "");
	db_iterations_free(v, n);
	assert_int_equal(db_iterations_list(f->db, 999, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	db_iterations_free(v, n);

	/* (campaign, seq) is unique; an unknown campaign is a foreign key error. */
	rt_sb_reset(&err);
	assert_int_equal(db_iteration_create(f->db, f->camp, 2, 0, "dup", "env", NULL, NULL, NULL,
					     NULL, DB_ROLE_CHANGE, NULL, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "UNIQUE"));
	rt_sb_reset(&err);
	assert_int_equal(db_iteration_create(f->db, 999, 0, 0, "x", "baseline", NULL, NULL, NULL, NULL,
					     DB_ROLE_CHANGE,
					     NULL, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "db: insert into iterations (999:0): FOREIGN KEY constraint failed"));
	rt_sb_release(&err);
}

static void test_originals_first_touch(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_original_record(f->db, f->camp, "/a", true, "one", 3, 0644, &err), 0);
	assert_int_equal(db_original_record(f->db, f->camp, "/a", true, "two!", 4, 0600, &err), 0);
	assert_int_equal(db_original_record(f->db, f->camp, "/new", false, NULL, 0, 0, &err), 0);
	assert_int_equal(db_original_record(f->db, f->camp, "/empty", true, "", 0, 0600, &err), 0);
	int64_t c2;
	assert_int_equal(db_campaign_create(f->db, "c2", "/s", "", "", "/w", 1, &c2, &err), 0);
	assert_int_equal(db_original_record(f->db, c2, "/a", true, "three", 5, 0644, &err), 0);
	rt_sb_reset(&err);
	assert_int_equal(db_original_record(f->db, 999, "/a", true, "x", 1, 0644, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "FOREIGN KEY"));

	struct db_original *v;
	size_t n;
	char sha[65];
	assert_int_equal(db_originals_list(f->db, f->camp, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].path, "/a");
	assert_true(v[0].existed);
	assert_int_equal(v[0].len, 3);
	assert_memory_equal(v[0].content, "one", 3);
	rt_sha256_hex("one", 3, sha);
	assert_string_equal(v[0].sha256, sha);
	assert_int_equal(v[0].mode, 0644);
	assert_string_equal(v[1].path, "/new");
	assert_false(v[1].existed);
	assert_null(v[1].content);
	assert_string_equal(v[1].sha256, "");
	assert_string_equal(v[2].path, "/empty");
	assert_true(v[2].existed);
	assert_non_null(v[2].content);
	assert_int_equal(v[2].len, 0);
	rt_sha256_hex("", 0, sha);
	assert_string_equal(v[2].sha256, sha);
	db_originals_free(v, n);
	assert_int_equal(db_originals_list(f->db, c2, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_memory_equal(v[0].content, "three", 5);
	db_originals_free(v, n);
	rt_sb_release(&err);
}

static void test_intents_open_list(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	int64_t a, b, c, other_it, d;
	assert_int_equal(db_intent_open(f->db, f->it1, "apply", "/x", true, "old", 3, 0755, true, "new!", 4, 0700,
					&a, &err), 0);
	assert_int_equal(db_intent_open(f->db, f->it1, "apply", "/y", false, NULL, 0, 0, true, "y", 1, 0,
					&b, &err), 0);
	assert_int_equal(db_intent_open(f->db, f->it1, "revert", "/x", true, "new!", 4, 0, true, "old", 3, 0,
					&c, &err), 0);
	int64_t c2;
	assert_int_equal(db_campaign_create(f->db, "c2", "/s", "", "", "/w", 1, &c2, &err), 0);
	assert_int_equal(db_iteration_create(f->db, c2, 0, 0, "baseline", "baseline", NULL, NULL, NULL,
					     NULL, DB_ROLE_CHANGE, &other_it, &err), 0);
	assert_int_equal(db_intent_open(f->db, other_it, "apply", "/z", true, "", 0, 0, false, NULL, 0, 0,
					&d, &err), 0);
	rt_sb_reset(&err);
	assert_int_equal(db_intent_open(f->db, f->it1, "delete", "/x", false, NULL, 0, 0, false, NULL, 0, 0,
					NULL, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "CHECK constraint failed"));
	assert_int_equal(db_intent_open(f->db, 999, "apply", "/x", false, NULL, 0, 0, false, NULL, 0, 0,
					NULL, &err), RT_EDB);

	assert_int_equal(db_intent_close(f->db, a, "done", &err), 0);
	struct db_intent one;
	assert_int_equal(db_intent_get(f->db, a, &one, &err), 0); /* the modes are kept */
	assert_int_equal(one.before_mode, 0755);
	assert_int_equal(one.after_mode, 0700);
	assert_memory_equal(one.before, "old", 3);
	db_intent_release(&one);
	assert_int_equal(db_intent_get(f->db, 999, &one, &err), RT_ENOENT);
	struct db_intent *v;
	size_t n;
	assert_int_equal(db_intents_open_list(f->db, f->camp, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, b);
	assert_int_equal(v[0].iteration_id, f->it1);
	assert_string_equal(v[0].action, "apply");
	assert_string_equal(v[0].path, "/y");
	assert_false(v[0].before_exists);
	assert_null(v[0].before);
	assert_string_equal(v[0].before_sha256, "");
	assert_true(v[0].after_exists);
	assert_int_equal(v[0].after_len, 1);
	assert_memory_equal(v[0].after, "y", 1);
	char sha[65];
	rt_sha256_hex("y", 1, sha);
	assert_string_equal(v[0].after_sha256, sha);
	assert_int_equal(v[1].id, c);
	assert_string_equal(v[1].action, "revert");
	assert_int_equal(v[1].before_len, 4);
	assert_memory_equal(v[1].before, "new!", 4);
	assert_memory_equal(v[1].after, "old", 3);
	db_intents_free(v, n);

	rt_sb_reset(&err);
	assert_int_equal(db_intent_close(f->db, a, "undone", &err), RT_ESTATE);
	assert_non_null(strstr(err.buf, "already done"));
	assert_int_equal(db_intent_close(f->db, 999, "done", &err), RT_ENOENT);
	assert_int_equal(db_intent_close(f->db, b, "open", &err), RT_EINVAL);
	assert_int_equal(db_intent_close(f->db, b, "undone", &err), 0);
	assert_int_equal(db_intent_close(f->db, c, "done", &err), 0);
	assert_int_equal(db_intents_open_list(f->db, f->camp, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	db_intents_free(v, n);
	assert_int_equal(db_intents_open_list(f->db, c2, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].id, d);
	assert_true(v[0].before_exists);
	assert_int_equal(v[0].before_len, 0);
	assert_false(v[0].after_exists);
	db_intents_free(v, n);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM intents WHERE closed_at IS NOT NULL"), 3);
	rt_sb_release(&err);
}

static void test_measurements(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	for (int rep = 0; rep < 4; rep++) {
		assert_int_equal(db_measure_add(f->db, f->it1, "cand", "decode", "tok_s", rep,
						100.0 + rep, "tok/s", &err), 0);
		assert_int_equal(db_measure_add(f->db, f->it1, "best", "decode", "tok_s", rep,
						90.0 + rep, "tok/s", &err), 0);
	}
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements"), 8);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE arm = 'cand' AND "
			      "rep = 3 AND value = 103.0 AND unit = 'tok/s' AND valid = 1"), 1);
	assert_int_equal(db_measure_invalidate(f->db, f->it1, "cand", 2, "identity failed", &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE valid = 0 AND "
			      "arm = 'cand' AND rep >= 2 AND invalid_reason = 'identity failed'"), 2);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE valid = 0"), 2);
	/* Both arms from rep 3; rows already invalid keep their first reason. */
	assert_int_equal(db_measure_invalidate(f->db, f->it1, NULL, 3, "late", &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE valid = 0"), 3);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE invalid_reason = "
			      "'late' AND arm = 'best' AND rep = 3"), 1);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements WHERE invalid_reason = "
			      "'identity failed'"), 2);
	rt_sb_reset(&err);
	assert_int_equal(db_measure_add(f->db, f->it1, "both", "decode", "tok_s", 0, 1, NULL, &err),
			 RT_EDB);
	assert_non_null(strstr(err.buf, "CHECK constraint failed"));
	rt_sb_reset(&err);
	assert_int_equal(db_measure_add(f->db, 999, "cand", "decode", "tok_s", 0, 1, NULL, &err),
			 RT_EDB);
	assert_non_null(strstr(err.buf, "db: insert into measurements: FOREIGN KEY constraint failed"));
	rt_sb_reset(&err);
	assert_int_equal(db_measure_add(f->db, f->it1, "cand", "decode", "tok_s", 9, NAN, NULL, &err),
			 RT_EDB);
	assert_non_null(strstr(err.buf, "NOT NULL"));
	rt_sb_release(&err);
}

static void test_stats_regressions_facts_artifacts(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	struct db_metric_stat s = { "decode", "ttft_p95", "s", "lower", 0.41, 0.4174, 0.002, NAN,
				    1.018, 1.006, 1.031, 0.03, 8, 7 };
	assert_int_equal(db_metric_stat_add(f->db, f->it1, &s, &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM metric_stats WHERE benchmark = 'decode' "
			      "AND metric = 'ttft_p95' AND unit = 's' AND better = 'lower' AND "
			      "best_median = 0.41 AND cand_median = 0.4174 AND best_mad = 0.002 AND "
			      "cand_mad IS NULL AND ratio = 1.018 AND ci_lo = 1.006 AND ci_hi = 1.031 "
			      "AND p_value = 0.03 AND n_best = 8 AND n_cand = 7"), 1);
	s.better = "sideways";
	assert_int_equal(db_metric_stat_add(f->db, f->it1, &s, &err), RT_EDB);

	assert_int_equal(db_regression_add(f->db, f->it1, "decode", "ttft_p95", "s", 0.41, 0.4174,
					   -0.018, -0.031, NAN, true, &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM regressions WHERE before = 0.41 AND "
			      "after = 0.4174 AND delta = -0.018 AND ci_lo = -0.031 AND ci_hi IS NULL "
			      "AND kept = 1 AND created_at > 0"), 1);
	rt_sb_reset(&err);
	assert_int_equal(db_regression_add(f->db, 999, "d", "m", NULL, 1, 2, -1, NAN, NAN, false,
					   &err), RT_EDB);
	assert_non_null(strstr(err.buf, "FOREIGN KEY"));

	assert_int_equal(db_fact_add(f->db, f->camp, 0, "host", "box", &err), 0);
	assert_int_equal(db_fact_add(f->db, 0, f->it1, "engine.version", "1.2", &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM env_facts WHERE key = 'host' AND "
			      "value = 'box' AND iteration_id IS NULL"), 1);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM env_facts WHERE campaign_id IS NULL "
			      "AND value = '1.2'"), 1);

	static const char log[] = "line 1\nline 2\0binary";
	assert_int_equal(db_artifact_add(f->db, f->camp, f->it1, "engine-log", "engine.log", log,
					 sizeof(log), true, &err), 0);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), "SELECT sha256, size, content, "
					    "truncated, kind, name FROM artifacts", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	char sha[65];
	rt_sha256_hex(log, sizeof(log), sha);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), sha);
	assert_int_equal(sqlite3_column_int(st, 1), sizeof(log));
	assert_int_equal(sqlite3_column_bytes(st, 2), sizeof(log));
	assert_memory_equal(sqlite3_column_blob(st, 2), log, sizeof(log));
	assert_int_equal(sqlite3_column_int(st, 3), 1);
	assert_string_equal((const char *)sqlite3_column_text(st, 4), "engine-log");
	sqlite3_finalize(st);
	assert_int_equal(db_artifact_add(f->db, 999, 0, "x", "y", "", 0, false, &err), RT_EDB);
	rt_sb_release(&err);
}

static void test_notes_and_invalidation(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(note_add(f->db, f->it0, "note", 0, "baseline was noisy", &err), 0);
	assert_int_equal(note_add(f->db, f->it0, "correction", 0, "x", &err), RT_EINVAL);
	assert_int_equal(note_add(f->db, f->it0, "correction", f->it0, "x", &err), RT_EINVAL);
	rt_sb_reset(&err);
	assert_int_equal(note_add(f->db, f->it0, "correction", 999, "x", &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "no iteration 999"));
	assert_int_equal(note_add(f->db, 999, "note", 0, "x", &err), RT_ENOENT);
	assert_int_equal(note_add(f->db, f->it0, "note", f->it1, "x", &err), RT_EINVAL);
	assert_int_equal(note_add(f->db, f->it0, "comment", 0, "x", &err), RT_EINVAL);
	assert_int_equal(note_add(f->db, f->it0, "note", 0, "  \n", &err), RT_EINVAL);
	assert_int_equal(note_add(f->db, f->it0, "correction", f->it1, "it was the tile", &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM notes"), 2);

	assert_false(is_invalid(f->db, f->it1));
	int64_t nid = 0;
	assert_int_equal(db_note_add_as(f->db, f->it1, "invalidation", 0, "stale server", "ana",
					&nid, &err), 0);
	assert_true(nid > 0);
	assert_true(is_invalid(f->db, f->it1));
	assert_false(is_invalid(f->db, f->it0));
	/* Readers fill invalidated; the row stays visible in the list. */
	struct db_iteration it;
	assert_int_equal(db_iteration_get(f->db, f->it1, &it, &err), 0);
	assert_true(it.invalidated);
	db_iteration_release(&it);
	struct db_iteration *v;
	size_t n;
	assert_int_equal(db_iterations_list(f->db, f->camp, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_false(v[0].invalidated);
	assert_true(v[1].invalidated);
	db_iterations_free(v, n);
	/* Twice is refused, naming the first. */
	rt_sb_reset(&err);
	assert_int_equal(note_add(f->db, f->it1, "invalidation", 0, "again", &err), RT_ESTATE);
	assert_non_null(strstr(err.buf, "already invalid"));
	assert_non_null(strstr(err.buf, "stale server"));
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM notes WHERE kind = 'invalidation'"), 1);

	/* Notes about it1 and corrections it1 made. */
	struct db_note *nv;
	assert_int_equal(db_q_notes(f->db, 0, f->it1, &nv, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(nv[0].kind, "correction");
	assert_int_equal(nv[0].iteration_id, f->it0);
	assert_int_equal(nv[0].by_iteration_id, f->it1);
	assert_int_equal(nv[0].seq, 0);
	assert_int_equal(nv[0].by_seq, 1);
	assert_null(nv[0].author);
	assert_string_equal(nv[1].kind, "invalidation");
	assert_int_equal(nv[1].id, nid);
	assert_string_equal(nv[1].text, "stale server");
	assert_string_equal(nv[1].author, "ana");
	assert_int_equal(nv[1].by_seq, -1);
	assert_true(nv[1].created_at > 0);
	db_notes_free(nv, n);
	rt_sb_release(&err);
}

static void test_iteration_ref(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	int64_t id = 0;
	char ref[32];
	snprintf(ref, sizeof(ref), "%lld", (long long)f->it1);
	assert_int_equal(db_iteration_ref(f->db, ref, &id, &err), 0);
	assert_int_equal(id, f->it1);
	snprintf(ref, sizeof(ref), "%lld:0", (long long)f->camp);
	assert_int_equal(db_iteration_ref(f->db, ref, &id, &err), 0);
	assert_int_equal(id, f->it0);
	assert_int_equal(db_iteration_ref(f->db, "999", &id, &err), RT_ENOENT);
	assert_int_equal(db_iteration_ref(f->db, "1:42", &id, &err), RT_ENOENT);
	const char *bad[] = { "", "abc", "0", "-1", "1:", ":1", "1:2:3", "1x", " 1", "1:-1" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(bad); i++) {
		rt_sb_reset(&err);
		assert_int_equal(db_iteration_ref(f->db, bad[i], &id, &err), RT_EUSAGE);
		assert_non_null(strstr(err.buf, "is not an iteration"));
	}
	rt_sb_release(&err);
}

static void test_transactions(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(db_begin(f->db, &err), 0);
	assert_int_equal(db_measure_add(f->db, f->it1, "cand", "b", "m", 0, 1, NULL, &err), 0);
	assert_int_equal(db_begin(f->db, &err), RT_EDB); /* no nesting */
	db_rollback(f->db);
	db_rollback(f->db); /* harmless outside a transaction */
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements"), 0);
	assert_int_equal(db_begin(f->db, &err), 0);
	assert_int_equal(db_measure_add(f->db, f->it1, "cand", "b", "m", 0, 1, NULL, &err), 0);
	assert_int_equal(db_commit(f->db, &err), 0);
	assert_int_equal(q_int(f->db, "SELECT count(*) FROM measurements"), 1);
	rt_sb_release(&err);
}

/* One exchange by id, one iteration's proposal: the single-row reads the
 * campaign's proposer rows use instead of listing every row. */
static void test_one_row_reads(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	struct db_llm_exchange a = { .seq = 1, .attempt = 1, .request = "[]", .verdict = DB_LLM_ACCEPTED,
				     .variant = "{\"name\":\"a\"}", .fingerprint = "fa" };
	struct db_llm_exchange b = a;
	b.variant = "{\"name\":\"b\"}";
	b.fingerprint = "fb";
	assert_int_equal(db_llm_add(f->db, f->camp, &a, &err), 0);
	assert_int_equal(db_llm_add(f->db, f->camp, &b, &err), 0);
	assert_true(a.id > 0 && b.id > a.id);
	struct db_llm_exchange *x = NULL;
	size_t n = 9;
	assert_int_equal(db_llm_get(f->db, f->camp, b.id, &x, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].id, b.id);
	assert_string_equal(x[0].fingerprint, "fb");
	db_llm_free(x, n);
	/* another campaign's id, and an id that is not there: nothing */
	assert_int_equal(db_llm_get(f->db, f->camp + 1, b.id, &x, &n, &err), 0);
	assert_int_equal(n, 0);
	db_llm_free(x, n);
	assert_int_equal(db_llm_get(f->db, f->camp, b.id + 100, &x, &n, &err), 0);
	assert_int_equal(n, 0);
	db_llm_free(x, n);

	struct db_proposal p0 = { .iteration_id = f->it0, .strategy = "model", .point = "{}", .fingerprint = "p0",
				  .fidelity = 1, .reason = "r", .variant = "{\"v\":0}" };
	struct db_proposal p1 = p0;
	p1.iteration_id = f->it1;
	p1.fingerprint = "p1";
	p1.variant = "{\"v\":1}";
	assert_int_equal(db_proposal_add(f->db, f->camp, &p0, &err), 0);
	assert_int_equal(db_proposal_add(f->db, f->camp, &p1, &err), 0);
	struct db_proposal *ps = NULL;
	assert_int_equal(db_proposal_of_iteration(f->db, f->camp, f->it1, &ps, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ps[0].iteration_id, f->it1);
	assert_string_equal(ps[0].variant, "{\"v\":1}");
	db_proposals_free(ps, n);
	assert_int_equal(db_proposal_of_iteration(f->db, f->camp + 1, f->it1, &ps, &n, &err), 0);
	assert_int_equal(n, 0);
	db_proposals_free(ps, n);
	rt_sb_release(&err);
}

static void read_id(sqlite3_stmt *st, void *row)
{
	*(int64_t *)row = sqlite3_column_int64(st, 1);
}

/* A statement's parameters and the ids given must agree: the second of two
 * is never left unbound (NULL) because a caller passed one id. */
static void test_rows_by_ids(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	static const struct db_row_type t = { sizeof(int64_t), read_id, NULL, "read ids" };
	void *v = (void *)1;
	size_t n = 9;
	assert_int_equal(db_rows_by_ids(f->db, "SELECT ?1, ?2", &t, (int64_t[]){ 5 }, 1, &v, &n, &err), RT_EDB);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.buf, "read ids: the statement has 2 parameters, 1 given"));
	rt_sb_reset(&err);
	assert_int_equal(db_rows_by_ids(f->db, "SELECT ?1, ?2", &t, (int64_t[]){ 5, 7 }, 2, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(*(int64_t *)v, 7);
	free(v);
	rt_sb_release(&err);
}

/* More distinct statements than the old fixed cache held: all are cached and
 * finalized by db_close (ASan reports a leak and sqlite3_close fails otherwise). */
static void test_prepare_cache(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	static char sql[100][24];
	for (int i = 0; i < 100; i++) {
		snprintf(sql[i], sizeof(sql[i]), "SELECT %d", i);
		sqlite3_stmt *st = db_prepare(f->db, sql[i], &err);
		assert_non_null(st);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), i);
	}
	/* Same literal, same statement, reset for reuse. */
	sqlite3_stmt *a = db_prepare(f->db, sql[5], &err);
	assert_ptr_equal(a, db_prepare(f->db, sql[5], &err));
	assert_int_equal(sqlite3_step(a), SQLITE_ROW);
	assert_null(db_prepare(f->db, "SELEC nonsense", &err));
	assert_non_null(strstr(err.buf, "db: prepare:"));
	rt_sb_release(&err);
}

/* A gate run reads back as the one row the gate writes and the reports
 * show, the threshold from params_json included. */
static void test_gate_run_row(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	struct db_gate_run r = { .iteration_id = f->it1, .endpoint = "http://x", .api = "chat",
				 .format = "gsm8k_cot", .extract = "strict", .fig.n_planned = 10,
				 .params_json = "{\"min_accuracy\": 0.965}" };
	int64_t id;
	assert_int_equal(db_gate_run_create(f->db, &r, &id, &err), 0);
	struct db_gate_run g;
	assert_int_equal(db_gate_run_get(f->db, id, &g, &err), 0);
	assert_int_equal(g.iteration_id, f->it1);
	assert_string_equal(g.format, "gsm8k_cot");
	assert_int_equal(g.fig.n_planned, 10);
	assert_int_equal(g.passed, -1);
	assert_int_equal(g.fig.n_correct_strict, -1);
	assert_true(isnan(g.fig.accuracy));
	assert_true(g.min_accuracy == 0.965);
	db_gate_run_release(&g);
	rt_sb_reset(&err);
	assert_int_equal(db_gate_run_get(f->db, id + 1, &g, &err), RT_ENOENT);
	assert_non_null(strstr(err.buf, "not found"));
	assert_null(g.endpoint);
	rt_sb_release(&err);
}

/* ---- every write reports a failed step, naming the table and operation ---- */

/* One write of the store, run against a database that refuses writes. */
struct write_case {
	const char *what; /* the start of the error text, after "db: " */
	int (*run)(struct fx *f, int64_t intent, int64_t gate_run, struct rt_sb *err);
};

static int w_campaign_create(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_campaign_create(f->db, "c", "/s", "", "", "/w", 1, NULL, err);
}
static int w_campaign_state(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_campaign_set_state(f->db, f->camp, "finished", err);
}
static int w_campaign_best(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_campaign_set_best(f->db, f->camp, f->it1, err);
}
static int w_iteration_create(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_iteration_create(f->db, f->camp, 7, f->it1, "v", "env", NULL, NULL, NULL, NULL,
				   DB_ROLE_CHANGE, NULL, err);
}
static int w_iteration_state(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_iteration_set_state(f->db, f->it1, DB_ITER_MEASURING, NULL, err);
}
static int w_iteration_finish(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_iteration d = { .id = f->it1, .state = DB_ITER_KEPT, .passed = 1 };
	return db_iteration_finish(f->db, &d, err);
}
static int w_original(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_original_record(f->db, f->camp, "/o", true, "x", 1, 0644, err);
}
static int w_intent_open(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_intent_open(f->db, f->it1, "apply", "/x", false, NULL, 0, 0, true, "x", 1, 0, NULL,
			      err);
}
static int w_intent_close(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_intent_close(f->db, t, "done", err);
}
static int w_measure(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_measure_add(f->db, f->it1, "cand", "b", "m", 0, 1, NULL, err);
}
static int w_measure_invalidate(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_measure_invalidate(f->db, f->it1, NULL, 0, "why", err);
}
static int w_metric_stat(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_metric_stat s = { "b", "m", NULL, "higher", 1, 1, 0, 0, 1, 1, 1, 1, 3, 3 };
	return db_metric_stat_add(f->db, f->it1, &s, err);
}
static int w_regression(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_regression_add(f->db, f->it1, "b", "m", NULL, 1, 2, -1, NAN, NAN, false, err);
}
static int w_fact(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_fact_add(f->db, f->camp, 0, "host", "box", err);
}
static int w_artifact(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_artifact_add(f->db, f->camp, f->it1, "log", "x.log", "x", 1, false, err);
}
static int w_note(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return note_add(f->db, f->it1, "note", 0, "hello", err);
}
static int w_gate_run(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_gate_run r = { .endpoint = "http://x", .api = "completions", .format = "gsm8k",
				 .extract = "flexible" };
	int64_t id;
	return db_gate_run_create(f->db, &r, &id, err);
}
static int w_gate_finish(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_gate_run r = { .id = g, .fig.accuracy = NAN, .fig.wilson_lo = NAN, .fig.wilson_hi = NAN,
				 .fig.diff = NAN, .fig.diff_lo = NAN, .fig.diff_hi = NAN, .fig.mcnemar_p = NAN,
				 .fig.identical_rate = NAN, .passed = 1 };
	return db_gate_run_finish(f->db, &r, err);
}
static int w_gate_answer(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_gate_answer a = { .run_id = g, .idx = 0, .target = "4", .correct = 1,
				    .correct_strict = 1, .correct_flex = 1, .prompt_tokens = -1,
				    .completion_tokens = -1, .latency_s = NAN };
	return db_gate_answer_add(f->db, &a, err);
}
static int w_requests(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	struct db_request q = { .seq = 0, .ttft_s = NAN, .e2el_s = NAN, .itl_mean_s = NAN,
				.itl_max_s = NAN, .prompt_tokens = -1 };
	return db_requests_add(f->db, f->it1, "load", "cand", 0, NULL, &q, 1, err);
}
static int w_device_peak(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_device_peak_add(f->db, "host", "cpu0", "cpu", "gflops", 10, err);
}
static int w_finding(struct fx *f, int64_t t, int64_t g, struct rt_sb *err)
{
	return db_finding_add(f->db, f->camp, "hole", "attn", NULL, 0.1, err);
}

static const struct write_case write_cases[] = {
	{ "insert into campaigns", w_campaign_create },
	{ "update campaigns (state)", w_campaign_state },
	{ "update campaigns (best iteration)", w_campaign_best },
	{ "insert into iterations (", w_iteration_create },
	{ "update iterations (state)", w_iteration_state },
	{ "update iterations (finish)", w_iteration_finish },
	{ "insert into originals (/o)", w_original },
	{ "insert into intents (apply /x)", w_intent_open },
	{ "update intents (close)", w_intent_close },
	{ "insert into measurements", w_measure },
	{ "update measurements (invalidate)", w_measure_invalidate },
	{ "insert into metric_stats", w_metric_stat },
	{ "insert into regressions", w_regression },
	{ "insert into env_facts", w_fact },
	{ "insert into artifacts", w_artifact },
	{ "insert into notes", w_note },
	{ "insert into gate_runs", w_gate_run },
	{ "update gate_runs (finish)", w_gate_finish },
	{ "insert into gate_answers", w_gate_answer },
	{ "insert into requests", w_requests },
	{ "insert into device_peaks", w_device_peak },
	{ "insert into findings", w_finding },
};

/* With the connection made read-only (PRAGMA query_only, which holds for
 * root too, unlike a file's mode), every write function returns RT_EDB and
 * its error says "db: <operation> <table>...: attempt to write a readonly
 * database"; nothing is written. */
static void test_write_errors(void **state)
{
	struct fx *f = *state;
	struct rt_sb err = RT_SB_INIT;
	int64_t intent, gate_run;
	struct db_gate_run r = { .endpoint = "http://x", .api = "completions", .format = "gsm8k",
				 .extract = "flexible" };
	assert_int_equal(db_intent_open(f->db, f->it1, "apply", "/y", false, NULL, 0, 0, true, "y", 1, 0,
					&intent, &err), 0);
	assert_int_equal(db_gate_run_create(f->db, &r, &gate_run, &err), 0);
	long long before = q_int(f->db, "SELECT (SELECT count(*) FROM campaigns) + "
				 "(SELECT count(*) FROM iterations) + (SELECT count(*) FROM notes)");
	assert_int_equal(db_exec(f->db, "PRAGMA query_only = ON", &err, "query_only"), 0);
	for (size_t i = 0; i < RT_ARRAY_SIZE(write_cases); i++) {
		rt_sb_reset(&err);
		int rc = write_cases[i].run(f, intent, gate_run, &err);
		char want[96];
		snprintf(want, sizeof(want), "db: %s", write_cases[i].what);
		if (rc != RT_EDB || strncmp(err.buf, want, strlen(want)) ||
		    !strstr(err.buf, "readonly"))
			fail_msg("%s: rc %d, error '%s'", write_cases[i].what, rc, err.buf);
	}
	assert_int_equal(db_exec(f->db, "PRAGMA query_only = OFF", &err, "query_only"), 0);
	assert_int_equal(q_int(f->db, "SELECT (SELECT count(*) FROM campaigns) + "
			       "(SELECT count(*) FROM iterations) + (SELECT count(*) FROM notes)"),
			 before);
	/* A CHECK violation names the table and operation too. */
	rt_sb_reset(&err);
	assert_int_equal(db_campaign_set_state(f->db, f->camp, "exploded", &err), RT_EDB);
	assert_string_equal(err.buf, "db: update campaigns (state): CHECK constraint failed: "
			    "state IN ('running', 'finished', 'aborted')");
	rt_sb_release(&err);
}

/* State and role names: every value has its own name, the names parse back,
 * and an unknown word is refused (the campaign's state machine and the
 * reports rely on this instead of comparing strings). */
static void test_state_names(void **state)
{
	(void)state;
	for (int i = 0; i < DB_ITER_N_STATES; i++) {
		enum db_iter_state s = DB_ITER_N_STATES;
		assert_int_equal(db_iter_state_parse(db_iter_state_name((enum db_iter_state)i), &s), 0);
		assert_int_equal(s, i);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(db_iter_state_name((enum db_iter_state)i),
						db_iter_state_name((enum db_iter_state)j));
	}
	assert_string_equal(db_iter_state_name(DB_ITER_KEPT), "kept");
	assert_string_equal(db_iter_state_name(DB_ITER_N_STATES), "unknown");
	enum db_iter_state s = DB_ITER_KEPT;
	assert_int_equal(db_iter_state_parse("kep", &s), RT_EINVAL);
	assert_int_equal(s, DB_ITER_KEPT);
	assert_false(db_iter_state_final(DB_ITER_MEASURING));
	assert_true(db_iter_state_final(DB_ITER_INTERRUPTED));
	enum db_iter_role r = DB_ROLE_CHANGE;
	assert_int_equal(db_iter_role_parse("confirm", &r), 0);
	assert_int_equal(r, DB_ROLE_CONFIRM);
	assert_string_equal(db_iter_role_name(DB_ROLE_TRIAL), "trial");
	assert_int_equal(db_iter_role_parse("Trial", &r), RT_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_names),
		cmocka_unit_test_setup_teardown(test_open_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_campaign_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_originals_first_touch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_intents_open_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_measurements, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_regressions_facts_artifacts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notes_and_invalidation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iteration_ref, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_row_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows_by_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_run_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
	};
	return cmocka_run_group_tests_name("db", tests, NULL, NULL);
}
