/*
 * bench_scale: the sizes at which issue 17 found quadratic parts, timed.
 *   - `holes` on a profile of 50,000 rows against a CSV table of 5,000 shapes
 *     (was 418 s), and 20,000 string keys against a JSON table of 5,000;
 *   - the spec loader on a mapping of 40,000 keys (was 13 s), 77,000
 *     log_events (was 64 s), 20,000 variants, and a spec over 10 MB (did not
 *     finish in 5 minutes), each with a duplicate at the end to be found.
 * Each figure is one wall-clock run of the library call.
 */
#include "scale_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Load a generated spec; the duplicate at its end must be reported. */
static void time_spec(const char *what, enum scale_spec_kind kind, size_t n, double target)
{
	size_t len;
	int rc;
	struct rt_sb err = RT_SB_INIT;
	double el = scale_load_spec(kind, n, &len, &rc, &err);
	if (rc != RT_EUSAGE || !strstr(err.buf, "duplicate"))
		fprintf(stderr, "bench_scale: %s: the duplicate was not reported (rc %d): %.200s\n", what,
			rc, err.buf);
	printf("%s: %.3f s for %zu entries, %.1f MB (target: < %g s)\n", what, el, n,
	       (double)len / 1e6, target);
	rt_sb_release(&err);
}

static void time_holes(const char *what, const char *dir, const char *table, const char *profile,
		       const char *const *kc, size_t nkc, const char *weight, double target)
{
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	int rc;
	double el = scale_find_holes(dir, table, profile, kc, nkc, weight, &h, &rc, &err);
	if (rc)
		fprintf(stderr, "bench_scale: %s: %s\n", what, err.buf);
	printf("%s: %.3f s, %zu entries, %zu shapes seen, %zu holes (target: < %g s)\n", what, el,
	       h.entries, h.observed, h.n, target);
	research_holes_release(&h);
	rt_sb_release(&err);
}

int main(void)
{
	char dir[] = "/tmp/rt-bench-scale-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_scale: mkdtemp");
		return 3;
	}
	static const char *const mnk[] = { "M", "N", "K" };
	if (scale_holes_csv(dir, 5000, 50000) || scale_holes_json(dir, 5000, 20000)) {
		fprintf(stderr, "bench_scale: cannot write the inputs in %s\n", dir);
		return 3;
	}
	time_holes("holes_csv_50k_rows_5k_entries", dir, "table.csv", "profile.csv", mnk, 3,
		   "time_us", 5);
	time_holes("holes_json_20k_rows_5k_string_keys", dir, "table.json", "keys.csv", NULL, 0,
		   NULL, 20);
	time_spec("spec_40k_keys", SCALE_ENV, 40000, 2);
	time_spec("spec_77k_log_events", SCALE_LOG_EVENTS, 77000, 2);
	time_spec("spec_20k_variants", SCALE_VARIANTS, 20000, 2);
	time_spec("spec_over_10MB", SCALE_MIXED, 70000, 10);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);
	free(cmd);
	return rc ? 3 : 0;
}
