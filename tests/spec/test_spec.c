/*
 * Unit tests of the spec loader (runner/spec*.c): every bad spec under
 * tests/spec/bad gives its expected first error, good specs load with the
 * right values and round-trip through spec_dump, placeholders expand, metric
 * lists and directions are right, errors are capped at 20.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runner/spec/spec.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *src_path(const char *rel)
{
	const char *src = getenv("RATCHET_SRC");
	return xasprintf("%s/%s", src && *src ? src : RATCHET_SRC_DEFAULT, rel);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static struct spec *load_ok(const char *text)
{
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	int rc = spec_load_text("t.yaml", text, strlen(text), &s, &err);
	if (rc)
		fprintf(stderr, "unexpected errors:\n%s", err.buf);
	assert_int_equal(rc, 0);
	assert_non_null(s);
	rt_sb_release(&err);
	return s;
}

/* First error line of a spec text. */
static char *first_error(const char *name, const char *text)
{
	struct spec *s = (struct spec *)1;
	struct rt_sb err = RT_SB_INIT;
	int rc = spec_load_text(name, text, strlen(text), &s, &err);
	assert_int_equal(rc, RT_EUSAGE);
	assert_null(s);
	char *nl = strchr(err.buf, '\n');
	assert_non_null(nl); /* every message ends its line */
	char *first = xstrndup(err.buf, (size_t)(nl - err.buf));
	rt_sb_release(&err);
	return first;
}

static void test_bad_specs(void **state)
{
	char *dir = src_path("tests/spec/bad");
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, by_name);
	assert_true(n > 0);
	int cases = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		const char *f = ents[i]->d_name;
		if (ends_with(f, ".yaml")) {
			char *yp = xasprintf("%s/%s", dir, f);
			char *ep = xasprintf("%s/%.*s.expect", dir, (int)(strlen(f) - 5), f);
			char *text, *want;
			size_t len;
			assert_int_equal(rt_read_file(yp, &text, &len, NULL), 0);
			assert_int_equal(rt_read_file(ep, &want, &len, NULL), 0);
			want[strcspn(want, "\n")] = '\0';
			char *got = first_error(f, text);
			if (strcmp(got, want)) {
				fprintf(stderr, "%s:\n  want: %s\n  got:  %s\n", f, want, got);
				failed++;
			}
			cases++;
			free(got);
			free(text);
			free(want);
			free(yp);
			free(ep);
		}
		free(ents[i]);
	}
	free(ents);
	free(dir);
	fprintf(stderr, "bad specs: %d cases, %d failed\n", cases, failed);
	assert_true(cases >= 35);
	assert_int_equal(failed, 0);
}

/* Every good spec: dump, load the dump, dump again: the same text. */
static void test_good_roundtrip(void **state)
{
	char *dir = src_path("tests/spec/good");
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, by_name);
	assert_true(n > 0);
	int cases = 0;
	for (int i = 0; i < n; i++) {
		const char *f = ents[i]->d_name;
		if (ends_with(f, ".yaml")) {
			char *yp = xasprintf("%s/%s", dir, f);
			struct spec *s = NULL, *s2 = NULL;
			struct rt_sb err = RT_SB_INIT, d1 = RT_SB_INIT, d2 = RT_SB_INIT;
			int rc = spec_load(yp, &s, &err);
			if (rc)
				fprintf(stderr, "%s", err.buf);
			assert_int_equal(rc, 0);
			spec_dump(s, &d1);
			rc = spec_load_text("dump.yaml", d1.buf, d1.len, &s2, &err);
			if (rc)
				fprintf(stderr, "%s\n---\n%s", err.buf, d1.buf);
			assert_int_equal(rc, 0);
			spec_dump(s2, &d2);
			assert_string_equal(d1.buf, d2.buf);
			/* the JSON form has the same keys */
			json_t *j = spec_to_json(s);
			assert_non_null(json_object_get(j, "benchmarks"));
			assert_string_equal(json_string_value(json_object_get(j, "name")), s->name);
			json_decref(j);
			spec_free(s);
			spec_free(s2);
			rt_sb_release(&err);
			rt_sb_release(&d1);
			rt_sb_release(&d2);
			free(yp);
			cases++;
		}
		free(ents[i]);
	}
	free(ents);
	free(dir);
	assert_true(cases >= 2);
}

