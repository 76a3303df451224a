/*
 * make bench: the campaign runner's own overhead per iteration, i.e. the time
 * ratchet spends outside the benchmark (planning, journaling every file
 * write with fsync, statistics, SQLite commits, process start-up). It runs
 * the kill9 campaign with a benchmark that returns at once, measures the
 * benchmark's own cost separately, and subtracts.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(char *const argv[], const char *dir)
{
	pid_t p = fork();
	if (p == 0) {
		if (dir && chdir(dir))
			_exit(127);
		FILE *f = freopen("/dev/null", "w", stdout);
		(void)f;
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
	const char *bin = getenv("RATCHET_BIN"), *src = getenv("RATCHET_SRC"),
		   *build = getenv("RATCHET_BUILD");
	if (!bin || !src || !build) {
		fprintf(stderr, "bench_campaign: RATCHET_BIN, RATCHET_SRC, RATCHET_BUILD must be set\n");
		return 2;
	}
	char dir[] = "/tmp/ratchet-bench-campaign-XXXXXX";
	if (!mkdtemp(dir))
		return 3;
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cp %s/tests/campaign/table.json %s/ && sed -e 's|@FAKEBENCH@|%s/fakebench|' "
		 "-e 's|@SLEEP_MS@|0|' %s/tests/campaign/kill9.yaml.in > %s/spec.yaml",
		 src, dir, build, src, dir);
	if (system(cmd))
		return 3;
	char *argv[] = { (char *)bin, "--db", "c.db", "run", "--quiet", "spec.yaml", NULL };
	double t0 = now();
	if (run(argv, dir)) {
		fprintf(stderr, "bench_campaign: the campaign failed\n");
		return 3;
	}
	double wall = now() - t0;
	char db[512];
	snprintf(db, sizeof(db), "%s/c.db", dir);
	sqlite3 *h;
	sqlite3_open(db, &h);
	sqlite3_stmt *st;
	int iters = 0, runs = 0;
	sqlite3_prepare_v2(h, "SELECT count(*) FROM iterations", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		iters = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_prepare_v2(h, "SELECT count(*) FROM measurements WHERE metric = 'gflops'", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		runs = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	/* The benchmark's own cost: the same process, run the same number of times. */
	char fake[512], table[512];
	snprintf(fake, sizeof(fake), "%s/fakebench", build);
	snprintf(table, sizeof(table), "%s/table.json", dir);
	char *fargv[] = { fake, table, "0", NULL };
	int n = runs < 50 ? runs : 50;
	t0 = now();
	for (int i = 0; i < n; i++)
		run(fargv, NULL);
	double per_bench = (now() - t0) / n;
	double overhead = (wall - per_bench * runs) / iters;
	printf("campaign_wall: %.3f s for %d iterations and %d benchmark runs\n", wall, iters, runs);
	printf("benchmark_process: %.2f ms per run (spawned alone)\n", per_bench * 1e3);
	printf("runner_overhead_per_iteration: %.1f ms (time outside the benchmark)\n", overhead * 1e3);
	printf("runner_overhead_per_benchmark_run: %.2f ms (journal, fsync, SQLite, stats)\n",
	       (wall - per_bench * runs) / runs * 1e3);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {}
	return 0;
}
