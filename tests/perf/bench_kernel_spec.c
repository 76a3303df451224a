/*
 * bench_kernel_spec: runs every kernel benchmark of a campaign spec once
 * (default experiments/cpu-gemm/campaign.yaml) through run_bkernel_run and
 * prints its figures as "name: value unit" lines, for `make bench` and for
 * trying table entries by hand (CPU_GEMM_TABLE=other.json).
 */
#include "runner/bench/bench_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *src = getenv("RATCHET_SRC");
	char *path = argc > 1 ? xstrdup(argv[1])
			      : xasprintf("%s/experiments/cpu-gemm/campaign.yaml", src ? src : ".");
	struct rt_sb err = RT_SB_INIT;
	struct spec *s = NULL;
	if (spec_load(path, &s, &err)) {
		fprintf(stderr, "%s\n", err.buf);
		return 2;
	}
	struct spec_vars vars = { .workdir = s->workdir };
	int bad = 0;
	for (size_t i = 0; i < s->n_benches; i++) {
		const struct spec_bench *b = &s->benches[i];
		if (b->kind != SPEC_BENCH_KERNEL)
			continue;
		struct run_bkernel_result r;
		rt_sb_reset(&err);
		if (run_bkernel_run(&b->kernel, &vars, NULL, &r, &err)) {
			printf("%s: failed: %s\n", b->name, err.buf);
			bad = 1;
			continue;
		}
		printf("%s.gflops: %.2f GFLOP/s (target: higher is better)\n", b->name, r.gflops);
		printf("%s.time: %.3f ms (rsd %.2f%%, %d samples, rel L2 %.2g)\n", b->name, r.time * 1e3,
		       100 * r.rsd, r.samples, r.rel_l2);
		run_bkernel_result_release(&r);
	}
	spec_free(s);
	free(path);
	rt_sb_release(&err);
	return bad;
}
