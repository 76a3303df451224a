/*
 * gate_fakeserver: the gate tests' GSM8K server as a program, for the shell
 * tests. Same command line as simserve's GSM8K mode, plus --fail-every K,
 * --require-key KEY (401 for requests without "Authorization: Bearer KEY"),
 * --record FILE (every request body, one per line) and --models ID (what
 * GET /v1/models lists):
 *   gate_fakeserver --gsm8k FILE --gsm8k-accuracy F [--flip 3,17] [--fail-every K]
 *                   [--require-key KEY] [--record FILE] [--models ID]
 * Prints "fakeserver: listening on 127.0.0.1:PORT", serves until SIGTERM.
 */
#include "fakeserver.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct fake_cfg cfg = { 0 };
	const char *file = NULL;
	int flips[64];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--gsm8k") && v)
			file = v, i++;
		else if (!strcmp(a, "--gsm8k-accuracy") && v)
			cfg.accuracy = atof(v), i++;
		else if (!strcmp(a, "--fail-every") && v)
			cfg.fail_every = atoi(v), i++;
		else if (!strcmp(a, "--require-key") && v)
			cfg.require_key = v, i++;
		else if (!strcmp(a, "--record") && v)
			cfg.record = v, i++;
		else if (!strcmp(a, "--models") && v)
			cfg.model_id = v, i++;
		else if (!strcmp(a, "--flip") && v) {
			char *d = xstrdup(v);
			for (char *t = strtok(d, ","); t && cfg.n_flip < 64; t = strtok(NULL, ","))
				flips[cfg.n_flip++] = atoi(t);
			free(d);
			cfg.flip = flips;
			i++;
		} else if (!strcmp(a, "--port") && v)
			i++; /* always a free port */
		else if (!strcmp(a, "--zero-latency"))
			;
		else {
			fprintf(stderr, "fakeserver: unknown argument '%s'\n", a);
			return 2;
		}
	}
	struct gsm8k_set set;
	struct rt_sb err = RT_SB_INIT;
	if (!file || gsm8k_load(file, &set, &err)) {
		fprintf(stderr, "fakeserver: %s\n", file ? err.buf : "--gsm8k FILE is required");
		return 2;
	}
	cfg.test = &set;
	int port = 0;
	struct fake_server *s = fake_start(&cfg, &port);
	if (!s) {
		fprintf(stderr, "fakeserver: cannot start\n");
		return 3;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	printf("fakeserver: listening on 127.0.0.1:%d\n", port);
	fflush(stdout);
	while (!stop)
		pause();
	fake_stop(s);
	gsm8k_set_release(&set);
	return 0;
}
