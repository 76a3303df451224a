/*
 * Fuzz harness: the extractors that read a command benchmark's output
 * (runner/bench/bench_cmd_extract.c). The input's first line picks the
 * extractor and its parameter, the rest is the program's output:
 *
 *     table [PP,TG,B]     llama-batched-bench's markdown table (row optional)
 *     jsonl [PP,TG,B]     llama-batched-bench's JSONL
 *     bench               llama-bench -o json
 *     vllm                vllm bench serve --save-result
 *     pointer /a/0/b      an explicit metric by JSON pointer
 *     regex N             an explicit metric by the Nth regex of a fixed list
 *                         (the regex is the user's, not the output's: the
 *                         list holds the shapes specs use)
 *
 * The promises: every extractor answers or says why; a value it returns is
 * a finite number; a metric name appears once.
 */
#include "tests/fuzz/fuzz.h"

#include <math.h>
#include <string.h>

#include "runner/bench/bench_cmd.h"

static const char *const regexes[] = {
	"tok/s: ([0-9.]+)", "^([-+0-9.eE]+)$", "(x)?y([0-9]*)", "a|(b)", "([^\\n]*)",
	"time\\s*=\\s*(\\S+)\\s*ms", "(?:p99|p50):\\s*([0-9.,]+)", "",
};

static void check_metrics(const struct run_bcmd_metrics *m)
{
	for (size_t i = 0; i < m->n; i++) {
		FUZZ_CHECK(isfinite(m->v[i].value), "%s = %g", m->v[i].name, m->v[i].value);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(m->v[i].name, m->v[j].name), "%s twice", m->v[i].name);
	}
}

/* An explicit metric (pointer or regex) on text. */
static void explicit_metric(enum spec_extract_kind kind, char *expr, const char *text, size_t len)
{
	struct spec_metric m = { .name = "m", .kind = kind, .expr = expr };
	struct rt_sb err = RT_SB_INIT;
	double v = NAN;
	int rc = run_bcmd_extract_metric(&m, text, len, "stdout", &v, &err);
	FUZZ_CHECK(rc ? err.len > 0 : isfinite(v), "returned %d, value %g", rc, v);
	rt_sb_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[2];
	fuzz_split(data, size, "\n", part, 2);
	char *head = fuzz_str(part[0]);
	const char *text = part[1].p ? part[1].p : "";
	size_t len = part[1].n;
	char *arg = strchr(head, ' ');
	if (arg)
		*arg++ = 0;
	struct run_bcmd_metrics m = { 0 };
	struct rt_sb err = RT_SB_INIT;
	int rc = 0;
	if (!strcmp(head, "table")) {
		rc = run_bcmd_llama_batched_table(text, len, arg, &m, &err);
	} else if (!strcmp(head, "jsonl")) {
		rc = run_bcmd_llama_batched_jsonl(text, len, arg, &m, &err);
	} else if (!strcmp(head, "bench")) {
		rc = run_bcmd_llama_bench_json(text, len, &m, &err);
	} else if (!strcmp(head, "vllm")) {
		rc = run_bcmd_vllm_bench_serve(text, len, &m, &err);
	} else if (!strcmp(head, "pointer")) {
		explicit_metric(SPEC_EXTRACT_POINTER, arg ? arg : "", text, len);
	} else if (!strcmp(head, "regex")) {
		size_t i = arg ? strtoul(arg, NULL, 10) % RT_ARRAY_SIZE(regexes) : 0;
		explicit_metric(SPEC_EXTRACT_REGEX, (char *)regexes[i], text, len);
	} else {
		double v;
		if (run_bcmd_parse_number(text, len, &v) == 0)
			FUZZ_CHECK(isfinite(v), "parse_number gave %g", v);
	}
	FUZZ_CHECK(rc == 0 || err.len > 0, "returned %d without a message", rc);
	check_metrics(&m);
	run_bcmd_metrics_release(&m);
	rt_sb_release(&err);
	free(head);
	return 0;
}
