/*
 * The database's growth with large tables (issue 17, item 14): a campaign of
 * three table variants, each one entry of its own 100k-line CSV table,
 * measured with a benchmark that returns at once. Every A/B switch journals
 * the table it writes, so a journal that copied the bytes into each intent
 * grew by megabytes per switch (88 MB for 6.4 MB of tables); with the bytes
 * stored once by their sha256 it holds each distinct content once.
 *
 *   bench_db_size           make bench: prints the figures
 *   bench_db_size --check   the ctest case: fails when the database is over
 *                           three times the tables' size (each table is
 *                           held twice: its original and its one edit)
 *
 * RATCHET_BIN names the ratchet binary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROWS 100000
#define TABLES 3

/* Table t: a header and ROWS rows keyed on M,N,K, different in every table. */
static long write_table(const char *dir, int t)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/t%d.csv", dir, t);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "M,N,K,tile,warps,stages\n");
	for (int i = 0; i < ROWS; i++)
		fprintf(f, "%d,%d,%d,%d,%d,%d\n", i, (i * (t + 3)) % 4096, i % 512, 16 << (i % 4),
			4 + t, 2);
	long n = ftell(f);
	return fclose(f) ? -1 : n;
}

static const char spec[] =
	"name: db-size\n"
	"benchmarks:\n"
	"  - name: b\n"
	"    command: [sh, -c, \"echo 'v: 1'\"]\n"
	"    metrics: {v: {regex: 'v: ([0-9.]+)', better: higher}}\n"
	"objective: {metric: b.v, goal: max}\n"
	"repeats: {min: 3, max: 3}\n"
	"variants:\n"
	"  - {name: t1, table: {file: t1.csv, key_columns: [M, N, K], set: {\"5,20,5\": {tile: 128}}}}\n"
	"  - {name: t2, table: {file: t2.csv, key_columns: [M, N, K], set: {\"5,25,5\": {tile: 128}}}}\n"
	"  - {name: t3, table: {file: t3.csv, key_columns: [M, N, K], set: {\"5,30,5\": {tile: 128}}}}\n"
	"strategy: list\n";

/* Bytes of path, 0 when it does not exist. */
static long file_size(const char *dir, const char *name)
{
	char path[512];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) ? 0 : (long)sb.st_size;
}

static int run_campaign(const char *bin, const char *dir)
{
	pid_t p = fork();
	if (p == 0) {
		if (chdir(dir))
			_exit(127);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(bin, bin, "--db", "c.db", "run", "--quiet", "spec.yaml", (char *)NULL);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	int check = argc > 1 && !strcmp(argv[1], "--check");
	const char *bin = getenv("RATCHET_BIN");
	if (!bin) {
		fprintf(stderr, "bench_db_size: RATCHET_BIN must be set\n");
		return 2;
	}
	char dir[] = "/tmp/ratchet-db-size-XXXXXX";
	if (!mkdtemp(dir))
		return 3;
	long tables = 0;
	for (int t = 1; t <= TABLES; t++) {
		long n = write_table(dir, t);
		if (n < 0)
			return 3;
		tables += n;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/spec.yaml", dir);
	FILE *f = fopen(path, "w");
	if (!f || fputs(spec, f) < 0 || fclose(f))
		return 3;
	int rc = run_campaign(bin, dir);
	if (rc) {
		fprintf(stderr, "bench_db_size: the campaign exited %d (left in %s)\n", rc, dir);
		return 3;
	}
	long db = file_size(dir, "c.db") + file_size(dir, "c.db-wal");
	double ratio = (double)db / (double)tables;
	printf("db size after 3 iterations on three 100k-line tables: %.1f MB "
	       "(tables %.1f MB, %.2fx; target <= 3x)\n", db / 1e6, tables / 1e6, ratio);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "bench_db_size: could not remove %s\n", dir);
	if (check && ratio > 3.0) {
		fprintf(stderr, "FAIL: the database is %.2f times the tables' size: the journal "
			"copies bytes it already holds\n", ratio);
		return 1;
	}
	return 0;
}
