/*
 * Unit tests of the campaign's rooms that need no benchmark: the iteration
 * state machine (allowed and refused moves), the configuration fingerprint
 * (a collision the campaign's old "file %s %s" encoding allowed), and the
 * journal's table of writes (an entry replaced, the fault hook) with the
 * recovery that follows, the modes the journal puts back, and the stored
 * bytes recovery checks before writing them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/journal.h"
#include "runner/campaign/campaign_int.h"

/* ---- the state machine ---- */

static void test_state_moves(void **state)
{
	(void)state;
	/* A final state never moves again. */
	for (int f = 0; f < DB_ITER_N_STATES; f++)
		for (int t = 0; t < DB_ITER_N_STATES && db_iter_state_final((enum db_iter_state)f); t++)
			assert_false(camp_state_allowed((enum db_iter_state)f, (enum db_iter_state)t));
	/* Every running state may fail or be interrupted. */
	for (int f = 0; f < DB_ITER_N_STATES; f++) {
		if (db_iter_state_final((enum db_iter_state)f))
			continue;
		assert_true(camp_state_allowed((enum db_iter_state)f, DB_ITER_FAILED));
		assert_true(camp_state_allowed((enum db_iter_state)f, DB_ITER_INTERRUPTED));
	}
	/* Decisions follow measurements; applying leads to applied. */
	assert_true(camp_state_allowed(DB_ITER_MEASURING, DB_ITER_KEPT));
	assert_true(camp_state_allowed(DB_ITER_MEASURING, DB_ITER_REVERTED));
	assert_true(camp_state_allowed(DB_ITER_APPLYING, DB_ITER_APPLIED));
	assert_false(camp_state_allowed(DB_ITER_PENDING, DB_ITER_KEPT));
	assert_false(camp_state_allowed(DB_ITER_APPLYING, DB_ITER_MEASURING));
	assert_false(camp_state_allowed(DB_ITER_APPLYING, DB_ITER_REVERTED));
	assert_false(camp_state_allowed(DB_ITER_KEPT, DB_ITER_REVERTED));
	assert_false(camp_state_allowed(DB_ITER_PENDING, DB_ITER_BASELINE));
}

static void test_state_refused(void **state)
{
	(void)state;
	/* Refused before anything is written: no store needed. */
	struct camp c;
	memset(&c, 0, sizeof(c));
	struct db_iteration it;
	memset(&it, 0, sizeof(it));
	it.id = 7;
	it.state = DB_ITER_KEPT;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(camp_iter_enter(&c, &it, DB_ITER_MEASURING, "bench", &err), RT_ESTATE);
	assert_string_equal(err.buf, "iteration 7: cannot go from kept to measuring");
	assert_int_equal(c.fatal, RT_ESTATE); /* nothing more is written */
	assert_int_equal(it.state, DB_ITER_KEPT);
	/* Final states are camp_record's, never camp_iter_enter's. */
	c.fatal = 0;
	it.state = DB_ITER_MEASURING;
	rt_sb_reset(&err);
	assert_int_equal(camp_iter_enter(&c, &it, DB_ITER_KEPT, "decide", &err), RT_ESTATE);
	rt_sb_release(&err);
}

/* ---- the configuration fingerprint ---- */

/* The campaign's old encoding, kept here to show what it confused. */
static void old_fingerprint(const char *const *paths, const char *const *shas, size_t n,
			    const char *const *argv, char out[65])
{
	struct rt_sb sb = RT_SB_INIT;
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(&sb, "file %s %s\n", paths[i], shas[i]);
	for (size_t i = 0; argv[i]; i++)
		rt_sb_addf(&sb, "arg %s\n", argv[i]);
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
}

