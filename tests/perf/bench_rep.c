/*
 * bench_rep: a synthetic campaign of 100,000 iterations (each with
 * measurements of 2 arms x 3 repeats and a metric_stats row; a gate run every
 * 10th; an invalidation every 1000th), inserted in one transaction with
 * prepared statements, then timed: `ratchet log` (first page) and
 * `ratchet report --format html` as child processes of $RATCHET_BIN, or as
 * library calls when the binary is not there, and the report's load in
 * headless Chromium (--dump-dom, less an empty page's; skipped without
 * Chromium). Targets: log < 1 s, html < 5 s, html < 5 MB, Chromium < 3 s.
 */
#include "reports/rep.h"
#include "tests/reports/rep_big.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N_ITER 100000

/* Run argv with stdout to /dev/null (or a file); seconds of wall time, <0 on failure. */
static double run_child(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0); /* chromium's dbus noise */
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

/* Seconds for headless Chromium ($CHROMIUM, else /usr/bin/chromium) to load
 * the report and dump its DOM, printed beside an empty page's (the browser's
 * own start); 0 with a message when there is no Chromium, <0 on failure. */
static double chromium_render(const char *dir, const char *html)
{
	const char *chrome = getenv("CHROMIUM");
	chrome = chrome && *chrome ? chrome : "/usr/bin/chromium";
	if (access(chrome, X_OK)) {
		printf("rep_report_html_chromium_100k: skipped (no chromium at %s)\n", chrome);
		return 0;
	}
	char prof[96], udd[128], url[96], empty[96];
	snprintf(prof, sizeof(prof), "%s/chrome-XXXXXX", dir);
	if (!mkdtemp(prof))
		return -1;
	snprintf(udd, sizeof(udd), "--user-data-dir=%s", prof);
	snprintf(url, sizeof(url), "file://%s", html);
	snprintf(empty, sizeof(empty), "about:blank");
	double t[2];
	for (int k = 0; k < 2; k++) {
		char *a[] = { (char *)chrome, "--headless", "--no-sandbox", "--disable-gpu",
			      "--disable-background-networking", "--disable-component-update",
			      "--disable-sync", "--no-first-run", udd, "--dump-dom", k ? url : empty, NULL };
		t[k] = run_child(a);
	}
	char rm[160];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", prof);
	if (system(rm))
		fprintf(stderr, "bench_rep: could not remove %s\n", prof);
	if (t[0] < 0 || t[1] < 0) {
		printf("rep_report_html_chromium_100k: chromium failed\n");
		return -1;
	}
	printf("rep_report_html_chromium_100k: %.2f s (target: < 3 s beyond the browser's start; "
	       "--dump-dom of the report %.2f s, of an empty page %.2f s)\n", t[1] - t[0], t[1], t[0]);
	return t[1] - t[0];
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
	rep_big_build(db, N_ITER);
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
		FILE *f = fopen(html, "wb");
		if (f) {
			fwrite(out.buf, 1, out.len, f);
			fclose(f);
		}
		rt_sb_release(&out);
		db_close(db);
		printf("rep_mode: library calls (RATCHET_BIN not set)\n");
	}
	printf("rep_log_first_page_100k: %.3f s (target: < 1 s)\n", tlog);
	printf("rep_report_html_100k: %.3f s (target: < 5 s)\n", thtml);
	printf("rep_report_html_size_100k: %.2f MB (target: < 5 MB)\n", (double)html_bytes / 1e6);
	double tchrome = chromium_render(dir, html);
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
	return tlog < 0 || thtml < 0 || tlog > 1 || thtml > 5 || html_bytes >= 5000000 || tchrome < 0 || tchrome > 3;
}