static void test_block_values(void **state)
{
	char *yp = src_path("tests/spec/good/block.yaml");
	char *wd = src_path("tests/spec");
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(spec_load(yp, &s, &err), 0);
	char *real_wd = realpath(wd, NULL);
	assert_string_equal(s->workdir, real_wd);
	assert_int_equal(s->seed, 42);
	assert_int_equal(s->max_iterations, 12);
	assert_int_equal(s->strategy, AGENT_STRAT_GREEDY);
	assert_string_equal(agent_strategy_name(s->strategy), "greedy");
	/* engine */
	assert_true(s->engine.present);
	assert_int_equal(s->engine.command.n, 7);
	assert_null(s->engine.command.v[7]);
	assert_string_equal(s->engine.command.v[2], "{port}");
	assert_string_equal(s->engine.command.v[6], "{\"cudagraph_capture_sizes\":[1,2,4]}");
	assert_int_equal(s->engine.env.n, 3);
	assert_string_equal(s->engine.env.v[1].name, "SOME_FLAG");
	assert_null(s->engine.env.v[1].value);
	assert_true(s->engine.ready_timeout_s == 900);
	assert_true(s->engine.stop_grace_s == 2.5);
	assert_int_equal(s->engine.log_cap_bytes, 16u << 20);
	assert_true(s->engine.nonce_check);
	assert_string_equal(s->engine.model, "my-model");
	/* benchmarks */
	assert_int_equal(s->n_benches, 6);
	const struct spec_bench *b = spec_bench_find(s, "prefill");
	assert_non_null(b);
	assert_int_equal(b->kind, SPEC_BENCH_LOAD);
	assert_int_equal(b->load.pattern, SPEC_LOAD_PREFILL);
	assert_int_equal(b->load.concurrency, 64);
	assert_int_equal(b->load.output_tokens, 1);
	assert_true(b->load.request_timeout_s == 120);
	assert_true(b->load.ignore_eos);
	b = spec_bench_find(s, "capacity");
	assert_int_equal(b->load.api, SPEC_API_CHAT);
	assert_int_equal(b->load.pattern, SPEC_LOAD_GAMMA);
	assert_true(b->load.duration_s == 300);
	assert_int_equal(b->load.n_rates, 2);
	assert_true(b->load.rates[1] == 3.5);
	assert_int_equal(b->load.n_seeds, 3);
	assert_int_equal(b->load.n_slo, 2);
	assert_string_equal(b->load.slo[1].metric, "tpot_p99");
	assert_true(fabs(b->load.slo[1].limit - 0.05) < 1e-12);
	char *ds = xasprintf("%s/data/prompts.jsonl", real_wd);
	assert_string_equal(b->load.dataset, ds);
	free(ds);
	b = spec_bench_find(s, "steady");
	assert_int_equal(b->load.pattern, SPEC_LOAD_POISSON);
	assert_int_equal(b->load.prompt_tokens, 128);
	assert_int_equal(b->load.n_seeds, 1);
	assert_int_equal(b->load.seeds[0], 1);
	b = spec_bench_find(s, "gemm");
	assert_int_equal(b->kind, SPEC_BENCH_COMMAND);
	assert_int_equal(b->cmd.n_metrics, 3);
	assert_int_equal(b->cmd.metrics[0].kind, SPEC_EXTRACT_POINTER);
	assert_int_equal(b->cmd.metrics[1].kind, SPEC_EXTRACT_REGEX);
	assert_string_equal(b->cmd.metrics[1].expr, "tok/s: ([0-9.]+)");
	assert_int_equal(b->cmd.metrics[2].better, SPEC_BETTER_LOWER);
	assert_true(b->cmd.timeout_s == 90);
	b = spec_bench_find(s, "batched");
	assert_int_equal(b->cmd.format, SPEC_FMT_LLAMA_BATCHED_BENCH);
	assert_string_equal(b->cmd.format_row, "128,128,8");
	b = spec_bench_find(s, "saxpy");
	assert_int_equal(b->kind, SPEC_BENCH_KERNEL);
	assert_int_equal(b->kernel.n_args, 5);
	assert_int_equal(b->kernel.args[2].init, SPEC_INIT_VALUE);
	assert_true(b->kernel.args[2].value == 0.5);
	assert_int_equal(b->kernel.args[3].kind, SPEC_KARG_SCALAR);
	assert_true(b->kernel.args[1].output);
	assert_int_equal(b->kernel.block[0], 128);
	assert_int_equal(b->kernel.block[1], 1);
	assert_int_equal(b->kernel.items[0], 1048576);
	assert_true(fabs(b->kernel.target_rsd - 0.005) < 1e-12);
	assert_true(b->kernel.max_time_s == 2);
	assert_true(b->kernel.max_rel_l2 == 1e-6);
	assert_non_null(b->kernel.ref_name);
	assert_null(spec_bench_find(s, "nope"));
	/* objective, constraints, repeats, gate */
	assert_string_equal(s->objective.bench, "capacity");
	assert_string_equal(s->objective.metric, "max_rate");
	assert_true(fabs(s->objective.min_gain - 0.02) < 1e-12);
	assert_int_equal(s->n_constraints, 5);
	assert_int_equal(s->constraints[0].op, SPEC_OP_LE);
	assert_true(s->constraints[0].value == 4);
	assert_int_equal(s->constraints[2].op, SPEC_OP_GT);
	assert_true(s->constraints[2].value == 3);
	assert_true(fabs(s->constraints[3].value - 0.01) < 1e-12);
	assert_true(fabs(s->constraints[4].value - 250e-6) < 1e-15);
	assert_string_equal(s->constraints[0].text, "prefill.ttft_p95 <= 4s");
	assert_int_equal(s->repeats.max, 8);
	assert_false(s->repeats.interleave);
	assert_true(s->gate.present);
	assert_true(fabs(s->gate.min_accuracy - 0.965) < 1e-12);
	assert_int_equal(s->gate.format, SPEC_GSM8K_CHAT);
	assert_int_equal(s->gate.api, SPEC_API_CHAT); /* follows the chat format */
	assert_int_equal(s->gate.limit, 200);
	/* log events, variants */
	assert_int_equal(s->n_log_events, 2);
	assert_string_equal(s->log_events[0].regex, "Compiling kernel for shape \\d+");
	assert_int_equal(s->n_variants, 7);
	const struct var_def *v = &s->variants[0];
	assert_int_equal(v->kind, VAR_KIND_TABLE);
	assert_int_equal(v->table.op, VAR_TBL_SET);
	assert_int_equal(v->table.format, VAR_TBL_JSON);
	assert_string_equal(v->table.key, "D_GEQ_512.Q_GEQ_256");
	assert_int_equal(json_integer_value(json_object_get(v->table.value, "BLOCK_M")), 128);
	assert_true(json_is_real(json_object_get(v->table.value, "ratio")));
	assert_true(json_is_string(json_object_get(v->table.value, "note")));
	assert_true(json_is_true(json_object_get(v->table.value, "on")));
	assert_string_equal(v->description, "bigger tiles for long heads");
	assert_int_equal(s->variants[1].table.op, VAR_TBL_REPLACE);
	assert_int_equal(s->variants[1].table.format, VAR_TBL_CSV);
	assert_int_equal(s->variants[1].table.key_columns.n, 3);
	assert_int_equal(s->variants[2].table.op, VAR_TBL_DELETE);
	assert_null(s->variants[2].table.value);
	assert_int_equal(s->variants[3].kind, VAR_KIND_FLAG);
	assert_string_equal(s->variants[3].flag.v[1],
			    "{\"cudagraph_capture_sizes\":[1,2,4,8,16,32,64,128,256]}");
	assert_int_equal(s->variants[4].kind, VAR_KIND_ENV);
	assert_null(s->variants[4].env.v[1].value);
	assert_int_equal(s->variants[5].kind, VAR_KIND_PATCH);
	assert_string_equal(s->variants[5].patch.dir, "/src/aiter");
	assert_int_equal(s->variants[5].build.n, 4);
	assert_int_equal(s->variants[6].kind, VAR_KIND_FILE);
	assert_string_equal(var_kind_name(s->variants[6].kind), "file");
	char *tgt = xasprintf("%s/lib/libkern.so", real_wd);
	assert_string_equal(s->variants[6].file.target, tgt);
	free(tgt);
	assert_int_equal(strlen(s->sha256), 64);
	spec_free(s);
	free(real_wd);
	free(wd);
	free(yp);
	rt_sb_release(&err);
}

