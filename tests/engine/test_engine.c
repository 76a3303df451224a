/*
 * Unit tests of process trees (runner/base/proc.h, struct rt_ptree) and of
 * the engine supervisor's stop (runner/engine/engine.h): a child that
 * starts a process in a new session (setsid) is stopped with its whole
 * tree, and stopping an engine whose descendant holds its output pipe takes
 * the grace period, not the descendant's lifetime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/base/proc.h"
#include "runner/base/rt.h"
#include "runner/engine/engine.h"

/* Does pid run (a zombie does not)? */
static bool running(pid_t pid)
{
	struct rt_proc_stat ps;
	return pid > 0 && rt_proc_stat(pid, &ps) == 0 && ps.state != 'Z';
}

/* The shell prints the setsid'd sleep's pid, then becomes a sleep itself. */
static char *tree_argv[] = { "sh", "-c", "setsid sleep 30 & echo $!; exec sleep 30", NULL };

static void test_ptree_stop(void **state)
{
	(void)state;
	struct rt_ptree t;
	rt_ptree_init(&t);
	int pp[2];
	assert_int_equal(pipe(pp), 0);
	struct rt_spawn_opts o = { NULL, 0, NULL, -1, pp[1], -1, &t };
	pid_t pid;
	assert_int_equal(rt_spawn(tree_argv, &o, &pid, NULL), 0);
	close(pp[1]);
	assert_int_equal(t.leader, pid);
	char line[32];
	assert_true(rt_read_line_timeout(pp[0], line, sizeof(line), 5) > 0);
	pid_t escaped = (pid_t)atoi(line);
	assert_true(escaped > 0);
	/* The escaped sleep is in a session of its own (once setsid ran), yet a member. */
	struct rt_proc_stat ps;
	for (int i = 0; i < 500 && !rt_proc_stat(escaped, &ps) && ps.pgrp == pid; i++)
		rt_sleep_ns(10000000);
	assert_int_equal(rt_proc_stat(escaped, &ps), 0);
	assert_int_not_equal(ps.pgrp, pid);
	assert_true(rt_ptree_alive(&t) >= 2);
	int64_t t0 = rt_now_ns();
	int st = rt_ptree_stop(&t, 0.5, false);
	assert_true(rt_now_ns() - t0 < 3000000000LL);
	assert_true(WIFSIGNALED(st));
	assert_false(running(pid));
	assert_false(running(escaped));
	assert_int_equal(rt_ptree_alive(&t), 0);
	close(pp[0]);
	rt_ptree_release(&t);
	assert_null(t.cgroup);
}

static void test_ptree_unused(void **state)
{
	(void)state;
	struct rt_ptree t;
	rt_ptree_init(&t); /* no child: release removes the cgroup it may have made */
	assert_int_equal(rt_ptree_alive(&t), 0);
	assert_int_equal(rt_ptree_stop(&t, 0, false), -1);
	rt_ptree_release(&t);
}

static void test_engine_stop_bounded(void **state)
{
	(void)state;
	/* Nothing answers on the port: the test only starts and stops it. */
	struct run_engine_cfg cfg = {
		.argv = tree_argv, .host = "127.0.0.1", .port = 1, .ready_path = "/health",
		.ready_timeout_s = 1, .stop_grace_s = 0.5,
	};
	struct run_engine *e;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(run_engine_start(&cfg, &e, &err), 0);
	pid_t escaped = 0;
	for (int i = 0; i < 500 && !escaped; i++) {
		size_t len;
		bool trunc;
		const char *log = run_engine_log(e, &len, &trunc);
		if (len && memchr(log, '\n', len))
			escaped = (pid_t)atoi(log);
		else
			rt_sleep_ns(10000000);
	}
	assert_true(escaped > 0);
	assert_true(run_engine_alive(e));
	int64_t t0 = rt_now_ns();
	run_engine_stop(e);
	/* grace 0.5 s and the drain's 1 s at most; the sleep would be 30 s */
	assert_true(rt_now_ns() - t0 < 3000000000LL);
	assert_false(running(escaped));
	assert_false(run_engine_alive(e));
	run_engine_free(e);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptree_stop),
		cmocka_unit_test(test_ptree_unused),
		cmocka_unit_test(test_engine_stop_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
