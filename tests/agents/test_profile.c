/*
 * Profiles: each reader on a small fixture in its tool's exact format
 * (tests/agents/fixtures, each naming its source), the shares checked by hand
 * in the fixture's comment; the default op map on real kernel names of vLLM,
 * AITER, llama.cpp/ggml, Triton, cuBLAS, Tensile and NCCL; format detection;
 * a Chrome trace streamed in constant memory; errors that name the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agents/research/profile.h"

static char *fixture(const char *name)
{
	const char *src = getenv("RATCHET_SRC");
	return xasprintf("%s/tests/agents/fixtures/%s", src ? src : "..", name);
}

/* Read path with format into p, with the default map (the caller releases). */
static void read_as(const char *format, const char *path, struct research_profile *p,
		    struct research_opmap **map)
{
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, map, &err), 0);
	research_profile_init(p, *map);
	const struct research_format *f = NULL;
	assert_int_equal(research_format_find(format, path, &f, &err), 0);
	int rc = f->read(path, p, &err);
	if (rc)
		fail_msg("%s: %s", path, err.buf);
	rt_sb_release(&err);
}

static void done(struct research_profile *p, struct research_opmap *map)
{
	research_profile_release(p);
	research_opmap_free(map);
}

/* Shares per op, in percent. */
static void shares(const struct research_profile *p, double pct[RESEARCH_N_OPS])
{
	struct research_op_sum s[RESEARCH_N_OPS];
	research_profile_ops(p, s);
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		pct[i] = s[i].share * 100;
}

#define near(a, b) assert_true(fabs((a) - (b)) < 1e-6)

static void test_chrome_kineto(void **state)
{
	(void)state;
	char *path = fixture("kineto_vllm_decode.json");
	struct research_profile p;
	struct research_opmap *map;
	read_as("chrome", path, &p, &map);
	near(p.total_us, 2000);
	assert_int_equal(p.launches, 12);
	assert_int_equal(p.steps, 2); /* ProfilerStep#2, #3; not their gpu_user_annotation twins */
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 50);
	near(s[RESEARCH_OP_ATTENTION], 32);
	near(s[RESEARCH_OP_ACTIVATION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_COMMUNICATION], 3);
	near(s[RESEARCH_OP_OTHER], 0);
	struct research_op_sum sum[RESEARCH_N_OPS];
	research_profile_ops(&p, sum);
	assert_int_equal(sum[RESEARCH_OP_ATTENTION].calls, 4); /* 2 per step */
	done(&p, map);
	free(path);
}

static void test_nsys_llamacpp(void **state)
{
	(void)state;
	char *sql_path = fixture("nsys_llamacpp_decode.sql");
	char *sql;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rt_read_file(sql_path, &sql, &len, &err), 0);
	char db_path[] = "/tmp/rt-nsys-XXXXXX";
	int fd = mkstemp(db_path);
	assert_true(fd >= 0);
	close(fd);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db_path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, db_path, &p, &map); /* detected */
	assert_string_equal(p.format ? p.format : "nsys", "nsys");
	near(p.total_us, 10);
	assert_int_equal(p.launches, 12);
	assert_int_equal(p.steps, 2);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 79);
	near(s[RESEARCH_OP_ATTENTION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_QUANTIZE], 4);
	near(s[RESEARCH_OP_OTHER], 2);
	done(&p, map);
	unlink(db_path);
	free(sql);
	free(sql_path);
	rt_sb_release(&err);
}

static void test_rocprofv3_aiter(void **state)
{
	(void)state;
	char *path = fixture("rocprofv3_aiter_kernel_trace.csv");
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, path, &p, &map);
	near(p.total_us, 20);
	assert_int_equal(p.launches, 7);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 40);
	near(s[RESEARCH_OP_ATTENTION], 40);
	near(s[RESEARCH_OP_ACTIVATION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_QUANTIZE], 5);
	done(&p, map);
	free(path);
}

static void test_unitrace_xpu(void **state)
{
	(void)state;
	char *path = fixture("unitrace_xpu_device_timing.txt");
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, path, &p, &map);
	near(p.total_us, 1000);
	assert_int_equal(p.launches, 105);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 60);
	near(s[RESEARCH_OP_ATTENTION], 25);
	near(s[RESEARCH_OP_ACTIVATION], 8);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_OTHER], 2);
	/* -v's launch shape comes from the name */
	research_profile_sort(&p);
	assert_string_equal(p.k[0].shape, "SIMD32 {16;8;1} {256;1;1}");
	done(&p, map);
	free(path);
}