static const char *const minimal =
	"name: t\n"
	"benchmarks:\n"
	"  - name: b\n"
	"    command: [./x]\n"
	"    metrics: {v: {pointer: /v, better: higher}}\n"
	"objective: {metric: b.v}\n";

/* A dataset's records carry their own lengths: without output_tokens the
 * spec leaves it 0 (each record's own), and the normalized dump reloads. */
static void test_dataset_output_tokens(void **state)
{
	(void)state;
	const char *base = "name: d\nbenchmarks:\n  - name: l\n    load: {endpoint: http://127.0.0.1:9, "
			   "dataset: p.jsonl, requests: 4%s}\nobjective: {metric: l.request_throughput}\n"
			   "variants: [{name: v, env: {X: '1'}}]\n";
	char text[512];
	snprintf(text, sizeof(text), base, "");
	struct spec *s = load_ok(text);
	assert_int_equal(s->benches[0].load.output_tokens, 0);
	struct rt_sb d = RT_SB_INIT;
	spec_dump(s, &d);
	spec_free(load_ok(d.buf));
	rt_sb_release(&d);
	spec_free(s);
	snprintf(text, sizeof(text), base, ", output_tokens: 64");
	s = load_ok(text);
	assert_int_equal(s->benches[0].load.output_tokens, 64);
	spec_free(s);
}

