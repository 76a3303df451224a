/*
 * kill -9 at random moments: runs the kill9 campaign once uninterrupted, then
 * again in a fresh folder, killing the runner (and its whole process group)
 * with SIGKILL at 50 random moments and resuming each time. Afterwards:
 * the table file was never half-written (valid JSON after every kill), no
 * finished iteration was lost, the decisions equal the uninterrupted run's,
 * the final table equals the uninterrupted run's, and `ratchet restore`
 * gives back the original bytes. Prints its figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILLS 50

static const char *bin, *src, *build;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(b);
		return NULL;
	}
	b[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

static void put(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	fputs(s, f);
	fclose(f);
}

static void fail(const char *fmt, const char *a)
{
	fprintf(stderr, "FAIL: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(1);
}

/* A campaign folder: table.json and a spec with the fake benchmark. */
static void setup(const char *dir, int sleep_ms)
{
	mkdir(dir, 0755);
	char p[512], q[512];
	snprintf(p, sizeof(p), "%s/tests/campaign/table.json", src);
	snprintf(q, sizeof(q), "%s/table.json", dir);
	char *t = slurp(p, NULL);
	put(q, t);
	free(t);
	snprintf(p, sizeof(p), "%s/tests/campaign/kill9.yaml.in", src);
	char *spec = slurp(p, NULL);
	char fake[512], ms[16];
	snprintf(fake, sizeof(fake), "%s/fakebench", build);
	snprintf(ms, sizeof(ms), "%d", sleep_ms);
	/* substitute @FAKEBENCH@ and @SLEEP_MS@ */
	char out[8192];
	size_t o = 0;
	for (const char *s = spec; *s && o < sizeof(out) - 600;) {
		if (!strncmp(s, "@FAKEBENCH@", 11)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", fake);
			s += 11;
		} else if (!strncmp(s, "@SLEEP_MS@", 10)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", ms);
			s += 10;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = 0;
	snprintf(q, sizeof(q), "%s/spec.yaml", dir);
	put(q, out);
	free(spec);
}

/* Start ratchet in its own process group; returns the pid. */
static pid_t start(const char *dir, int resume, int quiet_out)
{
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (chdir(dir))
			_exit(127);
		if (quiet_out) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (resume)
			execl(bin, bin, "--db", "c.db", "run", "--quiet", "--resume", "spec.yaml", (char *)NULL);
		else
			execl(bin, bin, "--db", "c.db", "run", "--quiet", "spec.yaml", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* "variant:state" lines of finished iterations, in order. */
static char *decisions(const char *dir, int *interrupted, int *total)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/c.db", dir);
	sqlite3 *db;
	if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		fail("cannot open %s", p);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "SELECT variant, state FROM iterations ORDER BY seq", -1, &st, NULL);
	static char buf[8192];
	size_t o = 0;
	*interrupted = 0;
	*total = 0;
	buf[0] = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		const char *s = (const char *)sqlite3_column_text(st, 1);
		(*total)++;
		if (!strcmp(s, "interrupted")) {
			(*interrupted)++;
			continue;
		}
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s:%s\n", v, s);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return strdup(buf);
}

/* Campaigns in the store (0 before the first run created one); *running:
 * the latest one is still running (a slow machine's kill windows can be long
 * enough for the resumes to finish it). */
static int campaign_exists(const char *dir, int *running)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/c.db", dir);
	sqlite3 *db;
	*running = 0;
	if (access(p, F_OK) || sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 0;
	sqlite3_stmt *st;
	int n = 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*), sum(state = 'running') FROM campaigns", -1, &st,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW) {
			n = sqlite3_column_int(st, 0);
			*running = sqlite3_column_int(st, 1);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n > 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	bin = getenv("RATCHET_BIN");
	src = getenv("RATCHET_SRC");
	build = getenv("RATCHET_BUILD");
	if (!bin || !src || !build)
		fail("%s", "RATCHET_BIN, RATCHET_SRC and RATCHET_BUILD must be set");
	char tmpl[] = "/tmp/ratchet-kill9-XXXXXX";
	char *root = mkdtemp(tmpl);
	char ref[600], kil[600], path[700];
	snprintf(ref, sizeof(ref), "%s/ref", root);
	snprintf(kil, sizeof(kil), "%s/kill", root);
	setup(ref, 2);
	setup(kil, 2);
	snprintf(path, sizeof(path), "%s/table.json", kil);
	char *original = slurp(path, NULL);

	/* The uninterrupted run. */
	double t0 = now();
	int rc = wait_exit(start(ref, 0, 0));
	double t_ref = now() - t0;
	if (rc)
		fail("uninterrupted run exited %s", rc == 1 ? "1" : "non-zero");
	int ref_int, ref_total;
	char *want = decisions(ref, &ref_int, &ref_total);
	printf("uninterrupted: %d iterations in %.2fs\n%s", ref_total, t_ref, want);

	/* 50 kills at random moments, each followed by a resume. */
	unsigned seed = (unsigned)time(NULL);
	const char *fixed = getenv("KILL9_SEED");
	if (fixed)
		seed = (unsigned)atoi(fixed);
	srand(seed);
	printf("kill seed %u (set KILL9_SEED to replay)\n", seed);
	int landed = 0;
	for (int k = 0; k < KILLS; k++) {
		int running;
		pid_t pid = start(kil, campaign_exists(kil, &running), 1);
		/* A moment within the first fifth of a whole run, so every resume progresses. */
		useconds_t us = (useconds_t)((double)rand() / RAND_MAX * t_ref / 5 * 1e6);
		usleep(us);
		if (kill(-pid, SIGKILL) == 0)
			landed++;
		int st = wait_exit(pid);
		(void)st;
		/* Never half-written: the table parses after every kill. */
		json_error_t je;
		json_t *t = json_load_file(path, 0, &je);
		if (!t)
			fail("table.json is not valid JSON after a kill: %s", je.text);
		json_decref(t);
	}
	/* Finish. */
	int running;
	if (!campaign_exists(kil, &running) || running) {
		rc = wait_exit(start(kil, campaign_exists(kil, &running), 0));
		if (rc)
			fail("final resume exited %s", "non-zero");
	} else {
		printf("the resumes finished the campaign between kills\n");
	}
	int got_int, got_total;
	char *got = decisions(kil, &got_int, &got_total);
	printf("killed %d times (%d signals delivered): %d iterations, %d interrupted\n%s", KILLS,
	       landed, got_total, got_int, got);
	if (strcmp(want, got))
		fail("%s", "decisions differ from the uninterrupted run");
	char rp[700];
	snprintf(rp, sizeof(rp), "%s/table.json", ref);
	char *a = slurp(rp, NULL), *b = slurp(path, NULL);
	if (strcmp(a, b))
		fail("%s", "final table differs from the uninterrupted run's");
	/* No temp file left behind. */
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c ratchet-tmp > /dev/null", kil);
	if (system(cmd) == 0)
		fail("%s", "a temp file was left behind");
	/* restore gives back the original bytes. */
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir(kil))
			_exit(127);
		execl(bin, bin, "--db", "c.db", "restore", (char *)NULL);
		_exit(127);
	}
	if (wait_exit(pid))
		fail("%s", "ratchet restore failed");
	char *restored = slurp(path, NULL);
	if (strcmp(restored, original))
		fail("%s", "restore did not give back the original bytes");
	printf("PASS: decisions equal, final table equal, restore gives the original bytes\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd)) {}
	free(want);
	free(got);
	free(a);
	free(b);
	free(original);
	free(restored);
	return 0;
}
