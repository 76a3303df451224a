/*
 * The exhaustive sweep of the CPU GEMM tile space (campaign.yaml's space:
 * MC, NC, KC, MR, NR of the M_GT_256 entry, 512 x 512 x 512): every valid
 * point of the space measured once: REPS samples after one warm-up, each
 * the best of BEST_OF timed runs (a shared host's bursts of load stay out
 * of the samples), in one process (the kernel re-reads its table per
 * point). Writes the sweep
 * file format of docs/search.md to stdout: a header line with the space,
 * then one line per point with its samples (GFLOP/s).
 *
 * It compiles cpu-gemm's kernel in (gemm.c, included, not copied), so the
 * sweep measures the code the campaign measures. Build and run:
 *   cc -O3 -march=native -I../.. sweep.c -o sweep -ljansson -lm
 *   ./sweep > sweep.jsonl
 */
#include "../cpu-gemm/gemm.c"

#include <math.h>
#include <time.h>

#define SIZE 512
#define REPS 5
#define BEST_OF 3

static const int MCs[] = { 24, 48, 96, 192 }, NCs[] = { 64, 128, 256, 512 },
		 KCs[] = { 64, 128, 256, 512 }, MRs[] = { 4, 6, 8 }, NRs[] = { 4, 8, 16 };
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The kernel's micro-kernels: anything else falls back to 4x4. */
static int supported(int mr, int nr)
{
	return mr == 4 || (mr == 6 && nr == 16) || (mr == 8 && nr >= 8);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void list(const char *name, const int *v, size_t n)
{
	printf("{\"name\":\"%s\",\"values\":[", name);
	for (size_t i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", v[i]);
	printf("]}");
}

int main(void)
{
	const char *table = "/tmp/ratchet-search-cpu-gemm-tiles.json";
	setenv("CPU_GEMM_TABLE", table, 1);
	float *A = malloc(sizeof(float) * SIZE * SIZE), *B = malloc(sizeof(float) * SIZE * SIZE),
	      *C = malloc(sizeof(float) * SIZE * SIZE);
	for (int i = 0; i < SIZE * SIZE; i++) {
		A[i] = (float)((i * 7) % 13) / 13.f;
		B[i] = (float)((i * 5) % 11) / 11.f;
	}
	int M = SIZE, N = SIZE, K = SIZE;
	void *args[] = { &C, &A, &B, &M, &N, &K };
	struct dev_host_launch l = { .grid = { 1, 1, 1 }, .block = { 1, 1, 1 } };
	printf("{\"sweep\":1,\"name\":\"cpu-gemm M_GT_256 (512x512x512)\",\"metric\":\"gflops\",\"goal\":\"max\","
	       "\"parameters\":[");
	list("MC", MCs, N_OF(MCs)), printf(","), list("NC", NCs, N_OF(NCs)), printf(",");
	list("KC", KCs, N_OF(KCs)), printf(","), list("MR", MRs, N_OF(MRs)), printf(",");
	list("NR", NRs, N_OF(NRs));
	printf("],\"restrictions\":[\"MR == 4 || (MR == 6 && NR == 16) || (MR == 8 && NR >= 8)\"]}\n");
	for (size_t a = 0; a < N_OF(MCs); a++)
		for (size_t b = 0; b < N_OF(NCs); b++)
			for (size_t c = 0; c < N_OF(KCs); c++)
				for (size_t d = 0; d < N_OF(MRs); d++)
					for (size_t e = 0; e < N_OF(NRs); e++) {
						if (!supported(MRs[d], NRs[e]))
							continue;
						FILE *f = fopen(table, "w");
						fprintf(f, "{\"M_GT_256\": {\"MC\": %d, \"NC\": %d, \"KC\": %d, \"MR\": %d, "
							"\"NR\": %d}}\n", MCs[a], NCs[b], KCs[c], MRs[d], NRs[e]);
						fclose(f);
						ratchet_host_init("");
						sgemm(&l, args);
						printf("{\"point\":{\"MC\":%d,\"NC\":%d,\"KC\":%d,\"MR\":%d,\"NR\":%d},"
						       "\"samples\":[", MCs[a], NCs[b], KCs[c], MRs[d], NRs[e]);
						for (int r = 0; r < REPS; r++) {
							double dt = INFINITY;
							for (int k = 0; k < BEST_OF; k++) {
								double t0 = now();
								sgemm(&l, args);
								dt = fmin(dt, now() - t0);
							}
							printf("%s%.4f", r ? "," : "", 2.0 * SIZE * SIZE * SIZE / dt / 1e9);
						}
						printf("]}\n");
						fflush(stdout);
					}
	free(A);
	free(B);
	free(C);
	return 0;
}