static void test_defaults(void **state)
{
	struct spec *s = load_ok(minimal);
	assert_false(s->engine.present);
	assert_false(s->gate.present);
	assert_int_equal(s->seed, 1);
	assert_int_equal(s->repeats.min, 3);
	assert_int_equal(s->repeats.max, 10);
	assert_true(s->repeats.confidence == 0.95);
	assert_true(s->repeats.interleave);
	assert_int_equal(s->strategy, AGENT_STRAT_LIST);
	assert_int_equal(s->objective.goal, SPEC_GOAL_MAX);
	assert_true(s->objective.min_gain == 0.01);
	assert_true(s->benches[0].cmd.timeout_s == 600);
	assert_int_equal(s->n_variants, 0);
	assert_non_null(s->workdir);
	assert_true(s->workdir[0] == '/');
	spec_free(s);

	/* engine defaults, and goal follows a lower-is-better metric */
	s = load_ok("name: t\n"
		    "engine: {command: [./srv, '{port}', '{nonce}']}\n"
		    "benchmarks: [{name: b, load: {concurrency: 2, requests: 4}}]\n"
		    "objective: {metric: b.ttft_p95}\n");
	assert_string_equal(s->engine.host, "127.0.0.1");
	assert_string_equal(s->engine.ready_http, "/health");
	assert_string_equal(s->engine.identity_http, "/v1/models");
	assert_true(s->engine.ready_timeout_s == 300);
	assert_true(s->engine.stop_grace_s == 10);
	assert_int_equal(s->engine.log_cap_bytes, 64u << 20);
	assert_true(s->engine.nonce_check); /* the command passes {nonce} */
	assert_int_equal(s->objective.goal, SPEC_GOAL_MIN);
	assert_int_equal(s->benches[0].load.pattern, SPEC_LOAD_CLOSED);
	assert_int_equal(s->benches[0].load.output_tokens, 128);
	spec_free(s);

	/* identity.http: null disables the model check, and survives a dump */
	s = load_ok("name: t\n"
		    "engine: {command: [./srv], identity: {http: null}}\n"
		    "benchmarks: [{name: b, load: {concurrency: 2, requests: 4}}]\n"
		    "objective: {metric: b.request_throughput}\n");
	assert_null(s->engine.identity_http);
	assert_false(s->engine.nonce_check);
	struct rt_sb d = RT_SB_INIT;
	spec_dump(s, &d);
	assert_non_null(strstr(d.buf, "http: null"));
	spec_free(s);
	s = load_ok(d.buf);
	assert_null(s->engine.identity_http);
	spec_free(s);
	rt_sb_release(&d);
}

