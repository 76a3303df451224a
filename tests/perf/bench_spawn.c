/*
 * bench_spawn: what containing a measured command costs per start (issue
 * 22, item 21). Starts `true` N times each way and prints the median and
 * 90th percentile wall time of one start-to-reaped:
 *   plain    rt_spawn and waitpid: a process group, nothing more;
 *   keeper   rt_spawn_opts.contain (runner/base/rt_keep.c), what a
 *            measured command benchmark runs under: one more fork, and a
 *            sweep that finds nothing;
 *   tree     a process tree (rt_ptree: a cgroup where one can be made,
 *            /proc scans, a subreaper), what builds run under, and what
 *            measured benchmarks did not because of this figure.
 * And the keeper once more with a stray to kill (`setsid sleep 30 &`).
 * Usage: bench_spawn [starts per way, default 200].
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "runner/base/proc.h"
#include "runner/base/rt.h"

enum way { PLAIN, KEEPER, TREE, STRAY, NWAYS };
static const char *const names[NWAYS] = { "plain", "keeper", "tree", "keeper+stray" };

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One start to reaped, in ms; -1 when the spawn failed. */
static double one(enum way w)
{
	char *t[] = { "true", NULL };
	char *s[] = { "sh", "-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 &", NULL };
	struct rt_ptree tree;
	struct rt_spawn_opts o = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
				   .contain = w == KEEPER || w == STRAY };
	int64_t t0 = rt_now_ns();
	if (w == TREE) {
		rt_ptree_init(&tree);
		o.tree = &tree;
	}
	pid_t pid;
	if (rt_spawn(w == STRAY ? s : t, &o, &pid, NULL))
		return -1;
	if (w == TREE) {
		rt_ptree_scan(&tree);
		int st;
		waitpid(pid, &st, 0);
		if (rt_ptree_alive(&tree))
			rt_ptree_stop(&tree, 2, true);
		rt_ptree_release(&tree);
	} else {
		int st;
		waitpid(pid, &st, 0);
	}
	return (double)(rt_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	if (n < 10)
		n = 10;
	double *ms = xcalloc((size_t)n, sizeof(double));
	double med[NWAYS] = { 0 };
	for (int w = 0; w < NWAYS; w++) {
		int k = 0, runs = w == STRAY ? n / 10 : n;
		for (int i = 0; i < runs; i++) {
			double v = one((enum way)w);
			if (v >= 0)
				ms[k++] = v;
		}
		if (!k) {
			printf("%s: no start succeeded\n", names[w]);
			continue;
		}
		qsort(ms, (size_t)k, sizeof(double), cmp_d);
		med[w] = ms[k / 2];
		printf("start to reaped, %-12s: median %.2f ms, p90 %.2f ms (%d starts)\n", names[w], med[w],
		       ms[(k * 9) / 10 < k ? (k * 9) / 10 : k - 1], k);
	}
	printf("figure: keeper cost per start: %.2f ms over plain (target < 5 ms; the tree: %.2f ms over plain)\n",
	       med[KEEPER] - med[PLAIN], med[TREE] - med[PLAIN]);
	free(ms);
	return 0;
}
