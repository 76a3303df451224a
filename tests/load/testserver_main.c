/*
 * load_testserver: the load tests' misbehaving server as a program, for
 * shell tests. Prints "load_testserver: listening on 127.0.0.1:PORT" and
 * serves until SIGTERM. usage:
 *   load_testserver [ok|badjson|nodone|500|midclose|errevent|hang|bigchunk|nousage|serial]
 *                   [TOKEN_US] [--require-key KEY]
 * --require-key: 401 for requests without "Authorization: Bearer KEY".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testserver.h"

static volatile sig_atomic_t stop;
static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "ok", "badjson", "nodone", "500", "midclose",
					     "errevent", "hang", "bigchunk", "nousage", "serial" };
	enum lts_mode m = LTS_OK;
	const char *key = NULL;
	if (argc > 2 && !strcmp(argv[argc - 2], "--require-key")) {
		key = argv[argc - 1];
		argc -= 2;
	}
	if (argc > 1) {
		size_t i = 0;
		for (; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (!strcmp(argv[1], modes[i]))
				break;
		if (i == sizeof(modes) / sizeof(modes[0])) {
			fprintf(stderr, "load_testserver: unknown mode '%s'\n", argv[1]);
			return 2;
		}
		m = (enum lts_mode)i;
	}
	int port;
	struct lts *s = lts_start(m, argc > 2 ? atoi(argv[2]) : 0, 5000, &port);
	if (!s) {
		fprintf(stderr, "load_testserver: cannot start\n");
		return 3;
	}
	if (key)
		lts_require_key(s, key);
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("load_testserver: listening on 127.0.0.1:%d\n", port);
	fflush(stdout);
	while (!stop)
		pause();
	lts_stop(s);
	return 0;
}