static void test_units(void **state)
{
	static const struct {
		const char *text;
		double want;
	} durs[] = {
		{ "300s", 300 }, { "4s", 4 }, { "250ms", 0.25 }, { "50us", 50e-6 }, { "5m", 300 },
		{ "1h", 3600 }, { "7", 7 }, { "1.5", 1.5 }, { "10ns", 10e-9 },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(durs); i++) {
		char *t = xasprintf("name: t\nbenchmarks:\n  - name: b\n    command: [./x]\n    timeout: %s\n"
			      "    metrics: {v: {pointer: /v, better: higher}}\nobjective: {metric: b.v}\n",
			      durs[i].text);
		struct spec *s = load_ok(t);
		assert_true(fabs(s->benches[0].cmd.timeout_s - durs[i].want) < 1e-12);
		spec_free(s);
		free(t);
	}
	static const struct {
		const char *text;
		double want;
	} pcts[] = { { "2%", 0.02 }, { "0.5%", 0.005 }, { "0.03", 0.03 }, { "150%", 1.5 }, { "1", 1 } };
	for (size_t i = 0; i < RT_ARRAY_SIZE(pcts); i++) {
		char *t = xasprintf("name: t\nbenchmarks: [{name: b, command: [./x], metrics: {v: {pointer: /v, better: higher}}}]\n"
				    "objective: {metric: b.v, min_gain: '%s'}\n",
				    pcts[i].text);
		struct spec *s = load_ok(t);
		assert_true(fabs(s->objective.min_gain - pcts[i].want) < 1e-12);
		/* above 100% dumps as a percentage and reads back the same */
		struct rt_sb d = RT_SB_INIT;
		spec_dump(s, &d);
		struct spec *s2 = load_ok(d.buf);
		assert_true(fabs(s2->objective.min_gain - pcts[i].want) < 1e-12);
		spec_free(s2);
		spec_free(s);
		rt_sb_release(&d);
		free(t);
	}
	static const char *const bad[] = { "abc", "5 parsecs", "-3s", "0x10", "inf", "nan" };
	for (size_t i = 0; i < RT_ARRAY_SIZE(bad); i++) {
		char *t = xasprintf("name: t\nbenchmarks:\n  - name: b\n    command: [./x]\n    timeout: '%s'\n"
				    "    metrics: {v: {pointer: /v, better: higher}}\nobjective: {metric: b.v}\n",
				    bad[i]);
		char *e = first_error("t.yaml", t);
		assert_non_null(strstr(e, "t.yaml:5:14: benchmarks[0].timeout: "));
		free(e);
		free(t);
	}
}

static void test_expand(void **state)
{
	struct spec_vars vars = { .port = 8123, .workdir = "/w", .nonce = "abc", .iteration = 7 };
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "--port={port}", "--port=8123" },
		{ "{workdir}/tiles-{iteration}.json", "/w/tiles-7.json" },
		{ "{nonce}{nonce}", "abcabc" },
		{ "{\"cudagraph_capture_sizes\":[1,2]}", "{\"cudagraph_capture_sizes\":[1,2]}" },
		{ "{unknown} {port", "{unknown} {port" },
		{ "", "" },
		{ "{}", "{}" },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		char *r = spec_expand(cases[i].in, &vars);
		assert_string_equal(r, cases[i].out);
		free(r);
	}
}

static void test_placeholders(void **state)
{
	/* JSON in a flag is not a placeholder; {prot} is, and {a b} is not */
	struct spec *s = load_ok("name: t\n"
				 "engine: {command: [./srv, --cfg, '{\"a\":{\"b\":[1,2]}}', '{port}']}\n"
				 "benchmarks: [{name: b, load: {concurrency: 2, requests: 4}}]\n"
				 "objective: {metric: b.goodput}\n"
				 "variants:\n"
				 "  - {name: v, flag: [--compilation-config, '{\"cudagraph_capture_sizes\":[1,2]}']}\n"
				 "  - {name: w, flag: ['--x={ not a placeholder }']}\n");
	spec_free(s);
	char *e = first_error("p.yaml", "name: t\n"
					"engine: {command: [./srv], env: {A: '{iteraton}'}}\n"
					"benchmarks: [{name: b, load: {concurrency: 2, requests: 4}}]\n"
					"objective: {metric: b.goodput}\n");
	assert_string_equal(e, "p.yaml:2:37: engine.env.A: unknown placeholder '{iteraton}' (did you mean '{iteration}'?)");
	free(e);
	e = first_error("p.yaml", "name: t\n"
				  "benchmarks: [{name: b, command: [./x, '{zzz}'], metrics: {v: {pointer: /v, better: higher}}}]\n"
				  "objective: {metric: b.v}\n");
	assert_string_equal(e, "p.yaml:2:39: benchmarks[0].command[1]: unknown placeholder '{zzz}' (known: {port} {workdir} {nonce} {iteration})");
	free(e);
}