static void test_detect(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		const char *format;
	} cases[] = {
		{ "kineto_vllm_decode.json", "chrome" },
		{ "rocprofv3_aiter_kernel_trace.csv", "rocprof" },
		{ "unitrace_xpu_device_timing.txt", "unitrace" },
	};
	struct rt_sb err = RT_SB_INIT;
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		char *path = fixture(cases[i].file);
		const struct research_format *f = NULL;
		assert_int_equal(research_format_find(NULL, path, &f, &err), 0);
		assert_string_equal(f->name, cases[i].format);
		free(path);
	}
	char *path = fixture("nsys_llamacpp_decode.sql"); /* SQL text is no profile */
	const struct research_format *f = NULL;
	assert_int_equal(research_format_find(NULL, path, &f, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "not a profile this ratchet reads"));
	rt_sb_reset(&err);
	assert_int_equal(research_format_find("perfetto", path, &f, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "unknown profile format 'perfetto'"));
	free(path);
	rt_sb_release(&err);
}

/* Real kernel names and the op the default map gives them. */
static void test_default_map(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum research_op op;
	} cases[] = {
		/* vLLM CUDA and Triton */
		{ "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, __nv_bfloat16*, __nv_bfloat16 const*)", RESEARCH_OP_ATTENTION },
		{ "kernel_unified_attention_2d", RESEARCH_OP_ATTENTION },
		{ "_fwd_kernel", RESEARCH_OP_ATTENTION },
		{ "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)", RESEARCH_OP_ATTENTION },
		{ "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*)", RESEARCH_OP_NORM },
		{ "void vllm::dynamic_scaled_int8_quant_kernel<c10::BFloat16, float>(c10::BFloat16 const*, signed char*)", RESEARCH_OP_QUANTIZE },
		{ "fused_moe_kernel", RESEARCH_OP_GEMM },
		{ "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals)", RESEARCH_OP_COMMUNICATION },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)", RESEARCH_OP_GEMM },
		{ "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_32x6_tn", RESEARCH_OP_GEMM },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", RESEARCH_OP_OTHER },
		{ "triton_poi_fused_mul_silu_0", RESEARCH_OP_ACTIVATION },
		{ "matmul_kernel", RESEARCH_OP_GEMM },
		/* AITER, hipBLASLt/Tensile, RCCL */
		{ "void aiter::paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16>(int)", RESEARCH_OP_ATTENTION },
		{ "aiter::fmha_fwd_hd128_bf16_causal", RESEARCH_OP_ATTENTION },
		{ "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_WG32_8_1", RESEARCH_OP_GEMM },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", RESEARCH_OP_COMMUNICATION },
		{ "void aiter::rmsnorm2d_fwd<__hip_bfloat16>(int)", RESEARCH_OP_NORM },
		/* llama.cpp / ggml */
		{ "void mul_mat_q<(ggml_type)8, 64, 128, false>(char const*, char const*, float*)", RESEARCH_OP_GEMM },
		{ "void soft_max_f32<true, 0, 0>(float const*, float const*, float*, int, int, float, float)", RESEARCH_OP_ATTENTION },
		{ "void dequantize_block<32, 2, &dequantize_q4_0, __half>(void const*, __half*, long)", RESEARCH_OP_QUANTIZE },
		{ "void silu_f32(float const*, float*, int)", RESEARCH_OP_ACTIVATION },
		{ "void k_get_rows_float<float, float>(float const*, int const*, float*)", RESEARCH_OP_OTHER },
	};
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		enum research_op got = research_opmap_classify(map, cases[i].name);
		if (got != cases[i].op)
			fail_msg("%s: got %s, want %s", cases[i].name, research_op_names[got],
				 research_op_names[cases[i].op]);
	}
	research_opmap_free(map);
	rt_sb_release(&err);
}

/* A spec's pattern replaces the default one for its op; a bad one is named. */
static void test_spec_map(void **state)
{
	(void)state;
	struct research_opmap_def def = { .op = { [RESEARCH_OP_GEMM] = "^mykern" } };
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(&def, &map, &err), 0);
	assert_int_equal(research_opmap_classify(map, "mykern_v2"), RESEARCH_OP_GEMM);
	assert_int_equal(research_opmap_classify(map, "matmul_kernel"), RESEARCH_OP_OTHER);
	research_opmap_free(map);
	def.op[RESEARCH_OP_NORM] = "rms(";
	assert_int_equal(research_opmap_new(&def, &map, &err), RT_EINVAL);
	assert_null(map);
	assert_non_null(strstr(err.buf, "profile.norm: regex 'rms('"));
	rt_sb_release(&err);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The bare-array form; a trace cut short and a broken event are errors that
 * name the file. */