static void test_fingerprint_collisions(void **state)
{
	(void)state;
	static const char h1[] = "1111111111111111111111111111111111111111111111111111111111111111";
	static const char h2[] = "2222222222222222222222222222222222222222222222222222222222222222";
	char a[65], b[65];
	/* Two files, or one whose path holds a newline and the first's line. */
	const char *p2[] = { "/w/x", "/w/y" }, *s2[] = { h1, h2 };
	char *odd = xasprintf("/w/x %s\nfile /w/y", h1);
	const char *p1[] = { odd }, *s1[] = { h2 };
	const char *no_args[] = { NULL };
	old_fingerprint(p2, s2, 2, no_args, a);
	old_fingerprint(p1, s1, 1, no_args, b);
	assert_string_equal(a, b); /* the old encoding collided */
	struct var_fp_file f2[] = { { "/w/x", h1 }, { "/w/y", h2 } }, f1[] = { { odd, h2 } };
	assert_int_equal(var_config_fingerprint(f2, 2, NULL, NULL, a, NULL), 0);
	assert_int_equal(var_config_fingerprint(f1, 1, NULL, NULL, b, NULL), 0);
	assert_string_not_equal(a, b);
	free(odd);
	/* Two arguments, or one holding a newline and "arg". */
	const char *argv2[] = { "--x", "1", NULL }, *argv1[] = { "--x\narg 1", NULL };
	old_fingerprint(NULL, NULL, 0, argv2, a);
	old_fingerprint(NULL, NULL, 0, argv1, b);
	assert_string_equal(a, b);
	assert_int_equal(var_config_fingerprint(NULL, 0, (char *const *)argv2, NULL, a, NULL), 0);
	assert_int_equal(var_config_fingerprint(NULL, 0, (char *const *)argv1, NULL, b, NULL), 0);
	assert_string_not_equal(a, b);
	/* Unset and empty differ; the order files are given in does not matter. */
	struct rt_env eu[] = { { "X", NULL } }, ee[] = { { "X", "" } };
	struct rt_envv envu = { eu, 1 }, enve = { ee, 1 };
	assert_int_equal(var_config_fingerprint(NULL, 0, NULL, &envu, a, NULL), 0);
	assert_int_equal(var_config_fingerprint(NULL, 0, NULL, &enve, b, NULL), 0);
	assert_string_not_equal(a, b);
	struct var_fp_file r2[] = { { "/w/y", h2 }, { "/w/x", h1 } };
	assert_int_equal(var_config_fingerprint(f2, 2, NULL, NULL, a, NULL), 0);
	assert_int_equal(var_config_fingerprint(r2, 2, NULL, NULL, b, NULL), 0);
	assert_string_equal(a, b);
}

/* ---- the journal's table of writes ---- */

struct fixture {
	char dir[64];     /* temp folder */
	char *file;       /* the touched file */
	struct db *db;    /* the store */
	int64_t cid, it;  /* campaign and iteration */
	struct var_plan plan; /* one file: "old" -> "new" */
};

static char *slurp(const char *path)
{
	char *b = NULL;
	size_t n;
	return rt_read_file(path, &b, &n, NULL) ? NULL : b;
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/ratchet-camp-unit-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->file = xasprintf("%s/t.json", f->dir);
	assert_int_equal(rt_write_file_atomic(f->file, "old", 3, 0644, NULL), 0);
	char *dbp = xasprintf("%s/c.db", f->dir);
	assert_int_equal(db_open(dbp, &f->db, NULL), 0);
	free(dbp);
	assert_int_equal(db_campaign_create(f->db, "u", "/s.yaml", "name: u\n", "abc", f->dir, 1, &f->cid, NULL), 0);
	assert_int_equal(db_iteration_create(f->db, f->cid, 1, 0, "v", "table", "", NULL, NULL, NULL,
					     DB_ROLE_CHANGE, &f->it, NULL), 0);
	f->plan.files = xcalloc(1, sizeof(struct var_file));
	f->plan.n = 1;
	struct var_file *vf = &f->plan.files[0];
	vf->path = xstrdup(f->file);
	vf->rel = xstrdup("t.json");
	vf->existed = true;
	vf->before = xstrdup("old");
	vf->before_len = 3;
	vf->has_after = true;
	vf->after = xstrdup("new");
	vf->after_len = 3;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	camp_jsys_fault_at(0);
	camp_jsys_reset();
	var_plan_release(&f->plan);
	db_close(f->db);
	char *cmd = xasprintf("rm -rf %s", f->dir);
	if (system(cmd)) {
	}
	free(cmd);
	free(f->file);
	free(f);
	return 0;
}

static size_t open_intents(struct fixture *f)
{
	struct db_intent *in = NULL;
	size_t n = 0;
	assert_int_equal(db_intents_open_list(f->db, f->cid, &in, &n, NULL), 0);
	db_intents_free(in, n);
	return n;
}

static int disk_full(const char *path, const void *data, size_t len, int mode, struct rt_sb *err)
{
	(void)data;
	(void)len;
	(void)mode;
	return rt_errf(err, RT_EIO, "%s: no space left on device", path);
}

/* A replaced entry: the write fails after the intent is committed; the
 * move says so, the intent stays open, and recovery undoes it. */