static void test_metrics(void **state)
{
	struct spec *s = load_ok("name: t\n"
				 "engine: {command: [./srv]}\n"
				 "benchmarks:\n"
				 "  - {name: l, load: {concurrency: 2, requests: 4}}\n"
				 "  - {name: cap, load: {rates: [1, 2], duration: 10s, slo: {ttft_p95: 1s}}}\n"
				 "  - {name: k, kernel: {backend: cuda, module: k.ptx, name: f, launch: {grid: 4}}}\n"
				 "  - {name: bb, command: [x], format: llama-batched-bench, metrics: {extra: {regex: 'x=(\\d+)', better: lower}}}\n"
				 "  - {name: lb, command: [x], format: llama-bench}\n"
				 "  - {name: vs, command: [x], format: vllm-bench-serve, format_file: r.json}\n"
				 "objective: {metric: cap.max_rate}\n");
	const char **names;
	size_t n = spec_bench_metrics(spec_bench_find(s, "l"), &names);
	assert_int_equal(n, 36);
	assert_string_equal(names[0], "request_throughput");
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(names[i], "max_rate");
	n = spec_bench_metrics(spec_bench_find(s, "cap"), &names);
	assert_int_equal(n, 37);
	assert_string_equal(names[36], "max_rate");
	n = spec_bench_metrics(spec_bench_find(s, "k"), &names);
	assert_int_equal(n, 8);
	assert_string_equal(names[0], "time");
	assert_int_equal(spec_bench_find(s, "k")->kernel.block[0], 256); /* GPU default */
	n = spec_bench_metrics(spec_bench_find(s, "bb"), &names);
	assert_int_equal(n, 7);
	assert_string_equal(names[6], "extra");
	n = spec_bench_metrics(spec_bench_find(s, "lb"), &names);
	assert_int_equal(n, 4);
	n = spec_bench_metrics(spec_bench_find(s, "vs"), &names);
	assert_int_equal(n, 57); /* SPEC_VLLM_RUN_KEYS, and 8 metrics x 6 statistics */

	static const struct {
		const char *bench, *metric;
		enum spec_better want;
	} dirs[] = {
		{ "l", "ttft_p95", SPEC_BETTER_LOWER },   { "l", "tpot_mean", SPEC_BETTER_LOWER },
		{ "l", "itl_p99", SPEC_BETTER_LOWER },    { "l", "e2el_median", SPEC_BETTER_LOWER },
		{ "l", "send_lag_p99", SPEC_BETTER_LOWER }, { "l", "failed", SPEC_BETTER_LOWER },
		{ "l", "request_throughput", SPEC_BETTER_HIGHER }, { "l", "goodput", SPEC_BETTER_HIGHER },
		{ "cap", "max_rate", SPEC_BETTER_HIGHER }, { "k", "time", SPEC_BETTER_LOWER },
		{ "k", "time_min", SPEC_BETTER_LOWER },   { "k", "rsd", SPEC_BETTER_LOWER },
		{ "k", "gflops", SPEC_BETTER_HIGHER },    { "bb", "t_pp", SPEC_BETTER_LOWER },
		{ "bb", "t", SPEC_BETTER_LOWER },         { "bb", "s_tg", SPEC_BETTER_HIGHER },
		{ "bb", "extra", SPEC_BETTER_LOWER },     { "lb", "pp_tps", SPEC_BETTER_HIGHER },
		{ "log", "recompiles", SPEC_BETTER_LOWER }, { "vs", "ttft_std", SPEC_BETTER_LOWER },
		{ "vs", "duration", SPEC_BETTER_LOWER },  { "vs", "completed", SPEC_BETTER_HIGHER },
		{ "vs", "goodput", SPEC_BETTER_HIGHER },  { "telemetry", "sm_clock_mhz", SPEC_BETTER_HIGHER },
		{ "telemetry", "temp_c", SPEC_BETTER_LOWER }, { "engine", "ready_s", SPEC_BETTER_LOWER },
		/* no guess from a name: a metric the spec does not have has no direction */
		{ "x", "latency_ms", SPEC_BETTER_AUTO },
	};
	for (size_t i = 0; i < RT_ARRAY_SIZE(dirs); i++) {
		if (spec_metric_better(s, dirs[i].bench, dirs[i].metric) != dirs[i].want)
			fail_msg("%s.%s", dirs[i].bench, dirs[i].metric);
	}
	spec_free(s);
}

