/*
 * Fuzz harness: the profile importers (agents/research: prof_chrome.c,
 * prof_csv.c, prof_nsys.c). The input's first line names the reader
 * (chrome, rocprof, unitrace or nsys); the rest is the file it reads (an
 * nsys export is a SQLite file, read with a 1 s time limit).
 *
 * The promises: a read answers or says why; after any read, even a failed
 * one, every kernel's time is finite and not negative, the total is the
 * sum of the kernels' times, the launches the sum of their calls, and the
 * op shares lie in [0, 1] and sum to at most 1 (negative or infinite
 * durations once gave shares of 200% and -100%, and a Calls of 1e300 a
 * float-to-long overflow).
 */
#include "tests/fuzz/fuzz.h"

#include <math.h>
#include <string.h>

#include "agents/research/profile.h"

static void check(const struct research_profile *p)
{
	double sum = 0;
	long calls = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct research_kernel *k = &p->k[i];
		FUZZ_CHECK(isfinite(k->us) && k->us >= 0, "kernel %s: %g us", k->name, k->us);
		FUZZ_CHECK(k->calls >= 0, "kernel %s: %ld calls", k->name, k->calls);
		sum += k->us;
		calls += k->calls;
	}
	FUZZ_CHECK(isfinite(p->total_us) && p->total_us >= 0, "total %g us", p->total_us);
	FUZZ_CHECK(fabs(sum - p->total_us) <= 1e-9 * (p->total_us > 1 ? p->total_us : 1),
		   "kernels sum to %g us, the total is %g", sum, p->total_us);
	FUZZ_CHECK(calls == p->launches, "kernels sum to %ld calls, launches %ld", calls, p->launches);
	FUZZ_CHECK(isfinite(p->ungraphed_us) && p->ungraphed_us >= 0, "ungraphed %g us", p->ungraphed_us);
	struct research_op_sum ops[RESEARCH_N_OPS];
	research_profile_ops(p, ops);
	double shares = 0;
	for (int i = 0; i < RESEARCH_N_OPS; i++) {
		FUZZ_CHECK(ops[i].share >= 0 && ops[i].share <= 1 + 1e-9, "op %s: share %g",
			   research_op_names[i], ops[i].share);
		shares += ops[i].share;
	}
	FUZZ_CHECK(shares <= 1 + 1e-6, "shares sum to %g", shares);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct research_opmap *map;
	if (!map) {
		setenv("RATCHET_PROFILE_TIME_LIMIT_MS", "1000", 1);
		FUZZ_CHECK(research_opmap_new(NULL, &map, NULL) == 0, "the default map does not compile");
	}
	struct fuzz_part part[2];
	fuzz_split(data, size, "\n", part, 2);
	char *name = fuzz_str(part[0]);
	const struct research_format *f = NULL;
	for (const struct research_format *r = research_formats; r->name && !f; r++)
		if (!strcmp(r->name, name))
			f = r;
	if (f) {
		char *path = fuzz_write("profile", part[1].p, part[1].n);
		struct research_profile p;
		research_profile_init(&p, map);
		struct rt_sb err = RT_SB_INIT;
		int rc = f->read(path, &p, &err);
		FUZZ_CHECK(rc == 0 || err.len, "%s: returned %d without a message", f->name, rc);
		check(&p);
		research_profile_sort(&p);
		check(&p);
		research_profile_release(&p);
		rt_sb_release(&err);
		free(path);
	}
	free(name);
	return 0;
}
