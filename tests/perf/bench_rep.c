/*
 * bench_rep: a synthetic campaign of 100,000 iterations (each with
 * measurements of 2 arms x 3 repeats and a metric_stats row; a gate run every
 * 10th; an invalidation every 1000th), inserted in one transaction with
 * prepared statements, then timed: `ratchet log` (first page) and
 * `ratchet report --format html` as child processes of $RATCHET_BIN, or as
 * library calls when the binary is not there. Targets: log < 1 s, html < 5 s.
 */
#include "db/db.h"
#include "db/db_int.h" /* db_sqlite: bulk inserts */
#include "reports/rep.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N_ITER 100000

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

static void build(struct db *db)
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
	for (int i = 0; i < N_ITER; i++) {
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

/* Run argv with stdout to /dev/null (or a file); seconds of wall time, <0 on failure. */
static double run_child(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	double t0 = rt_now_s();
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	int status;
	waitpid(pid, &status, 0);
	double t = rt_now_s() - t0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

int main(void)
{
	char dir[] = "/tmp/bench-rep-XXXXXX";
	if (!mkdtemp(dir))
		return 3;
	char path[64], html[64];
	snprintf(path, sizeof(path), "%s/b.db", dir);
	snprintf(html, sizeof(html), "%s/b.html", dir);
	struct rt_sb err = RT_SB_INIT;
	struct db *db;
	if (db_open(path, &db, &err)) {
		fprintf(stderr, "bench_rep: %s\n", err.buf);
		return 3;
	}
	double t0 = rt_now_s();
	build(db);
	printf("rep_build_100k: %.2f s (target: none; %d iterations, %d measurements)\n",
	       rt_now_s() - t0, N_ITER, N_ITER * 6);
	const char *bin = getenv("RATCHET_BIN");
	double tlog, thtml;
	size_t html_bytes = 0;
	if (bin && access(bin, X_OK) == 0) {
		db_close(db);
		char *a1[] = { (char *)bin, "--db", path, "log", NULL };
		char *a2[] = { (char *)bin, "--db", path, "--quiet", "report", "--format", "html",
			       "-o", html, NULL };
		tlog = run_child(a1);
		thtml = run_child(a2);
		FILE *f = fopen(html, "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			html_bytes = (size_t)ftell(f);
			fclose(f);
		}
		printf("rep_mode: child processes of %s\n", bin);
	} else {
		FILE *null = fopen("/dev/null", "w");
		struct rep_log_opts o = { .limit = 50 };
		t0 = rt_now_s();
		tlog = rep_log(db, null, &o, &err) ? -1 : rt_now_s() - t0;
		fclose(null);
		struct rt_sb out = RT_SB_INIT;
		t0 = rt_now_s();
		thtml = rep_report(db, 0, REP_HTML, &out, &err) ? -1 : rt_now_s() - t0;
		html_bytes = out.len;
		rt_sb_release(&out);
		db_close(db);
		printf("rep_mode: library calls (RATCHET_BIN not set)\n");
	}
	printf("rep_log_first_page_100k: %.3f s (target: < 1 s)\n", tlog);
	printf("rep_report_html_100k: %.3f s (target: < 5 s)\n", thtml);
	printf("rep_report_html_size_100k: %.1f MB (target: none)\n", (double)html_bytes / 1e6);
	const char *keep = getenv("BENCH_REP_KEEP"); /* keep the database to look at it */
	if (keep && *keep)
		printf("rep_kept: %s\n", path);
	const char *sfx[] = { "b.db", "b.db-wal", "b.db-shm", "b.html" };
	for (int i = 0; i < 4 && !(keep && *keep); i++) {
		char p[96];
		snprintf(p, sizeof(p), "%s/%s", dir, sfx[i]);
		unlink(p);
	}
	if (!(keep && *keep))
		rmdir(dir);
	rt_sb_release(&err);
	return tlog < 0 || thtml < 0 || tlog > 1 || thtml > 5;
}