static void test_error_cap(void **state)
{
	struct rt_sb t = RT_SB_INIT;
	rt_sb_adds(&t, minimal);
	for (int i = 0; i < 30; i++)
		rt_sb_addf(&t, "bogus%d: 1\n", i);
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(spec_load_text("cap.yaml", t.buf, t.len, &s, &err), RT_EUSAGE);
	size_t lines = 0;
	for (const char *p = err.buf; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 21); /* 20 errors, then how many more */
	assert_non_null(strstr(err.buf, "cap.yaml:7:1: unknown key 'bogus0'\n"));
	assert_non_null(strstr(err.buf, "\ncap.yaml: 10 more errors not shown\n"));
	rt_sb_release(&err);
	rt_sb_release(&t);

	/* several different errors are all reported, in one pass */
	const char *many = "name: t\n"
			   "benchmarks:\n"
			   "  - name: b\n"
			   "    command: [./x]\n"
			   "    metrics: {v: {pointer: /v, better: higher}}\n"
			   "    timeot: 3s\n"
			   "objective: {metric: b.w}\n"
			   "strategy: gredy\n";
	assert_int_equal(spec_load_text("m.yaml", many, strlen(many), &s, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "m.yaml:6:5: benchmarks[0]: unknown key 'timeot' (did you mean 'timeout'?)\n"));
	assert_non_null(strstr(err.buf, "m.yaml:8:11: strategy: unknown value 'gredy' (did you mean 'greedy'?)\n"));
	assert_non_null(strstr(err.buf, "m.yaml:7:21: objective.metric: benchmark 'b' has no metric 'w'"));
	rt_sb_release(&err);
	/* a NULL err is allowed */
	assert_int_equal(spec_load_text("m.yaml", many, strlen(many), &s, NULL), RT_EUSAGE);
}

static void test_workdir_and_io(void **state)
{
	struct spec *s = NULL;
	struct rt_sb err = RT_SB_INIT;
	const char *t = "name: t\nworkdir: /opt/x/../y\n"
			"benchmarks: [{name: b, command: [./x], metrics: {v: {pointer: /v, file: out/r.json, better: higher}}}]\n"
			"objective: {metric: b.v}\n";
	assert_int_equal(spec_load_text("/some/dir/s.yaml", t, strlen(t), &s, &err), 0);
	assert_string_equal(s->workdir, "/opt/y");
	assert_string_equal(s->benches[0].cmd.metrics[0].file, "/opt/y/out/r.json");
	spec_free(s);
	t = "name: t\nworkdir: sub\n"
	    "benchmarks: [{name: b, command: [./x], metrics: {v: {pointer: /v, file: '{workdir}/r.json', better: higher}}}]\n"
	    "objective: {metric: b.v}\n";
	assert_int_equal(spec_load_text("/some/dir/s.yaml", t, strlen(t), &s, &err), 0);
	assert_string_equal(s->workdir, "/some/dir/sub");
	assert_string_equal(s->benches[0].cmd.metrics[0].file, "{workdir}/r.json");
	spec_free(s);
	/* default: the spec's folder */
	assert_int_equal(spec_load_text("/a/b/c.yaml", minimal, strlen(minimal), &s, &err), 0);
	assert_string_equal(s->workdir, "/a/b");
	assert_string_equal(s->path, "/a/b/c.yaml");
	spec_free(s);
	/* an unreadable file is an I/O error */
	assert_int_equal(spec_load("/nonexistent/ratchet/spec.yaml", &s, &err), RT_EIO);
	assert_null(s);
	assert_non_null(strstr(err.buf, "/nonexistent/ratchet/spec.yaml"));
	rt_sb_release(&err);
	spec_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_dataset_output_tokens),
		cmocka_unit_test(test_good_roundtrip),
		cmocka_unit_test(test_block_values),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_workdir_and_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Cases:
 *   test_bad_specs        each tests/spec/bad/NN-name.yaml gives the first line of its .expect
 *   test_good_roundtrip   each good spec (tests/spec/good): dump -> load -> dump gives the same text
 *   test_block_values     every key of good/block.yaml lands in the right field, in base units
 *   test_defaults         defaults filled in; identity.http: null survives a dump
 *   test_units            durations, percentages (incl. > 100%), bad numbers rejected
 *   test_expand           {port} {workdir} {nonce} {iteration}; JSON braces untouched
 *   test_placeholders     JSON in flags accepted; unknown placeholders with did-you-mean
 *   test_metrics          metric lists per benchmark kind and format; better directions
 *   test_error_cap        at most 20 errors, then how many more; several errors in one pass
 *   test_workdir_and_io   workdir resolution, path resolution, unreadable file
 */
