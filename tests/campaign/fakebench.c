/*
 * A deterministic benchmark for the campaign tests: its "gflops" depends only
 * on the tile table it is given and on the repeat index (RATCHET_REP), so a
 * campaign resumed after kill -9 must reach exactly the decisions of an
 * uninterrupted one. Each table key has a true best "tile"; the speed of a
 * configuration is the product of per-key factors, with 3% seeded noise.
 *
 * usage: fakebench TABLE.json [SLEEP_MS] [--config JSON]
 *
 * --config stands for a JSON-valued engine flag (vLLM's
 * --compilation-config): without "level": 3 the speed halves, and a
 * "sizes" list reaching 8 is 25% faster. FAKEBENCH_BOOST=1 in the
 * environment is 20% faster. Neither changes the noise.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fakebench TABLE.json [SLEEP_MS]\n");
		return 2;
	}
	json_error_t je;
	json_t *t = json_load_file(argv[1], 0, &je);
	if (!t || !json_is_object(t)) {
		fprintf(stderr, "fakebench: %s:%d: %s\n", argv[1], je.line, je.text);
		return 3;
	}
	/* True best tile per key; a missing key falls back to a slow default. */
	static const struct {
		const char *key;
		int best;
	} truth[] = { { "M_LE_64", 32 }, { "M_LE_256", 64 }, { "M_LE_1024", 128 }, { "M_GT_1024", 256 } };
	double speed = 100;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < sizeof(truth) / sizeof(truth[0]); i++) {
		json_t *e = json_object_get(t, truth[i].key);
		json_t *tile = e ? json_object_get(e, "tile") : NULL;
		double f;
		if (!tile) {
			f = 0.80;
		} else {
			int v = (int)json_integer_value(tile);
			double d = fabs(log2((double)v / truth[i].best));
			f = 1.0 - 0.08 * d;
			h = mix(h ^ (uint64_t)v ^ ((uint64_t)i << 32));
		}
		speed *= f;
	}
	const char *rep = getenv("RATCHET_REP");
	const char *arm = getenv("RATCHET_ARM");
	uint64_t r = mix(h ^ (uint64_t)(rep ? atoi(rep) : 0) * 0x9e3779b97f4a7c15ULL ^
			 (arm && !strcmp(arm, "cand") ? 77 : 0));
	double u1 = ((double)(r >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(mix(r) >> 11) + 0.5) / 9007199254740992.0;
	double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
	speed *= 1 + 0.03 * z;
	if (argc > 2) {
		long ms = atol(argv[2]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	for (int i = 3; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--config"))
			continue;
		json_t *c = json_loads(argv[i + 1], 0, NULL);
		json_t *sizes = c ? json_object_get(c, "sizes") : NULL;
		if (!c || json_integer_value(json_object_get(c, "level")) != 3)
			speed *= 0.5;
		if (json_array_size(sizes) &&
		    json_integer_value(json_array_get(sizes, json_array_size(sizes) - 1)) >= 8)
			speed *= 1.25;
		json_decref(c);
	}
	const char *boost = getenv("FAKEBENCH_BOOST");
	if (boost && !strcmp(boost, "1"))
		speed *= 1.2;
	printf("{\"gflops\": %.6f, \"table_keys\": %zu}\n", speed, json_object_size(t));
	json_decref(t);
	return 0;
}