static void test_journal_entry_replaced(void **state)
{
	struct fixture *f = *state;
	size_t moved = 9;
	struct rt_sb err = RT_SB_INIT;
	camp_jsys.write = disk_full;
	assert_int_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, &err), RT_EIO);
	assert_non_null(strstr(err.buf, "no space left on device"));
	assert_non_null(strstr(err.buf, "to the candidate's bytes"));
	assert_int_equal(moved, 0);
	assert_int_equal(open_intents(f), 1);
	camp_jsys_reset();
	int undone, interrupted;
	assert_int_equal(run_campaign_recover(f->db, f->cid, &undone, &interrupted, NULL), 0);
	assert_int_equal(undone, 1);
	assert_int_equal(interrupted, 1);
	assert_int_equal(open_intents(f), 0);
	char *now = slurp(f->file);
	assert_string_equal(now, "old");
	free(now);
	rt_sb_release(&err);
}

/* The hook: each of the four writes of one move fails in turn. */
static void test_journal_fault_hook(void **state)
{
	struct fixture *f = *state;
	static const char *const what[] = { "original", "intent-open", "write", "intent-close" };
	for (long n = 1; n <= 4; n++) {
		size_t moved;
		struct rt_sb err = RT_SB_INIT;
		camp_jsys_fault_at(n);
		assert_int_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, &err), RT_EIO);
		char want[64];
		snprintf(want, sizeof(want), "journal write %ld (%s", n, what[n - 1]);
		assert_non_null(strstr(err.buf, want));
		camp_jsys_fault_at(0);
		/* Before the intent is committed nothing is open; after, one is. */
		assert_int_equal(open_intents(f), n >= 3 ? 1 : 0);
		char *now = slurp(f->file);
		assert_string_equal(now, n == 4 ? "new" : "old");
		free(now);
		int undone, interrupted;
		assert_int_equal(run_campaign_recover(f->db, f->cid, &undone, &interrupted, NULL), 0);
		now = slurp(f->file);
		assert_string_equal(now, "old");
		free(now);
		rt_sb_release(&err);
	}
	/* Without the hook the move goes through. */
	size_t moved;
	assert_int_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, NULL), 0);
	assert_int_equal(moved, 1);
	assert_int_equal(open_intents(f), 0);
}

