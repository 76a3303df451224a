/*
 * A deterministic benchmark for the search tests: its "gflops" depends on a
 * table entry (tiles: BM, bn, W), an environment variable (SPACE_MODE), a
 * flag (--graphs true|false) and the repeat index (RATCHET_REP), with 0.5%
 * seeded noise, so a resumed search must make exactly the choices of an
 * uninterrupted one. The optimum: BM 32, bn 64, W 4, SPACE_MODE fast,
 * --graphs true: 100 gflops. BM 8 with W 8 fails (exit 1), an infeasible
 * point the strategies must step around.
 *
 * usage: spacebench TABLE.json [SLEEP_MS] [--graphs true|false]
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/base/rand.h"

int main(int argc, char **argv)
{
	json_error_t je;
	json_t *t = argc > 1 ? json_load_file(argv[1], 0, &je) : NULL;
	json_t *e = json_object_get(t, "tiles");
	if (!json_is_object(e)) {
		fprintf(stderr, "spacebench: no tiles entry in %s\n", argc > 1 ? argv[1] : "(none)");
		return 3;
	}
	double bm = (double)json_integer_value(json_object_get(e, "BM"));
	double bn = (double)json_integer_value(json_object_get(e, "bn"));
	double w = (double)json_integer_value(json_object_get(e, "W"));
	if (bm == 8 && w == 8) {
		fprintf(stderr, "spacebench: BM 8 with W 8 does not launch\n");
		return 1;
	}
	const char *mode = getenv("SPACE_MODE");
	bool graphs = true;
	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--graphs"))
			graphs = !strcmp(argv[i + 1], "true");
	double cost = 1 + 0.15 * (fabs(log2(bm / 32)) + fabs(bn - 64) / 32 + fabs(log2(w / 4)));
	cost *= (mode && !strcmp(mode, "slow")) ? 1.1 : 1;
	cost *= graphs ? 1 : 1.05;
	const char *rep = getenv("RATCHET_REP"), *arm = getenv("RATCHET_ARM");
	uint64_t st = (uint64_t)(bm * 7919 + bn * 104729 + w * 13 + (rep ? atoi(rep) : 0) * 1000003 +
				 (arm && !strcmp(arm, "cand") ? 77 : 0) + (graphs ? 5 : 0) + (mode ? (unsigned char)mode[0] : 0));
	struct rt_rand r;
	rt_rand_seed(&r, st);
	double speed = 100 / cost * (1 + 0.005 * rt_rand_normal(&r));
	if (argc > 2 && strcmp(argv[2], "--graphs")) {
		long ms = atol(argv[2]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	printf("{\"gflops\": %.6f}\n", speed);
	json_decref(t);
	return 0;
}