static void test_chrome_forms(void **state)
{
	(void)state;
	char path[] = "/tmp/rt-trace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	struct research_profile p;
	write_text(path, "[{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"gemm_a\", \"ts\": 1, \"dur\": 3},\n"
			 " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k[shape=4096x128]\", \"ts\": 5, \"dur\": 1,"
			 "  \"args\": {\"shape\": \"8x8\"}}]\n");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), 0);
	near(p.total_us, 4);
	research_profile_sort(&p);
	assert_string_equal(p.k[1].shape, "8x8"); /* args win over the name */
	research_profile_release(&p);

	write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"dur\": 1}");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "cut short"));
	assert_non_null(strstr(err.buf, path));
	research_profile_release(&p);

	rt_sb_reset(&err);
	write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"dur\": 1,}]}");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "event at byte 17"));
	research_profile_release(&p);
	research_opmap_free(map);
	rt_sb_release(&err);
	unlink(path);
}

static long max_rss_kb(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/* 200 MB of trace read with memory for one event and eight kernels: the
 * resident size grows by far less than the file. */
static void test_chrome_streams(void **state)
{
	(void)state;
	char path[] = "/tmp/rt-bigtrace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\": [\n", f);
	long n = 0;
	size_t bytes = 0;
	while (bytes < (200u << 20)) {
		int w = fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void vllm::kernel_%ld<128>(int)\", "
				"\"pid\": 0, \"tid\": 7, \"ts\": %ld.5, \"dur\": 2.0, \"args\": {\"grid\": [1, 2, 3], "
				"\"note\": \"padding padding padding padding padding padding padding padding\"}}",
				n ? ",\n" : "", n % 8, n);
		bytes += (size_t)w;
		n++;
	}
	fputs("],\n \"traceName\": \"big\"}\n", f);
	fclose(f);
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	struct research_profile p;
	research_profile_init(&p, map);
	long before = max_rss_kb();
	assert_int_equal(research_read_chrome(path, &p, &err), 0);
	long grew = max_rss_kb() - before;
	assert_int_equal(p.launches, n);
	assert_int_equal(p.n, 8);
	near(p.total_us, 2.0 * (double)n);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's quarantine keeps freed events resident: no figure to check */
	(void)grew;
#else
	if (grew > 32 * 1024)
		fail_msg("reading %zu bytes grew the resident size by %ld KiB", bytes, grew);
#endif
	research_profile_release(&p);
	research_opmap_free(map);
	rt_sb_release(&err);
	unlink(path);
}

/* The scanner on mangled traces: bytes replaced by JSON's structural
 * characters, cut anywhere. Any answer but a crash (ASan watches) or a
 * success with kernels that were not there. */
static void test_chrome_mangled(void **state)
{
	(void)state;
	char *src = fixture("kineto_vllm_decode.json"), *text;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rt_read_file(src, &text, &len, &err), 0);
	char path[] = "/tmp/rt-mangled-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct research_opmap *map;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	static const char pool[] = "{}[]\",:\\ aX0";
	uint64_t x = 88172645463325252ULL;
	for (int round = 0; round < 400; round++) {
		char *m = xmalloc(len + 1);
		memcpy(m, text, len);
		size_t n = len;
		for (int k = 0; k < 1 + round % 5; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			m[x % n] = pool[(x >> 20) % (sizeof(pool) - 1)];
		}
		if (round % 3 == 0)
			n = (size_t)(x >> 33) % n;
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fwrite(m, 1, n, f);
		fclose(f);
		struct research_profile p;
		research_profile_init(&p, map);
		rt_sb_reset(&err);
		int rc = research_read_chrome(path, &p, &err);
		assert_true(rc == 0 || rc == RT_EPARSE || rc == RT_ETOOBIG);
		assert_true(p.launches <= 12);
		research_profile_release(&p);
		free(m);
	}
	research_opmap_free(map);
	unlink(path);
	free(text);
	free(src);
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome_kineto),
		cmocka_unit_test(test_nsys_llamacpp),
		cmocka_unit_test(test_rocprofv3_aiter),
		cmocka_unit_test(test_unitrace_xpu),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_default_map),
		cmocka_unit_test(test_spec_map),
		cmocka_unit_test(test_chrome_forms),
		cmocka_unit_test(test_chrome_mangled),
		cmocka_unit_test(test_chrome_streams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