/* --until: the next occurrence of a local time, today or tomorrow; bad text refused. */
static void test_budget_until(void **state)
{
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	double now = 1764532800.0; /* 2025-11-30 20:00:00 UTC */
	double at;
	assert_int_equal(run_budget_until("21:30", now, &at), 0);
	assert_true(at == now + 5400);
	assert_int_equal(run_budget_until("07:00", now, &at), 0);
	assert_true(at == now + 11 * 3600); /* tomorrow */
	assert_int_equal(run_budget_until("20:00", now, &at), 0);
	assert_true(at == now + 86400); /* now is not after now */
	assert_int_equal(run_budget_until("20:00:01", now, &at), 0);
	assert_true(at == now + 1);
	const char *bad[] = { "24:00", "7", "07:60", "07:00:00x", "", "ab:cd" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(run_budget_until(bad[i], now, &at), RT_EINVAL);
}

/* ---- series of log events ---- */

/* A sample's log-event counts join their series in time linear in the
 * number of events (each one was searched for among all series: 100,000
 * events took minutes per sample); a sample of fewer events, and a metric's
 * series made between two samples, still land where they belong. */
static void test_series_events_linear(void **state)
{
	(void)state;
	enum { NEV = 100000 };
	struct spec_log_event *ev = xcalloc(NEV, sizeof(*ev));
	double *counts = xcalloc(NEV, sizeof(double));
	for (size_t i = 0; i < NEV; i++) {
		ev[i].name = xasprintf("event%zu", i);
		counts[i] = (double)i;
	}
	struct series *ser = NULL;
	size_t n = 0;
	int64_t t0 = rt_now_ns();
	camp_series_add_events(&ser, &n, ev, counts, 3, 0); /* a prefix first */
	camp_series_get(&ser, &n, "bench", "tok_s", "tok/s"); /* then a metric */
	for (int k = 0; k < 4; k++)
		camp_series_add_events(&ser, &n, ev, counts, NEV, k % 2);
	double s = (double)(rt_now_ns() - t0) / 1e9;
	assert_int_equal(n, NEV + 1);
	assert_true(s < 5.0);
	for (size_t i = 0; i < NEV; i += 997) {
		struct series *x = camp_series_find(ser, n, "log", ev[i].name);
		assert_non_null(x);
		assert_int_equal(x->n[0], i < 3 ? 3 : 2);
		assert_int_equal(x->n[1], 2);
		assert_true(x->v[1][1] == (double)i);
	}
	camp_series_free(ser, n);
	for (size_t i = 0; i < NEV; i++)
		free(ev[i].name);
	free(ev);
	free(counts);
}

static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

/* Run SQL on the fixture's database through a connection of its own. */
static void sql(struct fixture *f, const char *q)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db_path(f->db), &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, q, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void assert_file(struct fixture *f, const char *bytes, int mode)
{
	char *now = slurp(f->file);
	assert_non_null(now);
	assert_string_equal(now, bytes);
	free(now);
	assert_int_equal(mode_of(f->file), mode);
}

/* An executable file keeps its mode: recovery recreates a file a crash left
 * deleted with its mode; a revert puts back a mode that a patch changed
 * (the bytes alone already match); restore puts back the original mode. */
static void test_journal_modes(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(chmod(f->file, 0755), 0);
	camp_jsys.write = disk_full; /* the intent is committed, the write fails */
	size_t moved;
	assert_int_not_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, NULL), 0);
	camp_jsys_reset();
	assert_int_equal(unlink(f->file), 0); /* what the crash left: the file gone */
	int undone, interrupted;
	assert_int_equal(run_campaign_recover(f->db, f->cid, &undone, &interrupted, NULL), 0);
	assert_file(f, "old", 0755);

	/* A patch (its after bytes unknown) that rewrites the file and drops +x. */
	struct var_file *vf = &f->plan.files[0];
	vf->has_after = false;
	int64_t ids[2] = { 0 };
	assert_int_equal(camp_journal_patch_open(f->db, f->cid, f->it, &f->plan, ids, NULL), 0);
	assert_int_equal(chmod(f->file, 0644), 0);
	assert_int_equal(camp_journal_patch_close(f->db, &f->plan, ids, true, NULL), 0);
	assert_int_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, false, &moved, NULL), 0);
	assert_int_equal(moved, 1);
	assert_file(f, "old", 0755);

	/* The candidate kept, its mode changed by hand: restore puts 0755 back. */
	vf->has_after = true;
	assert_int_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, NULL), 0);
	assert_int_equal(chmod(f->file, 0600), 0);
	int n;
	assert_int_equal(run_campaign_restore(f->db, f->cid, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_file(f, "old", 0755);
}

/* Recovery checks the stored bytes against their sha256 before it writes:
 * damaged ones are refused, naming the file, and nothing is written. */
static void test_recover_verifies(void **state)
{
	struct fixture *f = *state;
	size_t moved;
	camp_jsys.write = disk_full;
	assert_int_not_equal(camp_journal_move(f->db, f->cid, f->it, &f->plan, true, &moved, NULL), 0);
	camp_jsys_reset();
	assert_int_equal(rt_write_file_atomic(f->file, "half", 4, 0644, NULL), 0);
	char shaq[256], h[65];
	rt_sha256_hex("old", 3, h);
	snprintf(shaq, sizeof(shaq), "UPDATE blobs SET content = CAST('bad' AS BLOB) WHERE sha256 = '%s'", h);
	sql(f, shaq);
	struct rt_sb err = RT_SB_INIT;
	int undone = -1, interrupted = -1;
	assert_int_equal(run_campaign_recover(f->db, f->cid, &undone, &interrupted, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "t.json: the stored bytes before the change do not match their sha256"));
	assert_int_equal(undone, 0);
	assert_int_equal(open_intents(f), 1);
	assert_file(f, "half", 0644);
	/* restore says the same and writes nothing either */
	int n = -1;
	rt_sb_reset(&err);
	assert_int_equal(run_campaign_restore(f->db, f->cid, &n, &err), RT_EDB);
	assert_non_null(strstr(err.buf, "do not match their sha256"));
	assert_int_equal(n, 0);
	assert_file(f, "half", 0644);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_moves),
		cmocka_unit_test(test_state_refused),
		cmocka_unit_test(test_fingerprint_collisions),
		cmocka_unit_test(test_budget_until),
		cmocka_unit_test_setup_teardown(test_journal_entry_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_fault_hook, setup, teardown),
		cmocka_unit_test(test_series_events_linear),
		cmocka_unit_test_setup_teardown(test_journal_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_verifies, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_state_moves             final states never move; running ones may fail or be interrupted
 *   test_state_refused           an illegal move is RT_ESTATE, writes nothing, stops the campaign
 *   test_fingerprint_collisions  inputs the old encoding confused get different fingerprints
 *   test_budget_until            --until: today or tomorrow at that local time; bad text refused
 *   test_journal_entry_replaced  a failing write entry: the error, the open intent, recovery
 *   test_journal_fault_hook      the nth journal write fails, named; recovery after each
 *   test_series_events_linear    100,000 log events per sample join their series in linear time
 *   test_journal_modes           a 0755 file stays 0755 through recovery, a patch's revert, restore
 *   test_recover_verifies        damaged stored bytes: recovery and restore refuse, write nothing
 */
