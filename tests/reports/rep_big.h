/*
 * A synthetic campaign for the large-report checks (bench_rep and
 * test_rep_big): n iterations, each with measurements of 2 arms x 3 repeats
 * and a metric_stats row; a gate run every 10th; an invalidation note every
 * 1000th; about a fifth kept. Inserted in one transaction with prepared
 * statements. Deterministic: the same n gives the same database.
 */
#ifndef REP_BIG_H
#define REP_BIG_H

#include "db/db.h"
#include "db/db_int.h" /* db_sqlite: bulk inserts */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static void must(int ok, sqlite3 *h, const char *what)
{
	if (!ok) {
		fprintf(stderr, "bench_rep: %s: %s\n", what, sqlite3_errmsg(h));
		exit(3);
	}
}

static sqlite3_stmt *prep(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	must(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK, h, sql);
	return st;
}

static void step(sqlite3 *h, sqlite3_stmt *st)
{
	must(sqlite3_step(st) == SQLITE_DONE, h, "insert");
	sqlite3_reset(st);
}

/* A campaign of n iterations (seq 0 the baseline), as described above. */
static void rep_big_build(struct db *db, int n_iter)
{
	sqlite3 *h = db_sqlite(db);
	must(sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) == SQLITE_OK, h, "begin");
	must(sqlite3_exec(h, "INSERT INTO campaigns (id, name, spec_path, spec_text, spec_sha256, "
			  "workdir, created_at) VALUES (1, 'bench', 'b.yaml', '', '', '/tmp', 0)",
			  NULL, NULL, NULL) == SQLITE_OK, h, "campaign");
	sqlite3_stmt *it = prep(h, "INSERT INTO iterations (id, campaign_id, seq, parent_id, variant, "
				   "kind, change_text, state, decision, reason, objective, obj_best, obj_cand, "
				   "obj_delta, obj_ci_lo, obj_ci_hi, confidence, test, p_value, n_cand, n_best, "
				   "paired, gate_run_id, started_at, finished_at) VALUES (?1, 1, ?2, ?3, ?4, ?5, "
				   "?6, ?7, ?8, 'reason', 'serve.tok_s', ?9, ?10, ?11, ?12, ?13, 0.95, 'bootstrap', "
				   "0.01, 3, 3, 1, ?14, ?15, ?16)");
	sqlite3_stmt *ms = prep(h, "INSERT INTO measurements (iteration_id, arm, benchmark, metric, rep, "
				   "value, unit, created_at) VALUES (?1, ?2, 'serve', 'tok_s', ?3, ?4, 'tok/s', 0)");
	sqlite3_stmt *st = prep(h, "INSERT INTO metric_stats (iteration_id, benchmark, metric, unit, better, "
				   "best_median, cand_median, ratio, ci_lo, ci_hi, p_value, n_best, n_cand) VALUES "
				   "(?1, 'serve', 'tok_s', 'tok/s', 'higher', ?2, ?3, ?4, ?5, ?6, 0.01, 3, 3)");
	sqlite3_stmt *gr = prep(h, "INSERT INTO gate_runs (id, iteration_id, endpoint, api, format, extract, "
				   "n_planned, n_done, n_correct, accuracy, passed, params_json, started_at) VALUES "
				   "(?1, ?2, 'http://x', 'chat', 'gsm8k_cot', 'flexible', 1319, 1319, 1280, ?3, ?4, "
				   "'{\"min_accuracy\":0.965}', 0)");
	sqlite3_stmt *nt = prep(h, "INSERT INTO notes (iteration_id, kind, text, created_at) VALUES "
				   "(?1, 'invalidation', 'stale server', 0)");
	double best = 1000;
	unsigned seed = 1;
	for (int i = 0; i < n_iter; i++) {
		seed = seed * 1103515245u + 12345u;
		double d = i ? ((double)(seed >> 8 & 0xffff) / 65536.0 - 0.6) * 0.05 : 0;
		bool kept = i && d > 0.01;
		const char *state = !i ? "baseline" : kept ? "kept" : (i % 17 == 0) ? "failed" : "reverted";
		int64_t id = i + 1;
		int64_t gate = (i % 10 == 0) ? i / 10 + 1 : 0;
		if (gate) {
			sqlite3_bind_int64(gr, 1, gate);
			sqlite3_bind_null(gr, 2);
			sqlite3_bind_double(gr, 3, 0.96 + (double)(seed & 0xff) / 255 * 0.02);
			sqlite3_bind_int(gr, 4, (seed & 0xff) > 64);
			step(h, gr);
		}
		char var[32];
		snprintf(var, sizeof(var), i ? "variant-%d" : "baseline", i);
		sqlite3_bind_int64(it, 1, id);
		sqlite3_bind_int(it, 2, i);
		if (i)
			sqlite3_bind_int64(it, 3, id - 1);
		else
			sqlite3_bind_null(it, 3);
		sqlite3_bind_text(it, 4, var, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(it, 5, i ? "flag" : "baseline", -1, SQLITE_STATIC);
		sqlite3_bind_text(it, 6, i ? "engine.command += --some-flag 42" : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(it, 7, state, -1, SQLITE_STATIC);
		sqlite3_bind_text(it, 8, kept ? "keep" : "revert", -1, SQLITE_STATIC);
		sqlite3_bind_double(it, 9, best);
		sqlite3_bind_double(it, 10, best * (1 + d));
		if (i) {
			sqlite3_bind_double(it, 11, d);
			sqlite3_bind_double(it, 12, d - 0.01);
			sqlite3_bind_double(it, 13, d + 0.01);
		} else {
			sqlite3_bind_null(it, 11), sqlite3_bind_null(it, 12), sqlite3_bind_null(it, 13);
		}
		if (gate)
			sqlite3_bind_int64(it, 14, gate);
		else
			sqlite3_bind_null(it, 14);
		sqlite3_bind_int64(it, 15, (int64_t)i * 60000);
		sqlite3_bind_int64(it, 16, (int64_t)i * 60000 + 50000);
		step(h, it);
		for (int a = 0; a < 2; a++)
			for (int r = 0; r < 3; r++) {
				sqlite3_bind_int64(ms, 1, id);
				sqlite3_bind_text(ms, 2, a ? "cand" : "best", -1, SQLITE_STATIC);
				sqlite3_bind_int(ms, 3, r);
				sqlite3_bind_double(ms, 4, best * (a ? 1 + d : 1) * (1 + r * 0.001));
				step(h, ms);
			}
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_double(st, 2, best);
		sqlite3_bind_double(st, 3, best * (1 + d));
		sqlite3_bind_double(st, 4, 1 + d);
		sqlite3_bind_double(st, 5, 1 + d - 0.01);
		sqlite3_bind_double(st, 6, 1 + d + 0.01);
		step(h, st);
		if (i && i % 1000 == 0) {
			sqlite3_bind_int64(nt, 1, id);
			step(h, nt);
		}
		if (kept)
			best *= 1 + d;
	}
	sqlite3_finalize(it), sqlite3_finalize(ms), sqlite3_finalize(st), sqlite3_finalize(gr);
	sqlite3_finalize(nt);
	must(sqlite3_exec(h, "UPDATE gate_runs SET iteration_id = (id - 1) * 10 + 1; COMMIT; ANALYZE",
			  NULL, NULL, NULL) == SQLITE_OK, h, "commit");
}

#endif
